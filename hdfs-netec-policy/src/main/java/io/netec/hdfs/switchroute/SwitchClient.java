package io.netec.hdfs.switchroute;

import io.netec.hdfs.route.RouteDeclinedException;
import io.netec.hdfs.route.RouteUnavailableException;
import io.netec.hdfs.switchroute.wire.ControlFrames;
import io.netec.hdfs.switchroute.wire.NetecPacket;
import io.netec.hdfs.switchroute.wire.ProtocolException;
import io.netec.hdfs.switchroute.wire.SetupAnswer;
import io.netec.hdfs.switchroute.wire.SetupRequest;
import io.netec.hdfs.switchroute.wire.StreamRequest;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.channels.WritableByteChannel;
import java.util.concurrent.TimeUnit;

/**
 * The reader side of docs/protocol.md: sets a task up on a switch, receives the rebuilt
 * streams from its VIP and hands each row's bytes, in order, to a sink ({@link ReceiveWindow}:
 * order, the window, when to ACK). It asks for
 * retransmission (RETX) when nothing arrives for the retransmission timeout
 * ({@value #INITIAL_RTO_MS} ms, doubled after each RETX without progress up to
 * {@value #MAX_RTO_MS} ms: a RETX makes every survivor resend a window, so a false alarm is
 * costly), and fails (IOException) after the task's timeout without progress or on any packet
 * that breaks the protocol. A refusal at setup is a {@link RouteDeclinedException}: nothing was
 * done; a switch that cannot be reached is a {@link RouteUnavailableException}.
 */
public final class SwitchClient {
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

  /** Receives one rebuilt stream, in order. */
  public interface Sink {
    void write(byte[] b, int off, int len) throws IOException;
  }

  /** Opens the rows' sinks; called only once the switch has accepted the task. */
  public interface SinkOpener {
    Sink[] open() throws IOException;
  }

  /** What a rebuild cost the reader. */
  public static final class Result {
    /** Bytes read from the switch, headers included: the reader's ingress. */
    public long bytesReceived;
    public long retransmitRequests;
    /** Datagram mode: packets dropped because they failed their checks. */
    public long droppedPackets;
    public int task;
  }

  private SwitchClient() {
  }

  /**
   * Rebuilds the rows of {@code setup}; row r's sink gets exactly {@code rowLength[r]} bytes
   * (the erased unit's length, at most the stream length). The sinks are opened after the
   * switch accepted, so a refusal leaves nothing done anywhere.
   */
  public static Result rebuild(InetSocketAddress control, SetupRequest setup, long[] rowLength,
      SinkOpener opener) throws IOException {
    // the control connection stays open until the task ends: were this reader to go away
    // before claiming its task, the switch frees the task at once (docs/protocol.md, "hold")
    try (Socket held = new Socket()) {
      SetupAnswer answer = setUp(held, control, setup.held());
      return receive(setup, answer, rowLength, opener);
    }
  }

  /**
   * How long a child's setup may take (connect and answer): well under the switches' claim
   * timeout (5 s), which runs from each child's setup until the parent claims it, so that a
   * rack switch that drops packets costs its rack's aggregation, not the others' claims.
   */
  static final int CHILD_SETUP_MS = 2_000;

  /**
   * A setup the switch took the connection of but never answered (the connection failed, or
   * the answer did not come in time): declined, as a refusal is, but the switch is not there
   * for tasks (a rack switch is then left out of plans for a while: {@link #unreachable}).
   */
  private static final class Unanswered extends RouteDeclinedException {
    private static final long serialVersionUID = 1L;

    Unanswered(String reason) {
      super(reason);
    }
  }

  /** Whether a setup failed because the switch is not there, rather than refused it. */
  public static boolean unreachable(IOException setupFailure) {
    return setupFailure instanceof RouteUnavailableException
        || setupFailure instanceof Unanswered;
  }

  /** Hears a switch of a tree that did not take its part, and why. */
  public interface NotTaken {
    /** @param rack the child's rack, or null for the parent's switch */
    void accept(String rack, String control, IOException why);
  }

  /**
   * Rebuilds the one row of a task planned by rack: sets up every child on its rack's switch
   * at once (one that its switch refuses, or that cannot be reached within {@value
   * #CHILD_SETUP_MS} ms, leaves that rack's survivors to the parent), then the parent on the
   * reader's rack's switch, and receives from the parent. A parent its switch refuses or that
   * cannot be reached frees the children and runs the flat task on {@code flatSwitch} when
   * there is one (else fails as a flat task's setup does: declined, unavailable). {@code
   * notTaken} hears each switch that did not take its part, and why. Every control
   * connection is held until the task ends, so a reader that goes away takes its children
   * with it.
   */
  public static Result rebuild(SwitchRackPlan plan, InetSocketAddress flatSwitch,
      long[] rowLength, SinkOpener opener,
      NotTaken notTaken) throws IOException {
    SetupRequest parent;
    SetupAnswer answer;
    java.util.List<Socket> held = new java.util.ArrayList<>();
    try {
      java.util.List<java.util.concurrent.CompletableFuture<SetupAnswer>> pending =
          new java.util.ArrayList<>();
      for (SwitchRackPlan.Child c : plan.children()) {
        Socket s = new Socket();
        held.add(s);
        pending.add(java.util.concurrent.CompletableFuture.supplyAsync(() -> {
          try {
            return setUp(s, HostPort.parse(c.control), c.setup.held(), CHILD_SETUP_MS);
          } catch (IOException e) {
            notTaken.accept(c.rack, c.control, e);
            return null;
          }
        }, r -> {
          Thread t = new Thread(r, "netec-child-setup " + c.rack);
          t.setDaemon(true);
          t.start();
        }));
      }
      java.util.List<SetupAnswer> answers = new java.util.ArrayList<>();
      for (java.util.concurrent.CompletableFuture<SetupAnswer> f : pending) {
        answers.add(f.join()); // each within CHILD_SETUP_MS
      }
      try {
        parent = plan.parent(answers);
      } catch (ProtocolException e) {
        throw new RouteDeclinedException("cannot describe the parent task: " + e.getMessage());
      }
      Socket s = new Socket();
      held.add(s);
      try {
        answer = setUp(s, HostPort.parse(plan.parentControl()), parent.held());
      } catch (RouteDeclinedException e) { // refused, or unreachable (a subclass)
        if (flatSwitch == null || flatSwitch.equals(HostPort.parse(plan.parentControl()))) {
          throw e;
        }
        notTaken.accept(null, plan.parentControl(), e);
        answer = null;
      }
      if (answer != null) {
        return receive(parent, answer, rowLength, opener);
      }
    } finally {
      for (Socket s : held) {
        s.close(); // the children's tasks freed at once, if unclaimed
      }
    }
    return rebuild(flatSwitch, plan.flat(), rowLength, opener); // nothing done yet anywhere
  }

  private static Result receive(SetupRequest setup, SetupAnswer answer, long[] rowLength,
      SinkOpener opener) throws IOException {
    Sink[] sinks = opener.open();
    InetSocketAddress vip = HostPort.parse(answer.vip());
    Result result = new Result();
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

  /**
   * The switch failed the task for survivors it could not reach or never heard from: their
   * internal blocks (the route maps them to units and runs again from spares).
   */
  public static final class SurvivorsFailed extends IOException {
    private static final long serialVersionUID = 1L;
    private final java.util.List<String> blocks;

    SurvivorsFailed(java.util.List<String> blocks, String message) {
      super(message);
      this.blocks = java.util.List.copyOf(blocks);
    }

    /** The failed survivors' internal blocks, as the setup named them. */
    public java.util.List<String> blocks() {
      return blocks;
    }
  }

  private static SetupAnswer setUp(Socket s, InetSocketAddress control, SetupRequest setup)
      throws IOException {
    return setUp(s, control, setup, Integer.MAX_VALUE);
  }

  /**
   * ... connecting within min(5 s, {@code withinMs}), answered within min(the task's
   * timeout, {@code withinMs}).
   */
  private static SetupAnswer setUp(Socket s, InetSocketAddress control, SetupRequest setup,
      int withinMs) throws IOException {
    try {
      try {
        s.connect(control, Math.min(5_000, withinMs));
      } catch (IOException e) {
        throw new RouteUnavailableException("switch " + control + " unreachable: " + e);
      }
      s.setSoTimeout(Math.min(setup.timeoutMs(), withinMs));
      ControlFrames.write(new DataOutputStream(new BufferedOutputStream(s.getOutputStream())),
          setup.toJson());
      SetupAnswer a = SetupAnswer.fromJson(ControlFrames.read(
          new DataInputStream(new BufferedInputStream(s.getInputStream()))));
      if (!a.ok()) {
        throw new RouteDeclinedException("switch refused the task: " + a.reason());
      }
      return a;
    } catch (ProtocolException e) {
      throw new IOException("bad answer from switch " + control + ": " + e.getMessage());
    } catch (IOException e) {
      if (e instanceof RouteDeclinedException) {
        throw e;
      }
      throw new Unanswered("switch " + control + " unreachable: " + e);
    }
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
    private final Result result;
    private final ReceiveWindow window;

    Receiver(SetupRequest setup, SetupAnswer answer, long[] rowLength, Sink[] sinks,
        Result result) {
      this.setup = setup;
      this.answer = answer;
      this.result = result;
      this.window = new ReceiveWindow(answer.task(), answer.slotArray(), answer.slots(),
          setup.rows(), setup.length(), setup.payload(), rowLength, sinks);
    }

    /**
     * The switch's failure of the task, from its error HELLO: the senders it names at fault
     * ({@link SurvivorsFailed}), else a stall when no data came for most of the timeout (its
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
        return new SurvivorsFailed(blocks, what);
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
