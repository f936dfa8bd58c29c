package io.netec.hdfs.switchroute;

import io.netec.hdfs.route.LogLimiter;
import io.netec.hdfs.route.PeerNetworks;
import io.netec.hdfs.route.Transport;
import io.netec.hdfs.switchroute.wire.NetecPacketCodec;
import io.netec.hdfs.switchroute.wire.SetupAnswer;
import io.netec.hdfs.switchroute.wire.SetupRequest;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.netty.handler.codec.LengthFieldPrepender;
import java.io.Closeable;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import javax.management.JMException;
import javax.management.ObjectName;
import java.util.concurrent.TimeUnit;
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
 *
 * <p>By job: this class binds the ports and counts; {@link TaskTable} places tasks (ids, slot
 * arrays, memory, caps, secrets); {@link SwitchSession} runs one task's connections; {@link
 * SwitchTask} is its aggregation and EBSN window; the handlers ({@link ControlHandler}, {@link
 * VipReaderHandler}, {@link SurvivorStreamHandler}, {@link DatagramHandler}) are thin I/O
 * around them; {@link ReturnCookies} proves datagram readers' addresses.
 */
public final class SoftwareSwitch implements Closeable, SoftwareSwitchMXBean {
  /** How refusals name the networks the switch dials agents in. */
  static final String AGENT_NETWORKS = "agent networks";
  static final Logger LOG = LoggerFactory.getLogger(SoftwareSwitch.class);
  /** Lines peers can cause: one per cause every 10 s, then a count. */
  final LogLimiter logs = new LogLimiter(LOG, 10_000);

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
  final ConnectionCaps dataCaps;

  private final Options opts;
  private final EventLoopGroup group;
  private final Channel control;
  private final Channel data;
  /** Datagram mode: the data port's number over UDP, one event loop (docs/protocol.md). */
  private final Channel datagrams;
  final TaskTable<SwitchSession> table;
  private final ObjectName mbean;
  private final SwitchMetricsPage metricsPage;

  final SwitchCounters counters = new SwitchCounters();
  /** Datagram tasks attached to a parent on another switch. */
  final DatagramChildren children = new DatagramChildren(this);
  final ReturnCookies returnCookies = new ReturnCookies();

  private final PeerNetworks agentNetworks;
  private final CpuAccountedThreads ioThreads = new CpuAccountedThreads("netec-switch");

  public SoftwareSwitch(Options opts) throws IOException {
    this.opts = opts;
    this.controlCaps = new ConnectionCaps(opts.maxControlPerPeer, opts.maxControl);
    this.dataCaps = new ConnectionCaps(opts.maxDataPerPeer, opts.maxData);
    this.agentNetworks = PeerNetworks.of(opts.agentNetworks, AGENT_NETWORKS, "--agent-networks");
    this.table = new TaskTable<>(opts.slotArrays, opts.slotsPerArray, opts.memoryBudgetBytes,
        opts.tasksPerPeer, opts.maxPayload, agentNetworks);
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
                  new LengthFieldPrepender(4), new ControlHandler(SoftwareSwitch.this));
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
                  new NetecPacketCodec.Encoder(), new VipReaderHandler(SoftwareSwitch.this));
            }
          }).bind(opts.bindHost, opts.dataPort).sync().channel();
      datagrams = new Bootstrap().group(group).channel(Transport.datagramChannel())
          .option(ChannelOption.SO_RCVBUF, 4 << 20).option(ChannelOption.SO_SNDBUF, 4 << 20)
          .option(ChannelOption.RCVBUF_ALLOCATOR,
              new io.netty.channel.FixedRecvByteBufAllocator(65536))
          .handler(new DatagramHandler(this))
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
        + " {} I/O threads ({}), metrics {}", controlAddress(), dataAddress(), table.slotArrays(),
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

  String vip() {
    String host = opts.advertisedHost != null ? opts.advertisedHost : opts.bindHost;
    return host + ":" + (opts.advertisedDataPort > 0 ? opts.advertisedDataPort
        : dataAddress().getPort());
  }

  @Override
  public long getTasksAccepted() {
    return counters.accepted.sum();
  }

  @Override
  public long getTasksPremultiplied() {
    return counters.premultiplied.sum();
  }

  @Override
  public long getTasksWithChildren() {
    return counters.parents.sum();
  }

  @Override
  public long getTasksPartialSums() {
    return counters.partialSums.sum();
  }

  @Override
  public long getTasksRefused() {
    return counters.refused.sum();
  }

  @Override
  public long getTasksCompleted() {
    return counters.completed.sum();
  }

  @Override
  public long getTasksFailed() {
    return counters.failed.sum();
  }

  @Override
  public int getSlotArraysInUse() {
    return table.size();
  }

  @Override
  public long getMemoryInUse() {
    return table.memoryInUse();
  }

  @Override
  public long getMemoryHeld() {
    long[] n = {0};
    table.forEach(l -> n[0] += l.task.heldBytes()); // an int read: fine from another thread
    return n[0];
  }

  @Override
  public long getBytesIn() {
    return counters.bytesIn.sum();
  }

  @Override
  public long getBytesOut() {
    return counters.bytesOut.sum();
  }

  @Override
  public long getStalls() {
    return counters.stalls.sum();
  }

  @Override
  public long getPacketsDropped() {
    return counters.dropped.sum();
  }

  @Override
  public long getPacketsResent() {
    return counters.resent.sum();
  }

  @Override
  public long getPacketsLost() {
    return counters.lost.sum();
  }

  @Override
  public long getRetransmitRequests() {
    return counters.retransmitRequests.sum();
  }

  @Override
  public long getRetransmitRequestsHeld() {
    return counters.retransmitRequestsHeld.sum();
  }

  @Override
  public long getDatagramCookies() {
    return counters.cookies.sum();
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

  // ---- tasks: the table places them, sessions (SwitchSession) run them ---------------------

  SetupAnswer allocate(SetupRequest req, java.net.InetAddress requester) {
    String elsewhere = req.datagram() && req.survivors().stream().anyMatch(v -> v.child() != null)
        ? sendsFromElsewhere() : null;
    if (elsewhere != null) {
      // its ACKs would not reach its children as their parent's
      return refuse("a datagram parent not supported (" + elsewhere + ")");
    }
    TaskTable.Allocation<SwitchSession> a = table.allocate(req, requester,
        (task, memory, secret) -> new SwitchSession(task, memory, secret, this));
    if (a.entry == null) {
      return refuse(a.refusal);
    }
    SwitchSession l = a.entry;
    counters.accepted.increment();
    if (req.survivors().stream().anyMatch(v -> v.child() != null)) {
      counters.parents.increment();
    }
    if (req.premultiplied()) {
      counters.premultiplied.increment();
    }
    // A reader that never comes must not hold the slot array.
    group.next().schedule(() -> expireUnclaimed(l), claimTimeoutMs(req), TimeUnit.MILLISECONDS);
    return SetupAnswer.accept(l.task.taskId(), l.task.slotArray(), l.task.slots(), vip(),
        l.secret);
  }

  SetupAnswer refuse(String reason) {
    counters.refused.increment();
    logs.info("refused", "Refused a task: {}", LogLimiter.oneLine(reason));
    return SetupAnswer.refuse(reason);
  }

  private int claimTimeoutMs(SetupRequest req) {
    return Math.min(req.timeoutMs(), opts.claimTimeoutMs);
  }

  // ---- datagram children (docs/protocol.md, "Partial sums over datagrams") ----------------

  /** The datagram channel (attached children are bound to it on its loop). */
  Channel datagramChannel() {
    return datagrams;
  }

  /** Where survivors' agents, and a child's parent, may be. */
  PeerNetworks agentNetworks() {
    return agentNetworks;
  }

  /**
   * Why this switch's datagrams would not come from its VIP (null: they do): a parent admits a
   * child's stream from the address its VIP names, and a child its parent's ACKs likewise, and
   * this switch sends from its bind address and data port (a wildcard bind sends from the
   * address the route gives, taken to be the advertised one).
   */
  String sendsFromElsewhere() {
    boolean wildcard = "0.0.0.0".equals(opts.bindHost);
    if ((opts.advertisedDataPort > 0 && opts.advertisedDataPort != dataAddress().getPort())
        || (opts.advertisedHost != null && !wildcard
            && !opts.advertisedHost.equals(opts.bindHost))) {
      return "this switch's VIP " + vip() + " is advertised, and it sends from "
          + opts.bindHost + ":" + dataAddress().getPort();
    }
    return null;
  }

  /** Releases a task no reader claimed in time (decided under the same lock as claim). */
  private void expireUnclaimed(SwitchSession l) {
    releaseUnclaimed(l, "no reader connected within " + claimTimeoutMs(l.task.setup())
        + " ms");
  }

  /** Ends and releases {@code l} if no reader claimed it. */
  void releaseUnclaimed(SwitchSession l, String why) {
    if (table.endUnclaimed(l)) {
      counters.failed.increment();
      logs.warn("unclaimed", "Task {} ({}) failed: {}", l.task.taskId(),
          LogLimiter.oneLine(l.task.setup().group()), why);
    }
  }
}
