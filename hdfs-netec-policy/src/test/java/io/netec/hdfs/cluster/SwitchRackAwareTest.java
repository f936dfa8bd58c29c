package io.netec.hdfs.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netec.hdfs.NetecConfigKeys;
import io.netec.hdfs.switchroute.SoftwareSwitch;
import io.netec.hdfs.switchroute.SwitchRoute;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.test.GenericTestUtils.LogCapturer;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * The switch route planned by rack on a cluster with racks: twelve DataNodes in three racks,
 * a software switch for each rack ({@code netec.switch.racks}, and no {@code
 * netec.switch.address}), a NETEC-6-3 group placed three units a rack, one holder lost. The
 * DataNode given the task runs the parent on its own rack's switch (the plan's line names the
 * parent's switch and the reader's rack: checked against the rebuilding DataNode's rack), and
 * another rack's switch sums that rack's survivors into one stream (its partial-sum counter);
 * every rebuilt block equals the original.
 */
class SwitchRackAwareTest {
  private static final Pattern PLAN = Pattern.compile("switch by rack at (\\S+), parent at "
      + "(\\S+) \\(reader in (\\S+)\\), survivors by rack: (.*)");

  @Test
  void aRemoteRacksSurvivorsAreSummedOnItsSwitchAndTheParentRunsOnTheReadersRack()
      throws Exception {
    String[] racks = {"/r1", "/r1", "/r1", "/r1", "/r2", "/r2", "/r2", "/r2", "/r3", "/r3",
        "/r3", "/r3"};
    Map<String, SoftwareSwitch> switches = new LinkedHashMap<>();
    LogCapturer log = LogCapturer.captureLogs(LoggerFactory.getLogger(SwitchRoute.class));
    try {
      StringBuilder key = new StringBuilder();
      for (String r : new String[] {"/r1", "/r2", "/r3"}) {
        SoftwareSwitch sw = new SoftwareSwitch(new SoftwareSwitch.Options());
        switches.put(r, sw);
        key.append(key.length() == 0 ? "" : ",").append(r).append("=127.0.0.1:")
            .append(sw.controlAddress().getPort());
      }
      Configuration conf = EcTestCluster.conf();
      conf.set(NetecConfigKeys.ROUTE_ORDER, "switch,native");
      conf.set(NetecConfigKeys.SWITCH_RACKS, key.toString());
      conf.setInt(NetecConfigKeys.SWITCH_TIMEOUT_MS, 10_000);
      try (EcTestCluster c = new EcTestCluster(conf, racks.length, racks)) {
        c.useNetecPolicy("NETEC-6-3-1024k", "/racks");
        // each DataNode's rack by its transfer port, taken now: a stopped DataNode leaves the
        // cluster's list, and the indices after it shift
        Map<Integer, String> rackOfPort = new HashMap<>();
        for (int d = 0; d < racks.length; d++) {
          rackOfPort.put(c.mini().getDataNodes().get(d).getXferPort(), racks[d]);
        }
        Map<String, byte[]> files = new LinkedHashMap<>();
        Map<Long, byte[]> original = new HashMap<>();
        files.put("/racks/f", c.writeFile("/racks/f", 6 * (int) EcTestCluster.BLOCK_SIZE, 5));
        original.putAll(c.snapshotInternalBlocks("/racks/f"));
        // data unit 0's holder: its group's task rebuilds one unit, whose six survivors
        // come from three racks of at most three, so another rack than the reader's gives two
        c.loseHolders("/racks/f", "/racks/f", 6, 1);
        c.verifyRebuilt(files, original);
        assertTrue(c.routerMetric("switch.Served") > 0, "served by the switch: "
            + c.recentTasks());
        Matcher m = PLAN.matcher(log.getOutput());
        assertTrue(m.find(), "no plan by rack logged: " + log.getOutput());
        String reader = m.group(3);
        // the reader's rack is the rack of the DataNode that rebuilt (the task's own)
        int port = Integer.parseInt(m.group(1).substring(m.group(1).lastIndexOf(':') + 1));
        assertTrue(rackOfPort.containsKey(port), "no DataNode at " + m.group(1));
        assertEquals(rackOfPort.get(port), reader, "the rebuilding DataNode's rack: "
            + m.group());
        assertEquals("127.0.0.1:" + switches.get(reader).controlAddress().getPort(), m.group(2),
            "the parent runs on the reader's rack's switch: " + m.group());
        assertTrue(m.group(4).contains(" summed at "), m.group());
        long summed = 0;
        for (Map.Entry<String, SoftwareSwitch> e : switches.entrySet()) {
          summed += e.getValue().getTasksPartialSums();
          if (e.getKey().equals(reader)) {
            assertTrue(e.getValue().getTasksWithChildren() > 0, "the parent's switch");
          }
        }
        assertTrue(summed > 0, "no rack's switch summed its survivors");
      }
    } finally {
      log.stopCapturing();
      for (SoftwareSwitch sw : switches.values()) {
        sw.close();
      }
    }
  }
}
