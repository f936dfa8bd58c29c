package io.netec.hdfs.demo;

import io.netec.hdfs.NetecConfigKeys;
import io.netec.hdfs.client.ClientReadCounters;
import io.netec.hdfs.client.NetecDistributedFileSystem;
import io.netec.hdfs.cluster.EcTestCluster;
import io.netec.hdfs.codec.CoderCounters;
import io.netec.hdfs.codec.IsalNative;
import io.netec.hdfs.inecroute.InecNode;
import io.netec.hdfs.inecroute.InecParticipant;
import io.netec.hdfs.inecroute.InecRoute;
import io.netec.hdfs.switchroute.SoftwareSwitch;
import io.netec.hdfs.switchroute.SwitchRoute;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hdfs.DistributedFileSystem;
import org.apache.hadoop.hdfs.server.datanode.DataNode;

/**
 * The README's demo: an embedded MiniDFSCluster with the NetEC plugin (route order
 * switch,inec,native) and an in-process software switch. Phase 1 loses two DataNodes and
 * rebuilds through the switch; phase 2 stops the switch, loses two more and rebuilds through
 * INEC (ECPipe chains over the DataNodes' participants); phase 3 stops the participants, loses
 * two more and rebuilds natively. Each task prints the route that served it, what the others
 * said and whether every internal block file of its group equals the original; a summary puts
 * the measured bytes into rebuilding DataNodes per rebuilt byte side by side.
 */
public final class NetecDemo {
  private static final String POLICY = "NETEC-6-3-1024k";
  /** Three phases lose two DataNodes each; RS(6,3) groups still need 9 to be whole. */
  private static final int DATANODES = 16;
  private static int failures;
  /** The plugin's client, its lost units' preads forced through the routes. */
  private static NetecDistributedFileSystem routed;
  /** Hadoop's own client. */
  private static DistributedFileSystem stock;
  /** --summary-only (bin/netec-bench ingress): the same run, printing only the ingress table. */
  private static boolean quiet;

  public static void main(String[] args) throws Exception {
    quiet = Arrays.asList(args).contains("--summary-only");
    SoftwareSwitch sw = new SoftwareSwitch(new SoftwareSwitch.Options());
    Configuration conf = EcTestCluster.switchConf(sw, 5_000);
    conf.set(NetecConfigKeys.ROUTE_ORDER, "switch,inec,native");
    conf.set(NetecConfigKeys.INEC_SCHEME, "ecpipe");
    conf.setInt(NetecConfigKeys.INEC_TIMEOUT_MS, 5_000);
    try (EcTestCluster c = new EcTestCluster(conf, DATANODES)) {
      c.useNetecPolicy(POLICY, "/demo");
      Configuration client = new Configuration(c.fs().getConf());
      client.set(NetecConfigKeys.CLIENT_READS, "routes");
      routed = new NetecDistributedFileSystem();
      routed.initialize(c.fs().getUri(), client);
      stock = new DistributedFileSystem();
      stock.initialize(c.fs().getUri(), c.fs().getConf());
      String coder = EcTestCluster.activeNetecCoder();
      say("NetEC demo: %d DataNodes, policy %s, coder %s%s, software switch at %s", DATANODES,
          POLICY,
          coder, IsalNative.isAvailable() ? " (ISA-L " + IsalNative.isalLibrary() + ")"
              : " (" + IsalNative.unavailableReason() + ")", sw.controlAddress());

      long switchIngress = SwitchRoute.bytesReceived();
      long switchBytes = c.routerMetric("switch.Bytes");
      phase(c, "switch", "/demo/a");
      switchIngress = SwitchRoute.bytesReceived() - switchIngress;
      switchBytes = c.routerMetric("switch.Bytes") - switchBytes;

      sw.close();
      say("%nSoftware switch stopped: the switch route now declines and INEC rebuilds.");
      long inecIngress = InecRoute.bytesReceived();
      long inecBytes = c.routerMetric("inec.Bytes");
      phase(c, "inec", "/demo/b");
      inecIngress = InecRoute.bytesReceived() - inecIngress;
      inecBytes = c.routerMetric("inec.Bytes") - inecBytes;

      for (DataNode dn : c.mini().getDataNodes()) {
        InecParticipant p = InecNode.participant(dn.getXferPort());
        if (p != null) {
          p.close();
        }
      }
      say("%nINEC participants stopped: the inec route now fails and native rebuilds.");
      long nativeBytes = c.routerMetric("native.Bytes");
      long nativeIngress = c.hadoopReconstructionBytesRead();
      phase(c, "native", "/demo/c");
      nativeIngress = c.hadoopReconstructionBytesRead() - nativeIngress;
      nativeBytes = c.routerMetric("native.Bytes") - nativeBytes;

      quiet = false;
      say("%nBytes into the rebuilding DataNodes per rebuilt byte (measured, %s, one run):",
          POLICY);
      say("  %-7s %14s %18s %10s", "route", "bytes rebuilt", "bytes taken in", "ratio");
      say("  %-7s %,14d %,18d %9.3fx", "switch", switchBytes, switchIngress,
          (double) switchIngress / switchBytes);
      say("  %-7s %,14d %,18d %9.3fx", "inec", inecBytes, inecIngress,
          (double) inecIngress / inecBytes);
      say("  %-7s %,14d %,18d %9.3fx", "native", nativeBytes, nativeIngress,
          (double) nativeIngress / nativeBytes);
      say("%s", failures == 0 ? "all bytes match" : failures + " MISMATCHES");
    } finally {
      sw.close();
      if (routed != null) {
        routed.close();
      }
      if (stock != null) {
        stock.close();
      }
    }
    System.exit(failures == 0 ? 0 : 1);
  }

  /** Writes two files under prefix, loses two DataNodes, reads degraded, waits, reports. */
  private static void phase(EcTestCluster c, String label, String prefix) throws Exception {
    String[] files = {prefix + "-large", prefix + "-small"};
    int[] sizes = {2 * 6 * (int) EcTestCluster.BLOCK_SIZE + 3 * EcTestCluster.CELL + 4321,
        EcTestCluster.CELL / 3};
    Map<String, byte[]> data = new HashMap<>();
    say("%nPhase %s:", label);
    for (int i = 0; i < files.length; i++) {
      data.put(files[i], c.writeFile(files[i], sizes[i], files[i].hashCode()));
      say("  wrote %s: %,d bytes in %d block group(s)", files[i], sizes[i],
          c.groups(files[i]).size());
    }
    Map<Long, byte[]> original = c.snapshotInternalBlocks(files);
    DataNode[] victims = {c.holder(files[0], 0, 0), c.holder(files[0], 0, 7)};
    for (DataNode v : victims) {
      c.stop(v);
    }
    say("  stopped %s and %s (data block 0 and parity block 7 of %s's first group)",
        victims[0].getDisplayName(), victims[1].getDisplayName(), files[0]);
    CoderCounters counters = EcTestCluster.activeCounters();
    long decodes = counters.decodeCalls();
    for (String f : files) {
      check(Arrays.equals(data.get(f), c.readFully(f)), "  degraded read of " + f);
    }
    say("  client decode calls: %d (Hadoop's stream: a scan moves no more bytes decoding)",
        counters.decodeCalls() - decodes);
    lostUnitPreads(c, files[0], data.get(files[0]), label);
    int seen = c.recentTasks().size();
    c.markDead(Arrays.asList(victims));
    Map<Long, int[]> matches = new HashMap<>(); // group id -> {equal, total}
    for (String f : files) {
      c.waitFullyStored(f, 120_000);
      c.forEachStoredInternalBlock(f, (block, bytes) -> {
        int[] m = matches.computeIfAbsent(groupId(block.getBlockId()), g -> new int[2]);
        m[0] += Arrays.equals(original.get(block.getBlockId()), bytes) ? 1 : 0;
        m[1]++;
      });
    }
    String fmt = "  %-30s %-8s %-7s %10s %5s  %-12s %s";
    say(fmt, "block group", "erased", "route", "bytes", "ms", "files match", "other routes");
    List<String> tasks = c.recentTasks();
    for (String line : tasks.subList(Math.min(seen, tasks.size()), tasks.size())) {
      String[] t = line.split("\t", -1);
      long group = groupId(Long.parseLong(t[0].split("_")[1])); // blk_<id>_<genstamp>
      int[] m = matches.get(group);
      if (m == null) {
        continue; // a group of the other phase's files, rebuilt again: not this phase's
      }
      boolean ok = m[0] == m[1] && t[2].equals(label);
      failures += ok ? 0 : 1;
      say(fmt, t[0], t[1], t[2], t[3], t[4], (ok ? "yes " : "NO ") + m[0] + "/" + m[1], t[6]);
    }
    for (String f : files) {
      check(Arrays.equals(data.get(f), c.readFully(f)), "  read of " + f + " after rebuild");
    }
  }

  /**
   * Preads of data unit 0 of the file's first group (its DataNode is stopped) through the
   * plugin's client, forced through the routes, and through Hadoop's: times, decodes, route.
   */
  private static void lostUnitPreads(EcTestCluster c, String f, byte[] want, String label)
      throws Exception {
    long viaSwitch = ClientReadCounters.switchRanges();
    long viaInec = ClientReadCounters.inecRanges();
    long[] ours = timedUnitPreads(routed, f, want);
    String by = ClientReadCounters.switchRanges() > viaSwitch ? "switch"
        : ClientReadCounters.inecRanges() > viaInec ? "inec"
        : "Hadoop's stream (no route usable)";
    long[] theirs = timedUnitPreads(stock, f, want);
    say("  pread of lost data unit 0 (%,d bytes, one stream, after a read that finds its "
        + "DataNode dead): plugin's client through %s %d ms, %d client decode calls; Hadoop's "
        + "client %d ms, %d decode calls (loopback: no link binds here)", ours[2], by, ours[0],
        ours[1], theirs[0], theirs[1]);
    if (!label.equals("native") && !by.equals(label)) {
      failures++;
      say("  the %s phase's preads were served by %s", label, by);
    }
  }

  /** {ms, client decode calls, bytes} of the timed preads of unit 0's cells of group 0. */
  private static long[] timedUnitPreads(DistributedFileSystem fs, String f, byte[] want)
      throws Exception {
    CoderCounters counters = EcTestCluster.activeCounters();
    int cell = EcTestCluster.CELL;
    long stripe = 6L * cell;
    try (FSDataInputStream in = fs.open(new Path(f))) {
      byte[] b = new byte[cell];
      in.readFully(0, b); // the stream finds the stopped DataNode dead (Hadoop decodes)
      long decodes = counters.decodeCalls();
      long t0 = System.nanoTime();
      long bytes = 0;
      for (long at = 0; at < 6L * EcTestCluster.BLOCK_SIZE; at += stripe) {
        in.readFully(at, b);
        check(Arrays.equals(Arrays.copyOfRange(want, (int) at, (int) at + cell), b),
            "  pread of " + f + " @" + at + " through " + fs.getClass().getSimpleName());
        bytes += cell;
      }
      return new long[] {(System.nanoTime() - t0) / 1_000_000,
          counters.decodeCalls() - decodes, bytes};
    }
  }

  private static void check(boolean ok, String what) {
    failures += ok ? 0 : 1;
    if (!ok || !quiet) {
      System.out.printf(Locale.ROOT, "%s: %s%n", what, ok ? "bytes match" : "BYTES DIFFER");
    }
  }

  /** Internal block ids are the group id plus the index (0..15). */
  private static long groupId(long blockId) {
    return blockId & ~15L;
  }

  private static void say(String fmt, Object... args) {
    if (!quiet) {
      System.out.printf(Locale.ROOT, fmt + "%n", args);
    }
  }
}
