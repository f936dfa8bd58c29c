package io.netec.hdfs.cluster;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netec.hdfs.NetecConfigKeys;
import io.netec.hdfs.switchroute.SoftwareSwitch;
import io.netec.hdfs.switchroute.SwitchRoute;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.server.datanode.DataNode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The switch route end to end for one NETEC policy: an in-process software switch, survivor
 * agents in every DataNode, route order switch,native. Losing one and then m DataNodes, every
 * task is served by the switch, every internal block file equals the original, and the
 * rebuilding DataNodes took in about one block's worth per rebuilt block (not k). With the
 * switch gone, the router falls back to native and the bytes are still right.
 */
class SwitchRouteTest {
  private static final Logger LOG = LoggerFactory.getLogger(SwitchRouteTest.class);

  /**
   * Codes, netec.switch.premultiply (one-unit tasks pre-multiplied by the survivors) and
   * netec.switch.transport (udp: datagram mode, every packet in a datagram of its own), by id.
   */
  static Stream<Arguments> shapes() {
    return new Shapes()
        .add("rs32-premultiplied", 3, 2, true, "tcp")
        .add("rs63-datagrams", 6, 3, false, "udp")
        .selected();
  }

  @ParameterizedTest(name = "RS({0},{1}), pre-multiplied {2}, over {3}")
  @MethodSource("shapes")
  void rebuildsThroughTheSwitchThenFallsBackWhenItIsGone(int k, int m, boolean premultiply,
      String transport) throws Exception {
    SoftwareSwitch.Options o = new SoftwareSwitch.Options();
    SoftwareSwitch sw = new SoftwareSwitch(o);
    Configuration conf = EcTestCluster.switchConf(sw, 5_000);
    conf.setBoolean(NetecConfigKeys.SWITCH_PREMULTIPLY, premultiply);
    conf.set(NetecConfigKeys.SWITCH_TRANSPORT, transport);
    if (transport.equals("udp")) {
      // datagrams of a link's size: the window (EBSN) is the only pacing, and a burst of
      // 32 KiB datagrams overruns a socket's receive buffer (net.core.rmem_max)
      conf.setInt(NetecConfigKeys.SWITCH_PAYLOAD, 1024);
    }
    String policy = "NETEC-" + k + "-" + m + "-1024k";
    try (EcTestCluster c = new EcTestCluster(conf, k + m + 1 + m + 1)) {
      c.useNetecPolicy(policy, "/sw");
      int size = EcTestCluster.roundFileSize(k);
      Map<String, byte[]> files = new java.util.LinkedHashMap<>();
      Map<Long, byte[]> original = new java.util.HashMap<>();
      for (int lost : new int[] {1, m}) {
        // the small file's k-1 empty units are zeros, never streamed
        String[] round = c.writeRound("/sw", k, lost, files, original);
        long tasks = c.routerMetric("Tasks");
        long served = c.routerMetric("switch.Served");
        long rebuilt = c.routerMetric("switch.Bytes");
        long ingress = SwitchRoute.bytesReceived();
        long completed = sw.getTasksCompleted();
        long pre = sw.getTasksPremultiplied();
        java.util.Set<String> earlier = new java.util.HashSet<>(c.recentTasks());
        c.loseHolders(round[1], round[0], k, lost);
        // this round's victims may also have held blocks of earlier rounds' files
        c.verifyRebuilt(files, original);
        long routed = c.routerMetric("Tasks") - tasks;
        assertTrue(routed >= 1);
        assertEquals(routed, c.routerMetric("switch.Served") - served, "all served by switch");
        // a reader returns at its FIN, before the switch counts the task done
        io.netec.hdfs.Waits.until("switch completed every task", 5_000,
            () -> sw.getTasksCompleted() - completed == routed);
        // tasks of one unit pre-multiplied when asked; of more units, the switch multiplies.
        // The NameNode may split a round's two losses into one-unit tasks, so count them.
        long multiUnit = c.recentTasks().stream().filter(t -> !earlier.contains(t))
            .filter(t -> t.split("\t")[1].contains(",")).count();
        long premultiplied = sw.getTasksPremultiplied() - pre;
        LOG.info("lost {}: {} tasks, {} of several units, {} pre-multiplied", lost, routed,
            multiUnit, premultiplied);
        assertEquals(premultiply ? routed - multiUnit : 0, premultiplied,
            "pre-multiplied tasks (" + multiUnit + " of " + routed + " of several units)");
        long bytes = c.routerMetric("switch.Bytes") - rebuilt;
        double ratio = (double) (SwitchRoute.bytesReceived() - ingress) / bytes;
        LOG.info("lost {}: {} tasks, {} bytes rebuilt, ingress ratio {}", lost, routed, bytes,
            ratio);
        // about one block's worth per rebuilt block (native takes in k): the bound
        assertTrue(ratio >= 1.0 && ratio <= 1.05, "ingress per rebuilt byte: " + ratio);
      }
      assertEquals(0, sw.getMemoryInUse());

      // The switch goes away: the route is unavailable (then passed over for the back-off)
      // and native rebuilds.
      sw.close();
      String path = "/sw/switch-gone";
      byte[] data = c.writeFile(path, size, 99);
      original.putAll(c.snapshotInternalBlocks(path));
      long nativeServed = c.routerMetric("native.Served");
      long unavailable = c.routerMetric("switch.Unavailable");
      DataNode v = c.holder(path, 0, 1);
      c.stop(v);
      c.markDead(v);
      c.waitFullyStored(path, 120_000);
      c.forEachStoredInternalBlock(path, (block, bytes) ->
          assertArrayEquals(original.get(block.getBlockId()), bytes, "block file " + block));
      assertArrayEquals(data, c.readFully(path));
      assertTrue(c.routerMetric("native.Served") > nativeServed);
      assertTrue(c.routerMetric("switch.Unavailable") > unavailable);
    } finally {
      sw.close();
    }
  }
}
