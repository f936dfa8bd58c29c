package io.netec.hdfs.bench;

import io.netec.hdfs.NetecConfigKeys;
import io.netec.hdfs.client.NetecDistributedFileSystem;
import io.netec.hdfs.cluster.EcTestCluster;
import java.util.Arrays;
import java.util.Locale;
import java.util.Random;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hdfs.DFSConfigKeys;
import org.apache.hadoop.hdfs.server.datanode.DataNode;

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
    int k = 3;
    int cell = EcTestCluster.CELL;
    Configuration conf = EcTestCluster.conf();
    conf.set(NetecConfigKeys.ROUTE_ORDER, "scripted,native"); // usable, never reached here
    conf.set(NetecConfigKeys.CLIENT_READS, "cost");
    conf.setInt(DFSConfigKeys.DFS_NAMENODE_REDUNDANCY_INTERVAL_SECONDS_KEY, 3600);
    try (EcTestCluster c = new EcTestCluster(conf, k + 2 + 1)) {
      c.useNetecPolicy("NETEC-3-2-1024k", "/o");
      String path = "/o/f";
      int size = (int) (k * EcTestCluster.BLOCK_SIZE);
      byte[] data = c.writeFile(path, size, 7);
      int lostUnit = 1;
      DataNode holder = c.holder(path, 0, lostUnit);
      c.stop(holder);
      c.markDead(holder);
      Configuration plugin = new Configuration(conf);
      plugin.set("fs.hdfs.impl", NetecDistributedFileSystem.class.getName());
      plugin.setBoolean("fs.hdfs.impl.disable.cache", true);
      FileSystem stockFs = c.fs();
      FileSystem pluginFs = FileSystem.get(c.fs().getUri(), plugin);
      if (!(pluginFs instanceof NetecDistributedFileSystem)) {
        throw new IllegalStateException("not the plugin's file system: " + pluginFs.getClass());
      }
      long routed = io.netec.hdfs.client.ClientReadCounters.routesChosen();
      Random rnd = new Random(3);
      long[] stock = new long[READS];
      long[] ours = new long[READS];
      byte[] buf = new byte[LEN];
      try (FSDataInputStream a = stockFs.open(new Path(path));
          FSDataInputStream b = pluginFs.open(new Path(path))) {
        for (int i = -WARMUP; i < READS; i++) {
          // a range inside the lost unit: cell lostUnit of a random stripe
          long stripe = rnd.nextInt((int) (EcTestCluster.BLOCK_SIZE / cell));
          long pos = stripe * k * cell + (long) lostUnit * cell + rnd.nextInt(cell - LEN + 1);
          boolean stockFirst = (i & 1) == 0; // turn about, so that neither always goes first
          long ta = stockFirst ? timedRead(a, pos, buf, data) : 0;
          long tb = timedRead(b, pos, buf, data);
          if (!stockFirst) {
            ta = timedRead(a, pos, buf, data);
          }
          if (i >= 0) {
            stock[i] = ta;
            ours[i] = tb;
          }
        }
      }
      pluginFs.close();
      if (io.netec.hdfs.client.ClientReadCounters.routesChosen() != routed) {
        throw new IllegalStateException("the cost model gave "
            + (io.netec.hdfs.client.ClientReadCounters.routesChosen() - routed) + " reads to "
            + "the routes: the figures would not be Hadoop's stream's path alone");
      }
      double ms = median(stock) / 1e6;
      double mp = median(ours) / 1e6;
      System.out.printf(Locale.ROOT, "# %d KiB positional reads inside a lost unit, RS(3,2), "
          + "MiniDFSCluster, %d reads each after %d warm-up%n%n", LEN >> 10, READS, WARMUP);
      System.out.println("| client | median ms | p90 ms |");
      System.out.println("|---|---:|---:|");
      System.out.printf(Locale.ROOT, "| Hadoop's | %.3f | %.3f |%n", ms, pct(stock, 0.9) / 1e6);
      System.out.printf(Locale.ROOT, "| plugin (cost, Hadoop's stream chosen) | %.3f | %.3f |%n",
          mp, pct(ours, 0.9) / 1e6);
      System.out.printf(Locale.ROOT, "%nratio (Hadoop's / plugin's median): %.3f; the plugin "
          + "adds %.0f µs a read%n", ms / mp, (mp - ms) * 1e3);
    }
  }

  private static long timedRead(FSDataInputStream in, long pos, byte[] buf, byte[] data)
      throws Exception {
    long t0 = System.nanoTime();
    in.readFully(pos, buf, 0, buf.length);
    long t = System.nanoTime() - t0;
    if (!Arrays.equals(buf, 0, buf.length, data, (int) pos, (int) pos + buf.length)) {
      throw new IllegalStateException("wrong bytes read at " + pos);
    }
    return t;
  }

  private static double median(long[] a) {
    return pct(a, 0.5);
  }

  private static double pct(long[] a, double p) {
    long[] s = a.clone();
    Arrays.sort(s);
    return s[(int) Math.min(s.length - 1, Math.floor(p * s.length))];
  }
}
