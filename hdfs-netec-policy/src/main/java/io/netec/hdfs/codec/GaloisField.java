package io.netec.hdfs.codec;

import java.nio.ByteBuffer;

/**
 * GF(2^8) with the polynomial 0x11d and generator 2: the field of Hadoop's {@code rs} codec and of
 * ISA-L, so every route computes the same bytes. Tables are built once, when the class loads.
 */
public final class GaloisField {
  public static final int POLYNOMIAL = 0x11d;

  private static final int[] EXP = new int[512];
  private static final int[] LOG = new int[256];
  /** MUL[a][b] = a*b; a row is a 256-byte lookup table for multiplying by a constant. */
  private static final byte[][] MUL = new byte[256][256];

  static {
    int x = 1;
    for (int i = 0; i < 255; i++) {
      EXP[i] = x;
      LOG[x] = i;
      x <<= 1;
      if (x >= 256) {
        x ^= POLYNOMIAL;
      }
    }
    for (int i = 255; i < 512; i++) {
      EXP[i] = EXP[i - 255];
    }
    for (int a = 0; a < 256; a++) {
      for (int b = 0; b < 256; b++) {
        MUL[a][b] = (byte) mulSlow(a, b);
      }
    }
  }

  private GaloisField() {
  }

  private static int mulSlow(int a, int b) {
    return a == 0 || b == 0 ? 0 : EXP[LOG[a] + LOG[b]];
  }

  public static int mul(int a, int b) {
    return MUL[a & 0xff][b & 0xff] & 0xff;
  }

  public static int inverse(int a) {
    if ((a & 0xff) == 0) {
      throw new ArithmeticException("0 has no inverse in GF(2^8)");
    }
    return EXP[255 - LOG[a & 0xff]];
  }

  /**
   * Multiplies, in place, every byte between the buffer's position and limit by {@code c} (the
   * position is not moved): a survivor's share in a pre-multiplied switch task, c · unit.
   */
  public static void multiply(int c, ByteBuffer buf) {
    byte[] t = MUL[c & 0xff];
    int from = buf.position();
    int to = buf.limit();
    if (buf.hasArray()) {
      byte[] a = buf.array();
      for (int i = buf.arrayOffset() + from, end = buf.arrayOffset() + to; i < end; i++) {
        a[i] = t[a[i] & 0xff];
      }
    } else {
      for (int i = from; i < to; i++) {
        buf.put(i, t[buf.get(i) & 0xff]);
      }
    }
  }

  /** The 256-byte table t with t[x] = c*x (shared, do not modify). */
  static byte[] mulTable(int c) {
    return MUL[c & 0xff];
  }
}
