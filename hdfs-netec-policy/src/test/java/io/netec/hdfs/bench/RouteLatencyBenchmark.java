package io.netec.hdfs.bench;

import io.netec.hdfs.client.ClientReadCounters;
import io.netec.hdfs.cluster.EcTestCluster;
import io.netec.hdfs.switchroute.SoftwareSwitch;
import java.util.Locale;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;

/**
 * A route's fixed cost on a client's positional read: small reads inside a lost unit (64 KiB
 * by default), where the bytes take no time on loopback and what is left is the route's own
 * latency (setup, the survivors' first bytes, the proofs that vouch for the rebuilt bytes).
 * One MiniDFSCluster (RS(3,2), one data unit's holder stopped and marked dead), a software
 * switch, one stock client and one plugin client forced to the route ({@code
 * netec.client.reads=routes}), reading turn about at the same random offsets; {@code -Dreads=}
 * (default 300) reads each after {@code -Dwarmup=} (default 100). Prints both medians and p90s
 * and their difference: the fixed cost that decides where a route wins on a slow client link
 * (README, client). Every read's bytes are compared with the file's.
 */
public final class RouteLatencyBenchmark {
  private static final int READS = Integer.getInteger("reads", 300);
  private static final int WARMUP = Integer.getInteger("warmup", 100);
  private static final int LEN = Integer.getInteger("bytes", 64 << 10);

  public static void main(String[] args) throws Exception {
    try (SoftwareSwitch sw = new SoftwareSwitch(new SoftwareSwitch.Options())) {
      Configuration conf = EcTestCluster.switchConf(sw, 5_000);
      try (LostUnitReads scene = new LostUnitReads(conf)) {
        FileSystem pluginFs = scene.pluginFs(conf, "routes");
        long[] routed = new long[1];
        long[][] took = scene.turnAbout(scene.cluster.fs(), pluginFs, LEN, WARMUP, READS,
            () -> routed[0] = ClientReadCounters.switchRanges());
        pluginFs.close();
        long viaSwitch = ClientReadCounters.switchRanges() - routed[0];
        if (viaSwitch != READS) {
          throw new IllegalStateException(viaSwitch + " of the " + READS + " timed reads "
              + "went through the switch: the figures would not be the route's alone");
        }
        long[] stock = took[0];
        long[] ours = took[1];
        double ms = LostUnitReads.pct(stock, 0.5) / 1e6;
        double mp = LostUnitReads.pct(ours, 0.5) / 1e6;
        System.out.printf(Locale.ROOT, "# %d KiB positional reads inside a lost unit, RS(3,2), "
            + "MiniDFSCluster on loopback, %d reads each after %d warm-up%n%n", LEN >> 10,
            READS, WARMUP);
        System.out.println("| client | median ms | p90 ms |");
        System.out.println("|---|---:|---:|");
        System.out.printf(Locale.ROOT, "| Hadoop's stream | %.2f | %.2f |%n", ms,
            LostUnitReads.pct(stock, 0.9) / 1e6);
        System.out.printf(Locale.ROOT, "| plugin, switch route | %.2f | %.2f |%n", mp,
            LostUnitReads.pct(ours, 0.9) / 1e6);
        System.out.printf(Locale.ROOT, "%nthe route's fixed cost over Hadoop's stream: %.2f ms "
            + "(median)%n", mp - ms);
      }
    }
  }
}
