package io.netec.hdfs.cluster;

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
 * target's network location) and every survivor's from the sources; each task's line says the
 * racks its chain visits, each once, its own last when it holds survivors; every block rebuilt
 * equals the original. With {@code netec.inec.racks=false} no task is planned by rack.
 */
class InecRackAwareTest {
  private static final Pattern PLAN = Pattern.compile(
      "planned by rack: survivors in ([^,]+(?:, [^,]+)*), reader in (\\S+): (\\d+) hops");

  @Test
  void eachRackIsVisitedOnceAndTheReadersLast() throws Exception {
    List<String> plans = rebuildOnRacks(true);
    assertFalse(plans.isEmpty(), "no INEC task was planned across racks");
  }

  @Test
  void withRacksOffTheNameNodesOrderIsKept() throws Exception {
    List<String> plans = rebuildOnRacks(false);
    assertTrue(plans.isEmpty(), "netec.inec.racks=false, yet: " + plans);
  }

  /** Loses a holder on a 3-rack cluster, checks every rebuilt block; the plans logged. */
  private static List<String> rebuildOnRacks(boolean planByRack) throws Exception {
    Assumptions.assumeTrue(IsalNative.libraryUnavailableReason() == null,
        "the INEC engine needs libnetec.so");
    String[] racks = {"/r1", "/r1", "/r1", "/r2", "/r2", "/r2", "/r3", "/r3", "/r3"};
    LogCapturer log = LogCapturer.captureLogs(LoggerFactory.getLogger(InecRoute.class));
    org.apache.hadoop.conf.Configuration conf = EcTestCluster.inecConf("ecpipe", 10_000, "tcp");
    conf.setBoolean(io.netec.hdfs.NetecConfigKeys.INEC_RACKS, planByRack);
    try (EcTestCluster c = new EcTestCluster(conf, racks.length, racks)) {
      c.useNetecPolicy("NETEC-3-2-1024k", "/racks");
      int size = 2 * 3 * (int) EcTestCluster.BLOCK_SIZE + 4097;
      Map<String, byte[]> files = new LinkedHashMap<>();
      Map<Long, byte[]> original = new HashMap<>();
      files.put("/racks/f", c.writeFile("/racks/f", size, 3));
      original.putAll(c.snapshotInternalBlocks("/racks/f"));
      files.put("/racks/small", c.writeFile("/racks/small", EcTestCluster.CELL / 3, 4));
      original.putAll(c.snapshotInternalBlocks("/racks/small"));
      c.loseHolders("/racks/small", "/racks/f", 3, 1);
      c.verifyRebuilt(files, original);
      List<String> plans = new ArrayList<>();
      Matcher m = PLAN.matcher(log.getOutput());
      while (m.find()) {
        plans.add(m.group());
        List<String> visited = List.of(m.group(1).split(", "));
        assertFalse(visited.stream().distinct().count() < visited.size(), m.group());
        String reader = m.group(2);
        assertTrue(reader.matches("/r[123]"), "the task's own rack: " + m.group());
        assertTrue(!visited.contains(reader) || visited.get(visited.size() - 1).equals(reader),
            "the reader's rack last: " + m.group());
        int hops = Integer.parseInt(m.group(3));
        assertTrue(hops == visited.size() - (visited.contains(reader) ? 1 : 0),
            "one hop into each rack after the first, and into the reader's: " + m.group());
      }
      assertTrue(c.routerMetric("inec.Served") > 0, "served by INEC: " + c.recentTasks());
      return plans;
    } finally {
      log.stopCapturing();
    }
  }
}
