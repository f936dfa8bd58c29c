package io.netec.hdfs.cluster;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netec.hdfs.NetecConfigKeys;
import io.netec.hdfs.datanode.DataNodeBlockSource;
import io.netec.hdfs.route.ServiceDirectory;
import io.netec.hdfs.route.ServiceDirectory.Service;
import io.netec.hdfs.switchroute.SoftwareSwitch;
import java.io.IOException;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.DFSConfigKeys;
import org.apache.hadoop.hdfs.protocol.ExtendedBlock;
import org.apache.hadoop.hdfs.protocol.LocatedStripedBlock;
import org.apache.hadoop.hdfs.server.datanode.DataNode;
import org.apache.hadoop.hdfs.util.StripedBlockUtil;
import org.junit.jupiter.api.Test;

/**
 * Faults of the switch route on a real cluster. Every case must end with every internal block
 * file equal to the original, whichever route finishes the work.
 */
class SwitchRouteFaultTest {
  private static final int SIZE = 2 * 3 * (int) EcTestCluster.BLOCK_SIZE + 5000;

  /** A small ring and payload: each task needs hundreds of round trips, so it is slow enough. */
  private static SoftwareSwitch slowSwitch() throws IOException {
    SoftwareSwitch.Options o = new SoftwareSwitch.Options();
    o.slotsPerArray = 4;
    return new SoftwareSwitch(o);
  }

  private static Configuration conf(SoftwareSwitch sw) {
    Configuration conf = EcTestCluster.switchConf(sw, 5_000);
    conf.setInt(NetecConfigKeys.SWITCH_PAYLOAD, 4096);
    return conf;
  }

  /**
   * Runs {@code fault} once the switch has taken in 256 KiB: a task of a 2 MiB block is then
   * mid-stream (the file's short last group, 3 x 5000 bytes, cannot get there alone).
   */
  private static Thread whenStreaming(SoftwareSwitch sw, Runnable fault) {
    Thread t = new Thread(() -> {
      long deadline = System.currentTimeMillis() + 60_000;
      while (sw.getBytesIn() < 256 * 1024 && System.currentTimeMillis() < deadline) {
        Thread.onSpinWait();
      }
      fault.run();
    }, "fault-injector");
    t.start();
    return t;
  }

  /**
   * A survivor agent the switch cannot reach (TCP: its port refuses) or never hears from
   * (datagrams: its HELLOs go unanswered for half the task's timeout while the others
   * answer) is that survivor's fault, as a DataNode Hadoop's striped reader cannot connect to
   * is a dead source: the switch names it to the reader, and the route runs again from a spare
   * at once, not failed; the block rebuilt through the switch equals the original.
   */
  private static void unreachableAgent(String transport, java.net.InetSocketAddress agent)
      throws Exception {
    SoftwareSwitch sw = new SoftwareSwitch(new SoftwareSwitch.Options());
    Configuration conf = EcTestCluster.switchConf(sw, 5_000);
    conf.set(NetecConfigKeys.SWITCH_TRANSPORT, transport);
    conf.setInt(NetecConfigKeys.SWITCH_PAYLOAD, 1024);
    try (EcTestCluster c = new EcTestCluster(conf, 7)) {
      c.useNetecPolicy("NETEC-3-2-1024k", "/f");
      byte[] data = c.writeFile("/f/a", 3 * (int) EcTestCluster.BLOCK_SIZE, 5); // one group
      Map<Long, byte[]> original = c.snapshotInternalBlocks("/f/a");
      DataNode unreachable = c.holder("/f/a", 0, 1);
      ServiceDirectory.register(Service.SWITCH_AGENT, unreachable.getXferPort(), agent);
      DataNode victim = c.holder("/f/a", 0, 0);
      c.stop(victim);
      c.markDead(victim);
      c.verifyRebuilt(Map.of("/f/a", data), original);
      String tasks = c.recentTasks().toString();
      assertTrue(c.routerMetric("switch.SurvivorFaults") >= 1,
          "the unreachable agent was its survivor's fault: " + tasks);
      assertTrue(c.routerMetric("switch.Failed") == 0, "no attempt failed the route: " + tasks);
      assertTrue(c.routerMetric("switch.Served") >= 1, "the switch served from a spare: " + tasks);
      assertTrue(c.routerMetric("native.Served") == 0, "native ran no task: " + tasks);
      assertTrue(sw.getTasksFailed() >= 1, "the switch failed the first task");
      // named by the switch: at once over TCP, after half the timeout in datagrams (the
      // reader's own timeout would name nobody)
      assertTrue(tasks.contains(transport.equals("tcp") ? "cannot reach survivor"
          : "did not answer within 2500 ms"), tasks);
    } finally {
      sw.close();
    }
  }

  @Test
  void anAgentThatRefusesIsReplacedByASpare() throws Exception {
    unreachableAgent("tcp", EcTestCluster.nobodyListens());
  }

  @Test
  void anAgentThatNeverAnswersIsReplacedByASpare() throws Exception {
    unreachableAgent("udp", EcTestCluster.nobodyListens());
  }

  /**
   * A TCP agent whose host drops packets refuses nothing: the switch's connection to it times
   * out (half the task's timeout) while the other survivors' connect, which names it.
   */
  @Test
  void anAgentWhoseHostDropsPacketsIsReplacedByASpare() throws Exception {
    try (EcTestCluster.Blackhole hole = new EcTestCluster.Blackhole()) {
      unreachableAgent("tcp", hole.address());
    }
  }

  @Test
  void switchDyingMidTaskEndsWithCorrectBlocksThroughNative() throws Exception {
    SoftwareSwitch sw = slowSwitch();
    try (EcTestCluster c = new EcTestCluster(conf(sw), 7)) {
      c.useNetecPolicy("NETEC-3-2-1024k", "/f");
      byte[] data = c.writeFile("/f/a", SIZE, 1);
      Map<Long, byte[]> original = c.snapshotInternalBlocks("/f/a");
      DataNode victim = c.holder("/f/a", 0, 0);
      c.stop(victim);
      Thread fault = whenStreaming(sw, sw::close);
      c.markDead(victim);
      fault.join();
      c.verifyRebuilt(Map.of("/f/a", data), original);
      assertTrue(sw.getTasksFailed() + c.routerMetric("switch.Failed") >= 1,
          "the switch died under a running task");
      assertTrue(c.routerMetric("native.Served") >= 1, "native finished the work");
    } finally {
      sw.close();
    }
  }

  @Test
  void survivorDyingMidTaskEndsWithCorrectBlocks() throws Exception {
    SoftwareSwitch sw = slowSwitch();
    try (EcTestCluster c = new EcTestCluster(conf(sw), 8)) {
      c.useNetecPolicy("NETEC-3-2-1024k", "/f");
      byte[] data = c.writeFile("/f/b", SIZE, 2);
      Map<Long, byte[]> original = c.snapshotInternalBlocks("/f/b");
      DataNode victim = c.holder("/f/b", 0, 0);
      DataNode survivor = c.holder("/f/b", 0, 1);
      c.stop(victim);
      Thread fault = whenStreaming(sw, () -> {
        try {
          c.stop(survivor); // its agent goes with it
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      });
      c.markDead(victim);
      fault.join();
      c.markDead(survivor);
      c.verifyRebuilt(Map.of("/f/b", data), original);
      assertTrue(sw.getTasksFailed() + c.routerMetric("switch.Failed") >= 1,
          "a survivor died under a running task");
    } finally {
      sw.close();
    }
  }

  @Test
  void withBlockTokensTheRouteWorksAndForgedTokensAreRefused() throws Exception {
    SoftwareSwitch.Options o = new SoftwareSwitch.Options();
    SoftwareSwitch sw = new SoftwareSwitch(o);
    Configuration conf = conf(sw);
    conf.setBoolean(DFSConfigKeys.DFS_BLOCK_ACCESS_TOKEN_ENABLE_KEY, true);
    try (EcTestCluster c = new EcTestCluster(conf, 7)) {
      c.useNetecPolicy("NETEC-3-2-1024k", "/t");
      byte[] data = c.writeFile("/t/c", SIZE, 3);
      Map<Long, byte[]> original = c.snapshotInternalBlocks("/t/c");

      LocatedStripedBlock g = c.groups("/t/c").get(0);
      ExtendedBlock unit = StripedBlockUtil.constructInternalBlock(g.getBlock(),
          c.policyOf("/t/c"), g.getBlockIndices()[0]);
      DataNode holder = c.dataNode(g.getLocations()[0]);
      DataNodeBlockSource agentView = new DataNodeBlockSource(holder);
      org.apache.hadoop.security.token.Token<?> forged =
          new org.apache.hadoop.security.token.Token<>(new byte[] {1, 2}, new byte[] {3},
              new org.apache.hadoop.io.Text("HDFS_BLOCK_TOKEN"), new org.apache.hadoop.io.Text());
      assertThrows(IOException.class,
          () -> agentView.check(unit, forged.encodeToUrlString(), 1));
      assertThrows(IOException.class, () -> agentView.check(unit, "", 1));
      // the NameNode's token for the unit, as the DataNode sees its proofs
      String token = g.getBlockTokens()[0].encodeToUrlString();
      assertThrows(IOException.class, () -> agentView.check(unit, token, 1), "a whole token");
      String proof = io.netec.hdfs.route.TokenProof.prove(token, unit);
      agentView.check(unit, proof, 1);
      IOException replay = assertThrows(IOException.class, () -> agentView.check(unit, proof, 1));
      assertTrue(replay.getMessage().contains("replay"), replay.getMessage());
      ExtendedBlock sibling = StripedBlockUtil.constructInternalBlock(g.getBlock(),
          c.policyOf("/t/c"), g.getBlockIndices()[1]);
      assertThrows(IOException.class, () -> agentView.check(sibling,
          io.netec.hdfs.route.TokenProof.prove(token, sibling), 1), "another unit's proof");

      long served = c.routerMetric("switch.Served");
      DataNode victim = c.holder("/t/c", 0, 1);
      c.stop(victim);
      c.markDead(victim);
      c.verifyRebuilt(Map.of("/t/c", data), original);
      assertTrue(c.routerMetric("switch.Served") > served, "real tokens pass the agents");
    } finally {
      sw.close();
    }
  }
}
