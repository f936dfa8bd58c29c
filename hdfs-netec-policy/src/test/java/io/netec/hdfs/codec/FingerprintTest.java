package io.netec.hdfs.codec;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.Random;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * The fingerprint's properties that the proof of every rebuild rests on: GF(2^8)-linearity (so
 * a rebuilt unit's fingerprint is the decode of the survivors'), the same value from ISA-L and
 * from Java and whatever the pieces, and every change caught: single bits anywhere, changes
 * that cancel under any fixed coefficients, changes in every chunk, zeros extended.
 */
class FingerprintTest {
  private static final Random RANDOM = new Random(2026);

  private static byte[] key() {
    byte[] k = new byte[Fingerprint.KEY_BYTES];
    RANDOM.nextBytes(k);
    return k;
  }

  private static byte[] bytes(int n) {
    byte[] b = new byte[n];
    RANDOM.nextBytes(b);
    return b;
  }

  private static byte[] fp(byte[] key, byte[] b, boolean isal) {
    Fingerprint f = new Fingerprint(key, isal);
    f.update(0, b, 0, b.length);
    return f.finish();
  }

  /**
   * Known answers, pinned when the function was defined: a reader and its survivors may run
   * different builds (a rolling upgrade), so a rewrite of the computation (finish's grouping
   * by value) must give the same bytes, not merely agree with itself.
   */
  @Test
  void knownAnswers() {
    byte[] key = new byte[Fingerprint.KEY_BYTES];
    for (int i = 0; i < key.length; i++) {
      key[i] = (byte) (17 * i + 3);
    }
    Random r = new Random(5);
    byte[] data = new byte[100_000];
    r.nextBytes(data);
    for (boolean isal : new boolean[] {false, true}) {
      if (isal && !IsalNative.isAvailable()) {
        continue;
      }
      assertEquals(KNOWN_100K, io.netec.hdfs.switchroute.wire.Hex.encode(fp(key, data, isal)));
      assertEquals(KNOWN_1, io.netec.hdfs.switchroute.wire.Hex.encode(fp(key, new byte[] {(byte) 0xA5}, isal)));
      assertEquals(KNOWN_EMPTY, io.netec.hdfs.switchroute.wire.Hex.encode(fp(key, new byte[0], isal)));
    }
  }

  private static final String KNOWN_100K = "0e1ccce661e80bae";
  private static final String KNOWN_1 = "d021308f167d7a3f";
  private static final String KNOWN_EMPTY = "0000000000000000";

  @Test
  void linearOverTheField() {
    byte[] key = key();
    for (int n : new int[] {1, 100, 4096, 4097, 65536 + 13, 300_000}) {
      byte[] x = bytes(n);
      byte[] y = bytes(n);
      int c = 1 + RANDOM.nextInt(255);
      byte[] cxy = new byte[n];
      for (int i = 0; i < n; i++) {
        cxy[i] = (byte) (GaloisField.mul(c, x[i]) ^ y[i]);
      }
      byte[] expected = Fingerprint.combine(new byte[] {(byte) c, 1},
          new byte[][] {Fingerprint.of(key, x, 0, n), Fingerprint.of(key, y, 0, n)});
      assertArrayEquals(expected, Fingerprint.of(key, cxy, 0, n), "n=" + n);
    }
  }

  @Test
  void theDecodeOfSurvivorsFingerprintsIsTheRebuiltUnits() {
    // RS(6,3): fingerprints of six survivors combined by a decode row = the lost unit's
    int k = 6;
    int m = 3;
    int unit = 3 * 4096 + 777;
    byte[][] units = new byte[k + m][unit];
    for (int i = 0; i < k; i++) {
      RANDOM.nextBytes(units[i]);
    }
    byte[][] parity = new byte[m][];
    System.arraycopy(units, k, parity, 0, m);
    MatrixAccumulator enc = MatrixAccumulator.java(k, m, RsMatrix.parityRows(k, m));
    for (int j = 0; j < k; j++) {
      enc.accumulate(j, units[j], 0, unit, parity, new int[m]);
    }
    int[] survivors = {0, 2, 3, 5, 6, 8};
    int[] erased = {1, 7};
    byte[] rows = RsMatrix.decodeRows(k, m, survivors, erased);
    byte[] key = key();
    byte[][] fps = new byte[k][];
    for (int i = 0; i < k; i++) {
      fps[i] = Fingerprint.of(key, units[survivors[i]], 0, unit);
    }
    for (int r = 0; r < erased.length; r++) {
      byte[] row = java.util.Arrays.copyOfRange(rows, r * k, (r + 1) * k);
      assertArrayEquals(Fingerprint.of(key, units[erased[r]], 0, unit),
          Fingerprint.combine(row, fps));
    }
  }

  @Test
  void isalAndJavaAndAnyPiecesAgree() {
    Assumptions.assumeTrue(IsalNative.isAvailable(), "ISA-L not loaded");
    byte[] key = key();
    byte[] x = bytes(200_003);
    byte[] whole = fp(key, x, false);
    assertArrayEquals(whole, fp(key, x, true));
    for (boolean isal : new boolean[] {false, true}) {
      Fingerprint f = new Fingerprint(key, isal);
      // odd pieces, out of order, heap and direct
      int[] cuts = {0, 1, 4095, 4096, 9000, 65536, 65537, 150_000, x.length};
      for (int i = cuts.length - 2; i >= 0; i--) {
        int off = cuts[i];
        int len = cuts[i + 1] - off;
        ByteBuffer b = i % 2 == 0 ? ByteBuffer.allocateDirect(len) : ByteBuffer.allocate(len);
        b.put(x, off, len).flip();
        f.update(off, b);
        assertTrue(b.position() == 0, "the buffer is not moved");
      }
      assertArrayEquals(whole, f.finish(), "pieces, isal=" + isal);
    }
  }

  @Test
  void zerosPastTheEndNeedNotBeFed() {
    byte[] key = key();
    byte[] x = bytes(5000);
    byte[] padded = java.util.Arrays.copyOf(x, 20_000);
    assertArrayEquals(Fingerprint.of(key, padded, 0, padded.length),
        Fingerprint.of(key, x, 0, x.length));
  }

  @Test
  void everySingleBitFlipIsCaught() {
    byte[] key = key();
    byte[] x = bytes(3 * 4096 + 5);
    byte[] good = Fingerprint.of(key, x, 0, x.length);
    for (int i = 0; i < x.length; i += 7) {
      for (int bit = 0; bit < 8; bit += 3) {
        x[i] ^= (byte) (1 << bit);
        assertFalse(Fingerprint.matches(good, Fingerprint.of(key, x, 0, x.length)),
            "flip of bit " + bit + " of byte " + i);
        x[i] ^= (byte) (1 << bit);
      }
    }
  }

  @Test
  void changesThatCancelUnderFixedCoefficientsAreCaught() {
    // The same change in two chunks, a change and its double, swapped bytes, a change in every
    // chunk: each would cancel under coefficients that repeat; under a fresh key none does.
    byte[] x = bytes(16 * 4096 * 3);
    for (int trial = 0; trial < 200; trial++) {
      byte[] key = key();
      byte[] good = Fingerprint.of(key, x, 0, x.length);
      byte[] y = x.clone();
      int p = RANDOM.nextInt(4096);
      int d = 1 + RANDOM.nextInt(255);
      switch (trial % 4) {
        case 0:
          y[p] ^= (byte) d;
          y[4096 * 17 + p] ^= (byte) d;
          break;
        case 1:
          y[p] ^= (byte) d;
          y[p + 4096] ^= (byte) GaloisField.mul(2, d);
          break;
        case 2: {
          byte t = y[p];
          y[p] = y[p + 1];
          y[p + 1] = t;
          y[p + 2] ^= 1;
          break;
        }
        default:
          for (int c = 0; c < x.length / 4096; c++) {
            y[c * 4096 + p] ^= (byte) d;
          }
      }
      assertFalse(Fingerprint.matches(good, Fingerprint.of(key, y, 0, y.length)),
          "trial " + trial);
    }
  }

  @Test
  void randomChangesAreCaught() {
    byte[] key = key();
    byte[] x = bytes(70_000);
    byte[] good = Fingerprint.of(key, x, 0, x.length);
    for (int trial = 0; trial < 2000; trial++) {
      byte[] y = x.clone();
      int changes = 1 + RANDOM.nextInt(50);
      for (int c = 0; c < changes; c++) {
        y[RANDOM.nextInt(y.length)] ^= (byte) (1 + RANDOM.nextInt(255));
      }
      if (java.util.Arrays.equals(x, y)) {
        continue;
      }
      assertFalse(Fingerprint.matches(good, Fingerprint.of(key, y, 0, y.length)),
          "trial " + trial);
    }
  }

  @Test
  void keysMatter() {
    byte[] x = bytes(9999);
    assertFalse(Fingerprint.matches(Fingerprint.of(key(), x, 0, x.length),
        Fingerprint.of(key(), x, 0, x.length)));
  }
}
