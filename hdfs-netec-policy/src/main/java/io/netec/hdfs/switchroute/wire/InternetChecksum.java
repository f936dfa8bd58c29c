package io.netec.hdfs.switchroute.wire;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/** RFC 1071 ones'-complement sum, the checksum a Tofino deparser can compute over payload. */
final class InternetChecksum {
  private InternetChecksum() {
  }

  /**
   * Adds bytes [from, to) of {@code b} (absolute indices) to a running sum of 16-bit words
   * counted from {@code from}. Eight bytes (four words) per step: the sum is the same, the
   * bounds checks and shifts are a quarter (this runs over every byte a switch touches).
   */
  static long add(long sum, ByteBuffer b, int from, int to) {
    if (b.order() != ByteOrder.BIG_ENDIAN) {
      b = b.duplicate().order(ByteOrder.BIG_ENDIAN);
    }
    int i = from;
    for (; i + 8 <= to; i += 8) {
      long v = b.getLong(i);
      sum += (v >>> 48) + ((v >>> 32) & 0xffff) + ((v >>> 16) & 0xffff) + (v & 0xffff);
    }
    for (; i + 1 < to; i += 2) {
      sum += ((b.get(i) & 0xff) << 8) | (b.get(i + 1) & 0xff);
    }
    if (i < to) {
      sum += (b.get(i) & 0xff) << 8; // odd length: pad with a zero byte
    }
    return sum;
  }

  /** Folds a running sum to 16 bits and complements it. */
  static int finish(long sum) {
    while ((sum >>> 16) != 0) {
      sum = (sum & 0xffff) + (sum >>> 16);
    }
    return (int) (~sum & 0xffff);
  }
}
