package io.netec.hdfs.cluster;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netec.hdfs.NetecConfigKeys;
import io.netec.hdfs.Waits;
import io.netec.hdfs.client.ClientReadCounters;
import io.netec.hdfs.client.NetecDistributedFileSystem;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.StreamCapabilities;
import org.apache.hadoop.hdfs.DFSConfigKeys;
import org.apache.hadoop.hdfs.DistributedFileSystem;
import org.apache.hadoop.hdfs.NetecStripedStreamAccess;
import org.apache.hadoop.hdfs.client.HdfsDataInputStream;
import org.apache.hadoop.hdfs.protocol.LocatedStripedBlock;
import org.apache.hadoop.hdfs.server.datanode.DataNode;
import org.apache.hadoop.hdfs.server.datanode.DataNodeFaultInjector;
import org.apache.hadoop.hdfs.util.StripedBlockUtil;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The plugin's client stream against Hadoop's, on one RS(3,2) cluster with block tokens: it is
 * Hadoop's stream (class, capabilities, statistics, corrupt-replica reports, checksum switch, a
 * node that served one bad checksum still read), and its positional reads of a lost unit go
 * through a route (ScriptedRoute, which decodes on the client) concurrently, with tokens fetched
 * again when they expire, and back to Hadoop's stream when the route throws an Error or stalls.
 * One of six DataNodes is down for the whole class, and the NameNode plans no reconstruction
 * meanwhile, so its units stay lost.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ClientStreamTest {
  private static final int K = 3;
  private static final int CELL = EcTestCluster.CELL;
  private static final int SIZE = 2 * K * (int) EcTestCluster.BLOCK_SIZE + K * CELL + 4321;
  private EcTestCluster c;
  private Configuration conf;
  private DistributedFileSystem stock;
  private final String lostPath = "/c/lost";
  private byte[] lostData;
  /** A unit of lostPath's first group that is lost. */
  private int lostUnit;
  private final Random rnd = new Random(5);

  @BeforeAll
  void start() throws Exception {
    conf = EcTestCluster.conf();
    conf.set(NetecConfigKeys.ROUTE_ORDER, "scripted,native");
    conf.setInt(NetecConfigKeys.ROUTE_RETRIES, 0);
    conf.setInt(NetecConfigKeys.ROUTE_BACKOFF_MS, 0);
    conf.set("fs.hdfs.impl", NetecDistributedFileSystem.class.getName());
    conf.set(NetecConfigKeys.CLIENT_READS, "routes");
    conf.setBoolean(DFSConfigKeys.DFS_BLOCK_ACCESS_TOKEN_ENABLE_KEY, true);
    conf.setInt("dfs.datanode.scan.period.hours", -1); // only readers find corrupt replicas
    // the lost units stay lost: no reconstruction during the class
    conf.setInt(DFSConfigKeys.DFS_NAMENODE_REDUNDANCY_INTERVAL_SECONDS_KEY, 3600);
    c = new EcTestCluster(conf, K + 2 + 1);
    ScriptedRoute.cluster = c;
    c.useNetecPolicy("NETEC-3-2-1024k", "/c");
    lostData = c.writeFile(lostPath, SIZE, 11);
    DataNode down = c.holder(lostPath, 0, 1);
    c.stop(down);
    c.markDead(down);
    lostUnit = 1;
    stock = new DistributedFileSystem();
    Configuration plain = new Configuration(c.fs().getConf());
    plain.unset("fs.hdfs.impl");
    stock.initialize(c.fs().getUri(), plain);
  }

  @AfterAll
  void stop() throws Exception {
    ScriptedRoute.mode = ScriptedRoute.Mode.DECLINE;
    if (stock != null) {
      stock.close();
    }
    if (c != null) {
      c.close();
    }
  }

  @BeforeEach
  void decode() {
    ScriptedRoute.mode = ScriptedRoute.Mode.DECODE;
  }

  @Test
  void theStreamIsHadoopsWithItsCapabilitiesAndStatistics() throws Exception {
    try (FSDataInputStream ours = c.fs().open(new Path(lostPath));
        FSDataInputStream theirs = stock.open(new Path(lostPath))) {
      assertInstanceOf(HdfsDataInputStream.class, ours);
      assertInstanceOf(NetecStripedStreamAccess.class, ours.getWrappedStream());
      for (String cap : new String[] {StreamCapabilities.READAHEAD,
          StreamCapabilities.DROPBEHIND, StreamCapabilities.UNBUFFER,
          StreamCapabilities.READBYTEBUFFER, StreamCapabilities.PREADBYTEBUFFER}) {
        assertEquals(theirs.hasCapability(cap), ours.hasCapability(cap), cap);
      }
      long routed = ClientReadCounters.routesChosen();
      HdfsDataInputStream h = (HdfsDataInputStream) ours;
      org.apache.hadoop.fs.FileSystem.Statistics stats = org.apache.hadoop.fs.FileSystem
          .getStatistics(c.fs().getUri().getScheme(), c.fs().getClass());
      long fsBytes = stats.getBytesRead();
      long streamBytes = h.getReadStatistics().getTotalBytesRead();
      byte[] b = new byte[CELL];
      long at = (long) lostUnit * CELL;
      ours.readFully(at, b);
      assertArrayEquals(Arrays.copyOfRange(lostData, (int) at, (int) at + CELL), b);
      assertEquals(routed + 1, ClientReadCounters.routesChosen(), "through the route");
      // the bytes returned, counted once, as Hadoop counts a remote read's
      assertEquals(streamBytes + CELL, h.getReadStatistics().getTotalBytesRead(),
          "ReadStatistics");
      assertEquals(fsBytes + CELL, stats.getBytesRead(), "FileSystem statistics");
      ours.unbuffer();
      byte[] all = new byte[SIZE];
      ours.seek(0);
      ours.readFully(all);
      assertArrayEquals(lostData, all, "stateful read after unbuffer");
      assertTrue(h.getReadStatistics().getTotalBytesRead() >= CELL + SIZE);
    }
  }

  @Test
  void concurrentPositionalReadsOfOneStream() throws Exception {
    long served = ScriptedRoute.SERVED_ON_CLIENTS.get();
    ExecutorService pool = Executors.newFixedThreadPool(6);
    try (FSDataInputStream in = c.fs().open(new Path(lostPath))) {
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < 6; t++) {
        long seed = rnd.nextLong();
        done.add(pool.submit(() -> {
          Random r = new Random(seed);
          for (int i = 0; i < 8; i++) {
            long pos;
            int len;
            if (i % 2 == 0) { // inside the lost unit's cell of a stripe of group 0
              int stripe = r.nextInt(2);
              pos = (long) stripe * K * CELL + (long) lostUnit * CELL + r.nextInt(CELL / 2);
              len = 1 + r.nextInt(CELL / 2);
            } else { // anywhere
              pos = r.nextInt(SIZE);
              len = 1 + r.nextInt((int) Math.min(SIZE - pos, 2L * CELL));
            }
            byte[] want = Arrays.copyOfRange(lostData, (int) pos, (int) pos + len);
            if (i % 4 == 2) { // ByteBufferPositionedReadable, direct
              ByteBuffer bb = ByteBuffer.allocateDirect(len);
              in.readFully(pos, bb);
              bb.flip();
              byte[] got = new byte[len];
              bb.get(got);
              assertArrayEquals(want, got, "direct pread @" + pos + "+" + len);
            } else {
              byte[] got = new byte[len];
              in.readFully(pos, got);
              assertArrayEquals(want, got, "pread @" + pos + "+" + len);
            }
          }
          return null;
        }));
      }
      for (Future<?> f : done) {
        f.get();
      }
    } finally {
      pool.shutdownNow();
    }
    assertTrue(ScriptedRoute.SERVED_ON_CLIENTS.get() - served >= 6 * 4,
        "every lost unit's pread through the route");
  }

  @Test
  void positionalReadsAcrossGroupsStripesAndTheShortTail() throws Exception {
    long group = (long) K * EcTestCluster.BLOCK_SIZE;
    long lostCell = (long) lostUnit * CELL;
    long[][] reads = {
        {lostCell, 1}, {lostCell + CELL - 1, 1}, {lostCell - 1, 2}, {lostCell + CELL - 1, 2},
        {lostCell - 5, CELL + 10}, // the lost cell with a byte of each neighbour
        {lostCell, (long) K * CELL + CELL}, // across a stripe: two lost cells
        {group - 1000, 3000}, // across two groups
        {2 * group, SIZE - 2 * group}, // the short last group
        {SIZE - 10, 10}, {SIZE - 1, 1},
        {0, SIZE}, // the whole file in one pread
    };
    long routed = ClientReadCounters.routesChosen();
    try (FSDataInputStream in = c.fs().open(new Path(lostPath))) {
      for (long[] r : reads) {
        byte[] b = new byte[(int) r[1]];
        in.readFully(r[0], b);
        assertArrayEquals(Arrays.copyOfRange(lostData, (int) r[0], (int) (r[0] + r[1])), b,
            "pread @" + r[0] + "+" + r[1]);
        ByteBuffer heap = ByteBuffer.allocate((int) r[1] + 7);
        heap.position(3);
        heap.limit(3 + (int) r[1]);
        in.readFully(r[0], heap);
        assertEquals(3 + (int) r[1], heap.position(), "the buffer moved by the bytes read");
        assertArrayEquals(b, Arrays.copyOfRange(heap.array(), 3, 3 + (int) r[1]));
      }
      byte[] past = new byte[10];
      assertEquals(-1, in.read(SIZE, past, 0, 10), "at the end");
      assertEquals(4, in.read(SIZE - 4, past, 0, 10), "short at the end");
    }
    assertTrue(ClientReadCounters.routesChosen() - routed >= 8, "lost units' preads routed");
  }

  /** Waits until the NameNode lists a corrupt replica of internal block {@code unit}. */
  private boolean reportedCorrupt(String path, int unit) throws Exception {
    LocatedStripedBlock g = c.groups(path).get(0);
    return Waits.within(10_000, 50, () -> {
      Collection<?> corrupt = c.mini().getNamesystem().getBlockManager().getCorruptReplicas(
          StripedBlockUtil.constructInternalBlock(g.getBlock(), c.policyOf(path), unit)
              .getLocalBlock());
      return corrupt != null && !corrupt.isEmpty();
    });
  }

  @Test
  void aCorruptReplicaIsReportedAsHadoopsStreamReportsIt() throws Exception {
    for (DistributedFileSystem fs : new DistributedFileSystem[] {stock, c.fs()}) {
      String p = "/c/corrupt-" + fs.getClass().getSimpleName();
      byte[] data = c.writeFile(p, SIZE, 12);
      c.flipByte(p, 0, 0, 1000);
      try (FSDataInputStream in = fs.open(new Path(p))) {
        byte[] all = new byte[SIZE];
        in.readFully(all);
        assertArrayEquals(data, all);
      }
      assertTrue(reportedCorrupt(p, 0), fs.getClass().getSimpleName() + " reported it");
    }
  }

  @Test
  void aNodeThatServedABadChecksumIsStillReadFrom() throws Exception {
    String p = "/c/bad-checksum-node";
    byte[] data = c.writeFile(p, SIZE, 13);
    // a DataNode holding a data unit of both groups (3 + 3 of 5 nodes: one at least)
    LocatedStripedBlock g0 = c.groups(p).get(0);
    LocatedStripedBlock g1 = c.groups(p).get(1);
    int unit0 = -1;
    int unit = -1;
    for (int i = 0; i < g0.getLocations().length && unit < 0; i++) {
      for (int j = 0; j < g1.getLocations().length; j++) {
        if (g0.getBlockIndices()[i] < K && g1.getBlockIndices()[j] < K
            && g0.getLocations()[i].equals(g1.getLocations()[j])) {
          unit0 = g0.getBlockIndices()[i];
          unit = g1.getBlockIndices()[j];
        }
      }
    }
    assertTrue(unit >= 0, "a node with data units of both groups");
    c.flipByte(p, 0, unit0, 1000);
    try (FSDataInputStream in = c.fs().open(new Path(p))) {
      byte[] b = new byte[4096];
      long bad = (long) unit0 * CELL; // a checksum error there, decoded by Hadoop's stream
      in.readFully(bad, b);
      assertArrayEquals(Arrays.copyOfRange(data, (int) bad, (int) bad + 4096), b);
      long routed = ClientReadCounters.routesChosen();
      long at = g1.getStartOffset() + (long) unit * CELL;
      in.readFully(at, b);
      assertArrayEquals(Arrays.copyOfRange(data, (int) at, (int) at + 4096), b);
      assertEquals(routed, ClientReadCounters.routesChosen(), "read from the node itself");
    }
  }

  @Test
  void unverifiedReadsReturnWhatHadoopsStreamReturns() throws Exception {
    String p = "/c/unverified";
    c.writeFile(p, SIZE, 14);
    c.flipByte(p, 0, 0, 1000);
    byte[] ours = new byte[8192];
    byte[] theirs = new byte[8192];
    c.fs().setVerifyChecksum(false);
    stock.setVerifyChecksum(false);
    try (FSDataInputStream a = c.fs().open(new Path(p));
        FSDataInputStream b = stock.open(new Path(p))) {
      a.readFully(0, ours);
      b.readFully(0, theirs);
    } finally {
      c.fs().setVerifyChecksum(true);
      stock.setVerifyChecksum(true);
    }
    assertArrayEquals(theirs, ours, "the flipped byte, unverified, as Hadoop returns it");
  }

  @Test
  void expiredBlockTokensAreFetchedAgainBeforeARouteUsesThem() throws Exception {
    org.apache.hadoop.hdfs.security.token.block.BlockTokenSecretManager tokens =
        c.mini().getNamesystem().getBlockManager().getBlockTokenSecretManager();
    long failed = ClientReadCounters.routesFailed();
    long served = ScriptedRoute.SERVED_ON_CLIENTS.get();
    tokens.setTokenLifetime(2_000);
    try (FSDataInputStream in = c.fs().open(new Path(lostPath))) {
      Thread.sleep(2_500); // the tokens the stream was opened with have expired
      long at = (long) K * CELL + (long) lostUnit * CELL; // stripe 1's lost cell
      byte[] b = new byte[CELL];
      in.readFully(at, b);
      assertArrayEquals(Arrays.copyOfRange(lostData, (int) at, (int) at + CELL), b);
    } finally {
      tokens.setTokenLifetime(10 * 60_000L);
    }
    assertTrue(ScriptedRoute.SERVED_ON_CLIENTS.get() > served, "the route served it");
    assertEquals(failed, ClientReadCounters.routesFailed(),
        "the route's proof took the fresh tokens");
  }

  @Test
  void aRouteThrowingAnErrorSendsTheReadToHadoopsStream() throws Exception {
    ScriptedRoute.mode = ScriptedRoute.Mode.THROW_ERROR;
    long failed = ClientReadCounters.routesFailed();
    long at = (long) lostUnit * CELL + 17;
    assertArrayEquals(Arrays.copyOfRange(lostData, (int) at, (int) at + 5000),
        c.pread(lostPath, at, 5000));
    assertTrue(ClientReadCounters.routesFailed() > failed, "Hadoop's stream read it");
  }

  @Test
  void aStalledRouteGivesUpWithinTheClientsSocketTimeout() throws Exception {
    ScriptedRoute.mode = ScriptedRoute.Mode.STALL;
    long failed = ClientReadCounters.routesFailed();
    Configuration quick = new Configuration(c.fs().getConf());
    quick.setInt("dfs.client.socket-timeout", 2_000);
    try (NetecDistributedFileSystem fs = new NetecDistributedFileSystem()) {
      fs.initialize(c.fs().getUri(), quick);
      long at = (long) lostUnit * CELL;
      byte[] b = new byte[4096];
      long t0 = System.nanoTime();
      try (FSDataInputStream in = fs.open(new Path(lostPath))) {
        in.readFully(at, b);
      }
      long ms = (System.nanoTime() - t0) / 1_000_000;
      assertArrayEquals(Arrays.copyOfRange(lostData, (int) at, (int) at + 4096), b);
      // the route's own 600 s limit cut to the client's 2 s socket timeout (Hadoop's 5 s
      // striped-read limit for a route with a spare survivor is longer)
      assertEquals(2_000, ScriptedRoute.lastStallLimitMs);
      assertTrue(ms < 60_000, "read took " + ms + " ms");
      assertTrue(ClientReadCounters.routesFailed() > failed, "Hadoop's stream read it");
    }
  }

  @Test
  void aRouteOverItsBudgetIsHedgedByHadoopsStreamAndCountedSlow() throws Exception {
    try (NetecDistributedFileSystem fs = measuredOnASlowLink(30_000)) {
      byte[] b = new byte[CELL / 4];
      long at = (long) lostUnit * CELL + 100;
      io.netec.hdfs.route.ReadCost cost = fs.router().metrics().cost("scripted");
      ScriptedRoute.mode = ScriptedRoute.Mode.STALL; // as a route a reconstruction loads
      long abandoned = ClientReadCounters.routesAbandoned();
      long hedged = ClientReadCounters.hedged();
      long failed = ClientReadCounters.routesFailed();
      long routes = ClientReadCounters.routesChosen();
      long t0 = System.nanoTime();
      try (FSDataInputStream in = fs.open(new Path(lostPath))) {
        in.readFully(at, b);
      }
      long ms = (System.nanoTime() - t0) / 1_000_000;
      assertArrayEquals(Arrays.copyOfRange(lostData, (int) at, (int) at + b.length), b);
      assertEquals(routes + 1, ClientReadCounters.routesChosen(), "the route was chosen");
      assertEquals(abandoned + 1, ClientReadCounters.routesAbandoned());
      assertEquals(failed, ClientReadCounters.routesFailed(), "left, not failed");
      assertTrue(ms < 15_000, "read took " + ms + " ms: the route's 30 s stall waited out");
      assertEquals(io.netec.hdfs.route.ReadCost.MIN_TRUSTED + 1, cost.samples(),
          "what leaving it cost is counted against the route");
      assertTrue(cost.newestMillis() >= 600, "at least its budget: " + cost.newestMillis());
      assertEquals(hedged + 1, ClientReadCounters.hedged(), "Hadoop's stream started");
      long chosen = ClientReadCounters.hadoopChosen();
      try (FSDataInputStream in = fs.open(new Path(lostPath))) {
        in.readFully(at, b); // the route is left for 30 s: Hadoop's stream at once
      }
      assertArrayEquals(Arrays.copyOfRange(lostData, (int) at, (int) at + b.length), b);
      assertEquals(chosen + 1, ClientReadCounters.hadoopChosen());
      assertEquals(routes + 1, ClientReadCounters.routesChosen());
    }
  }

  /**
   * A probe (a measured route tried on a size it was never measured near): left at its budget,
   * Hadoop's expected time, without a hedge beside it, so Hadoop's stream reads alone; the
   * route is probed no more for a while, and its loss leaves no route aside.
   */
  @Test
  void aProbePastItsBudgetIsLeftForHadoopsStreamAndNotRepeated() throws Exception {
    try (NetecDistributedFileSystem fs = onASlowLink(30_000)) {
      io.netec.hdfs.route.ReadCost cost = fs.router().metrics().cost("scripted");
      for (int i = 0; i < io.netec.hdfs.route.ReadCost.MIN_TRUSTED; i++) {
        cost.add(CELL / 4, 400); // measured on quarter cells only: 400 ms, Hadoop's 629
      }
      byte[] small = new byte[48 << 10]; // over 5x below: Hadoop's 118 ms, a route's least 59
      long at = (long) lostUnit * CELL + 100;
      ScriptedRoute.mode = ScriptedRoute.Mode.STALL;
      long probes = ClientReadCounters.probes();
      long abandoned = ClientReadCounters.routesAbandoned();
      long hedged = ClientReadCounters.hedged();
      long hadoop = ClientReadCounters.hadoopChosen();
      long t0 = System.nanoTime();
      try (FSDataInputStream in = fs.open(new Path(lostPath))) {
        in.readFully(at, small);
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertArrayEquals(Arrays.copyOfRange(lostData, (int) at, (int) at + small.length),
            small);
        assertEquals(probes + 1, ClientReadCounters.probes(), "the small read probed");
        assertEquals(abandoned + 1, ClientReadCounters.routesAbandoned(), "left at its budget");
        assertEquals(hedged, ClientReadCounters.hedged(), "no hedge beside a probe");
        assertTrue(ms < 10_000, "read took " + ms + " ms: the route's stall waited out");
        assertEquals(io.netec.hdfs.route.ReadCost.MIN_TRUSTED + 1, cost.samples(),
            "what the probe took is the route's measurement at that size");
        assertTrue(cost.samplesNear(small.length, 4) > 0);
        for (int i = 0; i < 16; i++) {
          cost.add(CELL / 4, 400); // quarter cells push the probe's own time out of the ring
        }
        int more = 16; // twice ReadChooser.PROBE_EVERY: without the back-off, probes again
        for (int i = 0; i < more; i++) {
          in.readFully(at, small);
        }
        assertEquals(probes + 1, ClientReadCounters.probes(), "probed no more for a while");
        assertEquals(hadoop + more, ClientReadCounters.hadoopChosen());
        ScriptedRoute.mode = ScriptedRoute.Mode.DECODE;
        long routes = ClientReadCounters.routesChosen();
        byte[] quarter = new byte[CELL / 4];
        in.readFully(at, quarter);
        assertArrayEquals(Arrays.copyOfRange(lostData, (int) at, (int) at + quarter.length),
            quarter);
        assertEquals(routes + 1, ClientReadCounters.routesChosen(),
            "a lost probe leaves no route aside: the quarter cell goes to the route");
      }
    }
  }

  /**
   * A cold route (never measured) that stalls is hedged too, after the warm budget and the
   * cold allowance, not waited for through its own 30 s: on the testbed such a read once took
   * 38.5 s. Its loss is measured (a lower bound) but does not make the other reads leave the
   * routes: it was cold, not loaded, and the next read tries it again.
   */
  @Test
  void aColdRouteThatStallsIsHedgedAndTriedAgain() throws Exception {
    try (NetecDistributedFileSystem fs = onASlowLink(30_000)) { // 30 s: the stall's limit
      io.netec.hdfs.route.ReadCost cost = fs.router().metrics().cost("scripted");
      assertEquals(0, cost.samples(), "cold");
      ScriptedRoute.mode = ScriptedRoute.Mode.STALL;
      long abandoned = ClientReadCounters.routesAbandoned();
      long hedged = ClientReadCounters.hedged();
      long routes = ClientReadCounters.routesChosen();
      long served = ScriptedRoute.SERVED_ON_CLIENTS.get();
      byte[] b = new byte[CELL / 4];
      long at = (long) lostUnit * CELL + 100;
      long t0 = System.nanoTime();
      try (FSDataInputStream in = fs.open(new Path(lostPath))) {
        in.readFully(at, b);
      }
      long ms = (System.nanoTime() - t0) / 1_000_000;
      assertArrayEquals(Arrays.copyOfRange(lostData, (int) at, (int) at + b.length), b);
      assertEquals(routes + 1, ClientReadCounters.routesChosen(), "the cold route was chosen");
      assertEquals(hedged + 1, ClientReadCounters.hedged(), "and hedged");
      assertEquals(abandoned + 1, ClientReadCounters.routesAbandoned());
      assertTrue(ms < 15_000, "read took " + ms + " ms: the route's 30 s stall waited out");
      assertTrue(ms >= 2_000, "read took " + ms + " ms: under the cold allowance");
      assertEquals(1, cost.samples(), "the loss measured");
      ScriptedRoute.mode = ScriptedRoute.Mode.DECODE;
      try (FSDataInputStream in = fs.open(new Path(lostPath))) {
        in.readFully(at, b);
      }
      assertArrayEquals(Arrays.copyOfRange(lostData, (int) at, (int) at + b.length), b);
      assertEquals(routes + 2, ClientReadCounters.routesChosen(), "the routes not left");
      assertEquals(served + 1, ScriptedRoute.SERVED_ON_CLIENTS.get(), "the route served");
    }
  }

  /**
   * Every block a DataNode of the cluster starts sending (Hadoop's stream's reads; the
   * scripted route and the proofs read the datasets directly) waits until {@code gate} opens
   * (at most 60 s), as DataNodes a reconstruction loads answer late. Returns the injector to
   * put back.
   */
  private static DataNodeFaultInjector holdBlockSenders(CountDownLatch gate) {
    DataNodeFaultInjector old = DataNodeFaultInjector.get();
    DataNodeFaultInjector.set(new DataNodeFaultInjector() {
      @Override
      public void throwTooManyOpenFiles() { // called as each BlockSender is made
        try {
          gate.await(60, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
    });
    return old;
  }

  /** A file system reading by cost on a 10 Mbit/s link, its route not yet measured. */
  private NetecDistributedFileSystem onASlowLink(int socketTimeoutMs) throws IOException {
    Configuration slow = new Configuration(c.fs().getConf());
    slow.set(NetecConfigKeys.CLIENT_READS, "cost");
    slow.setInt(NetecConfigKeys.CLIENT_LINK_MBPS, 10); // budget: Hadoop's 768 KiB, 629 ms
    slow.setInt("dfs.client.socket-timeout", socketTimeoutMs);
    NetecDistributedFileSystem fs = new NetecDistributedFileSystem();
    fs.initialize(c.fs().getUri(), slow);
    return fs;
  }

  /** A file system reading by cost on a 10 Mbit/s link, its route measured and trusted. */
  private NetecDistributedFileSystem measuredOnASlowLink(int socketTimeoutMs)
      throws IOException {
    NetecDistributedFileSystem fs = onASlowLink(socketTimeoutMs);
    byte[] b = new byte[CELL / 4];
    try (FSDataInputStream in = fs.open(new Path(lostPath))) {
      for (int i = 0; i < io.netec.hdfs.route.ReadCost.MIN_TRUSTED; i++) {
        in.readFully((long) lostUnit * CELL + 100, b); // the route's first tasks: measured
      }
    }
    assertEquals(io.netec.hdfs.route.ReadCost.MIN_TRUSTED,
        fs.router().metrics().cost("scripted").samples());
    return fs;
  }

  @Test
  void aRouteAnsweringAfterTheHedgeStartedServesTheRead() throws Exception {
    try (NetecDistributedFileSystem fs = measuredOnASlowLink(30_000)) { // over the 8 s below
      ScriptedRoute.hedgedBefore = ClientReadCounters.hedged();
      ScriptedRoute.mode = ScriptedRoute.Mode.DECODE_ONCE_HEDGED;
      long abandoned = ClientReadCounters.routesAbandoned();
      long routes = ClientReadCounters.routesChosen();
      long served = ScriptedRoute.SERVED_ON_CLIENTS.get();
      byte[] b = new byte[CELL / 4];
      long at = (long) lostUnit * CELL + 100;
      CountDownLatch gate = new CountDownLatch(1);
      DataNodeFaultInjector old = holdBlockSenders(gate); // Hadoop's stream, hedging, waits
      try {
        try (FSDataInputStream in = fs.open(new Path(lostPath))) {
          in.readFully(at, b);
        }
        assertEquals(1, gate.getCount(), "the read did not wait for its hedge");
      } finally {
        gate.countDown();
        DataNodeFaultInjector.set(old);
      }
      assertArrayEquals(Arrays.copyOfRange(lostData, (int) at, (int) at + b.length), b);
      assertEquals(ScriptedRoute.hedgedBefore + 1, ClientReadCounters.hedged(), "hedged");
      assertEquals(served + 1, ScriptedRoute.SERVED_ON_CLIENTS.get(), "the route served");
      assertEquals(abandoned, ClientReadCounters.routesAbandoned(), "the route was not left");
      ScriptedRoute.mode = ScriptedRoute.Mode.DECODE;
      try (FSDataInputStream in = fs.open(new Path(lostPath))) {
        in.readFully(at, b);
      }
      assertArrayEquals(Arrays.copyOfRange(lostData, (int) at, (int) at + b.length), b);
      assertEquals(routes + 2, ClientReadCounters.routesChosen(), "the route chosen again");
    }
  }

  @Test
  void atMostSixteenHedgesRunAtOnceAndAReadPastThemWaitsOnItsRoute() throws Exception {
    int reads = NetecDistributedFileSystem.MAX_HEDGES + 1;
    // DataNodes answering late (1.5 s), not so late that Hadoop's stream thinks them dead (8 s)
    try (NetecDistributedFileSystem fs = measuredOnASlowLink(8_000)) {
      ScriptedRoute.mode = ScriptedRoute.Mode.STALL; // every route past its budget
      long hedged = ClientReadCounters.hedged();
      long refused = ClientReadCounters.hedgesRefused();
      long routes = ClientReadCounters.routesChosen();
      long abandoned = ClientReadCounters.routesAbandoned();
      long failed = ClientReadCounters.routesFailed();
      ExecutorService pool = Executors.newFixedThreadPool(reads);
      CountDownLatch gate = new CountDownLatch(1);
      DataNodeFaultInjector old = holdBlockSenders(gate); // hedges held until the last is refused
      try (FSDataInputStream in = fs.open(new Path(lostPath))) {
        List<Future<byte[]>> done = new ArrayList<>();
        long[] at = new long[reads];
        java.util.concurrent.CyclicBarrier together =
            new java.util.concurrent.CyclicBarrier(reads);
        for (int i = 0; i < reads; i++) {
          at[i] = (long) lostUnit * CELL + 100 + i * 1000L;
          long pos = at[i];
          done.add(pool.submit(() -> {
            byte[] b = new byte[CELL / 4];
            together.await();
            in.readFully(pos, b);
            return b;
          }));
        }
        Waits.within(60_000, 10, () -> ClientReadCounters.hedgesRefused() != refused);
        assertEquals(hedged + NetecDistributedFileSystem.MAX_HEDGES, ClientReadCounters.hedged());
        assertEquals(refused + 1, ClientReadCounters.hedgesRefused(), "the last waited");
        gate.countDown();
        for (int i = 0; i < reads; i++) {
          assertArrayEquals(Arrays.copyOfRange(lostData, (int) at[i], (int) at[i] + CELL / 4),
              done.get(i).get(120, TimeUnit.SECONDS), "read " + i);
        }
      } finally {
        gate.countDown();
        DataNodeFaultInjector.set(old);
        pool.shutdownNow();
      }
      assertEquals(routes + reads, ClientReadCounters.routesChosen(), "all chose the route");
      assertEquals(abandoned + NetecDistributedFileSystem.MAX_HEDGES,
          ClientReadCounters.routesAbandoned(), "the hedged ones left their routes");
      assertEquals(failed + 1, ClientReadCounters.routesFailed(),
          "the last waited out its route's stall, then read through Hadoop's stream");
    }
  }

  @Test
  void theCostModelChoosesPerRead() throws Exception {
    Configuration slow = new Configuration(c.fs().getConf());
    slow.set(NetecConfigKeys.CLIENT_READS, "cost");
    slow.setInt(NetecConfigKeys.CLIENT_LINK_MBPS, 1);
    try (NetecDistributedFileSystem fs = new NetecDistributedFileSystem()) {
      fs.initialize(c.fs().getUri(), slow);
      try (FSDataInputStream in = fs.open(new Path(lostPath))) {
        long routes = ClientReadCounters.routesChosen();
        long hadoop = ClientReadCounters.hadoopChosen();
        byte[] cell = new byte[CELL / 4];
        long at = (long) lostUnit * CELL + 100;
        in.readFully(at, cell); // inside the lost unit: k times fewer bytes through a route
        assertArrayEquals(Arrays.copyOfRange(lostData, (int) at, (int) at + cell.length), cell);
        assertEquals(routes + 1, ClientReadCounters.routesChosen(), "a route for the range");
        byte[] stripes = new byte[2 * K * CELL];
        in.readFully(0, stripes); // whole stripes: Hadoop's stream moves no more
        assertArrayEquals(Arrays.copyOf(lostData, stripes.length), stripes);
        assertEquals(hadoop + 1, ClientReadCounters.hadoopChosen(), "Hadoop's stream for stripes");
        assertEquals(routes + 1, ClientReadCounters.routesChosen());
      }
    }
  }
}
