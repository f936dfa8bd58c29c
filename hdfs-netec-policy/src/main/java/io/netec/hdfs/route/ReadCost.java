package io.netec.hdfs.route;

import java.util.function.LongSupplier;

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
  /**
   * Measurements before a choice trusts them: a route's first task (connections, JIT) can take
   * ten times its later ones, and a route judged on it alone would never be tried again.
   */
  public static final int MIN_TRUSTED = 3;
  /** Measurements older than this are forgotten: a route not used for long is measured anew. */
  static final long MAX_AGE_MS = 600_000;
  private final long[] bytes = new long[SAMPLES];
  private final double[] millis = new double[SAMPLES];
  private final long[] at = new long[SAMPLES];
  private final LongSupplier clockMs;
  private int count;
  private int next;

  public ReadCost() {
    this(org.apache.hadoop.util.Time::monotonicNow);
  }

  ReadCost(LongSupplier clockMs) {
    this.clockMs = clockMs;
  }

  /** One measurement: {@code b} bytes moved in {@code ms} milliseconds. */
  public synchronized void add(long b, double ms) {
    if (b <= 0 || ms < 0 || Double.isNaN(ms)) {
      return;
    }
    bytes[next] = b;
    millis[next] = ms;
    at[next] = clockMs.getAsLong();
    next = (next + 1) % SAMPLES;
    count = Math.min(SAMPLES, count + 1);
  }

  /** Measurements held (at most {@value #SAMPLES}), after forgetting the old ones. */
  public synchronized int samples() {
    forgetOld();
    return count;
  }

  /** Where the i-th held measurement (oldest first) is. */
  private int idx(int i) {
    return (next - count + i + SAMPLES) % SAMPLES;
  }

  /** Drops measurements older than {@link #MAX_AGE_MS}, oldest first. */
  private void forgetOld() {
    long now = clockMs.getAsLong();
    while (count > 0) {
      int oldest = (next - count + SAMPLES) % SAMPLES;
      if (now - at[oldest] <= MAX_AGE_MS) {
        return;
      }
      count--;
    }
  }

  /** Estimated milliseconds to move {@code b} bytes, or -1 with nothing measured. */
  public synchronized double estimateMillis(long b) {
    return estimateMillis(b, 0);
  }

  /**
   * As {@link #estimateMillis(long)}, but where the samples give no fit, with a known rate
   * ({@code msPerByte} > 0, e.g. the client's link): the mean time less the mean size at that
   * rate is the fixed cost, and {@code b} adds its bytes at that rate. (Without it, the mean
   * time scaled up with size counts a fixed cost as if it grew with the bytes: a route seen
   * only on small reads would look far too slow for large ones.)
   */
  public synchronized double estimateMillis(long b, double msPerByte) {
    forgetOld();
    if (count == 0) {
      return -1;
    }
    double mb = 0;
    double mm = 0;
    for (int i = 0; i < count; i++) {
      mb += bytes[idx(i)];
      mm += millis[idx(i)];
    }
    mb /= count;
    mm /= count;
    double cov = 0;
    double var = 0;
    for (int i = 0; i < count; i++) {
      cov += (bytes[idx(i)] - mb) * (millis[idx(i)] - mm);
      var += (bytes[idx(i)] - mb) * (bytes[idx(i)] - mb);
    }
    if (count >= 3 && var > 0) {
      double perByte = cov / var;
      double latency = mm - perByte * mb;
      if (perByte > 0 && latency >= 0) {
        return latency + perByte * b;
      }
    }
    if (msPerByte > 0) {
      return Math.max(0, mm - mb * msPerByte) + b * msPerByte;
    }
    return mm * Math.max(1.0, b / mb);
  }

  /** Bytes per millisecond at large sizes (the fit's slope, or the mean rate), or -1. */
  public synchronized double bytesPerMs() {
    forgetOld();
    if (count == 0) {
      return -1;
    }
    long big = 1L << 30;
    double ms = estimateMillis(big) - estimateMillis(0);
    if (ms <= 0) {
      double tb = 0;
      double tm = 0;
      for (int i = 0; i < count; i++) {
        tb += bytes[idx(i)];
        tm += millis[idx(i)];
      }
      return tm <= 0 ? -1 : tb / tm;
    }
    return big / ms;
  }
}
