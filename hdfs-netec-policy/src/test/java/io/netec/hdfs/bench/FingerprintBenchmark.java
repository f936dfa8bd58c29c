package io.netec.hdfs.bench;

import io.netec.hdfs.codec.Fingerprint;
import io.netec.hdfs.codec.IsalNative;
import java.nio.ByteBuffer;
import java.util.Locale;
import java.util.Random;

/**
 * The proof's fingerprint alone, one thread: GB/s of input through {@link Fingerprint} fed in
 * 64 KiB pieces (what a survivor's proof read and a rebuilding node's writer feed), heap and
 * direct buffers, ISA-L and Java; best of {@code -Drounds=} (default 7) passes over 256 MiB
 * after warm-ups. Also the cost of finishing one fingerprint (its fixed part).
 */
public final class FingerprintBenchmark {
  private static final int TOTAL = 256 << 20;
  private static final int PIECE = 64 << 10;
  private static final int ROUNDS = Integer.getInteger("rounds", 7);

  public static void main(String[] args) {
    byte[] data = new byte[TOTAL];
    new Random(1).nextBytes(data);
    ByteBuffer direct = ByteBuffer.allocateDirect(TOTAL);
    direct.put(data).flip();
    byte[] key = new byte[Fingerprint.KEY_BYTES];
    System.out.printf(Locale.ROOT, "# Fingerprint, one thread, %d KiB pieces, best of %d passes "
        + "over %d MiB%n%n", PIECE >> 10, ROUNDS, TOTAL >> 20);
    System.out.println("| coder | buffer | GB/s | CPU s/GiB | finish µs |");
    System.out.println("|---|---|---|---|---|");
    for (boolean isal : IsalNative.isAvailable() ? new boolean[] {true, false}
        : new boolean[] {false}) {
      for (boolean heap : new boolean[] {true, false}) {
        double best = 0;
        for (int r = 0; r < ROUNDS + 2; r++) {
          long t0 = System.nanoTime();
          Fingerprint f = new Fingerprint(key, isal);
          for (int off = 0; off < TOTAL; off += PIECE) {
            f.update(off, heap ? ByteBuffer.wrap(data, off, PIECE)
                : direct.duplicate().position(off).limit(off + PIECE));
          }
          f.finish();
          double gbs = TOTAL / ((System.nanoTime() - t0) / 1e9) / 1e9;
          best = r >= 2 ? Math.max(best, gbs) : best;
        }
        long t0 = System.nanoTime();
        for (int i = 0; i < 50; i++) {
          new Fingerprint(key, isal).finish();
        }
        double finishUs = (System.nanoTime() - t0) / 50 / 1e3;
        System.out.printf(Locale.ROOT, "| %s | %s | %.2f | %.3f | %.0f |%n", isal ? "isal" : "java",
            heap ? "heap" : "direct", best, (1 << 30) / (best * 1e9), finishUs);
      }
    }
  }
}
