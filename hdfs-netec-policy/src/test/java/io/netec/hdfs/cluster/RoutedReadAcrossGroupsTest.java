package io.netec.hdfs.cluster;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netec.hdfs.NetecConfigKeys;
import io.netec.hdfs.client.ClientReadCounters;
import io.netec.hdfs.client.NetecDistributedFileSystem;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hdfs.DFSConfigKeys;
import org.apache.hadoop.hdfs.DistributedFileSystem;
import org.apache.hadoop.hdfs.client.HdfsDataInputStream;
import org.apache.hadoop.hdfs.server.datanode.DataNode;
import org.apache.hadoop.hdfs.server.datanode.DataNodeFaultInjector;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * One positional read through two block groups that each lost a data unit, on an RS(3,2)
 * cluster (the route: ScriptedRoute, decoding on the client). What the routes served of the
 * first group is not counted when the second group sends the read to Hadoop's stream, which
 * counts the whole range itself: the statistics count each byte once, as Hadoop's would. And
 * the second group's route, once the first group's beat its hedge, is bounded by a hedge of
 * its own rather than waiting out its stall.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class RoutedReadAcrossGroupsTest {
  private static final int K = 3;
  private static final int CELL = EcTestCluster.CELL;
  private static final long GROUP = K * EcTestCluster.BLOCK_SIZE;
  private static final String PATH = "/x/two-groups";
  private EcTestCluster c;
  private byte[] data;
  /** The read: from group 0's lost cell in its last stripe to group 1's in its first. */
  private long at;
  private int length;
  /** A lost data cell of group 0 (measuring reads go there). */
  private long lostCell0;

  @BeforeAll
  void start() throws Exception {
    Configuration conf = EcTestCluster.conf();
    conf.set(NetecConfigKeys.ROUTE_ORDER, "scripted,native");
    conf.setInt(NetecConfigKeys.ROUTE_RETRIES, 0);
    conf.setInt(NetecConfigKeys.ROUTE_BACKOFF_MS, 0);
    conf.set("fs.hdfs.impl", NetecDistributedFileSystem.class.getName());
    conf.set(NetecConfigKeys.CLIENT_READS, "routes");
    conf.setInt(DFSConfigKeys.DFS_NAMENODE_REDUNDANCY_INTERVAL_SECONDS_KEY, 3600);
    c = new EcTestCluster(conf, K + 2 + 2);
    ScriptedRoute.cluster = c;
    c.useNetecPolicy("NETEC-3-2-1024k", "/x");
    data = c.writeFile(PATH, (int) (2 * GROUP), 21);
    // a data unit lost in each group: group 0's last, and group 1's unit its holder has
    // there too, or else its unit 0 (a group then loses at most two units: RS(3,2) decodes).
    // Group 0's last: the read starts at a lost cell, so the routes move fewer bytes than
    // Hadoop's stream whichever unit group 1 lost (with group 0's unit 0 and group 1's unit 2
    // lost, both moved 6 MiB, the cost client read through Hadoop's stream, and the hedge test
    // failed: CI's 5,053 against 5,033 ms was that tie, decided by where the NameNode put units)
    List<DataNode> down = new ArrayList<>();
    DataNode a = c.holder(PATH, 0, K - 1);
    down.add(a);
    int lost0 = K - 1;
    int lost1 = -1;
    for (int u = 0; u < K; u++) {
      if (a == c.holder(PATH, 1, u)) {
        lost1 = u;
      }
    }
    if (lost1 < 0) {
      down.add(c.holder(PATH, 1, 0));
      lost1 = 0;
    }
    for (DataNode dn : down) {
      c.stop(dn);
    }
    c.markDead(down);
    long lastStripe = GROUP - (long) K * CELL;
    lostCell0 = lastStripe + (long) lost0 * CELL;
    at = lostCell0;
    length = (int) (GROUP + (long) (lost1 + 1) * CELL - at);
  }

  @AfterAll
  void stop() {
    if (c != null) {
      c.close();
    }
  }

  @AfterEach
  void reset() {
    ScriptedRoute.NEXT.clear();
    ScriptedRoute.afterServe = null;
    ScriptedRoute.mode = ScriptedRoute.Mode.DECLINE;
  }

  private byte[] expected() {
    return Arrays.copyOfRange(data, (int) at, (int) at + length);
  }

  /** {ReadStatistics, FileSystem statistics} bytes the read at {@link #at} added on FS. */
  private long[] counted(FileSystem fs) throws Exception {
    FileSystem.Statistics stats = FileSystem.getStatistics(fs.getUri().getScheme(),
        fs.getClass());
    try (FSDataInputStream in = fs.open(new Path(PATH))) {
      HdfsDataInputStream h = (HdfsDataInputStream) in;
      long streamBytes = h.getReadStatistics().getTotalBytesRead();
      long fsBytes = stats.getBytesRead();
      byte[] b = new byte[length];
      in.readFully(at, b);
      assertArrayEquals(expected(), b);
      return new long[] {h.getReadStatistics().getTotalBytesRead() - streamBytes,
          stats.getBytesRead() - fsBytes};
    }
  }

  @Test
  void bytesTheRoutesServedBeforeTheReadFellBackAreNotCountedTwice() throws Exception {
    long[] stock;
    try (DistributedFileSystem hadoop = new DistributedFileSystem()) {
      Configuration plain = new Configuration(c.fs().getConf());
      plain.unset("fs.hdfs.impl");
      hadoop.initialize(c.fs().getUri(), plain);
      stock = counted(hadoop); // the survivors' bytes it read to decode included
    }
    ScriptedRoute.NEXT.add(ScriptedRoute.Mode.DECODE); // group 0 rebuilt by the route
    ScriptedRoute.NEXT.add(ScriptedRoute.Mode.DECLINE); // group 1: Hadoop's stream, all of it
    long served = ScriptedRoute.SERVED_ON_CLIENTS.get();
    long failed = ClientReadCounters.routesFailed();
    long[] ours = counted(c.fs());
    assertEquals(served + 1, ScriptedRoute.SERVED_ON_CLIENTS.get(), "group 0 routed");
    assertEquals(failed + 1, ClientReadCounters.routesFailed(), "group 1 fell back");
    assertEquals(stock[0], ours[0], "ReadStatistics: as Hadoop's stream counts the read");
    assertEquals(stock[1], ours[1], "FileSystem statistics: as Hadoop's");
  }

  /**
   * First, so that its choice rests on its own measurements only (the client's route costs
   * are the file system's router's; the test opens its own file system as well).
   */
  @Test
  @Order(1)
  void theSecondGroupsStalledRouteIsHedgedAfresh() throws Exception {
    Configuration slow = new Configuration(c.fs().getConf());
    slow.set(NetecConfigKeys.CLIENT_READS, "cost");
    slow.setInt(NetecConfigKeys.CLIENT_LINK_MBPS, 10);
    slow.setInt("dfs.client.socket-timeout", 45_000);
    try (NetecDistributedFileSystem fs = new NetecDistributedFileSystem()) {
      fs.initialize(c.fs().getUri(), slow);
      ScriptedRoute.mode = ScriptedRoute.Mode.DECODE;
      byte[] small = new byte[CELL / 4];
      try (FSDataInputStream in = fs.open(new Path(PATH))) {
        for (int i = 0; i < io.netec.hdfs.route.ReadCost.MIN_TRUSTED; i++) {
          in.readFully(lostCell0 + 100, small); // the route measured, then trusted
        }
      }
      // group 0: the route answers once the read is hedged, while the hedge (Hadoop's
      // stream) waits at its DataNodes until the route served; group 1: the route stalls
      ScriptedRoute.hedgedBefore = ClientReadCounters.hedged();
      ScriptedRoute.NEXT.add(ScriptedRoute.Mode.DECODE_ONCE_HEDGED);
      ScriptedRoute.NEXT.add(ScriptedRoute.Mode.STALL);
      CountDownLatch gate = new CountDownLatch(1);
      ScriptedRoute.afterServe = gate::countDown;
      long hedged = ClientReadCounters.hedged();
      long abandoned = ClientReadCounters.routesAbandoned();
      long routes = ClientReadCounters.routesChosen();
      DataNodeFaultInjector old = DataNodeFaultInjector.get();
      DataNodeFaultInjector.set(new DataNodeFaultInjector() {
        @Override
        public void throwTooManyOpenFiles() { // as each BlockSender is made
          try {
            gate.await(60, TimeUnit.SECONDS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        }
      });
      byte[] b = new byte[length];
      long t0 = System.nanoTime();
      try (FSDataInputStream in = fs.open(new Path(PATH))) {
        in.readFully(at, b);
      } finally {
        gate.countDown();
        DataNodeFaultInjector.set(old);
      }
      long ms = (System.nanoTime() - t0) / 1_000_000;
      assertArrayEquals(expected(), b);
      assertEquals(routes + 1, ClientReadCounters.routesChosen(), "the routes were chosen");
      assertEquals(hedged + 2, ClientReadCounters.hedged(), "a hedge for each group");
      assertEquals(abandoned + 1, ClientReadCounters.routesAbandoned(), "group 1's left");
      assertTrue(ms < 25_000, "read took " + ms + " ms");
    }
  }
}
