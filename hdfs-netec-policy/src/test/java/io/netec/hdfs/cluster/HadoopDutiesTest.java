package io.netec.hdfs.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netec.hdfs.NetecConfigKeys;
import io.netec.hdfs.Waits;
import io.netec.hdfs.datanode.DataNodeBlockSource;
import io.netec.hdfs.datanode.SurvivorFaultInjector;
import io.netec.hdfs.switchroute.SoftwareSwitch;
import java.io.Closeable;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import javax.management.ObjectName;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.protocol.ExtendedBlock;
import org.apache.hadoop.hdfs.server.datanode.DataNode;
import org.apache.hadoop.io.IOUtils;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * What Hadoop's own reconstruction does for an operator, the routes do too, on a live cluster
 * through the switch: a survivor that stalls is replaced by a spare within Hadoop's
 * striped-read timeout; survivors' streams are transfers of their DataNode (counted where
 * Hadoop counts its own, refused beyond dfs.datanode.max.transfer.threads, a spare then used);
 * the DataNode's EC counters count routed tasks; the EC reconstruction throttle holds.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class HadoopDutiesTest {
  private static final int SIZE = 3 * (int) EcTestCluster.BLOCK_SIZE; // one whole group
  /** Hadoop's striped-read timeout here: a stalled survivor is given up after this. */
  private static final int STALL_MS = 1500;
  private static final int TRANSFERS = 24;
  /**
   * The EC reconstruction read throttle of the cluster (bytes/s): charged k = 3 bytes a rebuilt
   * byte, it lets a task rebuild 2 MiB/s, slow enough to measure and fast enough that no task
   * of the other tests here idles past the 1.5 s no-progress limit while it waits on it.
   */
  private static final long THROTTLE = 6L << 20;
  private SoftwareSwitch sw;
  private EcTestCluster c;
  private final Map<String, byte[]> files = new LinkedHashMap<>();
  private final Map<Long, byte[]> original = new java.util.HashMap<>();

  @BeforeAll
  void start() throws Exception {
    sw = new SoftwareSwitch(new SoftwareSwitch.Options());
    Configuration conf = EcTestCluster.switchConf(sw, 30_000);
    conf.setInt("dfs.datanode.ec.reconstruction.stripedread.timeout.millis", STALL_MS);
    conf.setInt("dfs.datanode.max.transfer.threads", TRANSFERS);
    conf.setLong("dfs.datanode.ec.reconstruct.read.bandwidthPerSec", THROTTLE);
    conf.setInt(NetecConfigKeys.ROUTE_BACKOFF_MS, 0);
    // throttled native reconstructions take seconds: the NameNode must not plan them twice
    conf.setInt("dfs.namenode.reconstruction.pending.timeout-sec", 60);
    c = new EcTestCluster(conf, 12);
    c.useNetecPolicy("NETEC-3-2-1024k", "/d");
  }

  @AfterAll
  void stop() {
    c.close();
    sw.close();
  }

  @AfterEach
  void noFaults() {
    SurvivorFaultInjector.set(null);
  }

  private String write(String name, long seed) throws Exception {
    String path = "/d/" + name;
    files.put(path, c.writeFile(path, SIZE, seed));
    original.putAll(c.snapshotInternalBlocks(path));
    return path;
  }

  private void lose(String path, int index) throws Exception {
    DataNode v = c.holder(path, 0, index);
    c.stop(v);
    c.markDead(v);
    c.verifyRebuilt(files, original);
  }

  @Test
  void aStalledSurvivorIsReplacedBySpareWithinHadoopsTimeout() throws Exception {
    String p = write("stall", 1);
    DataNode slow = c.holder(p, 0, 1);
    ExtendedBlock stalled = org.apache.hadoop.hdfs.util.StripedBlockUtil.constructInternalBlock(
        c.groups(p).get(0).getBlock(), c.policyOf(p), 1);
    CountDownLatch release = new CountDownLatch(1);
    SurvivorFaultInjector.set(new SurvivorFaultInjector() {
      @Override
      public void beforeRead(DataNode dn, ExtendedBlock block, long offset) throws IOException {
        if (dn == slow && block.getBlockId() == stalled.getBlockId()) {
          try {
            release.await(60, TimeUnit.SECONDS); // a disk that stops answering
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        }
      }
    });
    long faults = c.routerMetric("switch.SurvivorFaults");
    long served = c.routerMetric("switch.Served");
    long start = System.nanoTime();
    try {
      DataNode v = c.holder(p, 0, 0);
      c.stop(v);
      c.markDead(v);
      c.waitFullyStored(p, 60_000);
      long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
      // Hadoop's timeout, then a rebuild from the spare; the margin covers the NameNode's
      // scheduling (a heartbeat, a redundancy check) and the rebuild itself
      assertTrue(ms < STALL_MS + 15_000, "rebuilt in " + ms + " ms");
    } finally {
      release.countDown();
    }
    c.verifyRebuilt(files, original);
    assertTrue(c.routerMetric("switch.SurvivorFaults") > faults, "the stall was the survivor's");
    assertTrue(c.routerMetric("switch.Served") > served, "the switch served, from the spare");
  }

  @Test
  void survivorsStreamsAreTransfersOfTheirDataNode() throws Exception {
    String p = write("transfers", 2);
    DataNode busy = c.holder(p, 0, 2);
    DataNodeBlockSource blocks = new DataNodeBlockSource(busy);
    int before = busy.getXceiverCount();
    List<Closeable> taken = new ArrayList<>();
    try {
      // counted where Hadoop counts its own transfers, refused beyond the limit
      while (taken.size() < TRANSFERS + 1) {
        try {
          taken.add(blocks.transfer("test"));
        } catch (IOException e) {
          assertTrue(e.getMessage().contains("dfs.datanode.max.transfer.threads=" + TRANSFERS),
              e.getMessage());
          break;
        }
      }
      assertTrue(taken.size() <= TRANSFERS, "refused past the limit");
      assertEquals(before + taken.size(), busy.getXceiverCount());
      IOException refused = assertThrows(IOException.class, () -> blocks.transfer("one more"));
      assertTrue(refused.getMessage().contains("transfer limit"), refused.getMessage());
      // a rebuild meanwhile: that survivor refuses its stream, a spare takes its place
      long faults = c.routerMetric("switch.SurvivorFaults");
      long served = c.routerMetric("switch.Served");
      lose(p, 0);
      assertTrue(c.routerMetric("switch.SurvivorFaults") > faults, "the busy survivor refused");
      assertTrue(c.routerMetric("switch.Served") > served, "served from a spare");
    } finally {
      for (Closeable t : taken) {
        IOUtils.closeStream(t);
      }
    }
    // the rebuild's own streams end too
    Waits.within(10_000, 50, () -> busy.getXceiverCount() == before);
    assertEquals(before, busy.getXceiverCount(), "every transfer given back");
  }

  @Test
  void theDataNodesEcCountersCountRoutedTasks() throws Exception {
    String p = write("counters", 3);
    Map<ObjectName, Long> tasks = ecCounter("EcReconstructionTasks");
    Map<ObjectName, Long> written = ecCounter("EcReconstructionBytesWritten");
    long served = c.routerMetric("switch.Served");
    long bytes = c.routerMetric("switch.Bytes");
    lose(p, 1);
    long routed = c.routerMetric("switch.Served") - served;
    assertTrue(routed >= 1);
    assertTrue(delta(tasks, ecCounter("EcReconstructionTasks")) >= routed,
        "Hadoop's task counter counts the switch's tasks");
    assertTrue(delta(written, ecCounter("EcReconstructionBytesWritten"))
        >= c.routerMetric("switch.Bytes") - bytes, "and their bytes");
  }

  @Test
  void theEcReconstructionThrottleHolds() throws Exception {
    String p = write("throttled", 4);
    long served = c.routerMetric("switch.Served");
    long bytes = c.routerMetric("switch.Bytes");
    long millis = c.routerMetric("switch.Millis");
    lose(p, 0);
    long n = c.routerMetric("switch.Bytes") - bytes;
    long ms = c.routerMetric("switch.Millis") - millis;
    assertTrue(c.routerMetric("switch.Served") > served);
    // charged as Hadoop's reconstruction charges its read throttle: k = 3 sources' bytes for
    // each rebuilt byte (one lost unit a group); one period's worth (0.1 s) goes through at
    // once, then the throttle keeps to it
    double rate = (n - THROTTLE / 10.0 / 3) / (ms / 1000.0);
    assertTrue(rate <= THROTTLE / 3.0 * 1.1, n + " bytes in " + ms + " ms: " + rate
        + " rebuilt bytes/s, read throttle " + THROTTLE + " (k = 3)");
  }

  /**
   * A counter of each running DataNode's DataNodeMetrics (what /jmx and /prom show as
   * DataNodeActivity, read here without the JMX view's cache).
   */
  private Map<ObjectName, Long> ecCounter(String attribute) throws Exception {
    String field = Character.toLowerCase(attribute.charAt(0)) + attribute.substring(1);
    java.lang.reflect.Field f = org.apache.hadoop.hdfs.server.datanode.metrics.DataNodeMetrics
        .class.getDeclaredField(field);
    f.setAccessible(true);
    Map<ObjectName, Long> out = new java.util.HashMap<>();
    for (DataNode dn : c.mini().getDataNodes()) {
      out.put(new ObjectName("Hadoop:service=DataNode,name=" + dn.getMetrics().name()),
          ((org.apache.hadoop.metrics2.lib.MutableCounterLong) f.get(dn.getMetrics())).value());
    }
    return out;
  }

  /** How much the counter grew on the DataNodes running both times. */
  private static long delta(Map<ObjectName, Long> before, Map<ObjectName, Long> after) {
    long d = 0;
    for (Map.Entry<ObjectName, Long> e : after.entrySet()) {
      if (before.containsKey(e.getKey())) {
        d += e.getValue() - before.get(e.getKey());
      }
    }
    return d;
  }
}
