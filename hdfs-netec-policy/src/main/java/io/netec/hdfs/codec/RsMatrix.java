package io.netec.hdfs.codec;

import java.util.Arrays;

/**
 * The Reed-Solomon matrices of Hadoop's {@code rs} codec: a systematic Cauchy matrix (ISA-L's
 * {@code gf_gen_cauchy1_matrix}, Hadoop's {@code RSUtil.genCauchyMatrix}) and the decode rows
 * derived from it. Matrices are row-major byte arrays, rows x k.
 */
public final class RsMatrix {
  private RsMatrix() {
  }

  /** The (k+m) x k encode matrix: identity on top, then a[i][j] = 1/(i ^ j) for parity row i. */
  public static byte[] encodeMatrix(int k, int m) {
    checkShape(k, m);
    byte[] a = new byte[(k + m) * k];
    for (int i = 0; i < k; i++) {
      a[i * k + i] = 1;
    }
    for (int i = k; i < k + m; i++) {
      for (int j = 0; j < k; j++) {
        a[i * k + j] = (byte) GaloisField.inverse(i ^ j);
      }
    }
    return a;
  }

  /** The m x k rows that compute the parity units from the k data units. */
  public static byte[] parityRows(int k, int m) {
    byte[] a = encodeMatrix(k, m);
    return Arrays.copyOfRange(a, k * k, (k + m) * k);
  }

  /**
   * Rows that rebuild units {@code erased} (any order, data or parity) from the units
   * {@code survivors} (exactly k distinct indices, in the order their buffers will be passed).
   * Row r of the result rebuilds {@code erased[r]}.
   */
  public static byte[] decodeRows(int k, int m, int[] survivors, int[] erased) {
    checkShape(k, m);
    if (survivors.length != k) {
      throw new IllegalArgumentException("need exactly k=" + k + " survivors, got "
          + Arrays.toString(survivors));
    }
    boolean[] seen = new boolean[k + m];
    for (int s : survivors) {
      checkIndex(s, k, m, "survivor");
      if (seen[s]) {
        throw new IllegalArgumentException("duplicate survivor index " + s);
      }
      seen[s] = true;
    }
    for (int e : erased) {
      checkIndex(e, k, m, "erased");
      if (seen[e]) {
        throw new IllegalArgumentException("index " + e + " is both a survivor and erased");
      }
    }
    byte[] enc = encodeMatrix(k, m);
    byte[] sub = new byte[k * k];
    for (int r = 0; r < k; r++) {
      System.arraycopy(enc, survivors[r] * k, sub, r * k, k);
    }
    byte[] inv = invert(sub, k);
    byte[] rows = new byte[erased.length * k];
    for (int r = 0; r < erased.length; r++) {
      int e = erased[r];
      // unit e = enc[e] . data, and data = inv . survivors, so its row is enc[e] . inv.
      for (int j = 0; j < k; j++) {
        int acc = 0;
        for (int t = 0; t < k; t++) {
          acc ^= GaloisField.mul(enc[e * k + t], inv[t * k + j]);
        }
        rows[r * k + j] = (byte) acc;
      }
    }
    return rows;
  }

  /** Gauss-Jordan inversion of an n x n matrix; throws if it is singular. */
  static byte[] invert(byte[] in, int n) {
    byte[] a = in.clone();
    byte[] out = new byte[n * n];
    for (int i = 0; i < n; i++) {
      out[i * n + i] = 1;
    }
    for (int col = 0; col < n; col++) {
      int pivot = col;
      while (pivot < n && a[pivot * n + col] == 0) {
        pivot++;
      }
      if (pivot == n) {
        throw new ArithmeticException("singular matrix");
      }
      if (pivot != col) {
        swapRows(a, n, pivot, col);
        swapRows(out, n, pivot, col);
      }
      int scale = GaloisField.inverse(a[col * n + col]);
      for (int j = 0; j < n; j++) {
        a[col * n + j] = (byte) GaloisField.mul(a[col * n + j], scale);
        out[col * n + j] = (byte) GaloisField.mul(out[col * n + j], scale);
      }
      for (int r = 0; r < n; r++) {
        int f = a[r * n + col] & 0xff;
        if (r == col || f == 0) {
          continue;
        }
        for (int j = 0; j < n; j++) {
          a[r * n + j] ^= (byte) GaloisField.mul(f, a[col * n + j]);
          out[r * n + j] ^= (byte) GaloisField.mul(f, out[col * n + j]);
        }
      }
    }
    return out;
  }

  private static void swapRows(byte[] a, int n, int r1, int r2) {
    for (int j = 0; j < n; j++) {
      byte t = a[r1 * n + j];
      a[r1 * n + j] = a[r2 * n + j];
      a[r2 * n + j] = t;
    }
  }

  private static void checkShape(int k, int m) {
    // GF(2^8) Cauchy rows stay distinct while k+m <= 256; HDFS itself caps k+m at 16.
    if (k < 1 || m < 0 || k + m > 256) {
      throw new IllegalArgumentException("invalid RS shape k=" + k + " m=" + m);
    }
  }

  private static void checkIndex(int i, int k, int m, String what) {
    if (i < 0 || i >= k + m) {
      throw new IllegalArgumentException(what + " index " + i + " outside 0.." + (k + m - 1));
    }
  }
}
