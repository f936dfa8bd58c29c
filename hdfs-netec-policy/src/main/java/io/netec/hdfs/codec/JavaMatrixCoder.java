package io.netec.hdfs.codec;

import java.nio.ByteBuffer;

/** Pure-Java table-lookup coder: one 256-byte multiply table per matrix entry. */
public final class JavaMatrixCoder implements MatrixCoder {
  /** Work in blocks that keep one output block and one input block in L1. */
  private static final int BLOCK = 8192;

  private final int k;
  private final int rows;
  private final byte[][] tables; // [r*k+j] -> multiply-by-M[r][j] table

  public JavaMatrixCoder(int k, int rows, byte[] matrix) {
    if (matrix.length != k * rows) {
      throw new IllegalArgumentException("matrix has " + matrix.length + " entries, want "
          + k * rows);
    }
    this.k = k;
    this.rows = rows;
    this.tables = new byte[k * rows][];
    for (int i = 0; i < matrix.length; i++) {
      tables[i] = GaloisField.mulTable(matrix[i]);
    }
  }

  @Override
  public int k() {
    return k;
  }

  @Override
  public int rows() {
    return rows;
  }

  @Override
  public String name() {
    return "java";
  }

  @Override
  public void code(int len, byte[][] in, int[] inOff, byte[][] out, int[] outOff) {
    for (int start = 0; start < len; start += BLOCK) {
      int n = Math.min(BLOCK, len - start);
      for (int r = 0; r < rows; r++) {
        byte[] o = out[r];
        int oo = outOff[r] + start;
        for (int j = 0; j < k; j++) {
          byte[] t = tables[r * k + j];
          byte[] s = in[j];
          int so = inOff[j] + start;
          if (j == 0) {
            for (int x = 0; x < n; x++) {
              o[oo + x] = t[s[so + x] & 0xff];
            }
          } else {
            for (int x = 0; x < n; x++) {
              o[oo + x] ^= t[s[so + x] & 0xff];
            }
          }
        }
      }
    }
  }

  @Override
  public void code(int len, ByteBuffer[] in, ByteBuffer[] out) {
    Buffers.checkRemaining(len, k, in, rows, out);
    if (Buffers.allHeap(in, out)) {
      code(len, Buffers.arrays(in), Buffers.arrayOffsets(in), Buffers.arrays(out),
          Buffers.arrayOffsets(out));
      return;
    }
    // Direct buffers: stage blocks through heap arrays so the inner loop stays a table lookup.
    int block = Math.min(BLOCK, len);
    byte[][] inBuf = new byte[k][block];
    byte[][] outBuf = new byte[rows][block];
    int[] zeros = new int[Math.max(k, rows)];
    for (int start = 0; start < len; start += block) {
      int n = Math.min(block, len - start);
      for (int j = 0; j < k; j++) {
        in[j].duplicate().position(in[j].position() + start).get(inBuf[j], 0, n);
      }
      code(n, inBuf, zeros, outBuf, zeros);
      for (int r = 0; r < rows; r++) {
        out[r].duplicate().position(out[r].position() + start).put(outBuf[r], 0, n);
      }
    }
  }
}
