package io.netec.hdfs.cluster;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netec.hdfs.NetecConfigKeys;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hdfs.server.datanode.DataNode;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The route seam on a real cluster: a route failing mid-task falls through to native and leaves
 * no partial block; a route rebuilding with our writer serves the task alone and releases
 * Hadoop's reservation; a task of Hadoop's RS policy never reaches the router.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RouteSeamTest {
  private static final int SIZE = 2 * 3 * (int) EcTestCluster.BLOCK_SIZE + 3 * EcTestCluster.CELL
      + 12345;
  private EcTestCluster c;

  @BeforeAll
  void start() throws Exception {
    Configuration conf = EcTestCluster.conf();
    conf.set(NetecConfigKeys.ROUTE_ORDER, "scripted,native");
    conf.set(NetecConfigKeys.ROUTE_CLASS_PREFIX + "scripted", ScriptedRoute.class.getName());
    conf.setInt(NetecConfigKeys.ROUTE_RETRIES, 1);
    c = new EcTestCluster(conf, 10);
    ScriptedRoute.cluster = c;
    c.useNetecPolicy("NETEC-3-2-1024k", "/netec");
  }

  @AfterAll
  void stop() {
    c.close();
  }

  /** Writes a file, loses the holders of the given indices, waits for the rebuild. */
  private String loseAndRebuild(String path, int... indices) throws Exception {
    byte[] data = c.writeFile(path, SIZE, path.hashCode());
    Map<Long, byte[]> original = c.snapshotInternalBlocks(path);
    DataNode[] victims = new DataNode[indices.length];
    for (int i = 0; i < indices.length; i++) {
      victims[i] = c.holder(path, 0, indices[i]);
      c.stop(victims[i]);
    }
    for (DataNode v : victims) {
      c.markDead(v);
    }
    c.waitFullyStored(path, 120_000);
    int checked = c.forEachStoredInternalBlock(path, (block, bytes) ->
        assertArrayEquals(original.get(block.getBlockId()), bytes, "block file " + block));
    assertTrue(checked >= 15);
    assertArrayEquals(data, c.readFully(path));
    return path;
  }

  @Test
  void routeFailingMidTaskFallsThroughToNative() throws Exception {
    ScriptedRoute.mode = ScriptedRoute.Mode.FAIL_MID_WRITE;
    long failed = c.routerMetric("scripted.Failed");
    long tasks = c.routerMetric("Tasks");
    long nativeServed = c.routerMetric("native.Served");
    String p = loseAndRebuild("/netec/fails-mid-task", 0);
    long routed = c.routerMetric("Tasks") - tasks;
    assertTrue(routed >= 1);
    // each task: the scripted route failed twice (one retry), then native rebuilt the block
    assertEquals(2 * routed, c.routerMetric("scripted.Failed") - failed);
    assertEquals(routed, c.routerMetric("native.Served") - nativeServed);
    assertEquals(List.of(), ScriptedRoute.LEFTOVERS, "partial replicas left after abort");
    c.fs().delete(new Path(p), false);
  }

  @Test
  void routeWritingWithInternalBlockWriterServesAlone() throws Exception {
    ScriptedRoute.mode = ScriptedRoute.Mode.DECODE;
    long served = c.routerMetric("scripted.Served");
    long tasks = c.routerMetric("Tasks");
    long nativeServed = c.routerMetric("native.Served");
    String p = loseAndRebuild("/netec/decoded-by-route", 1, 3); // a data and a parity block
    long routed = c.routerMetric("Tasks") - tasks;
    assertTrue(routed >= 1);
    assertEquals(routed, c.routerMetric("scripted.Served") - served);
    assertEquals(nativeServed, c.routerMetric("native.Served"));
    for (DataNode dn : c.mini().getDataNodes()) {
      assertEquals(0, dn.getXmitsInProgress(), "reservation released on " + dn);
    }
    c.fs().delete(new Path(p), false);
  }

  @Test
  void tasksOfOtherPoliciesNeverReachTheRouter() throws Exception {
    ScriptedRoute.mode = ScriptedRoute.Mode.FAIL_MID_WRITE;
    c.fs().enableErasureCodingPolicy("RS-3-2-1024k");
    c.fs().mkdirs(new Path("/rs"));
    c.fs().setErasureCodingPolicy(new Path("/rs"), "RS-3-2-1024k");
    long tasks = c.routerMetric("Tasks");
    long passed = c.routerMetric("PassedThrough");
    String p = loseAndRebuild("/rs/plain-rs", 2);
    assertEquals(tasks, c.routerMetric("Tasks"));
    assertTrue(c.routerMetric("PassedThrough") > passed);
    c.fs().delete(new Path(p), false);
  }
}
