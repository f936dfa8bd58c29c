package io.netec.hdfs.cluster;

import io.netec.hdfs.switchroute.wire.Frames;
import io.netec.hdfs.switchroute.wire.NetecPacket;
import io.netec.hdfs.switchroute.wire.ProtocolException;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A TCP relay that changes bytes on the way and hides it from every check below the proof: on
 * a NetEC stream from a switch to its reader, one payload byte of a RESULT, the packet then
 * re-encoded with a valid checksum (a middlebox that knows the protocol); on an INEC stream,
 * one byte at a fixed offset of each connection (TCP's own checksums see nothing). What comes
 * from the other side passes unchanged.
 */
final class TamperingRelay extends Relay {
  enum Stream { NETEC_RESULTS, RAW }

  private final Stream stream;
  private final long at;
  /** Bytes or RESULT packets changed. */
  final AtomicLong tampered = new AtomicLong();
  /** Whether it changes bytes now (else it relays them as they are). */
  volatile boolean active = true;
  /**
   * What a RAW byte is XORed with: relays of one chain need different masks, or the second
   * change would undo the first (a partial sum passes both).
   */
  int mask = 0x20;

  /**
   * @param at NETEC_RESULTS: the index of the RESULT packet changed on each connection;
   *     RAW: the byte offset changed on each connection
   */
  TamperingRelay(InetSocketAddress target, Stream stream, long at) throws IOException {
    super(target, "tampering-relay");
    this.stream = stream;
    this.at = at;
  }

  /** RAW: changes what the dialler sends; NETEC_RESULTS: what the switch sends its reader. */
  @Override
  void copy(InputStream in, OutputStream out, boolean towardsTarget) throws Exception {
    boolean tamper = stream == Stream.RAW ? towardsTarget : !towardsTarget;
    if (!tamper) {
      in.transferTo(out);
    } else if (stream == Stream.RAW) {
      raw(in, out);
    } else {
      results(new DataInputStream(in), new BufferedOutputStream(out));
    }
  }

  /** Copies, flipping the byte at offset {@link #at}. */
  private void raw(InputStream in, OutputStream out) throws IOException {
    byte[] buf = new byte[64 * 1024];
    long pos = 0;
    for (int n; (n = in.read(buf)) > 0; ) {
      if (active && pos <= at && at < pos + n) {
        buf[(int) (at - pos)] ^= mask;
        tampered.incrementAndGet();
      }
      out.write(buf, 0, n);
      out.flush();
      pos += n;
    }
  }

  /** Relays NetEC frames, re-encoding RESULT number {@link #at} with one byte changed. */
  private void results(DataInputStream in, OutputStream out)
      throws IOException, ProtocolException {
    long seen = 0;
    while (true) {
      byte[] frame = Frames.read(in);
      boolean carries = frame.length > NetecPacket.HEADER_BYTES;
      if (frame[1] == NetecPacket.RESULT && carries && seen++ == at && active) {
        NetecPacket p = NetecPacket.decodeFrame(frame, 0, frame.length);
        byte[] payload = p.payload();
        payload[payload.length / 2] ^= 0x5a;
        frame = new NetecPacket(p.type(), p.task(), p.slotArray(), p.sender(), p.flags(),
            p.slot(), p.seq(), p.window(), payload).toBytes(); // its checksum made valid again
        NetecPacket.decodeFrame(frame, 0, frame.length); // and the reader's check passes
        tampered.incrementAndGet();
      }
      out.write(frame);
      if (in.available() == 0) {
        out.flush();
      }
    }
  }
}
