package io.netec.hdfs.tools;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hdfs.DistributedFileSystem;
import org.apache.hadoop.hdfs.protocol.DatanodeInfo;
import org.apache.hadoop.hdfs.protocol.ErasureCodingPolicy;
import org.apache.hadoop.hdfs.protocol.LocatedBlock;
import org.apache.hadoop.hdfs.protocol.LocatedStripedBlock;
import org.apache.hadoop.util.GenericOptionsParser;

/**
 * A client-side probe for trying NETEC files on a cluster (the testbed drives it): writes files
 * of reproducible content, verifies them, says where every internal block lives, and times
 * reads of one unit's cells. Content is a function of (seed, position), so a verification needs
 * no copy of the file. Every command prints one JSON line on stdout; it exits 1 when bytes
 * differ, 2 on bad usage.
 *
 * <pre>
 *   [-D key=value ...]                   Hadoop's generic options, then one of:
 *   write PATH SIZE SEED                 a file of SIZE bytes (policy: the directory's)
 *   verify PATH SIZE SEED                read it all back and compare
 *   locate PATH                          block groups / blocks and where each unit lives
 *   read-unit PATH SIZE SEED GROUP INDEX [REPEAT [PAUSE_MS]]
 *                                        read every cell of data unit INDEX of group GROUP
 *                                        (pread per cell, compared), timed; REPEAT times,
 *                                        PAUSE_MS apart, each read's start (epoch ms) and time
 *                                        listed; "ms" is the median of the warm reads
 *   read-range PATH SIZE SEED OFFSET LEN [REPEAT [PAUSE_MS]]
 *                                        pread of [OFFSET, OFFSET+LEN), compared, timed
 *   reads PATH SIZE SEED GROUP LOST HEALTHY REPEAT CLIENTS
 *                                        for each client of CLIENTS (comma-separated:
 *                                        hadoop = Hadoop's DistributedFileSystem, cost = the
 *                                        plugin choosing by cost, or a route name = the plugin
 *                                        forced through that route), one stream, REPEAT times
 *                                        each kind of read (random 64 KiB and whole-cell
 *                                        preads inside data unit LOST of group GROUP, the whole
 *                                        unit's cells, a scan of the group; a cell and the
 *                                        whole of healthy data unit HEALTHY), all compared;
 *                                        median and p99 ms of each
 *   reads-during PATH SIZE SEED GROUP LOST STOP_FILE MAX_MS CLIENTS
 *                                        whole-cell preads inside data unit LOST of group
 *                                        GROUP through each client in turn, until STOP_FILE
 *                                        exists or MAX_MS passed (a reconstruction runs
 *                                        meanwhile); each read's client, start, time and route
 *   soak-load DIRS SEED STOP_FILE JOURNAL CLIENTS
 *                                        the soak's load (SoakLoad): writes, reads and deletes
 *                                        in DIRS (comma-separated) through each client of
 *                                        CLIENTS (plugin, hadoop) until STOP_FILE exists; one
 *                                        JSON line an operation appended to JOURNAL
 *   soak-check LIST                      every file of LIST (lines: path size seed) read
 *                                        through both clients, and hdfs debug verifyEC on it
 * </pre>
 * The file system is the configured one: with {@code fs.hdfs.impl} set to
 * NetecDistributedFileSystem, reads of missing units go through the NetEC routes.
 */
public final class NetecProbe {
  private static final int CHUNK = 64 * 1024;

  private NetecProbe() {
  }

  public static void main(String[] argv) throws Exception {
    Configuration conf = new Configuration();
    // Hadoop's generic options first: -D key=value overrides the configuration (e.g. the
    // client's netec.route.order for one read).
    String[] args = new GenericOptionsParser(conf, argv).getRemainingArgs();
    if (args.length < 2) {
      usage("a command and a path");
    }
    Path path = new Path(args[1]);
    try (FileSystem fs = FileSystem.newInstance(path.toUri(), conf)) {
      String out;
      switch (args[0]) {
        case "write":
          need(args, 4);
          out = write(fs, path, number(args[2]), number(args[3]));
          break;
        case "verify":
          need(args, 4);
          out = verify(fs, path, number(args[2]), number(args[3]));
          break;
        case "locate":
          need(args, 2);
          out = locate((DistributedFileSystem) fs, path);
          break;
        case "read-unit":
        case "read-range": {
          need(args, 6, 8);
          long size = number(args[2]);
          long seed = number(args[3]);
          long a = number(args[4]);
          long b = number(args[5]);
          int repeat = args.length > 6 ? (int) number(args[6]) : 1;
          long pause = args.length > 7 ? number(args[7]) : 0;
          boolean unit = args[0].equals("read-unit");
          out = repeated(repeat, pause, () -> unit
              ? readUnit(fs, path, size, seed, (int) a, (int) b)
              : readRange(fs, path, size, seed, a, (int) b));
          break;
        }
        case "reads":
          need(args, 9, 9);
          out = ReadsBench.run(conf, path, number(args[2]), number(args[3]),
              (int) number(args[4]), (int) number(args[5]), (int) number(args[6]),
              (int) number(args[7]), args[8].split(","));
          break;
        case "reads-during":
          need(args, 9, 9);
          out = ReadsBench.during(conf, path, number(args[2]), number(args[3]),
              (int) number(args[4]), (int) number(args[5]), new java.io.File(args[6]),
              number(args[7]), args[8].split(","));
          break;
        case "soak-load":
          need(args, 6, 6);
          out = SoakLoad.load(conf, args[1].split(","), number(args[2]),
              new java.io.File(args[3]), new java.io.File(args[4]), args[5].split(","));
          break;
        case "soak-check":
          need(args, 2, 2);
          out = SoakLoad.check(conf, new java.io.File(args[1]));
          break;
        default:
          usage("unknown command " + args[0]);
          return;
      }
      System.out.println(out);
      System.exit(out.contains("\"ok\":false") ? 1 : 0);
    }
  }

  /** Bytes [offset, offset+len) of the content of seed {@code seed}. */
  public static byte[] content(long seed, long offset, int len) {
    byte[] out = new byte[len];
    byte[] chunk = new byte[CHUNK];
    long c = offset / CHUNK;
    int done = 0;
    while (done < len) {
      new Random(seed * 0x9E3779B97F4A7C15L + c).nextBytes(chunk);
      int from = (int) ((offset + done) - c * CHUNK);
      int n = Math.min(CHUNK - from, len - done);
      System.arraycopy(chunk, from, out, done, n);
      done += n;
      c++;
    }
    return out;
  }

  private static String write(FileSystem fs, Path path, long size, long seed) throws IOException {
    long start = System.nanoTime();
    try (OutputStream o = fs.create(path, false)) {
      for (long off = 0; off < size; off += 1 << 20) {
        o.write(content(seed, off, (int) Math.min(1 << 20, size - off)));
      }
    }
    return String.format(Locale.ROOT, "{\"path\":\"%s\",\"bytes\":%d,\"ms\":%.1f}", path, size,
        ms(start));
  }

  private static String verify(FileSystem fs, Path path, long size, long seed)
      throws IOException {
    long start = System.nanoTime();
    long length = fs.getFileStatus(path).getLen();
    long firstBad = length == size ? -1 : Math.min(length, size);
    byte[] buf = new byte[1 << 20];
    try (FSDataInputStream in = fs.open(path)) {
      for (long off = 0; off < size && firstBad < 0; off += buf.length) {
        int n = (int) Math.min(buf.length, size - off);
        in.readFully(buf, 0, n);
        firstBad = mismatch(buf, content(seed, off, n), n, off);
      }
    }
    return String.format(Locale.ROOT,
        "{\"path\":\"%s\",\"ok\":%b,\"bytes\":%d,\"first_bad\":%d,\"ms\":%.1f}", path,
        firstBad < 0, size, firstBad, ms(start));
  }

  /** One timed read: its bytes, whether they matched, and its time. */
  private static final class Read {
    final long startEpochMs;
    final long bytes;
    final long firstBad;
    final double ms;

    Read(long startEpochMs, long bytes, long firstBad, double ms) {
      this.startEpochMs = startEpochMs;
      this.bytes = bytes;
      this.firstBad = firstBad;
      this.ms = ms;
    }
  }

  private interface ReadOnce {
    Read run() throws IOException;
  }

  /** Runs a read REPEAT times; "ms" is the median of the reads after the first (warm JVM). */
  private static String repeated(int repeat, long pauseMs, ReadOnce read)
      throws IOException, InterruptedException {
    if (repeat < 1 || repeat > 10_000 || pauseMs < 0) {
      usage("REPEAT 1..10000 and PAUSE_MS >= 0");
    }
    List<Read> reads = new ArrayList<>();
    for (int i = 0; i < repeat; i++) {
      if (i > 0) {
        Thread.sleep(pauseMs);
      }
      reads.add(read.run());
    }
    List<Double> warm = new ArrayList<>();
    List<String> each = new ArrayList<>();
    long firstBad = -1;
    for (int i = 0; i < reads.size(); i++) {
      Read r = reads.get(i);
      if (i > 0 || reads.size() == 1) {
        warm.add(r.ms);
      }
      each.add(String.format(Locale.ROOT, "[%d,%.1f]", r.startEpochMs, r.ms));
      firstBad = firstBad >= 0 ? firstBad : r.firstBad;
    }
    warm.sort(null);
    return String.format(Locale.ROOT,
        "{\"ok\":%b,\"first_bad\":%d,\"bytes\":%d,\"ms\":%.1f,\"reads\":[%s]}",
        firstBad < 0, firstBad, reads.get(0).bytes, warm.get(warm.size() / 2),
        String.join(",", each));
  }

  private static Read readUnit(FileSystem fs, Path path, long size, long seed, int group,
      int index) throws IOException {
    ErasureCodingPolicy p = ((DistributedFileSystem) fs).getErasureCodingPolicy(path);
    if (p == null || index >= p.getNumDataUnits()) {
      usage(path + " has no data unit " + index + " (policy " + p + ")");
    }
    long cell = p.getCellSize();
    long stripe = cell * p.getNumDataUnits();
    List<LocatedBlock> blocks = ((DistributedFileSystem) fs).getClient()
        .getLocatedBlocks(path.toUri().getPath(), 0, size).getLocatedBlocks();
    if (group >= blocks.size()) {
      usage(path + " has " + blocks.size() + " block groups, not " + (group + 1));
    }
    LocatedBlock g = blocks.get(group);
    long groupEnd = g.getStartOffset() + g.getBlockSize();
    long epoch = System.currentTimeMillis();
    long start = System.nanoTime();
    long bytes = 0;
    long firstBad = -1;
    try (FSDataInputStream in = fs.open(path)) {
      for (long s = g.getStartOffset(); s < groupEnd && firstBad < 0; s += stripe) {
        long off = s + index * cell;
        int n = (int) Math.max(0, Math.min(cell, groupEnd - off));
        if (n == 0) {
          break;
        }
        byte[] b = new byte[n];
        in.readFully(off, b);
        bytes += n;
        firstBad = mismatch(b, content(seed, off, n), n, off);
      }
    }
    return new Read(epoch, bytes, firstBad, ms(start));
  }

  private static Read readRange(FileSystem fs, Path path, long size, long seed, long offset,
      int len) throws IOException {
    if (offset < 0 || len < 0 || offset + len > size) {
      usage("range " + offset + "+" + len + " outside a file of " + size + " bytes");
    }
    long epoch = System.currentTimeMillis();
    long start = System.nanoTime();
    byte[] b = new byte[len];
    try (FSDataInputStream in = fs.open(path)) {
      in.readFully(offset, b);
    }
    double ms = ms(start);
    return new Read(epoch, len, mismatch(b, content(seed, offset, len), len, offset), ms);
  }

  private static String locate(DistributedFileSystem fs, Path path) throws IOException {
    ErasureCodingPolicy p = fs.getErasureCodingPolicy(path);
    StringBuilder sb = new StringBuilder(String.format(Locale.ROOT,
        "{\"path\":\"%s\",\"policy\":%s,\"groups\":[", path,
        p == null ? "null" : "\"" + p.getName() + "\""));
    List<String> groups = new ArrayList<>();
    for (LocatedBlock lb : fs.getClient().getLocatedBlocks(path.toUri().getPath(), 0,
        Long.MAX_VALUE).getLocatedBlocks()) {
      List<String> units = new ArrayList<>();
      DatanodeInfo[] dns = lb.getLocations();
      for (int i = 0; i < dns.length; i++) {
        int index = lb instanceof LocatedStripedBlock
            ? ((LocatedStripedBlock) lb).getBlockIndices()[i] : 0;
        units.add(String.format(Locale.ROOT, "{\"index\":%d,\"block\":%d,\"dn\":\"%s\"}", index,
            lb.getBlock().getBlockId() + (lb instanceof LocatedStripedBlock ? index : 0),
            dns[i].getXferAddr()));
      }
      groups.add(String.format(Locale.ROOT,
          "{\"block\":%d,\"genstamp\":%d,\"bytes\":%d,\"offset\":%d,\"units\":[%s]}",
          lb.getBlock().getBlockId(), lb.getBlock().getGenerationStamp(),
          lb.getBlock().getNumBytes(), lb.getStartOffset(), String.join(",", units)));
    }
    return sb.append(String.join(",", groups)).append("]}").toString();
  }

  static long mismatch(byte[] got, byte[] want, int n, long base) {
    for (int i = 0; i < n; i++) {
      if (got[i] != want[i]) {
        return base + i;
      }
    }
    return -1;
  }

  private static double ms(long startNanos) {
    return (System.nanoTime() - startNanos) / 1e6;
  }

  private static long number(String s) {
    try {
      return Long.parseLong(s);
    } catch (NumberFormatException e) {
      usage("not a number: " + s);
      return 0;
    }
  }

  private static void need(String[] args, int n) {
    need(args, n, n);
  }

  private static void need(String[] args, int min, int max) {
    if (args.length < min || args.length > max) {
      usage(args[0] + " takes " + (min - 1) + (max > min ? ".." + (max - 1) : "")
          + " arguments, got " + (args.length - 1));
    }
  }

  private static void usage(String why) {
    PrintStream err = new PrintStream(System.err, true, StandardCharsets.UTF_8);
    err.println("netec-probe: " + why);
    err.println("usage: write|verify PATH SIZE SEED; locate PATH; read-unit PATH SIZE SEED GROUP"
        + " INDEX [REPEAT [PAUSE_MS]]; read-range PATH SIZE SEED OFFSET LEN [REPEAT [PAUSE_MS]]");
    System.exit(2);
  }
}
