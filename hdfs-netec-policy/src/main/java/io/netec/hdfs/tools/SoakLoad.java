package io.netec.hdfs.tools;

import java.io.BufferedReader;
import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.CreateFlag;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hdfs.DistributedFileSystem;
import org.apache.hadoop.hdfs.protocol.ErasureCodingPolicy;
import org.apache.hadoop.hdfs.tools.DebugAdmin;

/**
 * The client side of the testbed's soak (testbed/netec_testbed/soak.py): a load that writes,
 * reads and deletes files of known content while faults are injected, and the final check of
 * every file it kept.
 *
 * <p>The load runs one thread per client ({@code plugin}: the configured file system, the
 * plugin's; {@code hadoop}: Hadoop's DistributedFileSystem), each drawing its operations from
 * its own seed: write a file of a size drawn from sizes that matter to striping (empty, one
 * byte, a part of a cell, a stripe and a bit, one and several block groups, a short last
 * group) into one of the directories given (one per policy); read a file it wrote whole, or
 * read a few random ranges of it (positional reads, degraded when a holder is down), every byte
 * compared; append to a file (in a new block group, the only append Hadoop allows on
 * erasure-coded files, continuing the same content); delete a file. Each operation is one JSON line in the journal, written as it ends,
 * so that the journal says exactly which files exist and what they hold: a file counts as
 * written only once its stream closed without error.
 *
 * <p>The check reads every file the journal left (path, size, seed per line) through the
 * plugin's client and through Hadoop's, and runs Hadoop's {@code hdfs debug verifyEC} on it
 * (every internal block's parity recomputed and compared), all in one JVM.
 */
final class SoakLoad {
  /** Files a thread keeps at most: past this, it deletes before it writes. */
  static final int MAX_FILES = 10;

  private SoakLoad() {
  }

  /** One thread's files: path, size, seed. */
  private static final class Kept {
    final Path path;
    final long size;
    final long seed;

    Kept(Path path, long size, long seed) {
      this.path = path;
      this.size = size;
      this.seed = seed;
    }
  }

  /** Runs the load until {@code stop} exists; returns one JSON line of totals. */
  static String load(Configuration base, String[] dirs, long seed, File stop, File journal,
      String[] clients) throws Exception {
    List<Thread> threads = new ArrayList<>();
    long[][] totals = new long[clients.length][];
    try (PrintStream out = new PrintStream(new FileOutputStream(journal, true), true, "UTF-8")) {
      for (int i = 0; i < clients.length; i++) {
        final int n = i;
        String client = clients[i];
        Thread t = new Thread(() -> totals[n] = runClient(base, client, dirs,
            seed * 1_000_003L + n, stop, out), "soak-" + client);
        t.start();
        threads.add(t);
      }
      for (Thread t : threads) {
        t.join();
      }
    }
    long ops = 0;
    long wrong = 0;
    for (long[] t : totals) {
      ops += t == null ? 0 : t[0];
      wrong += t == null ? 1 : t[1];
    }
    return String.format(Locale.ROOT, "{\"ok\":%b,\"ops\":%d,\"wrong\":%d}", wrong == 0, ops,
        wrong);
  }

  /** One client's loop; {ops, wrong reads}. */
  private static long[] runClient(Configuration base, String client, String[] dirs, long seed,
      File stop, PrintStream journal) {
    Random rnd = new Random(seed);
    List<Kept> kept = new ArrayList<>();
    long ops = 0;
    long wrong = 0;
    int made = 0;
    try (FileSystem fs = FileSystem.newInstance(new Path(dirs[0]).toUri(),
        ReadsBench.clientConf(base, client.equals("plugin") ? "cost" : "hadoop"))) {
      while (!stop.exists()) {
        int dice = rnd.nextInt(100);
        String op;
        Kept f;
        long t0 = System.currentTimeMillis();
        long start = System.nanoTime();
        String error = null;
        long bad = -1;
        if (kept.isEmpty() || (dice < 35 && kept.size() < MAX_FILES)) {
          String dir = dirs[rnd.nextInt(dirs.length)];
          f = new Kept(new Path(dir, client + "-" + seed % 1000 + "-" + made++), 0,
              rnd.nextLong() & Long.MAX_VALUE);
          op = "write";
          try {
            f = new Kept(f.path, size(fs, new Path(dir), rnd), f.seed);
            write(fs, f);
            kept.add(f);
          } catch (IOException | RuntimeException e) {
            error = e.toString();
            deleteQuietly(fs, f.path); // never acknowledged: not a file of the soak
          }
        } else if (dice < 45) {
          // Appending continues the same content: the file stays content(seed, 0..size).
          int i = rnd.nextInt(kept.size());
          Kept old = kept.get(i);
          f = old;
          op = "append";
          try {
            f = new Kept(old.path, old.size + size(fs, old.path.getParent(), rnd), old.seed);
            append(fs, old, f.size);
            kept.set(i, f);
          } catch (IOException | RuntimeException e) {
            error = e.toString();
            kept.remove(i); // how much of it was appended is unknown: no longer the soak's
            deleteQuietly(fs, f.path);
          }
        } else if (dice < 85 || kept.size() < MAX_FILES / 2) {
          f = kept.get(rnd.nextInt(kept.size()));
          boolean whole = rnd.nextBoolean();
          op = whole ? "read" : "pread";
          try {
            bad = whole ? readWhole(fs, f) : readRanges(fs, f, rnd);
          } catch (IOException | RuntimeException e) {
            error = e.toString();
          }
        } else {
          f = kept.remove(rnd.nextInt(kept.size()));
          op = "delete";
          try {
            if (!fs.delete(f.path, false)) {
              error = "delete returned false";
            }
          } catch (IOException | RuntimeException e) {
            error = e.toString();
          }
          if (error != null && stillThere(fs, f.path)) {
            kept.add(f); // still there: it stays the soak's to check
          } else {
            error = null; // gone: the NameNode deleted it, whatever the call said
          }
        }
        ops++;
        wrong += bad >= 0 ? 1 : 0;
        journal.println(String.format(Locale.ROOT,
            "{\"t\":%d,\"client\":\"%s\",\"op\":\"%s\",\"path\":\"%s\",\"size\":%d,"
                + "\"seed\":%d,\"ms\":%.1f,\"ok\":%b,\"first_bad\":%d,\"error\":%s}",
            t0, client, op, f.path.toUri().getPath(), f.size, f.seed,
            (System.nanoTime() - start) / 1e6, error == null && bad < 0, bad,
            error == null ? "null" : quote(error)));
      }
    } catch (IOException e) {
      journal.println(String.format(Locale.ROOT,
          "{\"t\":%d,\"client\":\"%s\",\"op\":\"open\",\"ok\":false,\"error\":%s}",
          System.currentTimeMillis(), client, quote(e.toString())));
      wrong++;
    }
    return new long[] {ops, wrong};
  }

  /** A size that matters to the directory's striping, drawn from {@code rnd}. */
  private static long size(FileSystem fs, Path dir, Random rnd) throws IOException {
    ErasureCodingPolicy p = ((DistributedFileSystem) fs).getErasureCodingPolicy(dir);
    long cell = p == null ? 1 << 20 : p.getCellSize();
    int k = p == null ? 1 : p.getNumDataUnits();
    long group = fs.getDefaultBlockSize(dir) * k;
    long[] sizes = {0, 1, cell / 3, cell * k + 7, group - 1, group, group + cell + 13,
        2 * group + group / 3};
    return sizes[rnd.nextInt(sizes.length)];
  }

  private static void write(FileSystem fs, Kept f) throws IOException {
    try (OutputStream o = fs.create(f.path, false)) {
      for (long off = 0; off < f.size; off += 1 << 20) {
        o.write(NetecProbe.content(f.seed, off, (int) Math.min(1 << 20, f.size - off)));
      }
    }
  }

  /**
   * Appends bytes [f.size, newSize) of its content to {@code f}, in a new block group (Hadoop
   * appends to an erasure-coded file only with NEW_BLOCK).
   */
  private static void append(FileSystem fs, Kept f, long newSize) throws IOException {
    try (OutputStream o = ((DistributedFileSystem) fs).append(f.path,
        EnumSet.of(CreateFlag.APPEND, CreateFlag.NEW_BLOCK), 1 << 16, null)) {
      for (long off = f.size; off < newSize; off += 1 << 20) {
        o.write(NetecProbe.content(f.seed, off, (int) Math.min(1 << 20, newSize - off)));
      }
    }
  }

  /** The first differing byte of the whole file (its length first), -1 when equal. */
  private static long readWhole(FileSystem fs, Kept f) throws IOException {
    long length = fs.getFileStatus(f.path).getLen();
    if (length != f.size) {
      return Math.min(length, f.size);
    }
    byte[] buf = new byte[1 << 20];
    try (FSDataInputStream in = fs.open(f.path)) {
      for (long off = 0; off < f.size; off += buf.length) {
        int n = (int) Math.min(buf.length, f.size - off);
        in.readFully(buf, 0, n);
        long bad = NetecProbe.mismatch(buf, NetecProbe.content(f.seed, off, n), n, off);
        if (bad >= 0) {
          return bad;
        }
      }
    }
    return -1;
  }

  /** Three positional reads of random ranges (up to 1 MiB); the first differing byte or -1. */
  private static long readRanges(FileSystem fs, Kept f, Random rnd) throws IOException {
    if (f.size == 0) {
      return readWhole(fs, f);
    }
    try (FSDataInputStream in = fs.open(f.path)) {
      for (int i = 0; i < 3; i++) {
        long at = (rnd.nextLong() & Long.MAX_VALUE) % f.size;
        int len = (int) Math.min(f.size - at, 1 + rnd.nextInt(1 << 20));
        byte[] got = new byte[len];
        in.readFully(at, got, 0, len);
        long bad = NetecProbe.mismatch(got, NetecProbe.content(f.seed, at, len), len, at);
        if (bad >= 0) {
          return bad;
        }
      }
    }
    return -1;
  }

  /** Whether {@code p} exists (true when that cannot be told: it is then kept and checked). */
  private static boolean stillThere(FileSystem fs, Path p) {
    try {
      return fs.exists(p);
    } catch (IOException | RuntimeException e) {
      return true;
    }
  }

  private static void deleteQuietly(FileSystem fs, Path p) {
    try {
      fs.delete(p, false);
    } catch (IOException | RuntimeException e) {
      // the check lists what is left
    }
  }

  /**
   * Every file of {@code list} (lines "path size seed") read through the plugin's client and
   * Hadoop's and checked by {@code hdfs debug verifyEC}; one JSON line: files, bytes, and each
   * failure by path.
   */
  static String check(Configuration base, File list) throws Exception {
    PrintStream stdout = System.out;
    System.setOut(System.err); // verifyEC prints its findings: the answer is one JSON line
    try {
      return checkAll(base, list);
    } finally {
      System.setOut(stdout);
    }
  }

  private static String checkAll(Configuration base, File list) throws Exception {
    List<String> bad = new ArrayList<>();
    long files = 0;
    long bytes = 0;
    try (FileSystem plugin = FileSystem.newInstance(FileSystem.getDefaultUri(base),
        ReadsBench.clientConf(base, "cost"));
        FileSystem stock = FileSystem.newInstance(FileSystem.getDefaultUri(base),
            ReadsBench.clientConf(base, "hadoop"));
        BufferedReader r = new BufferedReader(new InputStreamReader(
            Files.newInputStream(list.toPath()), StandardCharsets.UTF_8))) {
      DebugAdmin debug = new DebugAdmin(new Configuration(stock.getConf()));
      for (String line; (line = r.readLine()) != null; ) {
        String[] w = line.trim().split("\\s+");
        if (w.length != 3) {
          continue;
        }
        Kept f = new Kept(new Path(w[0]), Long.parseLong(w[1]), Long.parseLong(w[2]));
        files++;
        bytes += f.size;
        for (FileSystem fs : new FileSystem[] {plugin, stock}) {
          String who = fs == plugin ? "plugin" : "hadoop";
          try {
            long at = readWhole(fs, f);
            if (at >= 0) {
              bad.add(quote(f.path + ": differs at byte " + at + " through " + who
                  + "'s client"));
            }
          } catch (IOException | RuntimeException e) {
            bad.add(quote(f.path + ": read through " + who + "'s client failed: " + e));
          }
        }
        if (f.size > 0) {
          int rc = debug.run(new String[] {"verifyEC", "-file", f.path.toUri().getPath()});
          if (rc != 0) {
            bad.add(quote(f.path + ": hdfs debug verifyEC exited " + rc));
          }
        }
      }
    }
    return String.format(Locale.ROOT, "{\"ok\":%b,\"files\":%d,\"bytes\":%d,\"bad\":%s}",
        bad.isEmpty(), files, bytes, bad);
  }

  /** {@code s} as a JSON string. */
  static String quote(String s) {
    StringBuilder b = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      if (c == '"' || c == '\\') {
        b.append('\\').append(c);
      } else if (c < 0x20) {
        b.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
      } else {
        b.append(c);
      }
    }
    return b.append('"').toString();
  }
}
