package io.netec.hdfs.bench;

import io.netec.hdfs.NetecConfigKeys;
import io.netec.hdfs.client.ClientReadCounters;
import io.netec.hdfs.client.NetecDistributedFileSystem;
import io.netec.hdfs.cluster.EcTestCluster;
import io.netec.hdfs.switchroute.SoftwareSwitch;
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
    int k = 3;
    int cell = EcTestCluster.CELL;
    try (SoftwareSwitch sw = new SoftwareSwitch(new SoftwareSwitch.Options())) {
      Configuration conf = EcTestCluster.switchConf(sw, 5_000);
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
        plugin.set(NetecConfigKeys.CLIENT_READS, "routes");
        FileSystem stockFs = c.fs();
        FileSystem pluginFs = FileSystem.get(c.fs().getUri(), plugin);
        long routed = 0;
        Random rnd = new Random(3);
        long[] stock = new long[READS];
        long[] ours = new long[READS];
        byte[] buf = new byte[LEN];
        try (FSDataInputStream a = stockFs.open(new Path(path));
            FSDataInputStream b = pluginFs.open(new Path(path))) {
          for (int i = -WARMUP; i < READS; i++) {
            if (i == 0) {
              routed = ClientReadCounters.switchRanges();
            }
            long stripe = rnd.nextInt((int) (EcTestCluster.BLOCK_SIZE / cell));
            long pos = stripe * k * cell + (long) lostUnit * cell + rnd.nextInt(cell - LEN + 1);
            boolean stockFirst = (i & 1) == 0;
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
        long viaSwitch = ClientReadCounters.switchRanges() - routed;
        if (viaSwitch != READS) {
          throw new IllegalStateException(viaSwitch + " of the " + READS + " timed reads "
              + "went through the switch: the figures would not be the route's alone");
        }
        double ms = pct(stock, 0.5) / 1e6;
        double mp = pct(ours, 0.5) / 1e6;
        System.out.printf(Locale.ROOT, "# %d KiB positional reads inside a lost unit, RS(3,2), "
            + "MiniDFSCluster on loopback, %d reads each after %d warm-up%n%n", LEN >> 10, READS,
            WARMUP);
        System.out.println("| client | median ms | p90 ms |");
        System.out.println("|---|---:|---:|");
        System.out.printf(Locale.ROOT, "| Hadoop's stream | %.2f | %.2f |%n", ms,
            pct(stock, 0.9) / 1e6);
        System.out.printf(Locale.ROOT, "| plugin, switch route | %.2f | %.2f |%n", mp,
            pct(ours, 0.9) / 1e6);
        System.out.printf(Locale.ROOT, "%nthe route's fixed cost over Hadoop's stream: %.2f ms "
            + "(median)%n", mp - ms);
      }
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

  private static double pct(long[] a, double p) {
    long[] s = a.clone();
    Arrays.sort(s);
    return s[(int) Math.min(s.length - 1, Math.floor(p * s.length))];
  }
}
