package io.netec.hdfs.switchroute;

import io.netec.hdfs.route.RouteStalledException;
import io.netec.hdfs.route.Transport;
import io.netec.hdfs.switchroute.wire.NetecPacket;
import io.netec.hdfs.switchroute.wire.NetecPacketCodec;
import io.netec.hdfs.switchroute.wire.SetupAnswer;
import io.netec.hdfs.switchroute.wire.SetupRequest;
import io.netec.hdfs.switchroute.wire.StreamRequest;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.FixedRecvByteBufAllocator;
import io.netty.channel.socket.DatagramPacket;
import io.netty.channel.socket.SocketChannel;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
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
 *
 * <p>I/O is Netty's, as on every port of the plugin: the connection's event loop decodes
 * packets into a {@link ReaderInbox}, and the reader's own thread (the task's) takes them from
 * it, runs the window and writes to the sinks, which may block (a DataNode's target, a
 * client's buffer) without holding an event loop. The inbox stops reading while it holds {@value
 * ReaderInbox#HIGH} packets (autoRead: TCP's window then holds the switch back) and reads again
 * once the reader has taken it down to {@value ReaderInbox#LOW}.
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
  /** The VIP's connection is made within this (a switch that is there answers at once). */
  static final int CONNECT_MS = 5_000;

  /** Every reader of this JVM: two I/O threads (the work is on the readers' own threads). */
  private static final class Loops {
    static final EventLoopGroup GROUP = Transport.group(2,
        new io.netty.util.concurrent.DefaultThreadFactory("netec-switch-reader", true));
  }

  private SwitchReceiver() {
  }

  /**
   * Receives the task the switch accepted ({@code answer}) into the sinks {@code opener}
   * opens now: row r's sink gets exactly {@code rowLength[r]} bytes.
   */
  static SwitchClient.Result receive(SetupRequest setup, SetupAnswer answer, long[] rowLength,
      SwitchClient.SinkOpener opener) throws IOException {
    return receive(setup, answer, rowLength, opener, java.util.List.of());
  }

  /** A HELLO the reader sends beside its own until data comes: a datagram child's. */
  static final class ChildHello {
    final InetSocketAddress vip;
    final NetecPacket hello;

    ChildHello(InetSocketAddress vip, NetecPacket hello) {
      this.vip = vip;
      this.hello = hello;
    }
  }

  /**
   * ... and in datagram mode with every HELLO to the VIP, each of {@code children}'s to its
   * child's VIP (docs/protocol.md, "Partial sums over datagrams": a P4 child starts its
   * survivors on it), from a socket of their own.
   */
  static SwitchClient.Result receive(SetupRequest setup, SetupAnswer answer, long[] rowLength,
      SwitchClient.SinkOpener opener, java.util.List<ChildHello> children) throws IOException {
    SwitchClient.Sink[] sinks = opener.open();
    InetSocketAddress vip = HostPort.parse(answer.vip());
    SwitchClient.Result result = new SwitchClient.Result();
    result.task = answer.task();
    NetecPacket hello = StreamRequest.readerHello(setup, answer.task(), answer.slotArray(),
        answer.slots(), answer.secret());
    int maxFrame = NetecPacket.HEADER_BYTES + setup.payload();
    ReaderInbox inbox = new ReaderInbox(maxFrame);
    Bootstrap b = new Bootstrap().group(Loops.GROUP)
        .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, CONNECT_MS);
    if (setup.datagram()) {
      // one packet a datagram: a longer one than the task's shows as such, and is dropped
      b.channel(Transport.datagramChannel())
          .option(ChannelOption.SO_RCVBUF, 4 << 20)
          .option(ChannelOption.RCVBUF_ALLOCATOR,
              new FixedRecvByteBufAllocator(Math.max(maxFrame, ReaderInbox.MAX_HELLO_FRAME) + 1))
          .handler(inbox);
    } else {
      b.channel(Transport.socketChannel())
          .option(ChannelOption.TCP_NODELAY, true)
          .option(ChannelOption.RCVBUF_ALLOCATOR, Transport.STREAM_READS)
          .handler(new ChannelInitializer<SocketChannel>() {
            @Override
            protected void initChannel(SocketChannel ch) {
              ch.pipeline().addLast(new NetecPacketCodec.Decoder(), inbox);
            }
          });
    }
    ChannelFuture connected = b.connect(vip);
    Channel ch = connected.channel();
    // the children's HELLOs: another address than the connected channel's
    java.net.DatagramSocket toChildren = setup.datagram() && !children.isEmpty()
        ? new java.net.DatagramSocket() : null;
    try {
      if (!connected.awaitUninterruptibly(CONNECT_MS + 1_000L) || !connected.isSuccess()) {
        throw new IOException("cannot connect to the switch's VIP " + vip + ": "
            + (connected.cause() == null ? "no answer" : connected.cause().getMessage()),
            connected.cause());
      }
      Receiver r = new Receiver(setup, answer, rowLength, sinks, result, ch, vip, inbox);
      r.children = children;
      r.toChildren = toChildren;
      if (setup.datagram()) {
        r.runDatagrams(hello);
      } else {
        r.send(hello);
        r.run();
        result.closed = closeAfterFin(ch, inbox); // every row is in: the close is not waited
      }
    } finally {
      if (result.closed == null) {
        ch.close();
        result.closed = ch.closeFuture();
      }
      if (toChildren != null) {
        toChildren.close();
      }
      result.bytesReceived = inbox.bytes.get();
      result.droppedPackets += inbox.undecodable.get();
    }
    return result;
  }

  /**
   * After the FIN: the connection is left for the switch to close (at most {@value
   * #CLOSE_WAIT_MS} ms, then closed here), whatever comes discarded but read, so that the
   * switch sees its FIN and counts the task done (closing with unread data would send a reset
   * that can destroy the FIN in flight). The reader does not wait for it: its rows are whole,
   * and its proof is the verifier's, not the close's. Completes once the connection is closed.
   */
  private static io.netty.util.concurrent.Future<Void> closeAfterFin(Channel ch,
      ReaderInbox inbox) {
    Closing.CHANNELS.add(ch);
    ch.closeFuture().addListener(f -> Closing.CHANNELS.remove(ch));
    try {
      inbox.discard();
      ((SocketChannel) ch).shutdownOutput();
      io.netty.util.concurrent.ScheduledFuture<?> force =
          ch.eventLoop().schedule(() -> ch.close(), CLOSE_WAIT_MS, TimeUnit.MILLISECONDS);
      ch.closeFuture().addListener(f -> force.cancel(false));
    } catch (RuntimeException e) { // the loop shutting down: the rows are in, close it now
      ch.close();
    }
    return ch.closeFuture();
  }

  /**
   * VIP connections left to close after their FIN. A JVM that exits first (a short-lived
   * client) would reset them, which can destroy a FIN in flight and have the switch count a
   * finished task failed: at exit they are given up to {@value #CLOSE_WAIT_MS} ms in all.
   */
  private static final class Closing {
    static final java.util.Set<Channel> CHANNELS =
        java.util.concurrent.ConcurrentHashMap.newKeySet();

    static {
      try {
        Runtime.getRuntime().addShutdownHook(new Thread(Closing::await,
            "netec-switch-reader-close"));
      } catch (IllegalStateException e) {
        // first used while the JVM shuts down: nothing to wait for then
      }
    }

    /** Waits for the connections left to close, up to {@value #CLOSE_WAIT_MS} ms in all. */
    private static void await() {
      long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(CLOSE_WAIT_MS);
      for (Channel c : CHANNELS) {
        long left = deadline - System.nanoTime();
        if (left <= 0 || !c.closeFuture().awaitUninterruptibly(left, TimeUnit.NANOSECONDS)) {
          return;
        }
      }
    }

    private Closing() {
    }
  }

  /** The receive loops of one task, TCP and datagram, around its {@link ReceiveWindow}. */
  private static final class Receiver {
    private final SetupRequest setup;
    private final SetupAnswer answer;
    private final SwitchClient.Result result;
    private final ReceiveWindow window;
    private final Channel ch;
    private final InetSocketAddress vip;
    private final ReaderInbox inbox;
    /** Datagram mode: the children's HELLOs, sent with each of the reader's own. */
    java.util.List<ChildHello> children = java.util.List.of();
    java.net.DatagramSocket toChildren;
    private int helloRounds;

    Receiver(SetupRequest setup, SetupAnswer answer, long[] rowLength,
        SwitchClient.Sink[] sinks, SwitchClient.Result result, Channel ch, InetSocketAddress vip,
        ReaderInbox inbox) {
      this.setup = setup;
      this.answer = answer;
      this.result = result;
      this.ch = ch;
      this.vip = vip;
      this.inbox = inbox;
      this.window = new ReceiveWindow(answer.task(), answer.slotArray(), answer.slots(),
          setup.rows(), setup.length(), setup.payload(), rowLength, sinks);
    }

    /**
     * The switch's failure of the task, from its error HELLO: the senders it names at fault
     * ({@link SwitchClient.SurvivorsFailed}), else a stall when no data came for most of the
     * timeout (its watchdog saw what ours was about to), else a plain failure.
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
        return new RouteStalledException(what);
      }
      return new IOException(what);
    }

    /** Whether a HELLO is this task's (its task and slot array). */
    private boolean ours(NetecPacket hello) {
      return hello.task() == answer.task() && hello.slotArray() == answer.slotArray();
    }

    /** Asks for a window again (RETX); returns the next timeout, {@code rto} doubled. */
    private int retransmit(int rto) throws IOException {
      result.retransmitRequests++;
      ack(NetecPacket.FLAG_RETX);
      return Math.min(2 * rto, MAX_RTO_MS);
    }

    /** Nothing came for the task's timeout: the route stalled. */
    private RouteStalledException noData(String mode) {
      return new RouteStalledException("switch task " + answer.task() + ": no data for "
          + setup.timeoutMs() + " ms at stripe " + window.firstMissing() + " of "
          + window.stripes() + mode);
    }

    void run() throws IOException {
      long lastProgress = System.nanoTime();
      long timeout = TimeUnit.MILLISECONDS.toNanos(setup.timeoutMs());
      int rto = INITIAL_RTO_MS;
      while (!window.done()) {
        Object m = inbox.poll(rto);
        if (m == null) {
          if (System.nanoTime() - lastProgress > timeout) {
            throw noData("");
          }
          rto = retransmit(rto);
          continue;
        }
        long before = window.firstMissing();
        for (; m != null; m = window.done() ? null : inbox.poll(0)) { // what came, at once
          if (m == ReaderInbox.CLOSED) {
            String what = "switch closed task " + answer.task() + " at stripe "
                + window.firstMissing() + " of " + window.stripes();
            if (System.nanoTime() - lastProgress >= timeout * 9 / 10) {
              // its watchdog saw what ours was about to: no data for the task's timeout
              throw new RouteStalledException(what + " after no data for "
                  + setup.timeoutMs() + " ms");
            }
            throw new IOException(what);
          }
          if (m instanceof Throwable) {
            Throwable t = (Throwable) m;
            throw new IOException("corrupt packet from the switch: " + t.getMessage(), t);
          }
          NetecPacket p = (NetecPacket) m;
          if (p.type() == NetecPacket.HELLO && p.sender() == NetecPacket.READER) {
            if (!ours(p)) {
              throw new IOException("corrupt packet from the switch: a HELLO of task "
                  + p.task() + " slot array " + p.slotArray());
            }
            throw failed(p, lastProgress, timeout); // the switch says why it ends the task
          }
          window.accept(p);
        }
        if (ackProgress(before)) {
          lastProgress = System.nanoTime();
          rto = INITIAL_RTO_MS;
        }
      }
      ack(NetecPacket.FLAG_FIN);
    }

    /**
     * Datagram mode: the HELLO again every {@value #DATAGRAM_HELLO_MS} ms until a RESULT comes
     * (it may be lost), echoing the switch's cookie once one comes, packets that fail their
     * checks dropped and counted (each travels alone: retransmission recovers it), RETX from
     * {@value #DATAGRAM_RTO_MS} ms without progress, the FIN sent {@value #DATAGRAM_FINS} times
     * (nothing acknowledges it: a lost one costs the switch its task timeout, never bytes).
     */
    void runDatagrams(NetecPacket firstHello) throws IOException {
      NetecPacket hello = firstHello;
      long lastProgress = System.nanoTime();
      long timeout = TimeUnit.MILLISECONDS.toNanos(setup.timeoutMs());
      boolean started = false;
      int rto = DATAGRAM_RTO_MS;
      sendHello(hello);
      while (!window.done()) {
        Object m = inbox.poll(started ? rto : DATAGRAM_HELLO_MS);
        if (m == null) {
          if (System.nanoTime() - lastProgress > timeout) {
            throw noData(" (datagrams)");
          }
          if (!started) {
            sendHello(hello);
            if (!children.isEmpty() && Integer.bitCount(helloRounds) == 1 && helloRounds > 2) {
              // a tree: a child may have sent its first window before the parent was bound
              // (a P4 child starts on this reader's HELLO), and the parent dropped it; the
              // RETX, copied down, has it sent again (rounds 4, 8, 16, ...: backing off)
              rto = retransmit(rto);
            }
          } else {
            rto = retransmit(rto);
          }
          continue;
        }
        long before = window.firstMissing();
        for (; m != null; m = window.done() ? null : inbox.poll(0)) { // what came, at once
          if (m == ReaderInbox.CLOSED || m instanceof Throwable) {
            // a connected datagram channel ends only on an error (an ICMP unreachable)
            throw new IOException("switch task " + answer.task() + ": the VIP " + vip
                + " cannot be reached" + (m instanceof Throwable ? ": "
                + ((Throwable) m).getMessage() : ""));
          }
          NetecPacket p = (NetecPacket) m;
          if (p.type() == NetecPacket.HELLO && p.sender() == NetecPacket.READER
              && StreamRequest.cookieOf(p) != null) {
            // the switch proves this address before it sends it anything more: the HELLO
            // again, echoing its cookie (a P4 switch sends none: its first RESULT comes); a
            // late cookie (the answer to an earlier repeat, reordered) changes nothing
            if (!started && p.task() == answer.task()) {
              hello = StreamRequest.readerHello(setup, answer.task(), answer.slotArray(),
                  answer.slots(), answer.secret(), StreamRequest.cookieOf(p));
              send(hello);
              sendChildHellos(); // the parent binds on this one
            }
            continue;
          }
          if (p.type() == NetecPacket.HELLO && p.sender() == NetecPacket.READER) {
            if (!ours(p)) {
              result.droppedPackets++; // another task's, or forged: names nobody
              continue;
            }
            throw failed(p, lastProgress, timeout);
          }
          if (p.type() == NetecPacket.HELLO && ours(p) && StreamRequest.errorOf(p) != null) {
            // a survivor's error, which a P4 switch passes on as it came (a child switch's,
            // as its partial sum's sender): the task ends now, not at its timeout
            throw failed(p, lastProgress, timeout);
          }
          if (!window.expected(p)) {
            result.droppedPackets++;
            continue;
          }
          started = true;
          window.accept(p);
        }
        if (ackProgress(before)) {
          lastProgress = System.nanoTime();
          rto = DATAGRAM_RTO_MS;
        }
      }
      for (int i = 0; i < DATAGRAM_FINS; i++) {
        ack(NetecPacket.FLAG_FIN);
      }
    }

    /** Whether {@link #window} moved past {@code before}; if so, ACKs when one is due. */
    private boolean ackProgress(long before) throws IOException {
      if (!window.moved(before)) {
        return false;
      }
      if (window.takeAckDue()) {
        ack(0);
      }
      return true;
    }

    private void ack(int flags) throws IOException {
      send(window.ack(flags));
    }

    /** The reader's HELLO, and each child's to its VIP (they stop with it: data came). */
    private void sendHello(NetecPacket hello) throws IOException {
      send(hello);
      if (++helloRounds > 1) {
        sendChildHellos(); // a P4 parent binds on the first, which went before these
      }
    }

    /**
     * Each child's HELLO to its VIP: after the parent is bound (a P4 child starts its
     * survivors on it, and a partial sum the parent is not bound for is dropped there).
     */
    private void sendChildHellos() throws IOException {
      for (ChildHello c : children) {
        byte[] b = c.hello.toBytes();
        toChildren.send(new java.net.DatagramPacket(b, b.length, c.vip));
      }
    }

    /** One packet: over TCP in the stream, in datagram mode a datagram of its own. */
    private void send(NetecPacket p) throws IOException {
      ByteBuf frame = NetecPacketCodec.frame(p, ch.alloc());
      ChannelFuture f = ch.writeAndFlush(setup.datagram() ? new DatagramPacket(frame, vip)
          : frame);
      if (f.isDone() && !f.isSuccess()) {
        throw new IOException("cannot write to the switch's VIP " + vip + ": "
            + f.cause().getMessage(), f.cause());
      }
    }
  }
}
