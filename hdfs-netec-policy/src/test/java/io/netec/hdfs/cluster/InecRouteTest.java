package io.netec.hdfs.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netec.hdfs.codec.IsalNative;
import io.netec.hdfs.inecroute.InecEngine;
import io.netec.hdfs.inecroute.InecRoute;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The INEC route end to end for one NETEC policy and scheme: participants in every DataNode,
 * route order inec,native. Losing one and then m DataNodes, every task is served by INEC,
 * every internal block file equals the original, and — for the tree and the chain, whose
 * rebuilding node has one input — the rebuilding DataNodes took in about one block's worth per
 * rebuilt block (native takes in k). Without libnetec.so the route declines and native serves.
 */
class InecRouteTest {
  private static final Logger LOG = LoggerFactory.getLogger(InecRouteTest.class);

  /** Codes and repair graphs (ecpipe: the chain, ppr: the tree, rs: the star), by id. */
  static Stream<Arguments> shapes() {
    return new Shapes()
        .add("rs32-chain", 3, 2, "ecpipe", "tcp")
        .add("rs32-star", 3, 2, "rs", "tcp")
        .add("rs32-tree", 3, 2, "ppr", "tcp")
        .add("rs63-chain", 6, 3, "ecpipe", "tcp")
        .add("rs63-tree", 6, 3, "ppr", "tcp")
        .add("rs63-chain-verbs", 6, 3, "ecpipe", "verbs")
        .selected();
  }

  @ParameterizedTest(name = "RS({0},{1}), scheme {2}, streams over {3}")
  @MethodSource("shapes")
  void rebuildsThroughTheRepairGraph(int k, int m, String scheme, String transport)
      throws Exception {
    boolean engine = IsalNative.libraryUnavailableReason() == null;
    Assumptions.assumeTrue(engine || transport.equals("tcp"), "verbs need libnetec.so");
    String policy = "NETEC-" + k + "-" + m + "-1024k";
    try (EcTestCluster c = new EcTestCluster(EcTestCluster.inecConf(scheme, 10_000, transport),
        k + m + 1 + m + 1)) {
      c.useNetecPolicy(policy, "/inec");
      Map<String, byte[]> files = new LinkedHashMap<>();
      Map<Long, byte[]> original = new HashMap<>();
      for (int lost : new int[] {1, m}) {
        // the small file's k-1 empty units are streamed as zeros
        String[] round = c.writeRound("/inec", k, lost, files, original);
        long tasks = c.routerMetric("Tasks");
        long served = c.routerMetric("inec.Served");
        long rebuilt = c.routerMetric("inec.Bytes");
        long ingress = InecRoute.bytesReceived();
        long over = InecRoute.servedOver(InecEngine.Transport.valueOf(
            transport.toUpperCase(java.util.Locale.ROOT)));
        c.loseHolders(round[1], round[0], k, lost);
        // this round's victims may also have held blocks of earlier rounds' files
        c.verifyRebuilt(files, original);
        long routed = c.routerMetric("Tasks") - tasks;
        assertTrue(routed >= 1);
        if (!engine) { // no libnetec.so: the route declines, Hadoop rebuilds
          assertEquals(0, c.routerMetric("inec.Served") - served);
          assertTrue(c.recentTasks().toString().contains("no INEC engine"),
              c.recentTasks().toString());
          continue;
        }
        assertEquals(routed, c.routerMetric("inec.Served") - served, "all served by INEC: "
            + c.recentTasks());
        assertEquals(routed, InecRoute.servedOver(InecEngine.Transport.valueOf(
            transport.toUpperCase(java.util.Locale.ROOT))) - over, "streams over " + transport);
        long bytes = c.routerMetric("inec.Bytes") - rebuilt;
        double ratio = (double) (InecRoute.bytesReceived() - ingress) / bytes;
        LOG.info("{} lost {}: {} tasks, {} bytes rebuilt, ingress ratio {}", scheme, lost,
            routed, bytes, ratio);
        if (scheme.equals("rs")) { // the star's root takes in k units per task of <= lost rows
          assertTrue(ratio >= 0.99 * k / lost, "ingress per rebuilt byte: " + ratio);
        } else { // the tree's and chain's root has one input: about one block per block
          assertTrue(ratio >= 1.0 && ratio <= 1.05, "ingress per rebuilt byte: " + ratio);
        }
      }
    }
  }
}
