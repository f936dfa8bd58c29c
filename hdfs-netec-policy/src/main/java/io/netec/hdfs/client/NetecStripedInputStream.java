package io.netec.hdfs.client;

import io.netec.hdfs.route.LogLimiter;
import io.netec.hdfs.route.ReconstructionRouter;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import org.apache.hadoop.hdfs.DFSStripedInputStream;
import org.apache.hadoop.hdfs.protocol.DatanodeInfo;
import org.apache.hadoop.hdfs.NetecStripedStreamAccess;
import org.apache.hadoop.hdfs.protocol.ErasureCodingPolicy;
import org.apache.hadoop.hdfs.protocol.LocatedBlocks;
import org.apache.hadoop.hdfs.protocol.LocatedStripedBlock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A NETEC file's stream: Hadoop's striped stream, whose positional reads of lost units go
 * through the routes where that is faster. Every stateful read, every read of healthy units,
 * and every positional read the cost model ({@link ReadChooser}) gives to Hadoop is Hadoop's
 * own, with all it does (checksums, corrupt-replica reports, statistics, tokens, dead nodes).
 * A unit is lost when the NameNode does not list it, or when this stream, or another of the
 * same file system a moment ago ({@link DeadNodes}), failed to connect to its DataNode.
 *
 * <p>A routed read rebuilds the lost units' range of each block group it touches through the
 * router (switch, INEC, any route; each attempt proven against the survivors) and reads the
 * healthy units' bytes through Hadoop's stream. Anything a route throws, and a router that
 * rebuilds nothing, sends the read to Hadoop's stream; a route that runs past the read's
 * budget (Hadoop's stream's expected time, at least twice the route's: {@link
 * ReadChooser.Choice#budgetMillis}) is hedged by Hadoop's stream, and the first to answer
 * serves the read; a stalled route gives up after
 * {@code dfs.client.socket-timeout}, as Hadoop's reads do.
 *
 * <p>By job: this class is the stream's contract and the choice per read; {@link ReadPlan}
 * cuts a read into cells and counts what each way moves; {@link RoutedRead} runs a read the
 * routes were given (with its hedge); {@link RowSink} takes a route's rebuilt rows.
 */
final class NetecStripedInputStream extends NetecStripedStreamAccess {
  private static final Logger LOG = LoggerFactory.getLogger(NetecStripedInputStream.class);
  private static final LogLimiter CHOICES = new LogLimiter(LOG, 10_000);
  /** A block token handed to a route's survivors must stay valid this long. */
  private static final long TOKEN_MARGIN_MS = 10_000;

  private final String src;
  private final ErasureCodingPolicy policy;
  private final RoutedRead.Shared shared;
  private final DeadNodes deadNodes;
  private final int socketTimeoutMs;

  /** A stream like Hadoop's {@code opened} (which the caller closes) of a NETEC file. */
  NetecStripedInputStream(DFSStripedInputStream opened, RoutedRead.Shared shared,
      DeadNodes deadNodes) throws IOException {
    super(opened);
    LocatedBlocks blocks = locatedBlocksOf(opened);
    this.src = getSrc();
    this.policy = blocks.getErasureCodingPolicy();
    this.shared = shared;
    this.deadNodes = deadNodes;
    this.socketTimeoutMs = client().getConf().getSocketTimeout();
  }

  @Override
  public int read(long position, byte[] buffer, int offset, int length) throws IOException {
    validatePositionedReadArgs(position, buffer, offset, length);
    Planned p = planRead(position, length);
    if (p != null && p.routed != null && routedInto(p.routed, buffer, offset)) {
      return p.plan.length;
    }
    return timedHadoop(p == null ? null : p.plan, position, buffer, offset, length);
  }

  /**
   * The routed read, false (Hadoop's stream then reads the whole range) when it did not serve
   * it, also when our classes cannot load or link (the routes' own errors the router catches).
   */
  private boolean routedInto(RoutedRead routed, byte[] buffer, int offset) throws IOException {
    try {
      return routed.readInto(buffer, offset);
    } catch (LinkageError e) {
      LOG.warn("{}: the routed read failed, read through Hadoop's stream: {}", src,
          LogLimiter.oneLine(e.toString()));
      return false;
    }
  }

  @Override
  public int read(long position, ByteBuffer buf) throws IOException {
    Planned p = planRead(position, buf.remaining());
    if (p == null || p.routed == null) {
      return super.read(position, buf);
    }
    byte[] tmp = new byte[p.plan.length];
    if (!routedInto(p.routed, tmp, 0)) {
      return super.read(position, buf);
    }
    buf.put(tmp);
    return p.plan.length;
  }

  /** A read's plan, and the routed read the cost model made of it (null: Hadoop's stream). */
  private static final class Planned {
    final ReadPlan plan;
    final RoutedRead routed;

    Planned(ReadPlan plan, RoutedRead routed) {
      this.plan = plan;
      this.routed = routed;
    }
  }

  /**
   * The plan of a positional read, routed when it touches lost units and the cost model gives
   * it to the routes (then with block tokens that will not expire on the survivors); null
   * when Hadoop's stream answers at once (EOF, nothing asked) and when planning itself fails
   * (Hadoop's stream then reads as ever).
   */
  private Planned planRead(long position, int length) throws IOException {
    if (isClosed() || length <= 0 || position < 0 || position >= getFileLength()) {
      return null; // Hadoop's stream answers (or throws) at once
    }
    try {
      ReadPlan plan = plan(position, length);
      if (plan.lost.isEmpty()) {
        return new Planned(plan, null);
      }
      ReconstructionRouter router = shared.router;
      ReconstructionRouter.Order order = router.order(plan.routedBytes());
      // judged by, and sent first to, the usable route the chooser expects fastest
      java.util.List<String> usable = router.usableNetworkRoutes(order);
      String route = shared.chooser.fastestRoute(plan.shape(), usable, router.metrics()::cost);
      if (route != null && !route.equals(usable.get(0))) {
        order = ReconstructionRouter.withFirst(order, route);
      }
      ReadChooser.Choice c = shared.chooser.choose(plan.shape(), route,
          route == null ? null : router.metrics().cost(route));
      if (!c.routes) {
        ClientReadCounters.HADOOP_CHOSEN.increment();
        CHOICES.info("hadoop", "{}: lost units' reads through Hadoop's stream: {}", src,
            c);
        return new Planned(plan, null);
      }
      ClientReadCounters.ROUTES_CHOSEN.increment();
      if (c.probe) {
        ClientReadCounters.PROBES.increment();
      }
      CHOICES.info("routes", "{}: lost units' reads through the routes: {}", src, c);
      boolean refreshed = false;
      for (long groupStart : plan.groupStarts) {
        refreshed |= refreshIfTokensExpire(groupStart, TOKEN_MARGIN_MS);
      }
      ReadPlan routed = refreshed ? plan(position, length) : plan;
      if (routed == null) {
        return null; // the file no longer reaches the read (never seen): Hadoop's stream
      }
      return new Planned(routed, new RoutedRead(routed, src,
          policy.getCellSize() * policy.getNumDataUnits(), shared, hadoopReads, route, order,
          c));
    } catch (InterruptedIOException e) {
      throw e;
    } catch (IOException | RuntimeException | LinkageError e) {
      LOG.warn("{}: planning a read of {} bytes at {} failed, read through Hadoop's stream: "
          + "{}", src, length, position, LogLimiter.oneLine(e.toString()));
      return null;
    }
  }

  /** The read cut into cells by this stream's groups and lost units. */
  private ReadPlan plan(long position, int length) throws IOException {
    return ReadPlan.of(src, policy, getFileLength(), position, length, socketTimeoutMs,
        layout);
  }

  private final ReadPlan.Layout layout = new ReadPlan.Layout() {
    @Override
    public LocatedStripedBlock groupAt(long offset) throws IOException {
      return NetecStripedInputStream.this.groupAt(offset);
    }

    @Override
    public boolean lost(LocatedStripedBlock g, int index) {
      return NetecStripedInputStream.this.lost(g, index);
    }
  };

  private final RoutedRead.HadoopReads hadoopReads = new RoutedRead.HadoopReads() {
    @Override
    public void readFullyThroughHadoop(long position, byte[] buffer, int offset, int length)
        throws IOException {
      NetecStripedInputStream.this.readFullyThroughHadoop(position, buffer, offset, length);
    }

    @Override
    public void countRouted(int bytes, long millis) {
      NetecStripedInputStream.this.countRouted(bytes, millis);
    }
  };

  /**
   * A read through Hadoop's stream, timed for the cost model when no link rate is configured
   * to replace it (never a read that found a DataNode dead, whose time is a connection's
   * failure, not the link's).
   */
  private int timedHadoop(ReadPlan plan, long position, byte[] buffer, int offset, int length)
      throws IOException {
    if (plan == null || !shared.chooser.measuresHadoop()) {
      return super.read(position, buffer, offset, length);
    }
    int dead = localDeadCount();
    long t0 = System.nanoTime();
    int n = super.read(position, buffer, offset, length);
    double ms = (System.nanoTime() - t0) / 1e6;
    if (n == plan.length && localDeadCount() == dead) {
      shared.chooser.hadoopCost().add(plan.hadoopBytes, ms);
    }
    return n;
  }

  @Override
  protected void foundDead(DatanodeInfo dn) {
    deadNodes.learn(dn);
  }

  /**
   * Whether unit {@code index} of the group cannot be read from a DataNode: the NameNode does
   * not list it, or this stream or another of this file system's found its DataNode dead.
   */
  private boolean lost(LocatedStripedBlock g, int index) {
    int j = ReadPlan.slot(g, index);
    return j < 0 || deadHere(g.getLocations()[j]) || deadNodes.isDead(g.getLocations()[j]);
  }

  private void readFullyThroughHadoop(long position, byte[] buffer, int offset, int length)
      throws IOException {
    int done = 0;
    while (done < length) {
      int n = super.read(position + done, buffer, offset + done, length - done);
      if (n < 0) {
        throw new IOException(src + " ended at " + (position + done));
      }
      done += n;
    }
  }

  @Override
  public String toString() {
    return "NetecStripedInputStream{" + src + "}";
  }
}
