package io.netec.hdfs.switchroute.wire;

import io.netec.hdfs.codec.IsalNative;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * RFC 1071 ones'-complement checksum, the one a Tofino deparser can compute over payload. It
 * runs over every byte each hop sends or receives, so it reads eight bytes at a time in the
 * machine's order and adds them as two 32-bit halves: the ones'-complement sum is independent
 * of byte order up to a final swap (RFC 1071 §2(B)) and of the word width up to the final fold
 * (2^32 and 2^16 are both 1 modulo 2^16 - 1). Two adds per eight bytes, no byte shuffling, in
 * four independent sums (one sum is a chain of dependent adds: half the speed).
 */
public final class InternetChecksum {
  private static final VarHandle ARRAY_LONGS =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
  private static final VarHandle BUFFER_LONGS =
      MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

  /**
   * Ranges at least this long are summed by libnetec.so when it is loaded (vectorized C, about
   * 2.4x the loops below); shorter ones (headers, ACKs) here, below a JNI call's cost.
   */
  static final int NATIVE_FROM_BYTES = 256;
  private static final boolean NATIVE = IsalNative.libraryUnavailableReason() == null;

  private InternetChecksum() {
  }

  /** Whether long ranges are summed in native code (false: the Java loops, e.g. native off). */
  public static boolean isNative() {
    return NATIVE;
  }

  /**
   * The checksum of bytes [from, to) of {@code b}, 16-bit words counted from {@code from}: 0 for
   * a packet whose checksum field is right, else the value that field must hold (0 meaning 0xffff
   * on the wire, as the sender writes it).
   */
  public static int of(byte[] b, int from, int to) {
    return finish(sum(b, from, to));
  }

  /**
   * The unfolded sum of bytes [from, to) as little-endian 16-bit words: sums of ranges that
   * start at even distances from a packet's first byte add up to the packet's sum (only the last
   * range may have an odd length). For a checksum over a header and a payload held apart.
   */
  static long sum(byte[] b, int from, int to) {
    return NATIVE && to - from >= NATIVE_FROM_BYTES ? sumArray0(b, from, to)
        : javaSum(b, from, to);
  }

  /** {@link #sum(byte[], int, int)} in Java: what runs without libnetec.so. */
  static long javaSum(byte[] b, int from, int to) {
    long s0 = 0;
    long s1 = 0;
    long s2 = 0;
    long s3 = 0;
    int i = from;
    for (; i + 32 <= to; i += 32) { // four sums: four add chains the core runs side by side
      long v0 = (long) ARRAY_LONGS.get(b, i);
      long v1 = (long) ARRAY_LONGS.get(b, i + 8);
      long v2 = (long) ARRAY_LONGS.get(b, i + 16);
      long v3 = (long) ARRAY_LONGS.get(b, i + 24);
      s0 += (v0 & 0xffffffffL) + (v0 >>> 32);
      s1 += (v1 & 0xffffffffL) + (v1 >>> 32);
      s2 += (v2 & 0xffffffffL) + (v2 >>> 32);
      s3 += (v3 & 0xffffffffL) + (v3 >>> 32);
    }
    long sum = s0 + s1 + s2 + s3; // each below 2^59 for any array: no overflow
    for (; i + 8 <= to; i += 8) {
      long v = (long) ARRAY_LONGS.get(b, i);
      sum += (v & 0xffffffffL) + (v >>> 32);
    }
    for (; i + 1 < to; i += 2) {
      sum += (b[i] & 0xff) | (b[i + 1] & 0xff) << 8;
    }
    if (i < to) {
      sum += b[i] & 0xff; // odd length: pad with a zero byte
    }
    return sum;
  }

  /** As {@link #of(byte[], int, int)}, over absolute indices of a heap or direct buffer. */
  public static int of(ByteBuffer b, int from, int to) {
    return finish(sum(b, from, to));
  }

  /** As {@link #sum(byte[], int, int)}, over absolute indices of a heap or direct buffer. */
  static long sum(ByteBuffer b, int from, int to) {
    if (b.hasArray()) {
      return sum(b.array(), b.arrayOffset() + from, b.arrayOffset() + to);
    }
    if (NATIVE && b.isDirect() && to - from >= NATIVE_FROM_BYTES) {
      return sumDirect0(b, from, to);
    }
    // javaSum's loop over a buffer's coordinates: the two view handles take different
    // receivers, and one loop for both would cost a call per word
    long s0 = 0;
    long s1 = 0;
    long s2 = 0;
    long s3 = 0;
    int i = from;
    for (; i + 32 <= to; i += 32) {
      long v0 = (long) BUFFER_LONGS.get(b, i);
      long v1 = (long) BUFFER_LONGS.get(b, i + 8);
      long v2 = (long) BUFFER_LONGS.get(b, i + 16);
      long v3 = (long) BUFFER_LONGS.get(b, i + 24);
      s0 += (v0 & 0xffffffffL) + (v0 >>> 32);
      s1 += (v1 & 0xffffffffL) + (v1 >>> 32);
      s2 += (v2 & 0xffffffffL) + (v2 >>> 32);
      s3 += (v3 & 0xffffffffL) + (v3 >>> 32);
    }
    long sum = s0 + s1 + s2 + s3;
    for (; i + 8 <= to; i += 8) {
      long v = (long) BUFFER_LONGS.get(b, i);
      sum += (v & 0xffffffffL) + (v >>> 32);
    }
    for (; i + 1 < to; i += 2) {
      sum += (b.get(i) & 0xff) | (b.get(i + 1) & 0xff) << 8;
    }
    if (i < to) {
      sum += b.get(i) & 0xff;
    }
    return sum;
  }

  private static native long sumArray0(byte[] b, int from, int to);

  /** Absolute indices of a direct buffer (its position and limit are not used). */
  private static native long sumDirect0(ByteBuffer b, int from, int to);

  /** Folds a sum of little-endian words to 16 bits, swaps it to network order, complements. */
  static int finish(long sum) {
    sum = (sum & 0xffffffffL) + (sum >>> 32);
    sum = (sum & 0xffffffffL) + (sum >>> 32);
    while ((sum >>> 16) != 0) {
      sum = (sum & 0xffff) + (sum >>> 16);
    }
    int s = (int) sum;
    return ~(((s & 0xff) << 8) | (s >>> 8)) & 0xffff;
  }
}
