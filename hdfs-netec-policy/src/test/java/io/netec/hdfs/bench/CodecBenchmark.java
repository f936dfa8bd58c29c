package io.netec.hdfs.bench;

import io.netec.hdfs.codec.CoderBackend;
import io.netec.hdfs.codec.IsalNative;
import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import org.apache.hadoop.io.erasurecode.ErasureCoderOptions;
import org.apache.hadoop.io.erasurecode.rawcoder.NetecRawDecoder;
import org.apache.hadoop.io.erasurecode.rawcoder.NetecRawEncoder;
import org.apache.hadoop.io.erasurecode.rawcoder.RSRawDecoder;
import org.apache.hadoop.io.erasurecode.rawcoder.RSRawEncoder;
import org.apache.hadoop.io.erasurecode.rawcoder.RawErasureDecoder;
import org.apache.hadoop.io.erasurecode.rawcoder.RawErasureEncoder;

/**
 * Encode and decode throughput of netec_native, netec_java, Hadoop's rs_java and raw ISA-L
 * called from C (native/bench/isal_bench), measured in one run, with ratios. Throughput is data
 * taken in per second: k cells per encode, k survivor cells per decode of one lost data cell.
 *
 * <p>Usage: CodecBenchmark [seconds per measurement, default 1.0] [path to isal_bench]
 */
public final class CodecBenchmark {
  private static final int[][] SHAPES = {{6, 3}, {10, 4}};
  private static final int[] CELLS = {64 * 1024, 1024 * 1024};
  /** Each figure is the best of this many timed rounds, here and in isal_bench. */
  private static final int ROUNDS = 3;

  private interface Op {
    void run() throws Exception;
  }

  public static void main(String[] args) throws Exception {
    double secs = args.length > 0 ? Double.parseDouble(args[0]) : 1.0;
    String cBench = args.length > 1 ? args[1]
        : System.getProperty("netec.native.build", "hdfs-netec-policy/target/native-build")
            + "/isal_bench";
    if (!IsalNative.isAvailable()) {
      throw new IllegalStateException("native coder unavailable: "
          + IsalNative.unavailableReason());
    }
    System.out.printf(Locale.ROOT, "# Codec throughput, GB/s of data in (1 core, best of %d rounds of "
        + "%.1f s; ISA-L %s)%n%n", ROUNDS, secs, IsalNative.isalLibrary());
    System.out.println("| shape | cell | op | ISA-L (C) | netec_native | netec_java | rs_java |"
        + " native/ISA-L | native/rs_java |");
    System.out.println("|---|---|---|---|---|---|---|---|---|");
    for (int[] s : SHAPES) {
      for (int cell : CELLS) {
        Map<String, Double> c = isalFromC(cBench, s[0], s[1], cell, secs);
        for (String op : new String[] {"encode", "decode"}) {
          double nat = measure(op, s[0], s[1], cell, CoderBackend.ISAL, secs);
          double java = measure(op, s[0], s[1], cell, CoderBackend.JAVA, secs);
          double rs = measure(op, s[0], s[1], cell, null, secs);
          double isal = c.get(op);
          System.out.printf(Locale.ROOT,
              "| RS(%d,%d) | %d KiB | %s | %.2f | %.2f | %.2f | %.2f | %.2fx | %.1fx |%n",
              s[0], s[1], cell / 1024, op, isal, nat, java, rs, nat / isal, nat / rs);
        }
      }
    }
  }

  /** backend null = Hadoop's pure-Java rs coder. */
  private static double measure(String op, int k, int m, int cell, CoderBackend backend,
      double secs) throws Exception {
    ErasureCoderOptions opts = new ErasureCoderOptions(k, m);
    boolean direct = backend == CoderBackend.ISAL; // what each coder asks HDFS for
    ByteBuffer[] units = new ByteBuffer[k + m];
    Random rnd = new Random(1);
    for (int i = 0; i < k + m; i++) {
      byte[] b = new byte[cell];
      rnd.nextBytes(b);
      units[i] = direct ? ByteBuffer.allocateDirect(cell).put(b) : ByteBuffer.wrap(b);
      units[i].clear();
    }
    Op work;
    if (op.equals("encode")) {
      RawErasureEncoder enc = backend == null ? new RSRawEncoder(opts)
          : new NetecRawEncoder(opts, backend, "bench");
      ByteBuffer[] in = new ByteBuffer[k];
      ByteBuffer[] out = new ByteBuffer[m];
      for (int i = 0; i < k; i++) {
        in[i] = units[i];
      }
      for (int i = 0; i < m; i++) {
        out[i] = units[k + i];
      }
      work = () -> {
        for (ByteBuffer b : in) {
          b.clear(); // encode() moves input positions; clear() costs no allocation
        }
        enc.encode(in, out);
      };
    } else {
      RawErasureDecoder dec = backend == null ? new RSRawDecoder(opts)
          : new NetecRawDecoder(opts, backend, "bench");
      // As isal_bench does: rebuild unit 0 in place from units 1..k (same memory layout).
      ByteBuffer lost = units[0];
      ByteBuffer[] in = new ByteBuffer[k + m];
      ByteBuffer[] out = new ByteBuffer[1];
      int[] erased = {0};
      for (int i = 1; i <= k; i++) {
        in[i] = units[i];
      }
      out[0] = lost;
      work = () -> {
        for (int i = 1; i <= k; i++) {
          in[i].clear();
        }
        dec.decode(in, erased, out);
      };
    }
    run(work, Math.min(0.3, secs / 3)); // warm-up: JIT and caches
    long best = 0;
    for (int round = 0; round < ROUNDS; round++) {
      best = Math.max(best, run(work, secs));
    }
    return best * (double) k * cell / (secs * 1e9);
  }

  private static long run(Op op, double secs) throws Exception {
    long end = System.nanoTime() + (long) (secs * 1e9);
    long calls = 0;
    while (System.nanoTime() < end) {
      op.run();
      calls++;
    }
    return calls;
  }

  private static Map<String, Double> isalFromC(String exe, int k, int m, int cell, double secs)
      throws Exception {
    if (!new File(exe).canExecute()) {
      throw new IllegalStateException(exe + " not found: build with mvn package first");
    }
    Process p = new ProcessBuilder(exe, "" + k, "" + m, "" + cell, "" + secs, "" + ROUNDS)
        .redirectErrorStream(true).start();
    Map<String, Double> r = new HashMap<>();
    try (BufferedReader in = new BufferedReader(
        new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
      String line;
      while ((line = in.readLine()) != null) {
        String[] f = line.trim().split("\\s+");
        if (f.length == 2) {
          r.put(f[0], Double.parseDouble(f[1]));
        }
      }
    }
    if (p.waitFor() != 0 || !r.containsKey("encode") || !r.containsKey("decode")) {
      throw new IllegalStateException(exe + " failed: " + r);
    }
    return r;
  }
}
