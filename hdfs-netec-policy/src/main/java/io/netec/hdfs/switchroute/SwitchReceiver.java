package io.netec.hdfs.switchroute;

import io.netec.hdfs.switchroute.wire.NetecPacket;
import io.netec.hdfs.switchroute.wire.ProtocolException;
import io.netec.hdfs.switchroute.wire.SetupAnswer;
import io.netec.hdfs.switchroute.wire.SetupRequest;
import io.netec.hdfs.switchroute.wire.StreamRequest;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.channels.WritableByteChannel;
import java.util.concurrent.TimeUnit;

/**
 * The reader's receive side of a task its switch accepted ({@link SwitchClient} sets it up):
 * the HELLO to the VIP, then the loops of TCP and datagram mode around the task's {@link
 * ReceiveWindow} (order, the window, when to ACK), asking for retransmission (RETX) when
 * nothing arrives for the retransmission timeout ({@value #INITIAL_RTO_MS} ms over TCP,
 * {@value #DATAGRAM_RTO_MS} ms in datagrams, doubled after each RETX without progress up to
 * {@value #MAX_RTO_MS} ms: a RETX makes every survivor resend a window, so a false alarm is
 * costly), failing (IOException) after the task's timeout without progress, on any packet
 * that breaks the protocol, or when the switch says the task failed.
 */
final class SwitchReceiver {
  static final int INITIAL_RTO_MS = 1000;
  static final int MAX_RTO_MS = 8000;
  static final int CLOSE_WAIT_MS = 2000;
  /** Datagram mode: the HELLO is repeated this often until data comes. */
  static final int DATAGRAM_HELLO_MS = 200;
  /** Datagram mode's first retransmission timeout: no TCP below recovers a loss. */
  static final int DATAGRAM_RTO_MS = 200;
  static final int DATAGRAM_FINS = 3;
  /** Packets the receive buffer holds: one read takes many, each checked where it lies. */
  static final int RECEIVE_PACKETS = 16;

  private SwitchReceiver() {
  }

  /**
   * Receives the task the switch accepted ({@code answer}) into the sinks {@code opener}
   * opens now: row r's sink gets exactly {@code rowLength[r]} bytes.
   */
  static SwitchClient.Result receive(SetupRequest setup, SetupAnswer answer, long[] rowLength,
      SwitchClient.SinkOpener opener) throws IOException {
    SwitchClient.Sink[] sinks = opener.open();
    InetSocketAddress vip = HostPort.parse(answer.vip());
    SwitchClient.Result result = new SwitchClient.Result();
    result.task = answer.task();
    NetecPacket hello = StreamRequest.readerHello(setup, answer.task(), answer.slotArray(),
        answer.slots(), answer.secret());
    if (setup.datagram()) {
      try (DatagramChannel ch = DatagramChannel.open(); Selector selector = Selector.open()) {
        ch.setOption(java.net.StandardSocketOptions.SO_RCVBUF, 4 << 20);
        ch.connect(vip);
        ch.configureBlocking(false);
        ch.register(selector, SelectionKey.OP_READ);
        new Receiver(setup, answer, rowLength, sinks, result).runDatagrams(ch, selector, hello);
      }
      return result;
    }
    try (SocketChannel ch = SocketChannel.open(vip); Selector selector = Selector.open()) {
      ch.socket().setTcpNoDelay(true);
      ch.configureBlocking(false);
      ch.register(selector, SelectionKey.OP_READ);
      send(ch, hello);
      new Receiver(setup, answer, rowLength, sinks, result).run(ch, selector);
    }
    return result;
  }

  /** One packet: over TCP all of it, over UDP one datagram. */
  private static void send(WritableByteChannel ch, NetecPacket p) throws IOException {
    ByteBuffer b = ByteBuffer.allocate(p.encodedLength());
    p.encode(b);
    b.flip();
    while (b.hasRemaining()) {
      if (ch.write(b) == 0) {
        Thread.onSpinWait(); // 20-60 byte control packets: the send buffer drains at once
      }
    }
  }

  /** The receive loops of one task, TCP and datagram, around its {@link ReceiveWindow}. */
  private static final class Receiver {
    private final SetupRequest setup;
    private final SetupAnswer answer;
    private final SwitchClient.Result result;
    private final ReceiveWindow window;

    Receiver(SetupRequest setup, SetupAnswer answer, long[] rowLength,
        SwitchClient.Sink[] sinks, SwitchClient.Result result) {
      this.setup = setup;
      this.answer = answer;
      this.result = result;
      this.window = new ReceiveWindow(answer.task(), answer.slotArray(), answer.slots(),
          setup.rows(), setup.length(), setup.payload(), rowLength, sinks);
    }

    /**
     * The switch's failure of the task, from its error HELLO: the senders it names at fault
     * ({@link SwitchClient.SurvivorsFailed}), else a stall when no data came for most of the timeout (its
     * watchdog saw what ours was about to), else a plain failure.
     */
    private IOException failed(NetecPacket hello, long lastProgress, long timeout) {
      StreamRequest.Failure f = StreamRequest.errorOf(hello);
      String what = "switch failed task " + answer.task() + ": " + (f != null ? f.reason
          : new String(hello.payload(), java.nio.charset.StandardCharsets.UTF_8));
      java.util.List<String> blocks = new java.util.ArrayList<>();
      for (int sender : f == null ? new int[0] : f.survivors) {
        // a sender this task has, and a survivor agent (a rack switch's partial sum is not a
        // unit: its own survivors are its task's)
        if (sender < setup.survivors().size()
            && setup.survivors().get(sender).child() == null) {
          blocks.add(setup.survivors().get(sender).block());
        }
      }
      if (!blocks.isEmpty()) {
        return new SwitchClient.SurvivorsFailed(blocks, what);
      }
      if (System.nanoTime() - lastProgress >= timeout * 9 / 10) {
        return new io.netec.hdfs.route.RouteStalledException(what);
      }
      return new IOException(what);
    }

    void run(SocketChannel ch, Selector selector) throws IOException {
      int maxFrame = NetecPacket.HEADER_BYTES + setup.payload();
      ByteBuffer buf = ByteBuffer.allocate(RECEIVE_PACKETS * maxFrame);
      long lastProgress = System.nanoTime();
      long timeout = TimeUnit.MILLISECONDS.toNanos(setup.timeoutMs());
      int rto = INITIAL_RTO_MS;
      while (!window.done()) {
        if (selector.select(rto) == 0) {
          if (System.nanoTime() - lastProgress > timeout) {
            throw new io.netec.hdfs.route.RouteStalledException("switch task " + answer.task()
                + ": no data for " + setup.timeoutMs() + " ms at stripe "
                + window.firstMissing() + " of " + window.stripes());
          }
          result.retransmitRequests++;
          ack(ch, NetecPacket.FLAG_RETX);
          rto = Math.min(2 * rto, MAX_RTO_MS);
          continue;
        }
        selector.selectedKeys().clear();
        int n = ch.read(buf);
        if (n < 0) {
          String what = "switch closed task " + answer.task() + " at stripe "
              + window.firstMissing() + " of " + window.stripes();
          if (System.nanoTime() - lastProgress >= timeout * 9 / 10) {
            // its watchdog saw what ours was about to: no data for the task's timeout
            throw new io.netec.hdfs.route.RouteStalledException(what + " after no data for "
                + setup.timeoutMs() + " ms");
          }
          throw new IOException(what);
        }
        result.bytesReceived += n;
        buf.flip();
        long before = window.firstMissing();
        int len;
        while ((len = NetecPacket.frameLength(buf)) > 0 && buf.remaining() >= len) {
          int at = buf.position();
          try {
            if (len > maxFrame) {
              throw new ProtocolException("a packet of " + len + " bytes, more than the task's "
                  + maxFrame);
            }
            NetecPacket p = NetecPacket.decodeFrame(buf.array(), at, len); // a view: no copy
            if (p.type() == NetecPacket.HELLO && p.sender() == NetecPacket.READER) {
              throw failed(p, lastProgress, timeout); // the switch says why it ends the task
            }
            window.accept(p);
          } catch (ProtocolException e) {
            throw new IOException("corrupt packet from the switch: " + e.getMessage());
          }
          buf.position(at + len);
        }
        buf.compact();
        if (ackProgress(ch, before)) {
          lastProgress = System.nanoTime();
          rto = INITIAL_RTO_MS;
        }
      }
      ack(ch, NetecPacket.FLAG_FIN);
      awaitClose(ch, selector);
    }

    /**
     * Datagram mode: the HELLO again every {@value #DATAGRAM_HELLO_MS} ms until a RESULT comes
     * (it may be lost), echoing the switch's cookie once one comes, packets that fail their
     * checks dropped and counted (each travels alone: retransmission recovers it), RETX from
     * {@value #DATAGRAM_RTO_MS} ms without progress, the FIN sent {@value #DATAGRAM_FINS} times
     * (nothing acknowledges it: a lost one costs the switch its task timeout, never bytes).
     */
    void runDatagrams(DatagramChannel ch, Selector selector, NetecPacket firstHello)
        throws IOException {
      NetecPacket hello = firstHello;
      int maxFrame = NetecPacket.HEADER_BYTES + setup.payload();
      ByteBuffer buf = ByteBuffer.allocate(maxFrame + 1); // a longer datagram shows as such
      long start = System.nanoTime();
      long lastProgress = start;
      long timeout = TimeUnit.MILLISECONDS.toNanos(setup.timeoutMs());
      boolean started = false;
      int rto = DATAGRAM_RTO_MS;
      send(ch, hello);
      while (!window.done()) {
        if (selector.select(started ? rto : DATAGRAM_HELLO_MS) == 0) {
          if (System.nanoTime() - lastProgress > timeout) {
            throw new io.netec.hdfs.route.RouteStalledException("switch task " + answer.task()
                + ": no data for " + setup.timeoutMs() + " ms at stripe "
                + window.firstMissing() + " of " + window.stripes() + " (datagrams)");
          }
          if (!started) {
            send(ch, hello);
          } else {
            result.retransmitRequests++;
            ack(ch, NetecPacket.FLAG_RETX);
            rto = Math.min(2 * rto, MAX_RTO_MS);
          }
          continue;
        }
        selector.selectedKeys().clear();
        long before = window.firstMissing();
        for (int n; (n = ch.read(buf.clear())) > 0; ) {
          result.bytesReceived += n;
          NetecPacket p;
          try {
            p = NetecPacket.decodeFrame(buf.array(), 0, n);
          } catch (ProtocolException e) {
            result.droppedPackets++;
            continue;
          }
          if (p.type() == NetecPacket.HELLO && p.sender() == NetecPacket.READER
              && StreamRequest.cookieOf(p) != null) {
            // the switch proves this address before it sends it anything more: the HELLO
            // again, echoing its cookie (a P4 switch sends none: its first RESULT comes); a
            // late cookie (the answer to an earlier repeat, reordered) changes nothing
            if (!started && p.task() == answer.task()) {
              hello = StreamRequest.readerHello(setup, answer.task(), answer.slotArray(),
                  answer.slots(), answer.secret(), StreamRequest.cookieOf(p));
              send(ch, hello);
            }
            continue;
          }
          if (p.type() == NetecPacket.HELLO && p.sender() == NetecPacket.READER) {
            throw failed(p, lastProgress, timeout);
          }
          if (!window.expected(p)) {
            result.droppedPackets++;
            continue;
          }
          started = true;
          window.accept(p);
        }
        if (ackProgress(ch, before)) {
          lastProgress = System.nanoTime();
          rto = DATAGRAM_RTO_MS;
        }
      }
      for (int i = 0; i < DATAGRAM_FINS; i++) {
        ack(ch, NetecPacket.FLAG_FIN);
      }
    }

    /**
     * Waits (at most {@value #CLOSE_WAIT_MS} ms) for the switch to close the connection after
     * FIN, discarding late duplicates: closing with unread data would send a reset that can
     * destroy the FIN in flight, and the switch would count a finished task as failed.
     */
    private void awaitClose(SocketChannel ch, Selector selector) throws IOException {
      ch.shutdownOutput();
      ByteBuffer drain = ByteBuffer.allocate(64 * 1024);
      long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(CLOSE_WAIT_MS);
      while (System.nanoTime() < deadline) {
        selector.select(50);
        selector.selectedKeys().clear();
        drain.clear();
        if (ch.read(drain) < 0) {
          return;
        }
      }
    }

    /** Whether {@link #window} moved past {@code before}; if so, ACKs when one is due. */
    private boolean ackProgress(WritableByteChannel ch, long before) throws IOException {
      if (!window.moved(before)) {
        return false;
      }
      if (window.takeAckDue()) {
        ack(ch, 0);
      }
      return true;
    }

    private void ack(WritableByteChannel ch, int flags) throws IOException {
      send(ch, window.ack(flags));
    }
  }
}
