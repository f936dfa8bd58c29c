package io.netec.hdfs.cluster;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netec.hdfs.NetecConfigKeys;
import io.netec.hdfs.codec.IsalNative;
import io.netec.hdfs.route.ServiceDirectory;
import io.netec.hdfs.route.ServiceDirectory.Service;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.server.datanode.DataNode;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

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
          dn.getDatanodeId(), dn.getConf()), MID_STREAM, cut, fault.apply(dn));
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
      long deadline = System.currentTimeMillis() + 60_000;
      while (relays.stream().noneMatch(CuttingRelay::fired)
          && System.currentTimeMillis() < deadline) {
        Thread.sleep(10);
      }
      assertTrue(relays.stream().anyMatch(CuttingRelay::fired), "a repair reached mid-stream");
      while (killed.isEmpty() && System.currentTimeMillis() < deadline) {
        Thread.sleep(10);
      }
      for (DataNode dn : killed) {
        c.markDead(dn); // the NameNode rebuilds its blocks too
      }
      assertTrue(killed.size() == 1, "one participant killed: " + killed);
      c.verifyRebuilt(Map.of("/f/a", data), original);
      assertTrue(c.routerMetric("inec.Failed") >= 1, "the dead participant failed a task");
      for (CuttingRelay r : relays) {
        r.close();
      }
    }
  }
}
