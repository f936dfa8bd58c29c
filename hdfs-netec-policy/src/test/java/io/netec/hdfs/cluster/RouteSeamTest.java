package io.netec.hdfs.cluster;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netec.hdfs.NetecConfigKeys;
import io.netec.hdfs.client.ClientReadCounters;
import io.netec.hdfs.client.NetecDistributedFileSystem;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hdfs.protocol.ErasureCodingPolicy;
import org.apache.hadoop.hdfs.protocol.ExtendedBlock;
import org.apache.hadoop.hdfs.protocol.LocatedStripedBlock;
import org.apache.hadoop.hdfs.server.datanode.DataNode;
import org.apache.hadoop.hdfs.util.StripedBlockUtil;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The route seam on a real cluster, with a third-party route found by ServiceLoader
 * ({@link ScriptedRoute}): it serves DataNode tasks and client degraded reads alike and reads
 * its own key; a route failing mid-task falls through to native and leaves no partial replica;
 * a route serving a task releases Hadoop's reservation; a task of Hadoop's RS policy never
 * reaches the router.
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
    conf.set("netec.scripted.tag", "seam");
    conf.setInt(NetecConfigKeys.ROUTE_RETRIES, 1);
    // each case counts the scripted route's attempts: a failing route is never backed off here
    conf.setInt(NetecConfigKeys.ROUTE_BACKOFF_MS, 0);
    conf.set("fs.hdfs.impl", NetecDistributedFileSystem.class.getName());
    conf.set(NetecConfigKeys.CLIENT_READS, "routes"); // lost units' preads through routes
    c = new EcTestCluster(conf, 12);
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
    assertNoReplicaLeftUnfinished(path);
    assertArrayEquals(data, c.readFully(path));
    return path;
  }

  /** Every replica any running DataNode has of the file's internal blocks is finalized. */
  private void assertNoReplicaLeftUnfinished(String path) throws Exception {
    ErasureCodingPolicy policy = c.policyOf(path);
    for (LocatedStripedBlock g : c.groups(path)) {
      for (int i = 0; i < policy.getNumDataUnits() + policy.getNumParityUnits(); i++) {
        ExtendedBlock b = StripedBlockUtil.constructInternalBlock(g.getBlock(), policy, i);
        for (DataNode dn : c.mini().getDataNodes()) {
          String replica = dn.getFSDataset().getReplicaString(b.getBlockPoolId(),
              b.getBlockId());
          assertTrue(replica.equals("null") || replica.contains("FINALIZED"),
              "replica left on " + dn + ": " + replica);
        }
      }
    }
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
    c.fs().delete(new Path(p), false);
  }

  @Test
  void aThirdPartyRouteDeliveringWrongBytesIsNeverKept() throws Exception {
    ScriptedRoute.mode = ScriptedRoute.Mode.JUNK;
    long wrong = c.routerMetric("scripted.VerifyFailed");
    long served = c.routerMetric("scripted.Served");
    long tasks = c.routerMetric("Tasks");
    long nativeServed = c.routerMetric("native.Served");
    String p = loseAndRebuild("/netec/wrong-bytes", 1); // every block file checked
    long routed = c.routerMetric("Tasks") - tasks;
    assertTrue(routed >= 1);
    // each task: the right length of wrong bytes twice (one retry), neither kept; native
    assertEquals(2 * routed, c.routerMetric("scripted.VerifyFailed") - wrong);
    assertEquals(served, c.routerMetric("scripted.Served"));
    assertEquals(routed, c.routerMetric("native.Served") - nativeServed);

    // a client's degraded read: the wrong bytes never reach the reader
    byte[] data = c.readFully(p);
    DataNode lost = c.holder(p, 0, 2);
    c.stop(lost);
    NetecDistributedFileSystem fs = (NetecDistributedFileSystem) c.fs();
    long clientWrong = fs.router().metrics().get("scripted", "VerifyFailed");
    long clientServed = fs.router().metrics().get("scripted", "Served");
    assertArrayEquals(data, c.readFully(p));
    c.preadUnitCells(p, data, 3, 2);
    assertTrue(fs.router().metrics().get("scripted", "VerifyFailed") > clientWrong,
        "the client's router refused the scripted route's bytes");
    assertEquals(clientServed, fs.router().metrics().get("scripted", "Served"));
    c.markDead(lost);
    c.waitFullyStored(p, 120_000);
    c.fs().delete(new Path(p), false);
  }

  @Test
  void thirdPartyRouteServesDataNodeTasksAlone() throws Exception {
    ScriptedRoute.mode = ScriptedRoute.Mode.DECODE;
    long served = c.routerMetric("scripted.Served");
    long tasks = c.routerMetric("Tasks");
    long nativeServed = c.routerMetric("native.Served");
    long onDataNodes = ScriptedRoute.SERVED_ON_DATANODES.get();
    String p = loseAndRebuild("/netec/decoded-by-route", 1, 3); // a data and a parity block
    long routed = c.routerMetric("Tasks") - tasks;
    assertTrue(routed >= 1);
    assertEquals(routed, c.routerMetric("scripted.Served") - served);
    assertEquals(routed, ScriptedRoute.SERVED_ON_DATANODES.get() - onDataNodes);
    assertEquals(nativeServed, c.routerMetric("native.Served"));
    for (DataNode dn : c.mini().getDataNodes()) {
      assertEquals(0, dn.getXmitsInProgress(), "reservation released on " + dn);
    }
    assertTrue(ScriptedRoute.TAGS.contains("seam"), "the route read its own key");
    c.fs().delete(new Path(p), false);
  }

  @Test
  void thirdPartyRouteServesClientDegradedReads() throws Exception {
    ScriptedRoute.mode = ScriptedRoute.Mode.DECODE;
    assertInstanceOf(NetecDistributedFileSystem.class, c.fs());
    String p = "/netec/client-read";
    byte[] data = c.writeFile(p, SIZE, 77);
    c.waitFullyStored(p, 60_000);
    DataNode lost = c.holder(p, 0, 2);
    c.stop(lost); // still listed by the NameNode: the client finds it gone as it reads
    long onClients = ScriptedRoute.SERVED_ON_CLIENTS.get();
    long other = ClientReadCounters.otherRanges();
    NetecDistributedFileSystem fs = (NetecDistributedFileSystem) c.fs();
    long clientServed = fs.router().metrics().get("scripted", "Served");
    assertArrayEquals(data, c.readFully(p));
    c.preadUnitCells(p, data, 3, 2);
    long served = ScriptedRoute.SERVED_ON_CLIENTS.get() - onClients;
    assertTrue(served >= 1, "the client's reads of unit 2 went through the scripted route");
    assertEquals(served, ClientReadCounters.otherRanges() - other);
    assertEquals(served, fs.router().metrics().get("scripted", "Served") - clientServed);
    assertEquals(java.util.List.of("scripted", "native"), fs.router().routeNames());
    c.markDead(lost);
    c.waitFullyStored(p, 120_000);
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
