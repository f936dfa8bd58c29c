package io.netec.hdfs.cluster;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netec.hdfs.NetecConfigKeys;
import io.netec.hdfs.codec.CoderCounters;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.server.datanode.DataNode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * End to end on a MiniDFSCluster, for one NETEC policy: files of every shape are written with
 * our coder, then in rounds of 1..m lost DataNodes (data and parity holders) degraded reads must
 * return the original bytes and every rebuilt internal block file must equal the original block
 * file byte for byte. Counters prove our coder did the client's and the DataNodes' decoding and
 * the router metrics prove every task passed through the router.
 */
class NetecCoderClusterTest {
  private static final Logger LOG = LoggerFactory.getLogger(NetecCoderClusterTest.class);
  private static final int CELL = EcTestCluster.CELL;

  /** Enough DataNodes for a full group after losing 1 + 2 + ... + m of them. */
  private static int dataNodes(int k, int m) {
    return k + m + m * (m + 1) / 2;
  }

  /** The codes, by id. */
  static Stream<Arguments> shapes() {
    return Shapes.codes().selected();
  }

  @ParameterizedTest(name = "RS({0},{1})")
  @MethodSource("shapes")
  void writeDegradedReadAndRebuildEveryShape(int k, int m) throws Exception {
    String policy = "NETEC-" + k + "-" + m + "-1024k";
    String dir = "/netec-" + k + "-" + m;
    Configuration conf = EcTestCluster.conf();
    conf.set(NetecConfigKeys.ROUTE_ORDER, "native"); // Hadoop's reconstruction, our coder
    try (EcTestCluster c = new EcTestCluster(conf, dataNodes(k, m))) {
      c.useNetecPolicy(policy, dir);
      CoderCounters coder = EcTestCluster.activeCounters();

      long encodesBefore = coder.encodeCalls();
      Map<String, byte[]> files = new LinkedHashMap<>();
      long groupBytes = (long) k * EcTestCluster.BLOCK_SIZE;
      int[] sizes = {0, 1, CELL - 1, k * CELL, (int) (2 * groupBytes + k * CELL + CELL / 2)};
      String[] shapes = {"empty", "one-byte", "under-a-cell", "one-stripe", "groups-and-partial"};
      for (int i = 0; i < sizes.length; i++) {
        String p = dir + "/" + shapes[i];
        files.put(p, c.writeFile(p, sizes[i], 1000 + i));
      }
      assertTrue(coder.encodeCalls() > encodesBefore, "client encoded with our coder");
      for (Map.Entry<String, byte[]> f : files.entrySet()) {
        assertArrayEquals(f.getValue(), c.readFully(f.getKey()), "read back " + f.getKey());
        assertEquals(policy, c.policyOf(f.getKey()).getName());
      }
      String[] paths = files.keySet().toArray(new String[0]);
      Map<Long, byte[]> original = c.snapshotInternalBlocks(paths);
      String big = dir + "/groups-and-partial";
      assertEquals(3, c.groups(big).size(), "several block groups");

      Random rnd = new Random(k * 10 + m);
      for (int lost = 1; lost <= m; lost++) {
        List<DataNode> victims = victims(c, dir, big, lost, k, m);
        LOG.info("Round {}: stopping {}", lost, victims);
        for (DataNode dn : victims) {
          c.stop(dn);
        }
        // Degraded reads while the NameNode still lists the stopped nodes.
        long clientDecodes = coder.decodeCalls();
        for (Map.Entry<String, byte[]> f : files.entrySet()) {
          byte[] want = f.getValue();
          assertArrayEquals(want, c.readFully(f.getKey()), "degraded read " + f.getKey());
          for (int t = 0; t < 3 && want.length > 0; t++) {
            int pos = rnd.nextInt(want.length);
            int len = 1 + rnd.nextInt(Math.min(want.length - pos, 3 * CELL));
            assertArrayEquals(Arrays.copyOfRange(want, pos, pos + len),
                c.pread(f.getKey(), pos, len), "degraded pread " + f.getKey() + "@" + pos);
          }
        }
        assertTrue(coder.decodeCalls() > clientDecodes, "client decoded with our coder");

        // Reconstruction on the DataNodes, through the router.
        long dnDecodes = coder.decodeCalls();
        long tasks = c.routerMetric("Tasks");
        long served = c.routerMetric("native.Served");
        c.markDead(victims);
        for (String p : paths) {
          c.waitFullyStored(p, 120_000);
        }
        assertTrue(coder.decodeCalls() > dnDecodes, "DataNodes decoded with our coder");
        long routed = c.routerMetric("Tasks") - tasks;
        assertTrue(routed >= 1, "tasks went through the router");
        assertEquals(routed, c.routerMetric("native.Served") - served,
            "every routed task served by the native route");

        int checked = 0;
        for (String p : paths) {
          checked += c.forEachStoredInternalBlock(p, (block, bytes) -> {
            byte[] want = original.get(block.getBlockId());
            assertNotNull(want, "unknown block " + block);
            assertArrayEquals(want, bytes, "block file of " + block);
          });
        }
        LOG.info("Round {}: {} tasks routed, {} internal block files equal the originals",
            lost, routed, checked);
        for (Map.Entry<String, byte[]> f : files.entrySet()) {
          assertArrayEquals(f.getValue(), c.readFully(f.getKey()), "read after rebuild");
        }
      }
    }
  }

  /**
   * {@code lost} distinct DataNodes: the holder of the one-byte file's data block first (so
   * small files degrade too), then parity and data holders of the big file's first group.
   */
  private static List<DataNode> victims(EcTestCluster c, String dir, String big, int lost,
      int k, int m) throws Exception {
    Set<DataNode> picked = new LinkedHashSet<>();
    List<DataNode> candidates = new ArrayList<>();
    candidates.add(c.holder(dir + "/one-byte", 0, 0));
    for (int i = 0; i < m; i++) {
      candidates.add(c.holder(big, 0, k + i));
      candidates.add(c.holder(big, 0, i));
    }
    for (DataNode dn : candidates) {
      if (dn != null && picked.size() < lost) {
        picked.add(dn);
      }
    }
    assertEquals(lost, picked.size());
    return new ArrayList<>(picked);
  }
}
