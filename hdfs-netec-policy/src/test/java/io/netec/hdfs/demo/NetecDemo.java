package io.netec.hdfs.demo;

import io.netec.hdfs.cluster.EcTestCluster;
import io.netec.hdfs.codec.CoderCounters;
import io.netec.hdfs.codec.IsalNative;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.hadoop.hdfs.server.datanode.DataNode;

/**
 * The README's demo: an embedded MiniDFSCluster with the NetEC plugin. Writes NETEC files,
 * kills DataNodes, reads degraded, lets the DataNodes rebuild through the router, and prints
 * one row per reconstruction task: which route served it, what the others said, and whether
 * every internal block file of the group equals the original byte for byte.
 */
public final class NetecDemo {
  private static final String POLICY = "NETEC-6-3-1024k";

  public static void main(String[] args) throws Exception {
    int failures = 0;
    try (EcTestCluster c = new EcTestCluster(EcTestCluster.conf(), 12)) {
      c.useNetecPolicy(POLICY, "/demo");
      String coder = EcTestCluster.activeNetecCoder();
      CoderCounters counters = CoderCounters.of(coder);
      say("NetEC demo: 12 DataNodes, policy %s, coder %s%s", POLICY, coder,
          IsalNative.isAvailable() ? " (ISA-L " + IsalNative.isalLibrary() + ")"
              : " (" + IsalNative.unavailableReason() + ")");

      String[] files = {"/demo/large", "/demo/small"};
      int[] sizes = {2 * 6 * (int) EcTestCluster.BLOCK_SIZE + 3 * EcTestCluster.CELL + 4321,
          EcTestCluster.CELL / 3};
      Map<String, byte[]> data = new HashMap<>();
      for (int i = 0; i < files.length; i++) {
        data.put(files[i], c.writeFile(files[i], sizes[i], 42 + i));
        say("wrote %s: %,d bytes in %d block group(s)", files[i], sizes[i],
            c.groups(files[i]).size());
      }
      Map<Long, byte[]> original = c.snapshotInternalBlocks(files);

      DataNode[] victims = {c.holder(files[0], 0, 0), c.holder(files[0], 0, 7)};
      for (DataNode v : victims) {
        c.stop(v);
      }
      say("stopped %s and %s (data block 0 and parity block 7 of %s's first group)",
          victims[0].getDisplayName(), victims[1].getDisplayName(), files[0]);

      long decodes = counters.decodeCalls();
      for (String f : files) {
        boolean same = Arrays.equals(data.get(f), c.readFully(f));
        failures += same ? 0 : 1;
        say("degraded read of %s: %s", f, same ? "bytes match" : "BYTES DIFFER");
      }
      say("client decode calls by %s: %d", coder, counters.decodeCalls() - decodes);

      for (DataNode v : victims) {
        c.markDead(v);
      }
      for (String f : files) {
        c.waitFullyStored(f, 120_000);
      }
      Map<Long, int[]> matches = new HashMap<>(); // group id -> {equal, total}
      for (String f : files) {
        c.forEachStoredInternalBlock(f, (block, bytes) -> {
          int[] m = matches.computeIfAbsent(groupId(block.getBlockId()), g -> new int[2]);
          m[0] += Arrays.equals(original.get(block.getBlockId()), bytes) ? 1 : 0;
          m[1]++;
        });
      }
      List<String> tasks = c.recentTasks();
      say("%nReconstruction tasks (route order %s):%n", "switch,inec,native");
      String fmt = "%-28s %-8s %-7s %12s %6s  %-22s %s%n";
      System.out.printf(Locale.ROOT, fmt, "block group", "erased", "route", "bytes", "ms",
          "block files match", "other routes");
      for (String line : tasks) {
        String[] t = line.split("\t", -1);
        long group = groupId(Long.parseLong(t[0].split("_")[1])); // blk_<id>_<genstamp>
        int[] m = matches.getOrDefault(group, new int[2]);
        boolean ok = m[1] > 0 && m[0] == m[1] && !t[2].equals("none");
        failures += ok ? 0 : 1;
        System.out.printf(Locale.ROOT, fmt, t[0], t[1], t[2], t[3], t[4],
            (ok ? "yes " : "NO ") + m[0] + "/" + m[1], t[5]);
      }
      for (String f : files) {
        boolean same = Arrays.equals(data.get(f), c.readFully(f));
        failures += same ? 0 : 1;
        say("read of %s after reconstruction: %s", f, same ? "bytes match" : "BYTES DIFFER");
      }
      say("%d tasks, %s", tasks.size(), failures == 0 ? "all bytes match" : failures
          + " MISMATCHES");
    }
    System.exit(failures == 0 ? 0 : 1);
  }

  /** Internal block ids are the group id plus the index (0..15). */
  private static long groupId(long blockId) {
    return blockId & ~15L;
  }

  private static void say(String fmt, Object... args) {
    System.out.printf(Locale.ROOT, fmt + "%n", args);
  }
}
