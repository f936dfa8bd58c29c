package io.netec.hdfs.bench;

import io.netec.hdfs.client.NetecDistributedFileSystem;
import io.netec.hdfs.cluster.EcTestCluster;
import java.io.IOException;
import java.util.Arrays;
import java.util.Random;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hdfs.DFSConfigKeys;
import org.apache.hadoop.hdfs.server.datanode.DataNode;

/**
 * The scene of the client benchmarks (ClientOverheadBenchmark, RouteLatencyBenchmark): one
 * MiniDFSCluster, a file of one RS(3,2) group whose data unit 1's holder is stopped and marked
 * dead (no reconstruction runs), a stock client and a plugin client reading it turn about at the
 * same random offsets inside the lost unit, every read's bytes compared with the file's.
 */
final class LostUnitReads implements AutoCloseable {
  private static final int K = 3;
  private static final int LOST_UNIT = 1;
  private static final String PATH = "/o/f";
  final EcTestCluster cluster;
  private final byte[] data;

  /** Starts the cluster with {@code conf} (reconstruction held off) and loses the unit. */
  LostUnitReads(Configuration conf) throws Exception {
    conf.setInt(DFSConfigKeys.DFS_NAMENODE_REDUNDANCY_INTERVAL_SECONDS_KEY, 3600);
    cluster = new EcTestCluster(conf, K + 2 + 1);
    try {
      cluster.useNetecPolicy("NETEC-3-2-1024k", "/o");
      data = cluster.writeFile(PATH, (int) (K * EcTestCluster.BLOCK_SIZE), 7);
      DataNode holder = cluster.holder(PATH, 0, LOST_UNIT);
      cluster.stop(holder);
      cluster.markDead(holder);
    } catch (Exception e) {
      cluster.close();
      throw e;
    }
  }

  /** The plugin's file system over {@code conf}, reading with {@code netec.client.reads}. */
  FileSystem pluginFs(Configuration conf, String reads) throws IOException {
    Configuration plugin = new Configuration(conf);
    plugin.set("fs.hdfs.impl", NetecDistributedFileSystem.class.getName());
    plugin.setBoolean("fs.hdfs.impl.disable.cache", true);
    plugin.set(io.netec.hdfs.NetecConfigKeys.CLIENT_READS, reads);
    FileSystem fs = FileSystem.get(cluster.fs().getUri(), plugin);
    if (!(fs instanceof NetecDistributedFileSystem)) {
      throw new IllegalStateException("not the plugin's file system: " + fs.getClass());
    }
    return fs;
  }

  /**
   * {@code warmup} untimed then {@code reads} timed reads of {@code len} bytes inside the lost
   * unit through {@code stock}'s and {@code plugin}'s streams, taking turns (neither always
   * first); {@code timedFrom} runs before the first timed read. Returns the nanoseconds of each
   * timed read: [0] stock's, [1] the plugin's.
   */
  long[][] turnAbout(FileSystem stock, FileSystem plugin, int len, int warmup, int reads,
      Runnable timedFrom) throws IOException {
    int cell = EcTestCluster.CELL;
    Random rnd = new Random(3);
    long[][] took = new long[2][reads];
    byte[] buf = new byte[len];
    try (FSDataInputStream a = stock.open(new Path(PATH));
        FSDataInputStream b = plugin.open(new Path(PATH))) {
      for (int i = -warmup; i < reads; i++) {
        if (i == 0) {
          timedFrom.run();
        }
        long stripe = rnd.nextInt((int) (EcTestCluster.BLOCK_SIZE / cell));
        long pos = stripe * K * cell + (long) LOST_UNIT * cell + rnd.nextInt(cell - len + 1);
        boolean stockFirst = (i & 1) == 0;
        long ta = stockFirst ? timedRead(a, pos, buf) : 0;
        long tb = timedRead(b, pos, buf);
        if (!stockFirst) {
          ta = timedRead(a, pos, buf);
        }
        if (i >= 0) {
          took[0][i] = ta;
          took[1][i] = tb;
        }
      }
    }
    return took;
  }

  private long timedRead(FSDataInputStream in, long pos, byte[] buf) throws IOException {
    long t0 = System.nanoTime();
    in.readFully(pos, buf, 0, buf.length);
    long t = System.nanoTime() - t0;
    if (!Arrays.equals(buf, 0, buf.length, data, (int) pos, (int) pos + buf.length)) {
      throw new IllegalStateException("wrong bytes read at " + pos);
    }
    return t;
  }

  /** The {@code p} quantile of {@code a} (nanoseconds, say). */
  static double pct(long[] a, double p) {
    long[] s = a.clone();
    Arrays.sort(s);
    return s[(int) Math.min(s.length - 1, Math.floor(p * s.length))];
  }

  @Override
  public void close() {
    cluster.close();
  }
}
