package io.netec.hdfs.switchroute.wire;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;

/** Control-channel framing (docs/protocol.md, "Control messages"): u32 length, then JSON. */
public final class ControlFrames {
  public static final int MAX_FRAME = 65536;

  private ControlFrames() {
  }

  public static void write(DataOutputStream out, byte[] json) throws IOException {
    if (json.length < 1 || json.length > MAX_FRAME) {
      throw new IOException("control frame of " + json.length + " bytes");
    }
    out.writeInt(json.length);
    out.write(json);
    out.flush();
  }

  public static byte[] read(DataInputStream in) throws IOException {
    int len = in.readInt();
    if (len < 1 || len > MAX_FRAME) {
      throw new IOException("control frame length " + len + " outside 1.." + MAX_FRAME);
    }
    byte[] b = new byte[len];
    in.readFully(b);
    return b;
  }
}
