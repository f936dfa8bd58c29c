package io.netec.hdfs.tools;

import io.netec.hdfs.NetecConfigKeys;
import io.netec.hdfs.client.ClientReadCounters;
import io.netec.hdfs.client.NetecDistributedFileSystem;
import io.netec.hdfs.route.ReadCost;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hdfs.DistributedFileSystem;
import org.apache.hadoop.hdfs.protocol.ErasureCodingPolicy;
import org.apache.hadoop.hdfs.protocol.LocatedBlock;

/**
 * NetecProbe's {@code reads}: each kind of read of a degraded block group, timed through
 * Hadoop's client, the plugin's (by cost) and the plugin forced through one route, in one JVM
 * (bin/netec-bench reads drives it on the testbed). Every read's bytes are compared with the
 * file's content. Prints one JSON line.
 */
final class ReadsBench {
  private ReadsBench() {
  }

  /**
   * Rounds of every kind of read before the timed ones, in every client alike: the stream
   * finds the dead node and the JIT warms, and the cost client measures each route (it tries
   * an unmeasured route every second read until it has {@value ReadCost#MIN_TRUSTED}
   * measurements, about six reads): the timed reads show what a long-lived client gets, not
   * its first reads.
   */
  static final int WARM_UP_ROUNDS = 3;

  /**
   * 64 KiB reads inside the lost unit through each client before the warm-up rounds (none
   * when unset; bin/netec-bench reads sets it, 300 unless --small-warmup says otherwise). The
   * routes' fixed path runs once a routed read, on the reader and on the survivors' DataNodes,
   * so a few rounds leave its code there cold; a client forced to a route runs it that many
   * times more (the cost client's reads go where it chooses). Not a netec.* key: the plugin's
   * client refuses netec.* keys it does not know.
   */
  static final String SMALL_WARMUP_KEY = "bench.reads.small-warmup";

  /** A kind of read: its name and the (offset, length) preads or scan of one repetition. */
  private interface Kind {
    /** Reads once through {@code in}; returns the first bad file offset, or -1. */
    long readOnce(FSDataInputStream in, Random rnd) throws IOException;
  }

  /**
   * Every kind of read through each client, timed. Each client warms up alone ({@link
   * #WARM_UP_ROUNDS}); then the timed reads go kind by kind, repetition by repetition, the
   * clients in an order shuffled anew for each repetition ({@link #order}): whatever loads the
   * testbed meanwhile (a DataNode deleting an earlier run's blocks, a link's bucket drained by
   * the read before) falls on every client alike, not on whichever ran then.
   */
  static String run(Configuration base, Path path, long size, long seed, int group, int lost,
      int healthy, int repeat, String[] clients) throws IOException {
    int n = clients.length;
    FileSystem[] systems = new FileSystem[n];
    FSDataInputStream[] streams = new FSDataInputStream[n];
    List<Map<String, Kind>> kinds = new ArrayList<>();
    Random[] rnd = new Random[n];
    long[] routes = new long[n];
    long[] hadoop = new long[n];
    boolean ok = true;
    List<String> names = new ArrayList<>();
    double[][][] ms;
    try {
      for (int c = 0; c < n; c++) {
        systems[c] = FileSystem.newInstance(path.toUri(), clientConf(base, clients[c]));
        kinds.add(kinds((DistributedFileSystem) systems[c], path, size, seed, group, lost,
            healthy));
        streams[c] = systems[c].open(path);
        rnd[c] = new Random(seed);
      }
      names.addAll(kinds.get(0).keySet());
      // the small reads first, every client's: they warm the DataNodes' side of the routes
      // too, which every client shares, before any client measures a route in its rounds
      int small = base.getInt(SMALL_WARMUP_KEY, 0);
      for (int c = 0; c < n; c++) {
        for (int i = 0; i < small; i++) {
          ok &= readCounted(kinds.get(c).get("lost-64k"), streams[c], rnd[c], c, routes,
              hadoop) < 0;
        }
      }
      for (int c = 0; c < n; c++) {
        for (int round = 0; round < WARM_UP_ROUNDS; round++) {
          for (String k : names) {
            ok &= readCounted(kinds.get(c).get(k), streams[c], rnd[c], c, routes, hadoop) < 0;
          }
        }
      }
      ms = new double[n][names.size()][repeat];
      Random shuffle = new Random(~seed); // not the offsets' sequence (rnd: seed)
      for (int k = 0; k < names.size(); k++) {
        for (int i = 0; i < repeat; i++) {
          for (int c : order(n, shuffle)) {
            long t0 = System.nanoTime();
            long bad = readCounted(kinds.get(c).get(names.get(k)), streams[c], rnd[c], c,
                routes, hadoop);
            ms[c][k][i] = (System.nanoTime() - t0) / 1e6;
            ok &= bad < 0;
          }
        }
      }
    } finally {
      for (int c = 0; c < n; c++) {
        org.apache.hadoop.io.IOUtils.closeStream(streams[c]);
        org.apache.hadoop.io.IOUtils.closeStream(systems[c]);
      }
    }
    List<String> parts = new ArrayList<>();
    for (int c = 0; c < n; c++) {
      List<String> results = new ArrayList<>();
      for (int k = 0; k < names.size(); k++) {
        double[] t = ms[c][k];
        java.util.Arrays.sort(t);
        results.add(String.format(Locale.ROOT, "\"%s\":{\"median\":%.1f,\"p99\":%.1f}",
            names.get(k), t[t.length / 2],
            t[Math.min(t.length - 1, (int) Math.ceil(0.99 * t.length) - 1)]));
      }
      results.add(String.format(Locale.ROOT, "\"routes_chosen\":%d,\"hadoop_chosen\":%d",
          routes[c], hadoop[c]));
      parts.add("\"" + clients[c] + "\":{" + String.join(",", results) + "}");
    }
    // only the cost client probes (ReadChooser): the JVM's count is its own
    return "{\"ok\":" + ok + ",\"probes\":" + ClientReadCounters.probes() + ",\"clients\":{"
        + String.join(",", parts) + "}}";
  }

  /**
   * The clients' order for one repetition: shuffled, so that no client mostly reads right
   * after the same other. The rotation before (each repetition starting with the next client)
   * had each client follow its left neighbour in all but one repetition of n: Hadoop's client
   * followed a forced route's 64 KiB read, the cost client Hadoop's 6 x 64 KiB one (likely to
   * have drained the client link's token bucket), and a second stock client after the cost
   * client took what it took (RS(6,3) 64 KiB at 100 Mbit/s, clients hadoop, cost, hadoop-b,
   * switch, inec: 31.2, 33.7 and 33.8 ms).
   */
  static int[] order(int n, Random shuffle) {
    int[] o = new int[n];
    for (int i = 0; i < n; i++) {
      o[i] = i;
    }
    for (int i = n - 1; i > 0; i--) {
      int j = shuffle.nextInt(i + 1);
      int t = o[i];
      o[i] = o[j];
      o[j] = t;
    }
    return o;
  }

  /** One read through client {@code c}, its routes' and Hadoop's choices counted to it. */
  private static long readCounted(Kind kind, FSDataInputStream in, Random rnd, int c,
      long[] routes, long[] hadoop) throws IOException {
    long r0 = ClientReadCounters.routesChosen();
    long h0 = ClientReadCounters.hadoopChosen();
    long bad = kind.readOnce(in, rnd);
    routes[c] += ClientReadCounters.routesChosen() - r0;
    hadoop[c] += ClientReadCounters.hadoopChosen() - h0;
    return bad;
  }

  /**
   * Whole-cell preads inside data unit {@code lost} of group {@code group}, through each client
   * of {@code clients} in turn (one stream each), until the file {@code stop} exists or
   * {@code maxMs} has passed: the reads a reconstruction window overlaps (the caller kills the
   * unit's holder and classifies each read by its start and end). Each read: its client, start
   * (epoch ms), time and how the plugin served it (hadoop, switch, inec, failed, hedge:
   * Hadoop's stream, started at the budget, answered first).
   */
  static String during(Configuration base, Path path, long size, long seed, int group,
      int lost, java.io.File stop, long maxMs, String[] clients) throws IOException {
    List<FileSystem> systems = new ArrayList<>();
    List<FSDataInputStream> streams = new ArrayList<>();
    List<String> reads = new ArrayList<>();
    boolean ok = true;
    try {
      Kind cell = null;
      for (String client : clients) {
        FileSystem fs = FileSystem.newInstance(path.toUri(), clientConf(base, client));
        systems.add(fs);
        streams.add(fs.open(path));
        cell = kinds((DistributedFileSystem) fs, path, size, seed, group, lost, lost)
            .get("lost-cell");
      }
      Random rnd = new Random(seed);
      long end = System.currentTimeMillis() + maxMs;
      while (!stop.exists() && System.currentTimeMillis() < end) {
        for (int c = 0; c < clients.length; c++) {
          long at = System.currentTimeMillis();
          long[] before = servedCounts();
          long t0 = System.nanoTime();
          ok &= cell.readOnce(streams.get(c), rnd) < 0;
          double ms = (System.nanoTime() - t0) / 1e6;
          reads.add(String.format(Locale.ROOT, "[\"%s\",%d,%.1f,\"%s\"]", clients[c], at,
              ms, stock(clients[c]) ? "hadoop" : via(before, servedCounts())));
        }
      }
    } finally {
      for (FSDataInputStream in : streams) {
        in.close();
      }
      for (FileSystem fs : systems) {
        fs.close();
      }
    }
    return "{\"ok\":" + ok + ",\"reads\":[" + String.join(",", reads) + "]}";
  }

  /** The plugin client's counters (one JVM, reads one at a time): chosen, failed, served. */
  private static long[] servedCounts() {
    return new long[] {ClientReadCounters.routesChosen(), ClientReadCounters.routesFailed(),
        ClientReadCounters.switchRanges(), ClientReadCounters.inecRanges(),
        ClientReadCounters.routesAbandoned()};
  }

  /** How the plugin's client served one read, from its counters before and after. */
  private static String via(long[] before, long[] after) {
    if (after[0] == before[0]) {
      return "hadoop";
    }
    if (after[4] > before[4]) {
      return "hedge";
    }
    if (after[1] > before[1]) {
      return "failed";
    }
    return after[2] > before[2] ? "switch" : after[3] > before[3] ? "inec" : "other";
  }

  /** Whether {@code client} is Hadoop's ("hadoop", or a second one such as "hadoop-b"). */
  static boolean stock(String client) {
    return client.equals("hadoop") || client.startsWith("hadoop-");
  }

  /**
   * The configuration of one client: Hadoop's (a second instance, "hadoop-b", gives the
   * spread between identical clients), the plugin by cost, or forced to a route.
   */
  static Configuration clientConf(Configuration base, String client) {
    Configuration conf = new Configuration(base);
    if (stock(client)) {
      conf.set("fs.hdfs.impl", DistributedFileSystem.class.getName());
    } else {
      conf.set("fs.hdfs.impl", NetecDistributedFileSystem.class.getName());
      if (!client.equals("cost")) {
        conf.set(NetecConfigKeys.ROUTE_ORDER, client + ",native");
        conf.set(NetecConfigKeys.CLIENT_READS, "routes");
      }
    }
    return conf;
  }

  private static Map<String, Kind> kinds(DistributedFileSystem fs, Path path, long size,
      long seed, int group, int lost, int healthy) throws IOException {
    ErasureCodingPolicy p = fs.getErasureCodingPolicy(path);
    int k = p.getNumDataUnits();
    long cell = p.getCellSize();
    List<LocatedBlock> groups = fs.getClient().getLocatedBlocks(path.toUri().getPath(), 0,
        size).getLocatedBlocks();
    LocatedBlock g = groups.get(group);
    long start = g.getStartOffset();
    long stripes = g.getBlockSize() / (k * cell); // whole stripes only
    if (stripes == 0) {
      throw new IOException(path + "'s group " + group + " has no whole stripe");
    }
    Map<String, Kind> kinds = new LinkedHashMap<>();
    kinds.put("lost-64k", (in, rnd) -> {
      long s = rnd.nextInt((int) stripes);
      long at = start + s * k * cell + lost * cell + rnd.nextInt((int) cell - 65536 + 1);
      return pread(in, seed, at, 65536);
    });
    kinds.put("lost-cell", (in, rnd) -> pread(in, seed,
        start + rnd.nextInt((int) stripes) * k * cell + lost * cell, (int) cell));
    kinds.put("lost-unit", (in, rnd) -> unit(in, seed, start, k, cell, stripes, lost));
    kinds.put("healthy-cell", (in, rnd) -> pread(in, seed,
        start + rnd.nextInt((int) stripes) * k * cell + healthy * cell, (int) cell));
    kinds.put("healthy-unit", (in, rnd) -> unit(in, seed, start, k, cell, stripes, healthy));
    kinds.put("scan", (in, rnd) -> {
      in.seek(start);
      byte[] b = new byte[(int) (k * cell)];
      for (long s = 0; s < stripes; s++) {
        in.readFully(b);
        long bad = NetecProbe.mismatch(b, NetecProbe.content(seed, start + s * b.length,
            b.length), b.length, start + s * b.length);
        if (bad >= 0) {
          return bad;
        }
      }
      return -1;
    });
    return kinds;
  }

  /** The cells of data unit {@code unit} in the group's whole stripes, a pread each. */
  private static long unit(FSDataInputStream in, long seed, long start, int k, long cell,
      long stripes, int unit) throws IOException {
    for (long s = 0; s < stripes; s++) {
      long bad = pread(in, seed, start + s * k * cell + unit * cell, (int) cell);
      if (bad >= 0) {
        return bad;
      }
    }
    return -1;
  }

  private static long pread(FSDataInputStream in, long seed, long at, int len)
      throws IOException {
    byte[] b = new byte[len];
    in.readFully(at, b);
    return NetecProbe.mismatch(b, NetecProbe.content(seed, at, len), len, at);
  }
}
