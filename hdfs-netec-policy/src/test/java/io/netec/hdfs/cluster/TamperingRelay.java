package io.netec.hdfs.cluster;

import io.netec.hdfs.switchroute.wire.NetecPacket;
import io.netec.hdfs.switchroute.wire.ProtocolException;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A TCP relay that changes bytes on the way and hides it from every check below the proof: on
 * a NetEC stream from a switch to its reader, one payload byte of a RESULT, the packet then
 * re-encoded with a valid checksum (a middlebox that knows the protocol); on an INEC stream,
 * one byte at a fixed offset of each connection (TCP's own checksums see nothing). What comes
 * from the other side passes unchanged.
 */
final class TamperingRelay implements AutoCloseable {
  enum Stream { NETEC_RESULTS, RAW }

  private final ServerSocket server;
  private final InetSocketAddress target;
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
    this.target = target;
    this.stream = stream;
    this.at = at;
    this.server = new ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress());
    Thread t = new Thread(this::acceptLoop, "tampering-relay-" + server.getLocalPort());
    t.setDaemon(true);
    t.start();
  }

  InetSocketAddress address() {
    return new InetSocketAddress("127.0.0.1", server.getLocalPort());
  }

  int port() {
    return server.getLocalPort();
  }

  private void acceptLoop() {
    while (!server.isClosed()) {
      try {
        Socket client = server.accept();
        Socket upstream = new Socket(target.getAddress(), target.getPort());
        client.setTcpNoDelay(true);
        upstream.setTcpNoDelay(true);
        // the reader (or a dialling vertex) writes to the target; the target answers it
        boolean fromTarget = stream == Stream.NETEC_RESULTS;
        pump(client.getInputStream(), upstream.getOutputStream(), !fromTarget, client, upstream);
        pump(upstream.getInputStream(), client.getOutputStream(), fromTarget, client, upstream);
      } catch (IOException e) {
        return;
      }
    }
  }

  private void pump(InputStream in, OutputStream rawOut, boolean tamper, Socket a, Socket b) {
    Thread t = new Thread(() -> {
      try {
        if (!tamper) {
          in.transferTo(rawOut);
        } else if (stream == Stream.RAW) {
          raw(in, rawOut);
        } else {
          results(new DataInputStream(in), new BufferedOutputStream(rawOut));
        }
      } catch (IOException | ProtocolException e) {
        // the connection ended
      } finally {
        close(a);
        close(b);
      }
    }, "tampering-relay-pump");
    t.setDaemon(true);
    t.start();
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
      byte[] header = new byte[NetecPacket.HEADER_BYTES];
      in.readFully(header);
      int len = ((header[14] & 0xff) << 8) | (header[15] & 0xff);
      byte[] frame = java.util.Arrays.copyOf(header, NetecPacket.HEADER_BYTES + len);
      in.readFully(frame, NetecPacket.HEADER_BYTES, len);
      if (frame[1] == NetecPacket.RESULT && len > 0 && seen++ == at && active) {
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
