package io.netec.hdfs.cluster;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netec.hdfs.NetecConfigKeys;
import io.netec.hdfs.Waits;
import io.netec.hdfs.codec.IsalNative;
import io.netec.hdfs.route.ServiceDirectory;
import io.netec.hdfs.route.ServiceDirectory.Service;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.protocol.ExtendedBlock;
import org.apache.hadoop.hdfs.protocol.LocatedStripedBlock;
import org.apache.hadoop.hdfs.server.datanode.DataNode;
import org.apache.hadoop.hdfs.util.StripedBlockUtil;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Faults of the INEC route (ECPipe chain, RS(3,2)) on a real cluster: relays in front of every
 * participant's data listener cut a stream, or kill the DataNode of a participant, once 256 KiB
 * of a 2 MiB block's stream went through (mid-task, deterministically). Each case ends with
 * every internal block file equal to the original, through the next route.
 */
class InecRouteFaultTest {
  private static final int SIZE = 2 * 3 * (int) EcTestCluster.BLOCK_SIZE + 5000;
  private static final long MID_STREAM = 256 * 1024;

  @BeforeEach
  void needsTheEngine() {
    Assumptions.assumeTrue(IsalNative.libraryUnavailableReason() == null, "needs libnetec.so");
  }

  private static Configuration conf() {
    Configuration conf = EcTestCluster.inecConf("ecpipe", 5_000, "tcp");
    conf.setInt(NetecConfigKeys.INEC_SEGMENT, 256 * 1024); // several primitives per block
    return conf;
  }

  private static List<CuttingRelay> relayEveryParticipant(EcTestCluster c, boolean cut,
      java.util.function.Function<DataNode, Runnable> fault) throws Exception {
    List<CuttingRelay> relays = new ArrayList<>();
    for (DataNode dn : c.mini().getDataNodes()) {
      CuttingRelay r = new CuttingRelay(ServiceDirectory.resolve(Service.INEC_DATA,
          dn.getDatanodeId(), EcTestCluster.settings(dn)), MID_STREAM, cut, fault.apply(dn));
      ServiceDirectory.register(Service.INEC_DATA, dn.getXferPort(), r.address());
      relays.add(r);
    }
    return relays;
  }

  @Test
  void aDroppedStreamEndsWithCorrectBlocksThroughNative() throws Exception {
    try (EcTestCluster c = new EcTestCluster(conf(), 7)) {
      c.useNetecPolicy("NETEC-3-2-1024k", "/f");
      byte[] data = c.writeFile("/f/a", SIZE, 1);
      Map<Long, byte[]> original = c.snapshotInternalBlocks("/f/a");
      List<CuttingRelay> relays = relayEveryParticipant(c, true, dn -> null);
      DataNode victim = c.holder("/f/a", 0, 0);
      c.stop(victim);
      c.markDead(victim);
      c.verifyRebuilt(Map.of("/f/a", data), original);
      long cuts = relays.stream().mapToLong(r -> r.cuts.get()).sum();
      assertTrue(cuts >= 1, "a stream was cut");
      assertTrue(c.routerMetric("inec.Failed") >= 1, "the cut failed the INEC route");
      assertTrue(c.routerMetric("native.Served") >= 1, "native finished the work");
      for (CuttingRelay r : relays) {
        r.close();
      }
    }
  }

  @Test
  void aParticipantDyingMidTaskEndsWithCorrectBlocks() throws Exception {
    try (EcTestCluster c = new EcTestCluster(conf(), 7)) {
      c.useNetecPolicy("NETEC-3-2-1024k", "/f");
      byte[] data = c.writeFile("/f/a", SIZE, 2);
      Map<Long, byte[]> original = c.snapshotInternalBlocks("/f/a");
      DataNode victim = c.holder("/f/a", 0, 0);
      List<DataNode> killed = new java.util.concurrent.CopyOnWriteArrayList<>();
      java.util.concurrent.atomic.AtomicBoolean once = new java.util.concurrent.atomic.AtomicBoolean();
      List<CuttingRelay> relays = relayEveryParticipant(c, false, dn -> () -> {
        if (dn == victim || !once.compareAndSet(false, true)) {
          return; // one participant dies, the first seen mid-stream
        }
        // The participant behind this relay is mid-stream: its DataNode dies now, while the
        // relay holds the stream (this runs on the relay's thread).
        try {
          c.stop(dn);
          killed.add(dn);
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      });
      c.stop(victim);
      c.markDead(victim);
      long start = System.nanoTime(); // one 60 s deadline for both waits, as before
      Waits.within(60_000, 10, () -> relays.stream().anyMatch(CuttingRelay::fired));
      assertTrue(relays.stream().anyMatch(CuttingRelay::fired), "a repair reached mid-stream");
      long left = 60_000 - TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
      Waits.within(Math.max(0, left), 10, () -> !killed.isEmpty());
      for (DataNode dn : killed) {
        c.markDead(dn); // the NameNode rebuilds its blocks too
      }
      assertTrue(killed.size() == 1, "one participant killed: " + killed);
      c.verifyRebuilt(Map.of("/f/a", data), original);
      // the dead participant's unit is the survivors' fault: the task ran again from a spare
      assertTrue(c.routerMetric("inec.SurvivorFaults") + c.routerMetric("inec.Failed") >= 1,
          "the dead participant failed an attempt");
      for (CuttingRelay r : relays) {
        r.close();
      }
    }
  }

  /**
   * A survivor's participant that cannot be reached, on its control port or on its data port
   * (which the chain's previous vertex dials), is that survivor's fault, as a DataNode Hadoop's
   * striped reader cannot connect to is a dead source: INEC runs again from a spare at once,
   * the route not failed, and the block rebuilt through INEC equals the original.
   */
  private static void unreachableParticipant(Service broken, int unit,
      java.net.InetSocketAddress at) throws Exception {
    try (EcTestCluster c = new EcTestCluster(conf(), 7)) {
      c.useNetecPolicy("NETEC-3-2-1024k", "/f");
      byte[] data = c.writeFile("/f/a", 3 * (int) EcTestCluster.BLOCK_SIZE, 4); // one group
      Map<Long, byte[]> original = c.snapshotInternalBlocks("/f/a");
      DataNode unreachable = c.holder("/f/a", 0, unit);
      ServiceDirectory.register(broken, unreachable.getXferPort(), at);
      DataNode victim = c.holder("/f/a", 0, 0);
      c.stop(victim);
      c.markDead(victim);
      c.verifyRebuilt(Map.of("/f/a", data), original);
      assertTrue(c.routerMetric("inec.SurvivorFaults") >= 1,
          "the unreachable participant was its survivor's fault: " + c.recentTasks());
      assertTrue(c.routerMetric("inec.Failed") == 0,
          "no attempt failed the route: " + c.recentTasks());
      assertTrue(c.routerMetric("inec.Served") >= 1, "INEC served from a spare: "
          + c.recentTasks());
      assertTrue(c.routerMetric("native.Served") == 0, "native ran no task");
    }
  }

  @Test
  void aParticipantWhoseControlPortRefusesIsReplacedByASpare() throws Exception {
    // the chain's first vertex
    unreachableParticipant(Service.INEC_CONTROL, 1, EcTestCluster.nobodyListens());
  }

  @Test
  void aParticipantWhoseDataPortRefusesIsReplacedByASpare() throws Exception {
    // unit 2's vertex is the chain's second: the first dials its data port and cannot
    unreachableParticipant(Service.INEC_DATA, 2, EcTestCluster.nobodyListens());
  }

  /**
   * A participant whose host drops packets refuses nothing: its control connection times out
   * (the task's timeout). After the chain's first vertex was reached, that is its survivor's
   * fault; so it is for the first vertex itself when the next participant answers a probe (a
   * timeout while no participant answers may be this node's own network, and blames none).
   */
  @ParameterizedTest(name = "the chain's vertex {0}")
  @ValueSource(ints = {1, 2})
  void aParticipantWhoseHostDropsPacketsIsReplacedByASpare(int unit) throws Exception {
    try (EcTestCluster.Blackhole hole = new EcTestCluster.Blackhole()) {
      unreachableParticipant(Service.INEC_CONTROL, unit, hole.address());
    }
  }

  /**
   * Every participant's host drops packets, as it looks from a node whose own link is down: the
   * first vertex times out and so does the probe of the next, so no survivor is blamed (none is
   * replaced, no spare is spent); the route fails and Hadoop's own reconstruction rebuilds the
   * block.
   */
  @Test
  void noParticipantAnsweringBlamesNoSurvivorAndNativeServes() throws Exception {
    List<EcTestCluster.Blackhole> holes = new ArrayList<>();
    Configuration conf = conf();
    conf.setInt(NetecConfigKeys.INEC_TIMEOUT_MS, 2_000); // each attempt waits it, and a probe
    try (EcTestCluster c = new EcTestCluster(conf, 7)) {
      c.useNetecPolicy("NETEC-3-2-1024k", "/f");
      byte[] data = c.writeFile("/f/a", 3 * (int) EcTestCluster.BLOCK_SIZE, 4); // one group
      Map<Long, byte[]> original = c.snapshotInternalBlocks("/f/a");
      for (DataNode dn : c.mini().getDataNodes()) { // a hole each: the probe dials another
        EcTestCluster.Blackhole hole = new EcTestCluster.Blackhole();
        holes.add(hole);
        ServiceDirectory.register(Service.INEC_CONTROL, dn.getXferPort(), hole.address());
      }
      DataNode victim = c.holder("/f/a", 0, 0);
      c.stop(victim);
      c.markDead(victim);
      c.verifyRebuilt(Map.of("/f/a", data), original);
      assertTrue(c.routerMetric("inec.SurvivorFaults") == 0,
          "no survivor was blamed: " + c.recentTasks());
      assertTrue(c.routerMetric("inec.Failed") >= 1, "the route failed: " + c.recentTasks());
      assertTrue(c.routerMetric("native.Served") >= 1, "native served: " + c.recentTasks());
    } finally {
      for (EcTestCluster.Blackhole hole : holes) {
        hole.close();
      }
    }
  }

  @Test
  void aCorruptSurvivorReplicaFailsTheRouteNeverTheBlock() throws Exception {
    Configuration conf = conf();
    // no block scanner: the NameNode can only learn of the corrupt replica from the survivor
    // that found it (reported at once, as Hadoop's reconstruction reports a corrupt source)
    conf.setInt("dfs.datanode.scan.period.hours", -1);
    try (EcTestCluster c = new EcTestCluster(conf, 7)) {
      c.useNetecPolicy("NETEC-3-2-1024k", "/f");
      byte[] data = c.writeFile("/f/a", SIZE, 3);
      Map<Long, byte[]> original = c.snapshotInternalBlocks("/f/a");
      // Flip one byte in the middle of unit 1 of the first group, on its DataNode's disk: the
      // chain reads unit 1 (the first live units are chosen), and must not stream it.
      LocatedStripedBlock g = c.groups("/f/a").get(0);
      ExtendedBlock unit1 =
          StripedBlockUtil.constructInternalBlock(g.getBlock(),
              c.policyOf("/f/a"), 1);
      c.flipByte("/f/a", 0, 1, 1_000_000);
      DataNode victim = c.holder("/f/a", 0, 0);
      long faults = c.routerMetric("inec.SurvivorFaults");
      c.stop(victim);
      c.markDead(victim);
      // Unit 0 comes back equal to the original, whoever rebuilds it; the NameNode learns of the
      // corrupt replica from its survivor, not from a reader.
      long deadline = System.currentTimeMillis() + 120_000;
      byte[] rebuilt = null;
      boolean reported = false;
      while ((rebuilt == null || !reported) && System.currentTimeMillis() < deadline) {
        java.util.Collection<?> corrupt = c.mini().getNamesystem().getBlockManager()
            .getCorruptReplicas(unit1.getLocalBlock());
        reported |= c.mini().getNamesystem().getCorruptReplicaBlocks() > 0
            || corrupt != null && !corrupt.isEmpty();
        for (LocatedStripedBlock now : c.groups("/f/a")) {
          byte[] idx = now.getBlockIndices();
          for (int j = 0; j < idx.length; j++) {
            DataNode dn = c.dataNode(now.getLocations()[j]);
            if (idx[j] == 0 && now.getBlock().getBlockId() == g.getBlock().getBlockId()
                && dn != null && dn != victim) {
              ExtendedBlock b0 =
                  StripedBlockUtil.constructInternalBlock(
                      now.getBlock(), c.policyOf("/f/a"), 0);
              try {
                rebuilt = Files.readAllBytes(new File(
                    dn.getFSDataset().getBlockLocalPathInfo(b0).getBlockPath()).toPath());
              } catch (IOException e) {
                rebuilt = null; // not finalized yet
              }
            }
          }
        }
        Thread.sleep(20);
      }
      // what each router did, for a failure's message: which route served, and why (the
      // survivor's blame is counted before the attempt without it, so before the rebuild)
      String tasks = c.recentTasks() + ", inec failed " + c.routerMetric("inec.Failed")
          + ", inec served " + c.routerMetric("inec.Served") + ", native served "
          + c.routerMetric("native.Served");
      boolean blamed = c.routerMetric("inec.SurvivorFaults") > faults;
      assertArrayEquals(
          original.get(g.getBlock().getBlockId()), rebuilt, "rebuilt unit 0: " + tasks);
      assertTrue(reported, "the survivor reported its corrupt replica to the NameNode: " + tasks);
      // the corrupt replica is its survivor's fault: INEC ran again without unit 1
      assertTrue(blamed, "the corrupt chunk failed INEC's attempt: " + tasks);
      assertTrue(tasks.contains("Checksum"), tasks);
      assertArrayEquals(data, c.readFully("/f/a"));
    }
  }
}
