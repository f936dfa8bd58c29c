package io.netec.hdfs.codec;

import java.nio.ByteBuffer;

/**
 * Adds one input unit's share to every output: out[r] ^= M[r][j] * in, for a fixed rows x k
 * GF(2^8) matrix. What a NetEC switch does per packet, one sender at a time, as packets arrive
 * in any order. Tables are prepared once per matrix.
 */
public interface MatrixAccumulator {
  void accumulate(int j, byte[] in, int inOff, int len, byte[][] out, int[] outOff);

  /**
   * As {@link #accumulate(int, byte[], int, int, byte[][], int[])}, the input between the
   * buffer's position and limit (a received packet where it lies; the position is not moved).
   * Here through the buffer's array, or a copy of the bytes where it has none.
   */
  default void accumulate(int j, ByteBuffer in, byte[][] out, int[] outOff) {
    if (in.hasArray()) {
      accumulate(j, in.array(), in.arrayOffset() + in.position(), in.remaining(), out, outOff);
    } else {
      accumulate(j, bytes(in), 0, in.remaining(), out, outOff);
    }
  }

  /** "isal" or "java". */
  String name();

  /** The bytes between a buffer's position and limit, copied out (the position not moved). */
  private static byte[] bytes(ByteBuffer in) {
    byte[] copy = new byte[in.remaining()];
    in.duplicate().get(copy);
    return copy;
  }

  /** ISA-L when the native library is available, else the Java table method. */
  static MatrixAccumulator create(int k, int rows, byte[] matrix) {
    return IsalNative.isAvailable() ? isal(k, rows, matrix) : java(k, rows, matrix);
  }

  static MatrixAccumulator java(int k, int rows, byte[] matrix) {
    byte[][] tables = new byte[matrix.length][];
    for (int i = 0; i < matrix.length; i++) {
      tables[i] = matrix[i] == 0 ? null : GaloisField.mulTable(matrix[i]);
    }
    return new MatrixAccumulator() {
      @Override
      public void accumulate(int j, byte[] in, int inOff, int len, byte[][] out, int[] outOff) {
        for (int r = 0; r < rows; r++) {
          byte[] t = tables[r * k + j];
          if (t == null) {
            continue;
          }
          byte[] o = out[r];
          int oo = outOff[r];
          for (int x = 0; x < len; x++) {
            o[oo + x] ^= t[in[inOff + x] & 0xff];
          }
        }
      }

      @Override
      public String name() {
        return "java";
      }
    };
  }

  static MatrixAccumulator isal(int k, int rows, byte[] matrix) {
    IsalNative.checkAvailable();
    java.nio.ByteBuffer gftbls = java.nio.ByteBuffer.allocateDirect(32 * k * rows);
    IsalNative.initTables0(k, rows, matrix, gftbls);
    return new MatrixAccumulator() {
      @Override
      public void accumulate(int j, byte[] in, int inOff, int len, byte[][] out, int[] outOff) {
        IsalNative.updateArrays0(len, k, rows, j, gftbls, in, inOff, out, outOff);
      }

      @Override
      public void accumulate(int j, ByteBuffer in, byte[][] out, int[] outOff) {
        if (in.isDirect()) { // from the buffer's memory, no copy
          IsalNative.updateFromDirect0(in.remaining(), k, rows, j, gftbls, in, in.position(),
              out, outOff);
        } else {
          MatrixAccumulator.super.accumulate(j, in, out, outOff);
        }
      }

      @Override
      public String name() {
        return "isal";
      }
    };
  }
}
