package io.netec.hdfs.codec;

import java.nio.ByteBuffer;

/** ISA-L coder: the matrix's multiply tables are expanded once by ec_init_tables. */
public final class IsalMatrixCoder implements MatrixCoder {
  private final int k;
  private final int rows;
  private final ByteBuffer gftbls;

  public IsalMatrixCoder(int k, int rows, byte[] matrix) {
    IsalNative.checkAvailable();
    if (matrix.length != k * rows) {
      throw new IllegalArgumentException("matrix has " + matrix.length + " entries, want "
          + k * rows);
    }
    this.k = k;
    this.rows = rows;
    this.gftbls = ByteBuffer.allocateDirect(32 * k * rows);
    IsalNative.initTables0(k, rows, matrix, gftbls);
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
    return "isal";
  }

  @Override
  public void code(int len, byte[][] in, int[] inOff, byte[][] out, int[] outOff) {
    IsalNative.encodeArrays0(len, k, rows, gftbls, in, inOff, out, outOff);
  }

  @Override
  public void code(int len, ByteBuffer[] in, ByteBuffer[] out) {
    Buffers.checkRemaining(len, k, in, rows, out);
    if (Buffers.allDirect(in, out)) {
      IsalNative.encodeBuffers0(len, k, rows, gftbls, in, Buffers.positions(in), out,
          Buffers.positions(out));
    } else if (Buffers.allHeap(in, out)) {
      code(len, Buffers.arrays(in), Buffers.arrayOffsets(in), Buffers.arrays(out),
          Buffers.arrayOffsets(out));
    } else {
      throw new IllegalArgumentException("buffers must be all direct or all heap");
    }
  }
}
