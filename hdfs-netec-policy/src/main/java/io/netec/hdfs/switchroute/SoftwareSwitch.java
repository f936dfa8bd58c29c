package io.netec.hdfs.switchroute;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.netec.hdfs.route.LogLimiter;
import io.netec.hdfs.route.PeerNetworks;
import io.netec.hdfs.switchroute.wire.ControlFrames;
import io.netec.hdfs.switchroute.wire.JsonLimits;
import io.netec.hdfs.switchroute.wire.NetecPacket;
import io.netec.hdfs.switchroute.wire.NetecPacketCodec;
import io.netec.hdfs.switchroute.wire.ProtocolException;
import io.netec.hdfs.switchroute.wire.SetupAnswer;
import io.netec.hdfs.switchroute.wire.SetupRequest;
import io.netec.hdfs.switchroute.wire.StreamRequest;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.socket.DatagramPacket;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.netty.handler.codec.LengthFieldPrepender;
import java.io.Closeable;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ScheduledFuture;
import javax.management.JMException;
import javax.management.ObjectName;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The NetEC switch in software, speaking docs/protocol.md on any host: a control endpoint
 * that sets tasks up, and a data endpoint (the VIP) where readers connect. For each task the
 * switch connects to the k survivor agents from the reader connection's event loop, so one
 * thread owns a task's {@link SwitchTask} and no locks are needed on the data path.
 * Back-pressure: when the reader cannot take more, the survivors' reads pause (autoRead).
 * Memory: each task holds S x rows x P bytes; the total is capped by the memory budget, and
 * EBSN keeps survivors within the ring.
 */
public final class SoftwareSwitch implements Closeable, SoftwareSwitchMXBean {
  /** How refusals name the networks the switch dials agents in. */
  static final String AGENT_NETWORKS = "agent networks";
  private static final Logger LOG = LoggerFactory.getLogger(SoftwareSwitch.class);
  /** Lines peers can cause: one per cause every 10 s, then a count. */
  private final LogLimiter logs = new LogLimiter(LOG, 10_000);
  private static final ObjectMapper JSON = new ObjectMapper();

  /** Sizes and addresses; the defaults suit a test or a small cluster. */
  public static final class Options {
    public String bindHost = "127.0.0.1";
    /** Host written into VIPs; null means bindHost. */
    public String advertisedHost;
    /** Port written into VIPs (a VIP in front of the data port); 0 means the data port. */
    public int advertisedDataPort;
    public int controlPort;
    public int dataPort;
    public int slotArrays = 64;
    public int slotsPerArray = 64;
    public long memoryBudgetBytes = 512L << 20;
    public int maxPayload = io.netec.hdfs.switchroute.wire.NetecPacket.MAX_STREAM_PAYLOAD;
    public int ioThreads = 2;
    /** Port of the HTTP metrics page ({@code /prom}, {@code /jmx}); -1: no page. */
    public int metricsPort = -1;
    /** Networks (CIDR) agents may be in; null: this host's interfaces' networks. */
    public java.util.List<String> agentNetworks;
    /** Control connections held at once from one address, and in all; more are closed. */
    public int maxControlPerPeer = 64;
    public int maxControl = 1024;
    /**
     * Data connections (readers' streams) held at once from one address, and in all; more are
     * closed: one reader per task, and an address holds at most tasksPerPeer tasks of its own.
     */
    public int maxDataPerPeer = 64;
    public int maxData = 1024;
    /** A control connection that sends nothing for this long is closed. */
    public int controlIdleMs = 30_000;
    /**
     * Tasks one address may hold at once, claimed or not (its reader may claim them from any
     * address): one peer cannot take every slot array from the others.
     */
    public int tasksPerPeer = 32;
    /**
     * A task no reader has claimed within this long is freed, whatever timeout its requester
     * asked for (a reader claims within milliseconds of its setup).
     */
    public int claimTimeoutMs = 5_000;
  }

  /** Open control connections, by peer address, and in all. */
  private final ConnectionCaps controlCaps;
  /** Open data connections, by peer address, and in all. */
  private final ConnectionCaps dataCaps;
  /** Live tasks, by the address that set them up (guarded by the switch). */
  private final java.util.Map<java.net.InetAddress, Integer> tasksByPeer =
      new java.util.HashMap<>();

  private final Options opts;
  private final EventLoopGroup group;
  private final Channel control;
  private final Channel data;
  /** Datagram mode: the data port's number over UDP, one event loop (docs/protocol.md). */
  private final Channel datagrams;
  private final Live[] tasks = new Live[256];
  private int lastTaskId = -1; // guarded by this
  private final boolean[] arrayUsed;
  private long memoryUsed;
  private final ObjectName mbean;
  private final SwitchMetricsPage metricsPage;

  private final LongAdder accepted = new LongAdder();
  private final LongAdder premultiplied = new LongAdder();
  private final LongAdder refused = new LongAdder();
  private final LongAdder completed = new LongAdder();
  private final LongAdder failed = new LongAdder();
  private final LongAdder bytesIn = new LongAdder();
  private final LongAdder bytesOut = new LongAdder();
  private final LongAdder stalls = new LongAdder();
  private final LongAdder dropped = new LongAdder();
  /** Datagram mode: cookies sent to readers' addresses not yet proven. */
  private final LongAdder cookies = new LongAdder();
  /** The key of datagram mode's cookies: random, this switch's alone, never sent. */
  private final javax.crypto.spec.SecretKeySpec cookieKey;

  private final PeerNetworks agentNetworks;
  private final CpuAccountedThreads ioThreads = new CpuAccountedThreads("netec-switch");

  public SoftwareSwitch(Options opts) throws IOException {
    this.opts = opts;
    byte[] key = new byte[32];
    RANDOM.nextBytes(key);
    this.cookieKey = new javax.crypto.spec.SecretKeySpec(key, "HmacSHA256");
    this.controlCaps = new ConnectionCaps(opts.maxControlPerPeer, opts.maxControl);
    this.dataCaps = new ConnectionCaps(opts.maxDataPerPeer, opts.maxData);
    this.agentNetworks = PeerNetworks.of(opts.agentNetworks, AGENT_NETWORKS, "--agent-networks");
    this.arrayUsed = new boolean[Math.min(256, opts.slotArrays)];
    this.group = Transport.group(opts.ioThreads, ioThreads);
    try {
      control = new ServerBootstrap().group(group).channel(Transport.serverChannel())
          .childHandler(new ChannelInitializer<SocketChannel>() {
            @Override
            protected void initChannel(SocketChannel ch) {
              String over = controlCaps.admit(ch);
              if (over != null) {
                logs.warn("control-cap", "Closing a control connection: {}", over);
                ch.close();
                return;
              }
              ch.pipeline().addLast(
                  new io.netty.handler.timeout.ReadTimeoutHandler(opts.controlIdleMs,
                      TimeUnit.MILLISECONDS),
                  new LengthFieldBasedFrameDecoder(65536 + 4, 0, 4, 0, 4),
                  new LengthFieldPrepender(4), new ControlHandler());
            }
          }).bind(opts.bindHost, opts.controlPort).sync().channel();
      data = new ServerBootstrap().group(group).channel(Transport.serverChannel())
          .childOption(ChannelOption.TCP_NODELAY, true)
          .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK, Transport.WATER_MARK)
          .childHandler(new ChannelInitializer<SocketChannel>() {
            @Override
            protected void initChannel(SocketChannel ch) {
              String over = dataCaps.admit(ch);
              if (over != null) {
                logs.warn("data-cap", "Closing a data connection: {}", over);
                ch.close();
                return;
              }
              ch.pipeline().addLast(new NetecPacketCodec.Decoder(),
                  new NetecPacketCodec.Encoder(), new ReaderHandler());
            }
          }).bind(opts.bindHost, opts.dataPort).sync().channel();
      datagrams = new Bootstrap().group(group).channel(Transport.datagramChannel())
          .option(ChannelOption.SO_RCVBUF, 4 << 20).option(ChannelOption.SO_SNDBUF, 4 << 20)
          .option(ChannelOption.RCVBUF_ALLOCATOR,
              new io.netty.channel.FixedRecvByteBufAllocator(65536))
          .handler(new DatagramHandler())
          .bind(opts.bindHost, ((InetSocketAddress) data.localAddress()).getPort()).sync()
          .channel();
    } catch (Exception e) {
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
      throw new IOException("software switch cannot listen on " + opts.bindHost, e);
    }
    mbean = registerMBean();
    try {
      metricsPage = opts.metricsPort < 0 ? null : new SwitchMetricsPage(this,
          String.valueOf(mbean), group, opts.bindHost, opts.metricsPort);
    } catch (IOException e) {
      close();
      throw new IOException("software switch cannot serve its metrics page on " + opts.bindHost
          + ":" + opts.metricsPort, e);
    }
    LOG.info("NetEC software switch: control {}, data {}, {} slot arrays x {} slots, {} MiB,"
        + " {} I/O threads ({}), metrics {}", controlAddress(), dataAddress(), arrayUsed.length,
        opts.slotsPerArray, opts.memoryBudgetBytes >> 20, opts.ioThreads, Transport.name(),
        mbean);
  }

  private ObjectName registerMBean() {
    try {
      ObjectName name = new ObjectName("io.netec:type=SoftwareSwitch,port="
          + controlAddress().getPort());
      ManagementFactory.getPlatformMBeanServer().registerMBean(this, name);
      return name;
    } catch (JMException e) {
      LOG.warn("Software switch metrics not registered over JMX: {}", e.toString());
      return null;
    }
  }

  public InetSocketAddress controlAddress() {
    return (InetSocketAddress) control.localAddress();
  }

  /** The HTTP metrics page's address, or null when it is off. */
  public InetSocketAddress metricsAddress() {
    return metricsPage == null ? null : metricsPage.address();
  }

  public InetSocketAddress dataAddress() {
    return (InetSocketAddress) data.localAddress();
  }

  private String vip() {
    String host = opts.advertisedHost != null ? opts.advertisedHost : opts.bindHost;
    return host + ":" + (opts.advertisedDataPort > 0 ? opts.advertisedDataPort
        : dataAddress().getPort());
  }

  @Override
  public long getTasksAccepted() {
    return accepted.sum();
  }

  @Override
  public long getTasksPremultiplied() {
    return premultiplied.sum();
  }

  @Override
  public long getTasksRefused() {
    return refused.sum();
  }

  @Override
  public long getTasksCompleted() {
    return completed.sum();
  }

  @Override
  public long getTasksFailed() {
    return failed.sum();
  }

  @Override
  public synchronized int getSlotArraysInUse() {
    int n = 0;
    for (Live l : tasks) {
      n += l == null ? 0 : 1;
    }
    return n;
  }

  @Override
  public synchronized long getMemoryInUse() {
    return memoryUsed;
  }

  @Override
  public synchronized long getMemoryHeld() {
    long n = 0;
    for (Live l : tasks) {
      n += l == null ? 0 : l.task.heldBytes(); // an int read: fine from another thread
    }
    return n;
  }

  @Override
  public long getBytesIn() {
    return bytesIn.sum();
  }

  @Override
  public long getBytesOut() {
    return bytesOut.sum();
  }

  @Override
  public long getStalls() {
    return stalls.sum();
  }

  @Override
  public long getPacketsDropped() {
    return dropped.sum();
  }

  @Override
  public long getDatagramCookies() {
    return cookies.sum();
  }

  @Override
  public long getCpuNanos() {
    return ioThreads.cpuNanos();
  }

  /** CPU nanoseconds of each live I/O thread: how tasks spread over them. */
  long[] ioThreadCpuNanos() {
    return ioThreads.liveCpuNanos();
  }

  @Override
  public void close() {
    if (metricsPage != null) {
      metricsPage.close();
    }
    if (mbean != null && ManagementFactory.getPlatformMBeanServer().isRegistered(mbean)) {
      try {
        ManagementFactory.getPlatformMBeanServer().unregisterMBean(mbean);
      } catch (JMException e) {
        LOG.debug("unregister {}: {}", mbean, e.toString());
      }
    }
    control.close().awaitUninterruptibly();
    data.close().awaitUninterruptibly();
    datagrams.close().awaitUninterruptibly();
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly();
  }

  // ---- task table ----------------------------------------------------------------------------

  synchronized SetupAnswer allocate(SetupRequest req, java.net.InetAddress requester) {
    int live = tasksByPeer.getOrDefault(requester, 0);
    if (live >= opts.tasksPerPeer) {
      return refuse(live + " tasks live set up from " + ConnectionCaps.describe(requester)
          + " (cap " + opts.tasksPerPeer + ")");
    }
    if (req.payload() > opts.maxPayload) {
      return refuse("payload size " + req.payload() + " not supported (this switch: at most "
          + opts.maxPayload + ")");
    }
    for (int i = 0; i < req.survivors().size(); i++) {
      String agent = req.survivors().get(i).agent();
      String why = agentNetworks.refusal(agent.substring(0, agent.lastIndexOf(':')));
      if (why != null) {
        return refuse("survivors[" + i + "].agent: " + why);
      }
    }
    int slots = opts.slotsPerArray;
    long mem = SwitchTask.memoryBytes(slots, req);
    if (memoryUsed + mem > opts.memoryBudgetBytes) {
      return refuse("memory budget exceeded: " + memoryUsed + " + " + mem + " > "
          + opts.memoryBudgetBytes + " bytes");
    }
    // ids in turn, not the lowest free one: a late packet of an ended task (a datagram, a
    // refusal) names its id, and should find no task there, not the next one
    int id = -1;
    for (int i = 0; i < tasks.length && id < 0; i++) {
      int candidate = (lastTaskId + 1 + i) % tasks.length;
      id = tasks[candidate] == null ? candidate : -1;
    }
    if (id < 0) {
      return refuse("no free task id");
    }
    lastTaskId = id;
    int array = -1;
    for (int a = 0; a < arrayUsed.length && array < 0; a++) {
      array = arrayUsed[a] ? -1 : a;
    }
    if (array < 0) {
      return refuse("no free slot array");
    }
    Live l = new Live(new SwitchTask(id, array, slots, req), mem, newSecret());
    l.requester = requester;
    tasksByPeer.merge(requester, 1, Integer::sum);
    tasks[id] = l;
    arrayUsed[array] = true;
    memoryUsed += mem;
    accepted.increment();
    if (req.premultiplied()) {
      premultiplied.increment();
    }
    // A reader that never comes must not hold the slot array.
    group.next().schedule(() -> expireUnclaimed(l), claimTimeoutMs(req), TimeUnit.MILLISECONDS);
    return SetupAnswer.accept(id, array, slots, vip(), l.secret);
  }

  private static final java.security.SecureRandom RANDOM = new java.security.SecureRandom();

  /** 128 random bits as 32 hex digits: what only the reader that set a task up knows. */
  private static String newSecret() {
    byte[] b = new byte[16];
    RANDOM.nextBytes(b);
    return hex(b);
  }

  private static String hex(byte[] b) {
    StringBuilder s = new StringBuilder(2 * b.length);
    for (byte x : b) {
      s.append(String.format("%02x", x & 0xff));
    }
    return s.toString();
  }

  /**
   * Datagram mode's return-routability cookie of a task for one source address: an HMAC under
   * this switch's own random key of the task, its secret and the address, so the switch keeps
   * no state per address and only a reader that receives at the address can echo it.
   */
  private String cookie(Live l, InetSocketAddress from) {
    try {
      javax.crypto.Mac mac = javax.crypto.Mac.getInstance("HmacSHA256");
      mac.init(cookieKey);
      mac.update(java.nio.ByteBuffer.allocate(8).putInt(l.task.taskId())
          .putInt(l.task.slotArray()).array());
      mac.update(l.secret.getBytes(StandardCharsets.US_ASCII));
      mac.update(from.getAddress().getAddress());
      mac.update(new byte[] {(byte) (from.getPort() >> 8), (byte) from.getPort()});
      return hex(java.util.Arrays.copyOf(mac.doFinal(), 16));
    } catch (java.security.GeneralSecurityException e) {
      throw new IllegalStateException("HmacSHA256 is part of every JDK", e);
    }
  }

  /** Whether {@code given} is the task's secret (compared in constant time). */
  private static boolean secretMatches(Live l, String given) {
    return java.security.MessageDigest.isEqual(
        l.secret.getBytes(java.nio.charset.StandardCharsets.US_ASCII),
        given.getBytes(java.nio.charset.StandardCharsets.US_ASCII));
  }

  private SetupAnswer refuse(String reason) {
    refused.increment();
    logs.info("refused", "Refused a task: {}", LogLimiter.oneLine(reason));
    return SetupAnswer.refuse(reason);
  }

  private synchronized Live lookup(int task, int array) {
    Live l = tasks[task];
    return l != null && l.task.slotArray() == array ? l : null;
  }

  private int claimTimeoutMs(SetupRequest req) {
    return Math.min(req.timeoutMs(), opts.claimTimeoutMs);
  }

  /** The reader's HELLO takes the task; false if it expired or is taken. */
  private synchronized boolean claim(Live l) {
    if (l.done || l.bound) {
      return false;
    }
    l.bound = true;
    return true;
  }

  /** Releases a task no reader claimed in time (decided under the same lock as claim). */
  private void expireUnclaimed(Live l) {
    releaseUnclaimed(l, "no reader connected within " + claimTimeoutMs(l.task.setup())
        + " ms");
  }

  /** Releases {@code l} if no reader claimed it (under the same lock as claim). */
  private synchronized void releaseUnclaimed(Live l, String why) {
    if (!l.bound && !l.done) {
      l.done = true;
      failed.increment();
      logs.warn("unclaimed", "Task {} ({}) failed: {}", l.task.taskId(),
          LogLimiter.oneLine(l.task.setup().group()), why);
      release(l);
    }
  }

  private synchronized Live byId(int id) {
    return id >= 0 && id < tasks.length ? tasks[id] : null;
  }

  private synchronized void release(Live l) {
    if (l.requester != null) { // the task no longer counts against its requester
      tasksByPeer.computeIfPresent(l.requester, (p, n) -> n > 1 ? n - 1 : null);
      l.requester = null;
    }
    if (tasks[l.task.taskId()] == l) {
      tasks[l.task.taskId()] = null;
      arrayUsed[l.task.slotArray()] = false;
      memoryUsed -= l.memory;
    }
  }

  /** A task with its connections; after the reader binds, touched only on its event loop. */
  private final class Live {
    final SwitchTask task;
    final long memory;
    /** Claims the VIP and tears the task down: only the reader that set it up knows it. */
    final String secret;
    final Channel[] survivors;
    boolean bound; // guarded by the switch: see claim() and expireUnclaimed()
    /** Who set the task up, until it is released (guarded by the switch). */
    java.net.InetAddress requester;
    Channel reader;
    volatile boolean done;
    long lastProgress = System.nanoTime();
    ScheduledFuture<?> watchdog;
    /** Datagram mode: the UDP channel, the reader's and the agents' addresses. */
    Channel datagramChannel;
    InetSocketAddress readerAddress;
    InetSocketAddress[] agents;
    boolean[] heard;
    ScheduledFuture<?> helloResend;
    int helloRounds;
    int[] unheardAcks;

    Live(SwitchTask task, long memory, String secret) {
      this.task = task;
      this.memory = memory;
      this.secret = secret;
      this.survivors = new Channel[task.setup().k()];
    }

    /** After {@link #claim}: connects the survivors from the reader's event loop. */
    void bind(Channel readerChannel) {
      reader = readerChannel;
      SetupRequest s = task.setup();
      for (int i = 0; i < survivors.length; i++) {
        SetupRequest.Survivor sv = s.survivors().get(i);
        String[] hp = sv.agent().split(":");
        int sender = i;
        survivors[i] = new Bootstrap().group(reader.eventLoop()).channel(Transport.socketChannel())
            .option(ChannelOption.TCP_NODELAY, true)
            .option(ChannelOption.RCVBUF_ALLOCATOR, Transport.STREAM_READS)
            .handler(new ChannelInitializer<SocketChannel>() {
              @Override
              protected void initChannel(SocketChannel ch) {
                // SurvivorHandler is done with each DATA packet when onData returns: packets
                // view the bytes where the read put them
                ch.pipeline().addLast(new NetecPacketCodec.InPlaceDecoder(),
                    new NetecPacketCodec.Encoder(), new SurvivorHandler(Live.this, sender));
              }
            }).connect(hp[0], Integer.parseInt(hp[1])).addListener((ChannelFutureListener) f -> {
              if (!f.isSuccess()) {
                fail("cannot reach survivor " + sender + " at " + sv.agent() + ": "
                    + f.cause());
              }
            }).channel();
      }
      watchdog(reader.eventLoop());
    }

    /**
     * Datagram mode, after {@link #claim}: HELLO to every survivor, again, backing off from
     * {@value #DATAGRAM_HELLO_MS} ms, to those not yet heard from (a HELLO may be lost).
     */
    void bindDatagram(Channel udp, InetSocketAddress reader) {
      datagramChannel = udp;
      readerAddress = reader;
      SetupRequest s = task.setup();
      agents = new InetSocketAddress[s.k()];
      heard = new boolean[s.k()];
      unheardAcks = new int[s.k()];
      for (int i = 0; i < agents.length; i++) {
        String agent = s.survivors().get(i).agent();
        int colon = agent.lastIndexOf(':');
        agents[i] = new InetSocketAddress(agent.substring(0, colon),
            Integer.parseInt(agent.substring(colon + 1)));
        if (agents[i].isUnresolved()) {
          fail("cannot resolve survivor " + i + " at " + agent);
          return;
        }
      }
      helloResend = udp.eventLoop().scheduleAtFixedRate(this::helloSurvivors, 0,
          DATAGRAM_HELLO_MS, TimeUnit.MILLISECONDS);
      watchdog(udp.eventLoop());
    }

    private void helloSurvivors() {
      if (done) {
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
            sendDatagram(streamRequest(i).toHello(task.taskId(), task.slotArray(), i),
                agents[i]);
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
        dropped.increment();
        return null;
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
        if (done) {
          cancelWatchdog(); // failed between claim and bind: stop, do not leak
        } else if (System.nanoTime() - lastProgress > TimeUnit.MILLISECONDS.toNanos(timeoutMs)) {
          fail("no progress for " + timeoutMs + " ms");
        }
      }, period, period, TimeUnit.MILLISECONDS);
    }

    /**
     * A survivor's DATA packet into the task; its RESULTs (counted) to {@code toReader}. A
     * completed stripe is progress; a packet neither aggregated nor completing is dropped.
     */
    void data(NetecPacket p, java.util.function.Consumer<NetecPacket> toReader) {
      SwitchTask.Verdict v = task.onData(p, r -> {
        bytesOut.add(r.payloadLength());
        toReader.accept(r);
      });
      if (v == SwitchTask.Verdict.COMPLETED) {
        lastProgress = System.nanoTime();
      } else if (v != SwitchTask.Verdict.AGGREGATED) {
        dropped.increment();
      }
    }

    StreamRequest streamRequest(int sender) throws ProtocolException {
      return StreamRequest.forSender(task.setup(), task.slots(), sender);
    }

    void setSurvivorReads(boolean on) {
      for (Channel c : survivors) {
        if (c != null) {
          c.config().setAutoRead(on);
        }
      }
    }

    void complete() {
      done = true;
      completed.increment();
      cancelWatchdog();
      release(this);
      if (datagramChannel != null) {
        return; // nothing to close: the FIN went to the survivors
      }
      for (Channel c : survivors) {
        if (c != null) {
          c.close();
        }
      }
      reader.close(); // the reader waits for this close after its FIN
    }

    void fail(String reason) {
      if (reader != null && !reader.eventLoop().inEventLoop()) {
        reader.eventLoop().execute(() -> fail(reason));
        return;
      }
      if (datagramChannel != null && !datagramChannel.eventLoop().inEventLoop()) {
        datagramChannel.eventLoop().execute(() -> fail(reason));
        return;
      }
      if (done) {
        return;
      }
      done = true;
      failed.increment();
      logs.warn("failed", "Task {} ({}) failed: {}", task.taskId(),
          LogLimiter.oneLine(task.setup().group()), LogLimiter.oneLine(reason));
      cancelWatchdog();
      release(this);
      if (datagramChannel != null) {
        // no connection to close: the reader learns it from a HELLO carrying the error
        sendDatagram(StreamRequest.errorHello(task.taskId(), task.slotArray(),
            NetecPacket.READER, reason), readerAddress);
        datagramChannel.flush();
        return;
      }
      for (Channel c : survivors) {
        if (c != null) {
          c.close();
        }
      }
      if (reader != null) {
        reader.close(); // the reader sees the stream end early: its route fails
      }
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

  // ---- handlers ------------------------------------------------------------------------------

  /**
   * Control requests: setup and teardown; anything malformed gets ok=false and a reason. The
   * tasks a requester set up saying it holds this connection until their claim ({@code hold})
   * are freed at once when it closes unclaimed: a requester that went away takes its tasks
   * with it, not after the claim timeout.
   */
  private final class ControlHandler extends SimpleChannelInboundHandler<ByteBuf> {
    private final List<Live> held = new ArrayList<>();
    /** The switch closed the connection for being idle: its requester did not go away. */
    private boolean idleClosed;

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
      // a held connection the switch closed as idle leaves its tasks to the claim timeout
      for (Live l : idleClosed ? List.<Live>of() : held) {
        releaseUnclaimed(l, "its requester closed its control connection before a reader "
            + "claimed it");
      }
      held.clear();
      ctx.fireChannelInactive();
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, ByteBuf frame) {
      byte[] json = ByteBufUtil.getBytes(frame);
      SetupAnswer answer;
      try {
        // measured (size, depth) on the raw bytes before any tree is built
        JsonNode o = JsonLimits.parse(json, ControlFrames.MAX_FRAME);
        String op = o == null ? "" : o.path("op").asText("");
        if (op.equals("setup")) {
          SetupRequest req = SetupRequest.fromJson(json);
          answer = allocate(req, ConnectionCaps.peerOf(
              ((InetSocketAddress) ctx.channel().remoteAddress()).getAddress()));
          Live l = answer.ok() && req.hold() ? byId(answer.task()) : null;
          if (l != null && l.secret.equals(answer.secret())) { // this setup's task, no other
            held.removeIf(h -> h.done);
            held.add(l);
          }
        } else if (op.equals("teardown")) {
          int id = o.path("task").canConvertToInt() ? o.path("task").asInt(-1) : -1;
          Live live = byId(id);
          // without the task's secret a teardown is answered as if there were no task
          if (live == null || !secretMatches(live, o.path("secret").asText(""))) {
            answer = SetupAnswer.refuse("no task " + id);
          } else {
            live.fail("torn down by the reader");
            answer = SetupAnswer.accept(id, live.task.slotArray(), live.task.slots(), vip(),
                live.secret);
          }
        } else {
          answer = SetupAnswer.refuse("op: expected \"setup\" or \"teardown\"");
        }
      } catch (ProtocolException e) {
        answer = refuse(e.getMessage());
      }
      ctx.writeAndFlush(Unpooled.wrappedBuffer(answer.toJson()));
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      if (cause instanceof io.netty.handler.timeout.ReadTimeoutException) {
        idleClosed = true; // a held connection of a long task: not worth a line
        LOG.debug("Control connection from {} closed: idle", ctx.channel().remoteAddress());
      } else {
        logs.info("control-error", "Control connection from {} closed: {}",
            ctx.channel().remoteAddress(), LogLimiter.oneLine(cause));
      }
      ctx.close();
    }
  }

  /** A VIP connection must say HELLO within this long, or it is closed. */
  static final int HELLO_TIMEOUT_MS = 10_000;

  /** The reader's connection to the VIP: HELLO binds it to its task, then ACKs flow. */
  private final class ReaderHandler extends SimpleChannelInboundHandler<NetecPacket> {
    private Live live;

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
      // A connection that never says HELLO (or sends a frame that never completes) is closed.
      ctx.executor().schedule(() -> {
        if (live == null) {
          ctx.close();
        }
      }, HELLO_TIMEOUT_MS, TimeUnit.MILLISECONDS);
      ctx.fireChannelActive();
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, NetecPacket p) {
      if (live == null) {
        Live l = p.type() == NetecPacket.HELLO && p.sender() == NetecPacket.READER
            ? lookup(p.task(), p.slotArray()) : null;
        // Only the reader that set the task up knows its secret: a forged HELLO claims nothing
        // and leaves the task to its reader.
        if (l != null && !secretMatches(l, StreamRequest.readerSecret(p))) {
          l = null;
        }
        if (l == null || !claim(l)) {
          logs.info("vip-no-task", "Closing VIP connection {}: no such task for {}",
              ctx.channel(), p);
          ctx.close();
          return;
        }
        live = l;
        l.bind(ctx.channel());
        return;
      }
      if (live.done) {
        return;
      }
      NetecPacket ack = live.readerAck(p);
      if (ack == null) {
        return;
      }
      if (live.task.finished()) {
        for (Channel c : live.survivors) {
          c.writeAndFlush(ack).addListener(ChannelFutureListener.CLOSE); // FIN to survivors
        }
        live.complete();
        return;
      }
      for (Channel c : live.survivors) {
        if (c.isActive()) {
          c.writeAndFlush(ack);
        }
      }
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
      if (live != null && ctx.channel().isWritable()) {
        live.setSurvivorReads(true);
      }
      ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
      if (live != null && !live.done) {
        live.fail("reader closed its connection");
      }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      if (live != null) {
        live.fail("reader connection: " + cause);
      }
      ctx.close();
    }
  }

  /** One survivor's stream: DATA is aggregated, completed stripes go to the reader. */
  private final class SurvivorHandler extends SimpleChannelInboundHandler<NetecPacket> {
    private final Live live;
    private final int sender;

    SurvivorHandler(Live live, int sender) {
      this.live = live;
      this.sender = sender;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
      ctx.writeAndFlush(live.streamRequest(sender).toHello(live.task.taskId(),
          live.task.slotArray(), sender));
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, NetecPacket p) {
      if (live.done) {
        return;
      }
      if (p.type() == NetecPacket.HELLO) {
        live.fail("survivor " + sender + " refused: "
            + new String(p.payload(), StandardCharsets.UTF_8));
        return;
      }
      bytesIn.add(p.payloadLength());
      if (p.type() != NetecPacket.DATA || p.sender() != sender) {
        dropped.increment();
        return;
      }
      live.data(p, live.reader::write);
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
      if (live.reader != null) {
        live.reader.flush();
        if (!live.reader.isWritable()) {
          stalls.increment();
          live.setSurvivorReads(false);
        }
      }
      ctx.fireChannelReadComplete();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
      if (!live.done) {
        live.fail("survivor " + sender + " closed its connection");
      }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      live.fail("survivor " + sender + ": " + cause);
      ctx.close();
    }
  }

  /** Datagram mode's HELLOs to survivors not yet heard from are repeated this often. */
  static final int DATAGRAM_HELLO_MS = 200;
  /**
   * ... backing off (rounds 1, 2, 4, 8, 16, 32 of this many): at most 6 HELLOs per agent; a
   * survivor silent after them is left to the task's own timeout.
   */
  static final int DATAGRAM_HELLO_ROUNDS = 32;
  /**
   * ACK copies an agent gets before it has sent DATA: enough for the RETX that recovers a
   * first window lost whole, few enough that a setup naming some host as agents makes the
   * switch send it a bounded number of packets (with the HELLOs, at most 22 per agent).
   */
  static final int DATAGRAM_UNHEARD_ACKS = 16;

  /**
   * Datagram mode: every task's packets on one UDP channel. The reader's HELLO (with the
   * task's secret) binds the task to its address; then its ACKs go, rewritten, to every
   * survivor, and survivors' DATA, from the agent addresses of the setup only, is aggregated
   * into RESULTs to the reader. A packet that fails its checks is dropped and counted: with no
   * connection to lose, retransmission recovers it.
   */
  private final class DatagramHandler extends SimpleChannelInboundHandler<DatagramPacket> {
    @Override
    protected void channelRead0(ChannelHandlerContext ctx, DatagramPacket d) {
      NetecPacket p;
      try {
        p = NetecPacket.decodeFrame(d.content().nioBuffer()); // a view: done with it here
      } catch (ProtocolException e) {
        dropped.increment();
        logs.info("datagram-bad", "Dropped a datagram from {}: {}", d.sender(), e.getMessage());
        return;
      }
      Live l = lookup(p.task(), p.slotArray());
      if (l == null || !l.task.setup().datagram()) {
        dropped.increment();
        return;
      }
      InetSocketAddress from = d.sender();
      if (p.type() == NetecPacket.HELLO && p.sender() == NetecPacket.READER) {
        // the first HELLO with the secret and the cookie of its source address takes the
        // task; repeats (a HELLO may be lost, so the reader sends it until data comes) and
        // forgeries change nothing
        if (l.readerAddress != null) {
          return; // bound: nothing to parse
        }
        String[] secretAndCookie = StreamRequest.readerFields(p);
        if (!secretMatches(l, secretAndCookie[0])) {
          return;
        }
        String cookie = cookie(l, from);
        if (!java.security.MessageDigest.isEqual(cookie.getBytes(StandardCharsets.US_ASCII),
            secretAndCookie[1].getBytes(StandardCharsets.US_ASCII))) {
          // the source address is not proven yet: one answer there, never larger than the
          // HELLO that came from it (a forged source gets no more than the forger sent)
          NetecPacket answer = StreamRequest.cookieHello(p.task(), p.slotArray(), cookie);
          if (answer.toBytes().length <= d.content().readableBytes()) {
            cookies.increment();
            ctx.write(new DatagramPacket(Unpooled.wrappedBuffer(answer.toBytes()), from),
                ctx.voidPromise());
          }
          return;
        }
        if (claim(l)) {
          l.bindDatagram(ctx.channel(), from);
        }
        return;
      }
      if (l.readerAddress == null || l.done) {
        dropped.increment();
        return;
      }
      if (from.equals(l.readerAddress)) {
        NetecPacket ack = l.readerAck(p);
        if (ack == null) {
          return;
        }
        for (int i = 0; i < l.agents.length; i++) {
          if (!l.heard[i] && ++l.unheardAcks[i] > DATAGRAM_UNHEARD_ACKS) {
            continue; // the ACKs are no reflector: a silent agent gets only a few
          }
          // each copy names its survivor, as a P4 switch's replicas do: one agent may serve
          // several senders of a task from one address (a FIN too: the streams end)
          l.sendDatagram(new NetecPacket(ack.type(), ack.task(), ack.slotArray(), i,
              ack.flags(), ack.slot(), ack.seq(), ack.window(), ack.payload()), l.agents[i]);
        }
        if (l.task.finished()) {
          l.complete();
        }
        return;
      }
      int sender = p.sender();
      if (sender >= l.agents.length || !from.equals(l.agents[sender])) {
        dropped.increment();
        return;
      }
      if (p.type() == NetecPacket.HELLO) {
        l.fail("survivor " + sender + " refused: "
            + new String(p.payload(), StandardCharsets.UTF_8));
        return;
      }
      l.heard[sender] = true;
      bytesIn.add(p.payloadLength());
      l.data(p, r -> l.sendDatagram(r, l.readerAddress));
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
      ctx.flush();
      ctx.fireChannelReadComplete();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      logs.warn("datagram-error", "Datagram channel: {}", LogLimiter.oneLine(cause));
    }
  }
}
