package io.netec.hdfs.switchroute;

import io.netec.hdfs.route.RouteStalledException;
import io.netec.hdfs.route.Transport;
import io.netec.hdfs.switchroute.wire.NetecPacket;
import io.netec.hdfs.switchroute.wire.NetecPacketCodec;
import io.netec.hdfs.switchroute.wire.ProtocolException;
import io.netec.hdfs.switchroute.wire.SetupAnswer;
import io.netec.hdfs.switchroute.wire.SetupRequest;
import io.netec.hdfs.switchroute.wire.StreamRequest;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.FixedRecvByteBufAllocator;
import io.netty.channel.socket.DatagramPacket;
import io.netty.channel.socket.SocketChannel;
import io.netty.util.ReferenceCountUtil;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

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
 * packets into an {@link Inbox}, and the reader's own thread (the task's) takes them from it,
 * runs the window and writes to the sinks, which may block (a DataNode's target, a client's
 * buffer) without holding an event loop. The inbox stops reading while it holds {@value
 * #INBOX_HIGH} packets (autoRead: TCP's window then holds the switch back) and reads again
 * once the reader has taken it down to {@value #INBOX_LOW}.
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
  /** Packets an inbox holds before its connection stops reading, and where it reads again. */
  static final int INBOX_HIGH = 64;
  static final int INBOX_LOW = 16;
  /**
   * The longest HELLO the switch sends a reader (a cookie, a task's failure): its JSON within
   * 4 KiB, whatever the task's payload (which may be as small as 64 bytes).
   */
  static final int MAX_HELLO_FRAME = NetecPacket.HEADER_BYTES + 4096;
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
    SwitchClient.Sink[] sinks = opener.open();
    InetSocketAddress vip = HostPort.parse(answer.vip());
    SwitchClient.Result result = new SwitchClient.Result();
    result.task = answer.task();
    NetecPacket hello = StreamRequest.readerHello(setup, answer.task(), answer.slotArray(),
        answer.slots(), answer.secret());
    int maxFrame = NetecPacket.HEADER_BYTES + setup.payload();
    Inbox inbox = new Inbox(maxFrame);
    Bootstrap b = new Bootstrap().group(Loops.GROUP)
        .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, CONNECT_MS);
    if (setup.datagram()) {
      // one packet a datagram: a longer one than the task's shows as such, and is dropped
      b.channel(Transport.datagramChannel())
          .option(ChannelOption.SO_RCVBUF, 4 << 20)
          .option(ChannelOption.RCVBUF_ALLOCATOR,
              new FixedRecvByteBufAllocator(Math.max(maxFrame, MAX_HELLO_FRAME) + 1))
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
    try {
      if (!connected.awaitUninterruptibly(CONNECT_MS + 1_000L) || !connected.isSuccess()) {
        throw new IOException("cannot connect to the switch's VIP " + vip + ": "
            + (connected.cause() == null ? "no answer" : connected.cause().getMessage()),
            connected.cause());
      }
      Receiver r = new Receiver(setup, answer, rowLength, sinks, result, ch, vip, inbox);
      if (setup.datagram()) {
        r.runDatagrams(hello);
      } else {
        r.send(hello);
        r.run();
      }
    } finally {
      ch.close();
      result.bytesReceived = inbox.bytes.get();
      result.droppedPackets += inbox.undecodable.get();
    }
    return result;
  }

  /**
   * The event loop's side of one task's connection: packets decoded (datagrams here, one a
   * packet; a TCP stream by the decoder before it) into a queue the reader's thread takes
   * from, then the connection's end or failure. A read's packets go to the reader together,
   * when the read completes: one wake-up a socket read, not one a packet (which cost a 4 MiB
   * unit 10-80 ms at 1 Gbit/s in 1 KiB packets). Reading stops at {@value #INBOX_HIGH}
   * packets held and starts again when the reader has taken the count down to {@value
   * #INBOX_LOW} (the event loop does both, so neither can undo the other late).
   */
  static final class Inbox extends ChannelInboundHandlerAdapter {
    /** The connection ended (the switch closed it). */
    static final Object CLOSED = new Object();
    private final BlockingQueue<Object> queue = new LinkedBlockingQueue<>();
    /** The event loop's: this read's packets, queued as one item when the read completes. */
    private List<Object> batch = new ArrayList<>();
    /** The reader's: the packets of a batch it took and has not yet returned. */
    private final ArrayDeque<Object> taken = new ArrayDeque<>();
    private final AtomicInteger held = new AtomicInteger();
    private final int maxFrame;
    private volatile Channel channel;
    /** After the FIN: late duplicates are read and dropped while the switch closes. */
    private volatile boolean discard;
    /** Bytes of packets received, headers included: the reader's ingress. */
    final AtomicLong bytes = new AtomicLong();
    /** Datagram mode: datagrams that were no packet (each travels alone: RETX recovers it). */
    final AtomicLong undecodable = new AtomicLong();

    Inbox(int maxFrame) {
      this.maxFrame = maxFrame;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
      channel = ctx.channel();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      Object item;
      if (msg instanceof DatagramPacket) {
        ByteBuf in = ((DatagramPacket) msg).content();
        bytes.addAndGet(in.readableBytes());
        byte[] frame = new byte[in.readableBytes()];
        in.readBytes(frame);
        ReferenceCountUtil.release(msg);
        try {
          item = NetecPacket.decodeFrame(frame, 0, frame.length);
        } catch (ProtocolException e) {
          undecodable.incrementAndGet();
          return;
        }
        if (tooLong((NetecPacket) item)) {
          undecodable.incrementAndGet();
          return;
        }
      } else {
        NetecPacket p = (NetecPacket) msg; // from the decoder: its own copy of the frame
        bytes.addAndGet(p.encodedLength());
        item = tooLong(p) ? new ProtocolException("a packet of " + p.encodedLength()
            + " bytes, more than the task's " + maxFrame) : p;
      }
      if (discard) {
        return;
      }
      batch.add(item);
      if (held.incrementAndGet() >= INBOX_HIGH) {
        ctx.channel().config().setAutoRead(false);
      }
    }

    /** Longer than the task's packets (a HELLO: than {@link #MAX_HELLO_FRAME}). */
    private boolean tooLong(NetecPacket p) {
      return p.encodedLength() > (p.type() == NetecPacket.HELLO ? Math.max(maxFrame,
          MAX_HELLO_FRAME) : maxFrame);
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
      handOver();
    }

    private void handOver() {
      if (!batch.isEmpty()) {
        queue.add(batch);
        batch = new ArrayList<>();
      }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
      handOver();
      queue.add(CLOSED);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      handOver();
      queue.add(cause); // a corrupt frame, a reset; datagrams: an ICMP unreachable
      ctx.close();
    }

    /**
     * The next packet, the connection's end ({@link #CLOSED}) or its failure (a Throwable);
     * null when nothing came within {@code ms}.
     */
    Object poll(long ms) throws InterruptedIOException {
      Object m = taken.poll();
      if (m == null) {
        try {
          m = ms > 0 ? queue.poll(ms, TimeUnit.MILLISECONDS) : queue.poll();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new InterruptedIOException("interrupted while reading from the switch");
        }
        if (m instanceof List) {
          taken.addAll((List<?>) m);
          m = taken.poll();
        }
      }
      if (m instanceof NetecPacket || m instanceof ProtocolException) {
        if (held.decrementAndGet() == INBOX_LOW) {
          Channel c = channel;
          c.eventLoop().execute(() -> c.config().setAutoRead(true));
        }
      }
      return m;
    }

    /** From the FIN on: whatever comes is dropped, and read, so the switch's close is seen. */
    void discard() {
      discard = true;
      queue.clear();
      taken.clear();
      Channel c = channel;
      c.eventLoop().execute(() -> c.config().setAutoRead(true));
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
    private final Inbox inbox;

    Receiver(SetupRequest setup, SetupAnswer answer, long[] rowLength,
        SwitchClient.Sink[] sinks, SwitchClient.Result result, Channel ch, InetSocketAddress vip,
        Inbox inbox) {
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
          if (m == Inbox.CLOSED) {
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
      awaitClose();
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
      send(hello);
      while (!window.done()) {
        Object m = inbox.poll(started ? rto : DATAGRAM_HELLO_MS);
        if (m == null) {
          if (System.nanoTime() - lastProgress > timeout) {
            throw noData(" (datagrams)");
          }
          if (!started) {
            send(hello);
          } else {
            rto = retransmit(rto);
          }
          continue;
        }
        long before = window.firstMissing();
        for (; m != null; m = window.done() ? null : inbox.poll(0)) { // what came, at once
          if (m == Inbox.CLOSED || m instanceof Throwable) {
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

    /**
     * Waits (at most {@value #CLOSE_WAIT_MS} ms) for the switch to close the connection after
     * FIN, discarding late duplicates: closing with unread data would send a reset that can
     * destroy the FIN in flight, and the switch would count a finished task as failed.
     */
    private void awaitClose() {
      inbox.discard();
      ((SocketChannel) ch).shutdownOutput().awaitUninterruptibly(CLOSE_WAIT_MS);
      ch.closeFuture().awaitUninterruptibly(CLOSE_WAIT_MS);
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
