package io.netec.hdfs.switchroute;

import io.netec.hdfs.route.LogLimiter;
import io.netec.hdfs.route.Transport;
import io.netec.hdfs.switchroute.wire.NetecPacket;
import io.netec.hdfs.switchroute.wire.NetecPacketCodec;
import io.netec.hdfs.switchroute.wire.ParentLink;
import io.netec.hdfs.switchroute.wire.ProtocolException;
import io.netec.hdfs.switchroute.wire.SetupRequest;
import io.netec.hdfs.switchroute.wire.StreamRequest;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.socket.DatagramPacket;
import io.netty.channel.socket.SocketChannel;
import java.net.InetSocketAddress;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * The switch's session of one task: its reader's connection (or address, in datagram mode),
 * its survivors' connections, its watchdog, and its {@link SwitchTask}. After the reader binds
 * it is touched only on that connection's event loop, so the data path takes no lock.
 */
final class SwitchSession extends TaskTable.Entry {
  /** Datagram mode's HELLOs to survivors not yet heard from are repeated this often. */
  static final int DATAGRAM_HELLO_MS = 200;
  /**
   * ... backing off (rounds 1, 2, 4, 8, 16, 32 of this many): at most 6 HELLOs per agent; a
   * survivor silent after them is left to the task's own timeout.
   */
  static final int DATAGRAM_HELLO_ROUNDS = 32;
  /** Datagram mode: a parent's HELLO to a child switch's task (docs/protocol.md). */
  private static final byte[] PARENT_HELLO =
      "{\"role\":\"parent\"}".getBytes(java.nio.charset.StandardCharsets.UTF_8);
  /** A failed task's reader connection is closed this long after its error HELLO at most. */
  static final int ERROR_CLOSE_MS = 1000;
  /** How long a child switch has to close its connection after the parent's FIN. */
  static final int CHILD_CLOSE_MS = 2_000;
  private final SoftwareSwitch sw;
  final Channel[] survivors;
  Channel reader;
  /**
   * Set when the reader is a parent switch (its HELLO named a {@link ParentLink}): RESULTs
   * leave as its DATA, its ACKs come in as the reader's. Null for a reader host.
   */
  ParentLink parent;
  /** Datagram mode: set when the reader attached this task to its parent (DatagramChildren). */
  DatagramChildren.ParentKey parentKey;
  long lastProgress = System.nanoTime();
  /** A stripe was completed: every survivor has been heard from. */
  private boolean completedAny;
  ScheduledFuture<?> watchdog;
  /** Datagram mode: the UDP channel, the reader's and the agents' addresses. */
  volatile Channel datagramChannel; // read by a teardown's fail() on a control loop
  InetSocketAddress readerAddress;
  InetSocketAddress[] agents;
  boolean[] heard;
  ScheduledFuture<?> helloResend;
  int helloRounds;
  int[] unheardAcks;

  SwitchSession(SwitchTask task, long memory, String secret, SoftwareSwitch sw) {
    super(task, memory, secret);
    this.sw = sw;
    this.survivors = new Channel[task.setup().k()];
  }

  /**
   * After {@link TaskTable#claim}: connects the survivors from the reader's event loop.
   *
   * @param parentLink the parent switch's task this one's stream is a partial sum of, or null
   */
  void bind(Channel readerChannel, ParentLink parentLink) {
    reader = readerChannel;
    parent = parentLink;
    if (parent != null) {
      sw.counters.partialSums.increment();
      sw.logs.info("partial-sum", "Task {} ({}) sums {} survivors for parent task {} sender {}"
          + " at {}", task.taskId(), LogLimiter.oneLine(task.setup().group()), survivors.length,
          parent.task(), parent.sender(), reader.remoteAddress());
    }
    SetupRequest s = task.setup();
    for (int i = 0; i < survivors.length; i++) {
      SetupRequest.Survivor sv = s.survivors().get(i);
      int sender = i;
      survivors[i] = new Bootstrap().group(reader.eventLoop()).channel(Transport.socketChannel())
          .option(ChannelOption.TCP_NODELAY, true)
          .option(ChannelOption.RCVBUF_ALLOCATOR, Transport.STREAM_READS)
          .handler(new ChannelInitializer<SocketChannel>() {
            @Override
            protected void initChannel(SocketChannel ch) {
              // SurvivorStreamHandler is done with each DATA packet when onData returns:
              // packets view the bytes where the read put them
              ch.pipeline().addLast(new NetecPacketCodec.InPlaceDecoder(),
                  new NetecPacketCodec.Encoder(),
                  new SurvivorStreamHandler(SwitchSession.this, sender, sw.counters));
            }
          }).option(ChannelOption.CONNECT_TIMEOUT_MILLIS, Math.max(500, s.timeoutMs() / 2))
          .connect(HostPort.parse(sv.agent())).addListener((ChannelFutureListener) f -> {
            if (!f.isSuccess()) {
              fail("cannot reach survivor " + sender + " at " + sv.agent() + ": "
                  + f.cause(), unreachable(sender, f.cause()) ? new int[] {sender} : new int[0]);
            }
          }).channel();
    }
    watchdog(reader.eventLoop());
  }

  /**
   * Datagram mode, after {@link TaskTable#claim}: HELLO to every survivor, again, backing off from
   * {@value #DATAGRAM_HELLO_MS} ms, to those not yet heard from (a HELLO may be lost).
   */
  void bindDatagram(Channel udp, InetSocketAddress reader) {
    if (prepareDatagram(udp, reader)) {
      startSurvivors();
    }
  }

  /** Datagram mode: the addresses and the watchdog; false when the task failed instead. */
  private boolean prepareDatagram(Channel udp, InetSocketAddress reader) {
    datagramChannel = udp;
    readerAddress = reader;
    SetupRequest s = task.setup();
    agents = new InetSocketAddress[s.k()];
    heard = new boolean[s.k()];
    unheardAcks = new int[s.k()];
    for (int i = 0; i < agents.length; i++) {
      String agent = s.survivors().get(i).agent();
      agents[i] = HostPort.parse(agent);
      if (agents[i].isUnresolved()) {
        fail("cannot resolve survivor " + i + " at " + agent);
        return false;
      }
    }
    watchdog(udp.eventLoop());
    return true;
  }

  /** Datagram mode: the survivors' HELLOs start (once). */
  void startSurvivors() {
    if (helloResend == null && !done()) {
      helloResend = datagramChannel.eventLoop().scheduleAtFixedRate(this::helloSurvivors, 0,
          DATAGRAM_HELLO_MS, TimeUnit.MILLISECONDS);
    }
  }

  /**
   * Datagram mode, after {@link DatagramChildren#attach}: the reader is a parent switch at {@code
   * parentVip}; its survivors are asked for their streams ({@link #startSurvivors}) on the
   * parent's first packet, which says it is bound: a partial sum sent before then would be
   * dropped there, and the parent's reader would have to ask for it again.
   */
  void bindDatagramChild(Channel udp, InetSocketAddress parentVip, ParentLink link) {
    parent = link;
    sw.counters.partialSums.increment();
    sw.logs.info("partial-sum", "Task {} ({}) sums {} survivors for parent task {} sender {}"
        + " at {} (datagrams)", task.taskId(), LogLimiter.oneLine(task.setup().group()),
        survivors.length, parent.task(), parent.sender(), parentVip);
    prepareDatagram(udp, parentVip);
  }

  private void helloSurvivors() {
    if (done()) {
      helloResend.cancel(false); // failed between claim and bind: stop, do not leak
      return;
    }
    int round = ++helloRounds;
    if (round > DATAGRAM_HELLO_ROUNDS) {
      helloResend.cancel(false); // the task's own timeout ends it if they stay silent
      return;
    }
    if (Integer.bitCount(round) != 1) {
      return; // HELLOs at rounds 1, 2, 4, 8, ...: a lost one is sent again, backing off
    }
    boolean all = true;
    for (int i = 0; i < agents.length; i++) {
      if (!heard[i]) {
        all = false;
        try {
          // a child switch (attached by the reader) needs no request: a HELLO of this task
          // to its sender says this parent is bound, and its survivors start
          sendDatagram(isChild(i) ? new NetecPacket(NetecPacket.HELLO, task.taskId(),
              task.slotArray(), i, 0, 0, 0, 0, PARENT_HELLO) : streamRequest(i).toHello(
              task.taskId(), task.slotArray(), i), agents[i]);
        } catch (ProtocolException e) {
          fail("survivor " + i + ": " + e.getMessage());
          return;
        }
      }
    }
    if (all) {
      helloResend.cancel(false);
    }
    datagramChannel.flush();
  }

  void sendDatagram(NetecPacket p, InetSocketAddress to) {
    datagramChannel.write(new DatagramPacket(Unpooled.wrappedBuffer(p.toBytes()), to),
        datagramChannel.voidPromise());
  }

  /**
   * The reader's ACK (after its HELLO): checked and rewritten by the task (EBSN), or null
   * (dropped). A FIN finishes the task.
   */
  NetecPacket readerAck(NetecPacket p) {
    NetecPacket ack = task.onAck(p);
    if (ack == null) {
      sw.counters.dropped.increment();
      return null;
    }
    if (ack.hasFlag(NetecPacket.FLAG_RETX)) {
      sw.counters.retransmitRequests.increment();
    }
    // progress is a completed stripe only (see data()): an ACK, even one that advances (a
    // reader may ACK ahead of the data), does not keep a task alive past its timeout
    return ack;
  }

  /** Fails the task, on its loop, once it makes no progress for its timeout. */
  private void watchdog(io.netty.channel.EventLoop loop) {
    int timeoutMs = task.setup().timeoutMs();
    long period = Math.max(25, timeoutMs / 4);
    watchdog = loop.scheduleAtFixedRate(() -> {
      if (done()) {
        cancelWatchdog(); // failed between claim and bind: stop, do not leak
        return;
      }
      long idle = System.nanoTime() - lastProgress;
      long limit = TimeUnit.MILLISECONDS.toNanos(timeoutMs);
      int[] silent = neverHeard();
      if (idle > limit) {
        fail("no progress for " + timeoutMs + " ms" + (silent.length == 0 ? ""
            : ", survivors " + java.util.Arrays.toString(silent) + " never answered"), silent);
      } else if (!completedAny && silent.length > 0 && idle > limit / 2) {
        // Datagram mode: the others answered and these did not, HELLO after HELLO, for half
        // the timeout: said now, before the reader's own timeout ends the task without a
        // word of whose fault it was (it then runs again from spares in their place).
        fail("survivors " + java.util.Arrays.toString(silent) + " did not answer within "
            + timeoutMs / 2 + " ms while the others did", silent);
      }
    }, period, period, TimeUnit.MILLISECONDS);
  }

  /**
   * A survivor's DATA packet into the task; its RESULTs (counted) to {@code toReader}. A
   * completed stripe is progress; a packet neither aggregated nor completing is dropped.
   */
  void data(NetecPacket p, java.util.function.Consumer<NetecPacket> toReader) {
    SwitchTask.Verdict v = task.onData(p, r -> {
      sw.counters.bytesOut.add(r.payloadLength());
      toReader.accept(r);
    });
    if (v == SwitchTask.Verdict.COMPLETED) {
      completedAny = true;
      lastProgress = System.nanoTime();
    } else if (v != SwitchTask.Verdict.AGGREGATED) {
      sw.counters.dropped.increment();
      (v.resent() ? sw.counters.resent : sw.counters.lost).increment();
    }
  }

  StreamRequest streamRequest(int sender) throws ProtocolException {
    return StreamRequest.forSender(task.setup(), task.slots(), sender, firstWindow());
  }

  /**
   * A survivor's first window: half the slots, and no more than the parent's first window
   * when this task's stream is a parent's sender (it cannot run further ahead than that).
   */
  private int firstWindow() {
    return parent == null ? task.slots() / 2 : Math.min(task.slots() / 2, parent.window());
  }

  /**
   * What opens survivor {@code sender}'s connection: its stream request, or, when the
   * survivor is a child switch's task, this task's reader HELLO on the child's VIP naming
   * this task as its parent.
   */
  NetecPacket survivorHello(int sender) throws ProtocolException {
    SetupRequest.Child child = task.setup().survivors().get(sender).child();
    if (child == null) {
      return streamRequest(sender).toHello(task.taskId(), task.slotArray(), sender);
    }
    SetupRequest setup = task.setup();
    return new ParentLink(task.taskId(), task.slotArray(), sender, task.slots(), firstWindow(),
        setup.payload(), setup.offset(), setup.length())
        .toHello(child.task(), child.slotArray(), child.secret());
  }

  /** Whether survivor {@code sender} is a child switch's task (its stream a partial sum). */
  boolean isChild(int sender) {
    return task.setup().survivors().get(sender).child() != null;
  }

  /** Whether some survivor is an agent, not a child switch. */
  boolean hasAgents() {
    return task.setup().survivors().stream().anyMatch(s -> s.child() == null);
  }

  /** A RESULT to the reader: as it is, or as the parent's DATA when the reader is a switch. */
  void toReader(NetecPacket result) {
    NetecPacket p = parent == null ? result : parent.asData(result);
    if (datagramChannel != null) {
      sendDatagram(p, readerAddress);
    } else {
      reader.write(p);
    }
  }

  /**
   * A packet from the reader's connection as this task's reader ACK: the parent's ACK to its
   * sender readdressed to this task when the reader is a parent switch; null when it is not
   * one (dropped).
   */
  NetecPacket fromReader(NetecPacket p) {
    if (parent == null) {
      return p;
    }
    return parent.asChildAck(p, task.taskId(), task.slotArray());
  }

  void setSurvivorReads(boolean on) {
    for (Channel c : survivors) {
      if (c != null) {
        c.config().setAutoRead(on);
      }
    }
  }

  void complete() {
    if (!sw.table.end(this)) {
      return; // it failed first: counted and closed then
    }
    sw.children.forget(this);
    sw.counters.completed.increment();
    cancelWatchdog();
    if (datagramChannel != null) {
      return; // nothing to close: the FIN went to the survivors
    }
    for (int i = 0; i < survivors.length; i++) {
      Channel c = survivors[i];
      if (c != null && isChild(i)) {
        // the FIN went with a half-close: the child closes on it, as this switch's reader
        // does (a close now could reset the connection before the child read its FIN, and
        // the child would count its task failed); closed here only if it does not
        c.eventLoop().schedule(() -> c.close(), CHILD_CLOSE_MS, TimeUnit.MILLISECONDS);
      } else if (c != null) {
        c.close();
      }
    }
    reader.close(); // the reader waits for this close after its FIN
  }

  /**
   * Whether a survivor agent's failed connection is its own fault, to be named to the reader:
   * refused (a reset came back: nothing listens there), or not made within half the task's
   * timeout while another survivor's was. Anything else (this host out of sockets or ports,
   * every connection timing out alike) names nobody.
   */
  private boolean unreachable(int sender, Throwable cause) {
    if (cause instanceof io.netty.channel.ConnectTimeoutException) {
      for (int j = 0; j < survivors.length; j++) {
        if (j != sender && survivors[j] != null && survivors[j].isActive()) {
          return true;
        }
      }
      return false;
    }
    return cause instanceof java.net.ConnectException;
  }

  /**
   * Datagram mode: the survivor agents that never answered a HELLO, when some did (none
   * answering says more of the path to them, or of this switch, than of them); else none.
   */
  private int[] neverHeard() {
    if (heard == null) {
      return new int[0];
    }
    int[] silent = java.util.stream.IntStream.range(0, heard.length)
        .filter(i -> !heard[i] && !isChild(i)).toArray();
    return silent.length < heard.length ? silent : new int[0];
  }

  void fail(String reason) {
    fail(reason, new int[0]);
  }

  /**
   * Ends the task as failed; the reader learns why, and which of the task's senders were at
   * fault ({@code faulty}: survivors this switch could not reach or never heard from), so
   * that its route can run again from spares in their place.
   */
  void fail(String reason, int... faulty) {
    if (reader != null && !reader.eventLoop().inEventLoop()) {
      reader.eventLoop().execute(() -> fail(reason, faulty));
      return;
    }
    if (datagramChannel != null && !datagramChannel.eventLoop().inEventLoop()) {
      datagramChannel.eventLoop().execute(() -> fail(reason, faulty));
      return;
    }
    if (!sw.table.end(this)) {
      return; // ended already: counted and logged once
    }
    sw.children.forget(this);
    sw.counters.failed.increment();
    sw.logs.warn("failed", "Task {} ({}) failed: {}", task.taskId(),
        LogLimiter.oneLine(task.setup().group()), LogLimiter.oneLine(reason));
    cancelWatchdog();
    if (datagramChannel != null) {
      // no connection to close: the reader learns it from a HELLO carrying the error (a
      // parent switch, as its sender's refusal)
      sendDatagram(parent == null ? StreamRequest.errorHello(task.taskId(), task.slotArray(),
          NetecPacket.READER, reason, faulty) : StreamRequest.errorHello(parent.task(),
          parent.slotArray(), parent.sender(), "partial sum of task " + task.taskId() + " at "
          + datagramChannel.localAddress() + ": " + reason), readerAddress);
      datagramChannel.flush();
      return;
    }
    for (Channel c : survivors) {
      if (c != null) {
        c.close();
      }
    }
    if (reader != null && parent != null) {
      // the parent switch learns why (a survivor's refusal: "survivor N refused: ..."), and
      // its reader's route with it, not only that a connection closed
      reader.writeAndFlush(StreamRequest.errorHello(parent.task(), parent.slotArray(),
          parent.sender(), "partial sum of task " + task.taskId() + " at " + reader.localAddress()
          + ": " + reason)).addListener(ChannelFutureListener.CLOSE);
      closeSoon(reader);
    } else if (reader != null) {
      // the reader learns why before the stream ends early (a reader from before this HELLO
      // sees only the end): its route fails, or runs again from spares for the faulty
      reader.writeAndFlush(StreamRequest.errorHello(task.taskId(), task.slotArray(),
          NetecPacket.READER, reason, faulty)).addListener(ChannelFutureListener.CLOSE);
      closeSoon(reader);
    }
  }

  /**
   * Closes a failed task's reader connection within {@value #ERROR_CLOSE_MS} ms whether or not
   * its error HELLO could be written: a reader that stopped reading (why a task stalls) would
   * else hold the connection, and a descriptor, for good.
   */
  private static void closeSoon(Channel c) {
    c.eventLoop().schedule(() -> c.close(), ERROR_CLOSE_MS, TimeUnit.MILLISECONDS);
  }

  private void cancelWatchdog() {
    if (watchdog != null) {
      watchdog.cancel(false);
    }
    if (helloResend != null) {
      helloResend.cancel(false);
    }
  }
}
