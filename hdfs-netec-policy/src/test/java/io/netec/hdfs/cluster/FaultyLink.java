package io.netec.hdfs.cluster;

import io.netec.hdfs.switchroute.wire.Frames;
import io.netec.hdfs.switchroute.wire.NetecPacket;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A TCP relay put between the switch and a survivor agent (registered in ServiceDirectory in
 * the agent's place). Everything passes through unchanged except the agent's DATA packets,
 * which it drops, duplicates, holds back one packet (reorders), bit-flips or delays, as told.
 */
final class FaultyLink extends Relay {
  enum Fault { DROP, DUPLICATE, REORDER, BIT_FLIP, SLOW }

  private final Fault fault;
  private final double rate;
  private final Random rnd;
  final AtomicLong faults = new AtomicLong();

  FaultyLink(InetSocketAddress agent, Fault fault, double rate, long seed) throws IOException {
    super(agent, "faulty-link");
    this.fault = fault;
    this.rate = rate;
    this.rnd = new Random(seed);
  }

  /** Towards the agent: as it is; from it: its DATA packets as the fault says. */
  @Override
  void copy(InputStream in, OutputStream rawOut, boolean towardsAgent) throws Exception {
    if (towardsAgent) {
      in.transferTo(rawOut);
      return;
    }
    DataInputStream din = new DataInputStream(in);
    OutputStream out = new BufferedOutputStream(rawOut);
    byte[] held = null;
    while (true) {
      byte[] frame = Frames.read(din);
      boolean hit = frame[1] == NetecPacket.DATA && nextHit();
      if (!hit) {
        out.write(frame);
      } else {
        faults.incrementAndGet();
        switch (fault) {
          case DROP:
            break;
          case DUPLICATE:
            out.write(frame);
            out.write(frame);
            break;
          case REORDER:
            if (held != null) {
              out.write(held);
            }
            held = frame; // sent after the next packet
            continue;
          case BIT_FLIP:
            int payloadBits = (frame.length - NetecPacket.HEADER_BYTES) * 8;
            int bit = NetecPacket.HEADER_BYTES * 8 + rndInt(Math.max(1, payloadBits));
            frame[bit / 8] ^= (byte) (1 << (bit % 8));
            out.write(frame);
            break;
          case SLOW:
            Thread.sleep(2);
            out.write(frame);
            break;
          default:
            throw new IllegalStateException();
        }
      }
      if (held != null && !hit) {
        out.write(held);
        held = null;
      }
      if (din.available() == 0) {
        out.flush();
      }
    }
  }

  private synchronized boolean nextHit() {
    return rnd.nextDouble() < rate;
  }

  private synchronized int rndInt(int bound) {
    return rnd.nextInt(bound);
  }
}
