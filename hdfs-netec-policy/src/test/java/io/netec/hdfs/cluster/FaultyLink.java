package io.netec.hdfs.cluster;

import io.netec.hdfs.switchroute.wire.NetecPacket;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A TCP relay put between the switch and a survivor agent (registered in ServiceDirectory in
 * the agent's place). Everything passes through unchanged except the agent's DATA packets,
 * which it drops, duplicates, holds back one packet (reorders), bit-flips or delays, as told.
 */
final class FaultyLink implements AutoCloseable {
  enum Fault { DROP, DUPLICATE, REORDER, BIT_FLIP, SLOW }

  private final ServerSocket server;
  private final InetSocketAddress agent;
  private final Fault fault;
  private final double rate;
  private final Random rnd;
  final AtomicLong faults = new AtomicLong();

  FaultyLink(InetSocketAddress agent, Fault fault, double rate, long seed) throws IOException {
    this.agent = agent;
    this.fault = fault;
    this.rate = rate;
    this.rnd = new Random(seed);
    this.server = new ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress());
    Thread t = new Thread(this::acceptLoop, "faulty-link-" + server.getLocalPort());
    t.setDaemon(true);
    t.start();
  }

  InetSocketAddress address() {
    return new InetSocketAddress("127.0.0.1", server.getLocalPort());
  }

  private void acceptLoop() {
    while (!server.isClosed()) {
      try {
        Socket fromSwitch = server.accept();
        Socket toAgent = new Socket(agent.getAddress(), agent.getPort());
        fromSwitch.setTcpNoDelay(true);
        toAgent.setTcpNoDelay(true);
        pump("to-agent", fromSwitch.getInputStream(), toAgent.getOutputStream(), false,
            fromSwitch, toAgent);
        pump("to-switch", toAgent.getInputStream(), fromSwitch.getOutputStream(), true,
            fromSwitch, toAgent);
      } catch (IOException e) {
        return;
      }
    }
  }

  private void pump(String name, InputStream in, OutputStream rawOut, boolean faulty,
      Socket a, Socket b) {
    Thread t = new Thread(() -> {
      DataInputStream din = new DataInputStream(in);
      OutputStream out = new BufferedOutputStream(rawOut);
      byte[] held = null;
      try {
        while (true) {
          byte[] header = new byte[NetecPacket.HEADER_BYTES];
          din.readFully(header);
          int len = ((header[14] & 0xff) << 8) | (header[15] & 0xff);
          byte[] frame = java.util.Arrays.copyOf(header, NetecPacket.HEADER_BYTES + len);
          din.readFully(frame, NetecPacket.HEADER_BYTES, len);
          boolean hit = faulty && frame[1] == NetecPacket.DATA && nextHit();
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
                int bit = NetecPacket.HEADER_BYTES * 8 + rndInt(Math.max(1, len * 8));
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
      } catch (IOException | InterruptedException e) {
        close(a);
        close(b);
      }
    }, "faulty-link-" + name);
    t.setDaemon(true);
    t.start();
  }

  private synchronized boolean nextHit() {
    return rnd.nextDouble() < rate;
  }

  private synchronized int rndInt(int bound) {
    return rnd.nextInt(bound);
  }

  private static void close(Socket s) {
    try {
      s.close();
    } catch (IOException e) {
      // already closed
    }
  }

  @Override
  public void close() throws IOException {
    server.close();
  }
}
