package io.netec.hdfs.route;

/**
 * What moving bytes has cost lately, for choosing by cost: a least-squares fit of
 * {@code millis = latency + bytes / rate} over the last {@value #SAMPLES} measurements of one
 * way of reading (a route's served tasks, or Hadoop's stream's reads). Plain and thread-safe;
 * no I/O.
 *
 * <p>When the samples cannot give a fit (too few, all one size, or a fit with a negative
 * latency or rate), the estimate scales the mean time up with size but never down: a read
 * smaller than those seen is assumed to cost as much as them (a fixed cost dominates small
 * reads), which errs toward Hadoop's stream.
 */
public final class ReadCost {
  static final int SAMPLES = 32;
  private final long[] bytes = new long[SAMPLES];
  private final double[] millis = new double[SAMPLES];
  private int count;
  private int next;

  /** One measurement: {@code b} bytes moved in {@code ms} milliseconds. */
  public synchronized void add(long b, double ms) {
    if (b <= 0 || ms < 0 || Double.isNaN(ms)) {
      return;
    }
    bytes[next] = b;
    millis[next] = ms;
    next = (next + 1) % SAMPLES;
    count = Math.min(SAMPLES, count + 1);
  }

  /** Measurements held (at most {@value #SAMPLES}). */
  public synchronized int samples() {
    return count;
  }

  /** Estimated milliseconds to move {@code b} bytes, or -1 with nothing measured. */
  public synchronized double estimateMillis(long b) {
    if (count == 0) {
      return -1;
    }
    double mb = 0;
    double mm = 0;
    for (int i = 0; i < count; i++) {
      mb += bytes[i];
      mm += millis[i];
    }
    mb /= count;
    mm /= count;
    double cov = 0;
    double var = 0;
    for (int i = 0; i < count; i++) {
      cov += (bytes[i] - mb) * (millis[i] - mm);
      var += (bytes[i] - mb) * (bytes[i] - mb);
    }
    if (count >= 3 && var > 0) {
      double perByte = cov / var;
      double latency = mm - perByte * mb;
      if (perByte > 0 && latency >= 0) {
        return latency + perByte * b;
      }
    }
    return mm * Math.max(1.0, b / mb);
  }

  /** Bytes per millisecond at large sizes (the fit's slope, or the mean rate), or -1. */
  public synchronized double bytesPerMs() {
    if (count == 0) {
      return -1;
    }
    long big = 1L << 30;
    double ms = estimateMillis(big) - estimateMillis(0);
    if (ms <= 0) {
      double tb = 0;
      double tm = 0;
      for (int i = 0; i < count; i++) {
        tb += bytes[i];
        tm += millis[i];
      }
      return tm <= 0 ? -1 : tb / tm;
    }
    return big / ms;
  }
}
