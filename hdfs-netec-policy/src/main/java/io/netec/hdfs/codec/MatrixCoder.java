package io.netec.hdfs.codec;

import java.nio.ByteBuffer;

/**
 * Multiplies a fixed rows x k GF(2^8) matrix by k input units: out[r] = sum_j M[r][j] * in[j].
 * Encoding (parity rows) and decoding (decode rows) are both this one operation. Tables are
 * prepared once per matrix; a coder has no other state, so one instance serves many calls.
 * Outputs are overwritten, never accumulated into; input and output positions are unchanged.
 */
public interface MatrixCoder {
  int k();

  int rows();

  /** Codes {@code len} bytes of heap arrays, starting at the given offsets. */
  void code(int len, byte[][] in, int[] inOff, byte[][] out, int[] outOff);

  /** Codes {@code len} bytes from each buffer's position; all direct or all heap. */
  void code(int len, ByteBuffer[] in, ByteBuffer[] out);

  /** The coder name that counters and logs use. */
  String name();
}
