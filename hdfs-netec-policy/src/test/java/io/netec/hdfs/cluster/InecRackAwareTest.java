package io.netec.hdfs.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netec.hdfs.codec.IsalNative;
import io.netec.hdfs.inecroute.InecRoute;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.hadoop.test.GenericTestUtils.LogCapturer;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * The INEC chain planned by rack on a cluster with racks: nine DataNodes in three racks, a
 * NETEC-3-2 group placed rack-fault-tolerantly (2, 2 and 1 units a rack), one holder lost.
 * The DataNode the NameNode gives the task learns its own rack from the task (its first
 * target's network location: checked against the rack the cluster gave the DataNode that
 * logged the task) and every survivor's from the sources; each task's line says the racks its
 * chain visits, each once, its own last when it holds survivors; every block rebuilt equals
 * the original. With {@code netec.inec.racks=false} the chain keeps the NameNode's order.
 */
class InecRackAwareTest {
  private static final Pattern PLAN = Pattern.compile("INEC \\S+ at (\\S+), (planned by rack|in "
      + "the NameNode's order): survivors in ([^,]+(?:, [^,]+)*), reader in (\\S+): (\\d+) "
      + "edges between racks");

  @Test
  void eachRackIsVisitedOnceAndTheReadersLast() throws Exception {
    List<Matcher> plans = rebuildOnRacks(true);
    assertFalse(plans.isEmpty(), "no INEC task was planned across racks");
    for (Matcher m : plans) {
      assertEquals("planned by rack", m.group(2), m.group());
      List<String> visited = List.of(m.group(3).split(", "));
      String reader = m.group(4);
      assertTrue(!visited.contains(reader) || visited.get(visited.size() - 1).equals(reader),
          "the reader's rack last: " + m.group());
      // a chain grouped by rack: one edge into each rack after the first, and into the
      // reader's when it holds none (an interleaved chain has more)
      assertEquals(visited.size() - (visited.contains(reader) ? 1 : 0),
          Integer.parseInt(m.group(5)), m.group());
    }
  }

  @Test
  void withRacksOffTheNameNodesOrderIsKept() throws Exception {
    List<Matcher> plans = rebuildOnRacks(false);
    assertFalse(plans.isEmpty(), "no INEC task crossed racks");
    for (Matcher m : plans) {
      assertEquals("in the NameNode's order", m.group(2), m.group());
    }
  }

  /** Loses a holder on a 3-rack cluster, checks every rebuilt block; the plans logged. */
  private static List<Matcher> rebuildOnRacks(boolean planByRack) throws Exception {
    Assumptions.assumeTrue(IsalNative.libraryUnavailableReason() == null,
        "the INEC engine needs libnetec.so");
    String[] racks = {"/r1", "/r1", "/r1", "/r2", "/r2", "/r2", "/r3", "/r3", "/r3"};
    LogCapturer log = LogCapturer.captureLogs(LoggerFactory.getLogger(InecRoute.class));
    org.apache.hadoop.conf.Configuration conf = EcTestCluster.inecConf("ecpipe", 10_000, "tcp");
    conf.setBoolean(io.netec.hdfs.NetecConfigKeys.INEC_RACKS, planByRack);
    try (EcTestCluster c = new EcTestCluster(conf, racks.length, racks)) {
      c.useNetecPolicy("NETEC-3-2-1024k", "/racks");
      // each DataNode's rack by its transfer port, taken now: a stopped DataNode leaves the
      // cluster's list, and the indices after it shift
      Map<Integer, String> rackOfPort = new HashMap<>();
      for (int d = 0; d < racks.length; d++) {
        rackOfPort.put(c.mini().getDataNodes().get(d).getXferPort(), racks[d]);
      }
      int size = 2 * 3 * (int) EcTestCluster.BLOCK_SIZE + 4097;
      Map<String, byte[]> files = new LinkedHashMap<>();
      Map<Long, byte[]> original = new HashMap<>();
      files.put("/racks/f", c.writeFile("/racks/f", size, 3));
      original.putAll(c.snapshotInternalBlocks("/racks/f"));
      files.put("/racks/small", c.writeFile("/racks/small", EcTestCluster.CELL / 3, 4));
      original.putAll(c.snapshotInternalBlocks("/racks/small"));
      c.loseHolders("/racks/small", "/racks/f", 3, 1);
      c.verifyRebuilt(files, original);
      List<Matcher> plans = new ArrayList<>();
      Matcher m = PLAN.matcher(log.getOutput());
      while (m.find()) {
        // the reader's rack is the rack of the DataNode that rebuilt (the task's own)
        int port = Integer.parseInt(m.group(1).substring(m.group(1).lastIndexOf(':') + 1));
        assertTrue(rackOfPort.containsKey(port), "no DataNode at " + m.group(1));
        assertEquals(rackOfPort.get(port), m.group(4), "the rebuilding DataNode's rack: "
            + m.group());
        Matcher one = PLAN.matcher(m.group()); // m moves on: a matcher of this line alone
        one.find();
        plans.add(one);
      }
      assertTrue(c.routerMetric("inec.Served") > 0, "served by INEC: " + c.recentTasks());
      return plans;
    } finally {
      log.stopCapturing();
    }
  }
}
