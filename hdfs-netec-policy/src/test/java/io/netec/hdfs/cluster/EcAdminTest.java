package io.netec.hdfs.cluster;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netec.hdfs.cluster.EcTestCluster.AdminResult;
import io.netec.hdfs.codec.CoderCounters;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The operator's steps, through Hadoop's own `hdfs ec` tool, with our conf/ policy file. */
class EcAdminTest {
  @Test
  void operatorAddsEnablesAndSetsNetecPolicies(@TempDir Path tmp) throws Exception {
    try (EcTestCluster c = new EcTestCluster(EcTestCluster.conf(), 5,
        new String[] {"/r1", "/r1", "/r2", "/r2", "/r3"})) {
      AdminResult codecs = c.ecAdmin("-listCodecs");
      assertEquals(0, codecs.rc, codecs.output);
      assertTrue(codecs.output.contains("NETEC [NETEC_NATIVE, NETEC_JAVA]"), codecs.output);
      assertTrue(codecs.output.contains("RS_NETEC_NATIVE"), codecs.output);

      String file = EcTestCluster.confDir().resolve("netec-policies.xml").toString();
      AdminResult added = c.ecAdmin("-addPolicies", "-policyFile", file);
      assertEquals(0, added.rc, added.output);
      for (String p : new String[] {"NETEC-3-2-1024k", "NETEC-6-3-1024k", "NETEC-10-4-1024k"}) {
        assertTrue(added.output.contains("Add ErasureCodingPolicy " + p + " succeed"),
            added.output);
      }
      AdminResult list = c.ecAdmin("-listPolicies");
      assertTrue(list.output.contains("NETEC-6-3-1024k"), list.output);
      assertTrue(list.output.contains("Codec=netec"), list.output);

      assertEquals(0, c.ecAdmin("-enablePolicy", "-policy", "NETEC-3-2-1024k").rc);
      AdminResult verify = c.ecAdmin("-verifyClusterSetup", "-policy", "NETEC-3-2-1024k");
      assertEquals(0, verify.rc, verify.output);
      assertTrue(verify.output.contains("The cluster setup can support EC policies"),
          verify.output);
      c.fs().mkdirs(new org.apache.hadoop.fs.Path("/data"));
      AdminResult set = c.ecAdmin("-setPolicy", "-path", "/data", "-policy", "NETEC-3-2-1024k");
      assertEquals(0, set.rc, set.output);
      AdminResult get = c.ecAdmin("-getPolicy", "-path", "/data");
      assertEquals("NETEC-3-2-1024k", get.output.trim(), get.output);

      CoderCounters coder = EcTestCluster.activeCounters();
      long encoded = coder.encodeBytes();
      byte[] data = c.writeFile("/data/f", 5 * EcTestCluster.CELL + 77, 5);
      assertArrayEquals(data, c.readFully("/data/f"));
      assertTrue(coder.encodeBytes() - encoded >= 5 * EcTestCluster.CELL,
          "file encoded by " + EcTestCluster.activeNetecCoder());

      // A policy file naming a codec nobody registered is refused, naming the codec.
      Path bad = tmp.resolve("bad.xml");
      Files.write(bad, new String(Files.readAllBytes(Path.of(file)), StandardCharsets.UTF_8)
          .replace("<codec>netec</codec>", "<codec>nosuch</codec>")
          .getBytes(StandardCharsets.UTF_8));
      AdminResult refused = c.ecAdmin("-addPolicies", "-policyFile", bad.toString());
      assertTrue(refused.output.contains("nosuch"), refused.output);
      assertTrue(!refused.output.contains("NETEC-3-2-1024k succeed"), refused.output);
    }
  }
}
