package io.netec.hdfs.switchroute.wire;

import java.io.DataInputStream;
import java.io.IOException;
import java.util.Arrays;

/** The tests' relays read NetEC frames off a byte stream as the codec frames them. */
public final class Frames {
  private Frames() {
  }

  /** The next whole frame (header and payload) of {@code in}; EOF when the stream ends. */
  public static byte[] read(DataInputStream in) throws IOException {
    byte[] header = new byte[NetecPacket.HEADER_BYTES];
    in.readFully(header);
    int len = ((header[14] & 0xff) << 8) | (header[15] & 0xff);
    byte[] frame = Arrays.copyOf(header, NetecPacket.HEADER_BYTES + len);
    in.readFully(frame, NetecPacket.HEADER_BYTES, len);
    return frame;
  }
}
