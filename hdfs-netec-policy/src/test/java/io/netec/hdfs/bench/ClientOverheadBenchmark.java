package io.netec.hdfs.bench;

import io.netec.hdfs.NetecConfigKeys;
import io.netec.hdfs.client.ClientReadCounters;
import io.netec.hdfs.cluster.EcTestCluster;
import java.util.Locale;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;

/**
 * What the plugin's client adds to a positional read it leaves to Hadoop's stream: small reads
 * inside a lost unit (64 KiB by default), where Hadoop's stream moves k times the bytes but a
 * route's fixed cost is larger still, so the cost model gives them to Hadoop's stream. One
 * MiniDFSCluster (RS(3,2), one data unit's holder stopped and marked dead, no reconstruction),
 * one stock client and one plugin client (reads=cost, a route configured and usable), reading
 * turn about at the same random offsets; {@code -Dreads=} (default 4000) reads each after
 * {@code -Dwarmup=} (default 1000). Prints both medians, their ratio and the difference in µs:
 * the plugin's planning and choice on this path, which the testbed's reads benchmark cannot
 * tell from its noise. Every read's bytes are compared with the file's.
 */
public final class ClientOverheadBenchmark {
  private static final int READS = Integer.getInteger("reads", 4000);
  private static final int WARMUP = Integer.getInteger("warmup", 1000);
  private static final int LEN = Integer.getInteger("bytes", 64 << 10);

  public static void main(String[] args) throws Exception {
    Configuration conf = EcTestCluster.conf();
    conf.set(NetecConfigKeys.ROUTE_ORDER, "scripted,native"); // usable, never reached here
    try (LostUnitReads scene = new LostUnitReads(conf)) {
      FileSystem pluginFs = scene.pluginFs(conf, "cost");
      long routed = ClientReadCounters.routesChosen();
      long[][] took = scene.turnAbout(scene.cluster.fs(), pluginFs, LEN, WARMUP, READS, () -> { });
      pluginFs.close();
      if (ClientReadCounters.routesChosen() != routed) {
        throw new IllegalStateException("the cost model gave "
            + (ClientReadCounters.routesChosen() - routed) + " reads to "
            + "the routes: the figures would not be Hadoop's stream's path alone");
      }
      long[] stock = took[0];
      long[] ours = took[1];
      double ms = LostUnitReads.pct(stock, 0.5) / 1e6;
      double mp = LostUnitReads.pct(ours, 0.5) / 1e6;
      System.out.printf(Locale.ROOT, "# %d KiB positional reads inside a lost unit, RS(3,2), "
          + "MiniDFSCluster, %d reads each after %d warm-up%n%n", LEN >> 10, READS, WARMUP);
      System.out.println("| client | median ms | p90 ms |");
      System.out.println("|---|---:|---:|");
      System.out.printf(Locale.ROOT, "| Hadoop's | %.3f | %.3f |%n", ms,
          LostUnitReads.pct(stock, 0.9) / 1e6);
      System.out.printf(Locale.ROOT, "| plugin (cost, Hadoop's stream chosen) | %.3f | %.3f |%n",
          mp, LostUnitReads.pct(ours, 0.9) / 1e6);
      System.out.printf(Locale.ROOT, "%nratio (Hadoop's / plugin's median): %.3f; the plugin "
          + "adds %.0f µs a read%n", ms / mp, (mp - ms) * 1e3);
    }
  }
}
