package io.netec.hdfs.cluster;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netec.hdfs.NetecConfigKeys;
import io.netec.hdfs.client.ClientReadCounters;
import io.netec.hdfs.client.NetecDistributedFileSystem;
import io.netec.hdfs.inecroute.InecEngine;
import io.netec.hdfs.route.RouteMetrics;
import io.netec.hdfs.switchroute.SoftwareSwitch;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.server.datanode.DataNode;
import org.junit.jupiter.api.Test;

/**
 * The DataNode and the client route through one router with one set of defaults: with no
 * route key set, a client's degraded reads go through the switch, and with the switch gone
 * through INEC, exactly as the DataNodes' reconstruction does; the same failure (the switch
 * refusing connections) gives the same decision and the same words on both sides, and a dead
 * switch is asked once, not once per range.
 */
class OneRouterBothSidesTest {
  @Test
  void clientAndDataNodeDecideAlike() throws Exception {
    SoftwareSwitch sw = new SoftwareSwitch(new SoftwareSwitch.Options());
    try {
      Configuration conf = EcTestCluster.conf(); // no netec.route.order: the default
      conf.set(NetecConfigKeys.SWITCH_ADDRESS, "127.0.0.1:" + sw.controlAddress().getPort());
      conf.setInt(NetecConfigKeys.SWITCH_TIMEOUT_MS, 5_000);
      conf.setInt(NetecConfigKeys.ROUTE_BACKOFF_MS, 120_000); // longer than the test
      conf.set("fs.hdfs.impl", NetecDistributedFileSystem.class.getName());
      conf.set(NetecConfigKeys.CLIENT_READS, "routes"); // lost units' preads through routes
      try (EcTestCluster c = new EcTestCluster(conf, 7)) {
        c.useNetecPolicy("NETEC-3-2-1024k", "/both");
        NetecDistributedFileSystem fs = (NetecDistributedFileSystem) c.fs();
        assertEquals(List.of("switch", "inec", "native"), fs.router().routeNames());
        RouteMetrics client = fs.router().metrics();
        String path = "/both/f";
        int size = 3 * (int) EcTestCluster.BLOCK_SIZE + 5 * EcTestCluster.CELL + 17;
        byte[] data = c.writeFile(path, size, 31);
        Map<Long, byte[]> original = c.snapshotInternalBlocks(path);
        DataNode lost = c.holder(path, 0, 0);
        c.stop(lost); // listed until markDead: the client finds unit 0 gone as it reads

        long viaSwitch = ClientReadCounters.switchRanges();
        assertArrayEquals(data, c.readFully(path));
        c.preadUnitCells(path, data, 3, 0);
        assertTrue(ClientReadCounters.switchRanges() > viaSwitch, "client read via the switch");
        assertTrue(client.get("switch", "Served") >= 1);

        sw.close(); // connections to it are now refused
        String expected = InecEngine.unavailableReason() == null ? "inec" : "native";
        assertArrayEquals(data, c.readFully(path));
        c.preadUnitCells(path, data, 3, 0);
        c.preadUnitCells(path, data, 3, 0);
        assertEquals(1, client.get("switch", "Unavailable"), "a dead switch is asked once");
        // passed over whenever it comes first; the router explores INEC one task in 2, so
        // INEC may be measured cheaper by now and come first, and the switch not be reached
        assertTrue(client.get("switch", "Skipped") >= 1
            || client.cost("inec").samples() >= io.netec.hdfs.route.ReadCost.MIN_TRUSTED,
            "and then passed over");
        List<String> clientLines = linesAfterSwitchWentAway(client.recentTasks());
        assertFalse(clientLines.isEmpty());

        c.markDead(lost); // the DataNodes rebuild, with the switch gone
        c.waitFullyStored(path, 120_000);
        c.waitRouterIdle(60_000);
        c.forEachStoredInternalBlock(path, (block, bytes) ->
            assertArrayEquals(original.get(block.getBlockId()), bytes, "block file " + block));
        List<String> dataNodeLines = linesAfterSwitchWentAway(
            c.recentTasks().toArray(new String[0]));
        assertFalse(dataNodeLines.isEmpty(), "DataNode tasks: " + c.recentTasks());

        // a client's router leaves native to Hadoop's stream, which then reads the range whole
        String expectedOnClient = expected.equals("native") ? "none" : expected;
        for (List<String> lines : List.of(clientLines, dataNodeLines)) {
          for (String line : lines) {
            String[] f = line.split("\t", -1);
            assertEquals(lines == clientLines ? expectedOnClient : expected, f[2], line);
            // the same words for the same failure, on either side
            assertEquals(switchVerdict(clientLines.get(0)), switchVerdict(line), line);
          }
        }
        assertTrue(switchVerdict(clientLines.get(0)).startsWith("switch unavailable: switch ")
            && switchVerdict(clientLines.get(0)).contains("Connection refused"),
            clientLines.get(0));
      }
    } finally {
      sw.close();
    }
  }

  /** RecentTasks lines whose routing passed over an unreachable switch. */
  private static List<String> linesAfterSwitchWentAway(String[] recent) {
    List<String> out = new ArrayList<>();
    for (String line : recent) {
      if (line.split("\t", -1)[6].startsWith("switch unavailable")) {
        out.add(line);
      }
    }
    return out;
  }

  /** What the router said of the switch in a RecentTasks line. */
  private static String switchVerdict(String line) {
    return line.split("\t", -1)[6].split("; ")[0];
  }
}
