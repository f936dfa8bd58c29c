package io.netec.hdfs.switchroute.wire;

import java.nio.ByteBuffer;

/** RFC 1071 ones'-complement sum, the checksum a Tofino deparser can compute over payload. */
final class InternetChecksum {
  private InternetChecksum() {
  }

  /** Adds bytes [from, to) of {@code b} (absolute indices) to a running 32-bit sum. */
  static long add(long sum, ByteBuffer b, int from, int to) {
    int i = from;
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
