package io.netec.hdfs.cluster;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netec.hdfs.cluster.FaultyLink.Fault;
import io.netec.hdfs.route.ServiceDirectory;
import io.netec.hdfs.switchroute.SoftwareSwitch;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.server.datanode.DataNode;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Faults on the survivor links of a live cluster, injected by {@link FaultyLink} relays between
 * the switch and the agents: dropped, duplicated, reordered, bit-flipped packets and one survivor
 * far slower than the others. Every case ends with every internal block file equal to the
 * original, and the route that served each task is recorded.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SwitchRouteLinkFaultTest {
  private static final int SIZE = 2 * 3 * (int) EcTestCluster.BLOCK_SIZE + 777;
  private SoftwareSwitch sw;
  private EcTestCluster c;
  /** Every file so far: a case's victim may also hold blocks of earlier cases' files. */
  private final List<String> paths = new ArrayList<>();

  @BeforeAll
  void start() throws Exception {
    sw = new SoftwareSwitch(new SoftwareSwitch.Options());
    Configuration conf = EcTestCluster.switchConf(sw, 20_000);
    // each case counts what the switch served: one case's failures never back it off for the
    // next (the bit flips fail tasks on purpose)
    conf.setInt(io.netec.hdfs.NetecConfigKeys.ROUTE_BACKOFF_MS, 0);
    c = new EcTestCluster(conf, 5 + Fault.values().length);
    c.useNetecPolicy("NETEC-3-2-1024k", "/links");
  }

  @AfterAll
  void stop() {
    c.close();
    sw.close();
  }

  @ParameterizedTest
  @EnumSource(Fault.class)
  void faultyLinksEndWithCorrectBlocks(Fault fault) throws Exception {
    String path = "/links/" + fault;
    byte[] data = c.writeFile(path, SIZE, fault.ordinal());
    paths.add(path);
    Map<Long, byte[]> original = c.snapshotInternalBlocks(path);
    // Relays in front of the agents: all of them, or for SLOW only the holder of unit 1.
    List<FaultyLink> links = new ArrayList<>();
    List<DataNode> relayed = new ArrayList<>();
    List<InetSocketAddress> agents = new ArrayList<>();
    for (DataNode dn : c.mini().getDataNodes()) {
      if (fault != Fault.SLOW || dn == c.holder(path, 0, 1)) {
        InetSocketAddress agent = ServiceDirectory.resolve(ServiceDirectory.Service.SWITCH_AGENT, dn.getDatanodeId(), EcTestCluster.settings(dn));
        FaultyLink link = new FaultyLink(agent, fault, fault == Fault.SLOW ? 1.0
            : fault == Fault.DROP || fault == Fault.BIT_FLIP ? 0.01 : 0.05, fault.ordinal());
        ServiceDirectory.register(ServiceDirectory.Service.SWITCH_AGENT, dn.getXferPort(), link.address());
        links.add(link);
        relayed.add(dn);
        agents.add(agent);
      }
    }
    long served = c.routerMetric("switch.Served");
    long failed = c.routerMetric("switch.Failed");
    long tasks = c.routerMetric("Tasks");
    long dropped = sw.getPacketsDropped();
    try {
      DataNode victim = c.holder(path, 0, 0);
      c.stop(victim);
      c.markDead(victim);
      for (String p : paths) {
        c.waitFullyStored(p, 180_000);
      }
      c.forEachStoredInternalBlock(path, (block, bytes) ->
          assertArrayEquals(original.get(block.getBlockId()), bytes, "block file " + block));
      assertArrayEquals(data, c.readFully(path));
    } finally {
      for (int i = 0; i < links.size(); i++) {
        links.get(i).close();
        ServiceDirectory.register(ServiceDirectory.Service.SWITCH_AGENT, relayed.get(i).getXferPort(), agents.get(i));
      }
    }
    long routed = c.routerMetric("Tasks") - tasks;
    long faults = links.stream().mapToLong(l -> l.faults.get()).sum();
    assertTrue(faults > 0, fault + " was injected");
    long bySwitch = c.routerMetric("switch.Served") - served;
    assertTrue(routed >= 1);
    switch (fault) {
      case BIT_FLIP:
        // a corrupt packet fails its TCP connection, so the task, and the router moves on
        assertTrue(c.routerMetric("switch.Failed") > failed, "bit flips failed switch tasks");
        break;
      case SLOW:
        assertEquals(routed, bySwitch, "EBSN paces the others; the switch serves every task");
        assertEquals(dropped, sw.getPacketsDropped(), "no packet beyond the window");
        break;
      default:
        // loss, duplicates and reordering are absorbed by the protocol
        assertEquals(routed, bySwitch, fault + ": served by the switch");
        break;
    }
  }
}
