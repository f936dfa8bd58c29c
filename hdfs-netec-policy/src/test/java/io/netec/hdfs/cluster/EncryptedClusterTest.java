package io.netec.hdfs.cluster;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netec.hdfs.NetecConfigKeys;
import io.netec.hdfs.client.ClientReadCounters;
import io.netec.hdfs.client.NetecDistributedFileSystem;
import io.netec.hdfs.route.ServiceDirectory;
import io.netec.hdfs.switchroute.SoftwareSwitch;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hdfs.DFSConfigKeys;
import org.apache.hadoop.hdfs.DFSStripedInputStream;
import org.apache.hadoop.hdfs.server.datanode.DataNode;
import org.junit.jupiter.api.Test;

/**
 * A cluster that encrypts data transfer stays encrypted: the switch route declines naming
 * the setting, no DataNode runs a survivor agent, the switch sees no byte, native rebuilds
 * every block correctly, and clients read through Hadoop's (encrypted) stream. With
 * netec.fabric.trusted the operator opts in: the switch serves, and the rebuilt blocks reach
 * their targets through Hadoop's encrypted write path.
 */
class EncryptedClusterTest {
  private static Configuration conf(SoftwareSwitch sw, boolean trusted) {
    Configuration conf = EcTestCluster.switchConf(sw, 5_000);
    conf.setBoolean(DFSConfigKeys.DFS_BLOCK_ACCESS_TOKEN_ENABLE_KEY, true);
    conf.setBoolean(DFSConfigKeys.DFS_ENCRYPT_DATA_TRANSFER_KEY, true);
    conf.setBoolean(NetecConfigKeys.FABRIC_TRUSTED, trusted);
    conf.set("fs.hdfs.impl", NetecDistributedFileSystem.class.getName());
    conf.set(NetecConfigKeys.CLIENT_READS, "routes"); // lost units' preads through routes
    return conf;
  }

  private static void loseAndCheck(EcTestCluster c, String path) throws Exception {
    byte[] data = c.writeFile(path, 3 * (int) EcTestCluster.BLOCK_SIZE + 12345, 3);
    Map<Long, byte[]> original = c.snapshotInternalBlocks(path);
    DataNode v = c.holder(path, 0, 1);
    c.stop(v);
    // a degraded read before the NameNode knows: same bytes either way
    assertArrayEquals(data, c.readFully(path));
    c.preadUnitCells(path, data, 3, 1);
    c.markDead(v);
    c.waitFullyStored(path, 120_000);
    c.waitRouterIdle(60_000);
    c.forEachStoredInternalBlock(path, (block, bytes) ->
        assertArrayEquals(original.get(block.getBlockId()), bytes, "block file " + block));
  }

  @Test
  void untrustedFabricKeepsBlockDataOffTheSwitch() throws Exception {
    try (SoftwareSwitch sw = new SoftwareSwitch(new SoftwareSwitch.Options());
        EcTestCluster c = new EcTestCluster(conf(sw, false), 7)) {
      c.useNetecPolicy("NETEC-3-2-1024k", "/enc");
      for (DataNode dn : c.mini().getDataNodes()) {
        // the agent port is 0 in tests: an agent that ran would have registered a real port
        assertEquals(0, ServiceDirectory.resolve(ServiceDirectory.Service.SWITCH_AGENT,
            dn.getDatanodeId(), EcTestCluster.settings(dn)).getPort(),
            "no survivor agent on " + dn);
      }
      c.writeFile("/enc/probe", 100, 1);
      try (FSDataInputStream in = c.fs().open(new Path("/enc/probe"))) {
        assertInstanceOf(DFSStripedInputStream.class, in.getWrappedStream(),
            "encrypted cluster: Hadoop's stream");
      }
      long declined = c.routerMetric("switch.Declined");
      long nativeServed = c.routerMetric("native.Served");
      long viaSwitch = ClientReadCounters.switchRanges();
      loseAndCheck(c, "/enc/f");
      assertTrue(c.routerMetric("switch.Declined") > declined);
      assertTrue(c.routerMetric("native.Served") > nativeServed);
      assertEquals(0, sw.getBytesIn(), "the switch saw no block data");
      assertEquals(viaSwitch, ClientReadCounters.switchRanges());
      String line = c.recentTasks().get(c.recentTasks().size() - 1);
      assertTrue(line.contains("dfs.encrypt.data.transfer=true")
          && line.contains("netec.fabric.trusted"), line);
    }
  }

  @Test
  void trustedFabricUsesTheSwitchAndStillWritesTargetsEncrypted() throws Exception {
    try (SoftwareSwitch sw = new SoftwareSwitch(new SoftwareSwitch.Options());
        EcTestCluster c = new EcTestCluster(conf(sw, true), 7)) {
      c.useNetecPolicy("NETEC-3-2-1024k", "/enc");
      long served = c.routerMetric("switch.Served");
      loseAndCheck(c, "/enc/f");
      assertTrue(c.routerMetric("switch.Served") > served, "served by the switch");
      assertTrue(sw.getBytesIn() > 0);
    }
  }
}
