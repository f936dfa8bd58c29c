package io.netec.hdfs.cluster;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileChecksum;
import org.apache.hadoop.fs.FsShell;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.apache.hadoop.hdfs.tools.DFSAdmin;
import org.apache.hadoop.util.ToolRunner;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * README's "Removing the plugin", run as written: NETEC files copied to an RS directory (bytes
 * and file checksums, MD5MD5CRC and COMPOSITE_CRC, equal), the NETEC files deleted, the
 * policies disabled and removed, the namespace saved; then the cluster restarted without the
 * plugin, in a JVM whose classpath lacks our jar, and every file read by a stock client.
 */
class RemovingThePluginTest {
  private static final String[] FILES = {"a", "b"};

  @Test
  void netecDataMovesToRsAndTheClusterRunsWithoutTheJar(@TempDir Path base) throws Exception {
    Configuration conf = EcTestCluster.conf();
    conf.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, base.toString());
    Map<String, String> expected = new LinkedHashMap<>();
    EcTestCluster c = new EcTestCluster(conf, 6);
    try {
      c.useNetecPolicy("NETEC-3-2-1024k", "/netec");
      Configuration md5 = new Configuration(c.fs().getConf());
      md5.set("dfs.checksum.combine.mode", "MD5MD5CRC");
      Configuration composite = new Configuration(c.fs().getConf());
      composite.set("dfs.checksum.combine.mode", "COMPOSITE_CRC");
      Map<String, byte[]> data = new LinkedHashMap<>();
      data.put("a", c.writeFile("/netec/a", 3 * 3 * EcTestCluster.CELL + 12345, 1));
      data.put("b", c.writeFile("/netec/b", EcTestCluster.CELL / 2, 2));

      // 1. an RS directory of the same shape, the files copied there with `hdfs dfs -cp`
      assertEquals(0, c.ecAdmin("-enablePolicy", "-policy", "RS-3-2-1024k").rc);
      c.fs().mkdirs(new org.apache.hadoop.fs.Path("/rs"));
      assertEquals(0, c.ecAdmin("-setPolicy", "-path", "/rs", "-policy", "RS-3-2-1024k").rc);
      for (String f : FILES) {
        assertEquals(0, shell(c, "-cp", "/netec/" + f, "/rs/" + f));
        assertArrayEquals(data.get(f), c.readFully("/rs/" + f));
        for (Configuration mode : new Configuration[] {md5, composite}) {
          assertEquals(checksum(mode, "/netec/" + f), checksum(mode, "/rs/" + f),
              mode.get("dfs.checksum.combine.mode") + " of " + f);
        }
        assertEquals("RS-3-2-1024k", c.ecAdmin("-getPolicy", "-path", "/rs/" + f).output
            .trim());
        expected.put("/rs/" + f, sha256(data.get(f)) + " "
            + StockClusterCheck.hex(checksum(composite, "/rs/" + f).getBytes()));
      }
      // 2. the NETEC files gone, the policies disabled and removed
      assertEquals(0, shell(c, "-rm", "-r", "-skipTrash", "/netec"));
      for (String p : new String[] {"NETEC-3-2-1024k", "NETEC-6-3-1024k", "NETEC-10-4-1024k"}) {
        assertEquals(0, c.ecAdmin("-disablePolicy", "-policy", p).rc, p);
        assertEquals(0, c.ecAdmin("-removePolicy", "-policy", p).rc, p);
      }
      // 3. the namespace saved, so no edit the NameNode replays names the netec codec
      DFSAdmin admin = new DFSAdmin(new Configuration(c.fs().getConf()));
      assertEquals(0, ToolRunner.run(admin, new String[] {"-safemode", "enter"}));
      assertEquals(0, ToolRunner.run(admin, new String[] {"-saveNamespace"}));
      assertEquals(0, ToolRunner.run(admin, new String[] {"-safemode", "leave"}));
    } finally {
      c.mini().shutdown(false);
    }

    // 4. restarted without the jar: a JVM of its own, its classpath without our classes
    List<String> output = stockCluster(base, 6, new ArrayList<>(expected.keySet()));
    assertTrue(output.contains("netec codec: false"), "the plugin is really gone: " + output);
    assertTrue(output.stream().noneMatch(l -> l.startsWith("policy: NETEC") && l.endsWith(
        "ENABLED")), output.toString());
    for (Map.Entry<String, String> e : expected.entrySet()) {
      assertTrue(output.contains("file: " + e.getKey() + " " + e.getValue()),
          "read by a stock client, same bytes and checksum: " + e + " in " + output);
    }
  }

  private static int shell(EcTestCluster c, String... args) throws Exception {
    return ToolRunner.run(new FsShell(new Configuration(c.fs().getConf())), args);
  }

  private static FileChecksum checksum(Configuration conf, String path) throws Exception {
    return org.apache.hadoop.fs.FileSystem.newInstance(conf)
        .getFileChecksum(new org.apache.hadoop.fs.Path(path));
  }

  private static String sha256(byte[] b) throws Exception {
    return StockClusterCheck.hex(MessageDigest.getInstance("SHA-256").digest(b));
  }

  /** Runs {@link StockClusterCheck} in a JVM whose classpath lacks the plugin's classes. */
  private static List<String> stockCluster(Path base, int dataNodes, List<String> files)
      throws Exception {
    String cp = System.getProperty("surefire.test.class.path",
        System.getProperty("java.class.path"));
    String ours = new File(io.netec.hdfs.NetecConfigKeys.class.getProtectionDomain()
        .getCodeSource().getLocation().toURI()).getPath();
    String stock = java.util.Arrays.stream(cp.split(File.pathSeparator))
        .filter(e -> !new File(e).getPath().equals(ours))
        .collect(Collectors.joining(File.pathSeparator));
    List<String> cmd = new ArrayList<>(List.of(
        Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx1g",
        "-cp", stock, StockClusterCheck.class.getName(), base.toString(),
        String.valueOf(dataNodes)));
    cmd.addAll(files);
    Path log = Files.createTempFile("stock-cluster", ".log");
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile())
        .start();
    if (!p.waitFor(180, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError("the stock cluster did not finish in 180 s");
    }
    List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
    Files.delete(log);
    assertEquals(0, p.exitValue(), "stock cluster failed: " + tail(lines));
    return lines.stream().filter(l -> l.startsWith("netec codec: ") || l.startsWith("policy: ")
        || l.startsWith("file: ")).collect(Collectors.toList());
  }

  private static String tail(List<String> lines) {
    return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
  }
}
