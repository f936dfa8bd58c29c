package io.netec.hdfs.route;

import java.util.function.LongSupplier;

/**
 * What moving bytes has cost lately, for choosing by cost: a robust (Theil-Sen) fit of
 * {@code millis = latency + bytes / rate} over the last {@value #SAMPLES} measurements of one
 * way of reading (a route's served tasks, or Hadoop's stream's reads). Plain and thread-safe;
 * no I/O.
 *
 * <p>When the samples cannot give a fit (all one size, or no positive rate), each estimate
 * says which way it errs: {@link #estimateMillis(long)} high, {@link #estimateMillisLow} low,
 * {@link #estimateMillis(long, double)} by a rate the caller knows.
 */
public final class ReadCost {
  static final int SAMPLES = 16;
  /**
   * Measurements before a choice trusts them: a route's first task (connections, JIT) can take
   * ten times its later ones, and a route judged on it alone would never be tried again.
   */
  public static final int MIN_TRUSTED = 3;
  /** Measurements older than this are forgotten: a route not used for long is measured anew. */
  static final long MAX_AGE_MS = 600_000;
  /**
   * A way's measurements speak for it while the newest is younger than this ({@link
   * #millisSinceNewest}): a route left for being slow (a reconstruction loading it, a cold
   * first task) is then tried again as if unmeasured, so that it is not shunned for ten minutes
   * on measurements no newer task can replace.
   */
  public static final long RECENT_MS = 30_000;
  private final long[] bytes = new long[SAMPLES];
  private final double[] millis = new double[SAMPLES];
  private final long[] at = new long[SAMPLES];
  private final LongSupplier clockMs;
  private int count;
  private int next;
  /**
   * The fit over the samples held at {@link #version} {@link #fittedAt}, so that the many
   * estimates between two measurements fit once: a read's choice asks for several, and the
   * O(n^2) slopes of each were a visible part of a small read's time.
   */
  private double fitPerByte;
  private double fitFixed;
  private long fittedAt = -1;
  /** Counts changes to the samples held: every measurement added, every one forgotten. */
  private long version;

  public ReadCost() {
    this(org.apache.hadoop.util.Time::monotonicNow);
  }

  /** With {@code clockMs} as the clock of the measurements' ages (tests). */
  public ReadCost(LongSupplier clockMs) {
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
    version++;
  }

  /** The newest measurement's milliseconds, or -1 with none. */
  public synchronized double newestMillis() {
    forgetOld();
    return count == 0 ? -1 : millis[idx(count - 1)];
  }

  /** Milliseconds since the newest measurement held, or -1 with none. */
  public synchronized long millisSinceNewest() {
    forgetOld();
    return count == 0 ? -1 : clockMs.getAsLong() - at[idx(count - 1)];
  }

  /** Whether a choice may trust this way's estimates: measured {@value #MIN_TRUSTED} times. */
  public boolean trusted() {
    return samples() >= MIN_TRUSTED;
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
      version++;
    }
  }

  /**
   * Estimated milliseconds to move {@code b} bytes, or -1 with nothing measured. Where the
   * samples give no fit, the median time scaled up with size but never down: an estimate that
   * errs high (a route's, ordering routes on a DataNode).
   */
  public synchronized double estimateMillis(long b) {
    double fit = fitMillis(b);
    return fit != NO_FIT ? fit : medianScaledUp(b);
  }

  /**
   * As {@link #estimateMillis(long)}, but where the samples give no fit, with a known rate
   * ({@code msPerByte} > 0, e.g. the client's link): the median time less its size at that
   * rate is the fixed cost, and {@code b} adds its bytes at that rate. (The time scaled
   * up with size counts a fixed cost as if it grew with the bytes: a route seen only on small
   * reads would look far too slow for large ones.)
   */
  public synchronized double estimateMillis(long b, double msPerByte) {
    double fit = fitMillis(b);
    if (fit != NO_FIT) {
      return fit;
    }
    return msPerByte > 0 ? fixedPlusRate(b, msPerByte, count) : medianScaledUp(b);
  }

  /**
   * As {@link #estimateMillis(long)}, but where the samples give no fit, {@code b} at the
   * fastest rate seen: an estimate that errs low (Hadoop's stream's, the floor a route must
   * beat: a small read is not assumed to cost as much as the large ones seen).
   */
  public synchronized double estimateMillisLow(long b) {
    double fit = fitMillis(b);
    if (fit != NO_FIT) {
      return fit;
    }
    double best = Double.MAX_VALUE;
    for (int i = 0; i < count; i++) {
      best = Math.min(best, millis[idx(i)] / bytes[idx(i)]);
    }
    return b * best;
  }

  /**
   * {@code b} bytes at {@code msPerByte} plus the median of what each of the last {@code n}
   * held measurements leaves at that rate (its fixed cost), at least 0.
   */
  private double fixedPlusRate(long b, double msPerByte, int n) {
    double[] fixed = new double[n];
    for (int i = 0; i < n; i++) {
      int j = idx(count - n + i);
      fixed[i] = millis[j] - bytes[j] * msPerByte;
    }
    return Math.max(0, median(fixed, n)) + b * msPerByte;
  }

  /**
   * The median of the held samples' times, each scaled up to {@code b} bytes but never down
   * (at least one sample). A median, not a mean: a route's first task (connections, JIT) can
   * take ten times its later ones, and a mean over one size would carry it for all
   * {@value #SAMPLES} samples, ranking a route that is faster once warm below a slower one.
   */
  private double medianScaledUp(long b) {
    double[] t = new double[count];
    for (int i = 0; i < count; i++) {
      t[i] = millis[idx(i)] * Math.max(1.0, (double) b / bytes[idx(i)]);
    }
    return median(t, count);
  }

  private static final double NO_FIT = -2;

  /**
   * The fitted time of {@code b} bytes, -1 with nothing measured, or {@link #NO_FIT}. The fit
   * is Theil-Sen's: the slope is the median of the slopes between samples of different sizes,
   * the latency the median of what each sample leaves at that slope; a cold first task or a
   * pause moves neither (a least-squares line followed any one outlier). A slope that is not
   * positive is noise, not a rate: no fit.
   */
  private double fitMillis(long b) {
    forgetOld();
    if (count == 0) {
      return -1;
    }
    if (fittedAt != version) {
      fitPerByte = slope();
      fitFixed = fitPerByte > 0 ? fixedPlusRate(0, fitPerByte, count) : 0;
      fittedAt = version;
    }
    return fitPerByte > 0 ? fitFixed + b * fitPerByte : NO_FIT;
  }

  /** The median of the slopes between held samples of different sizes, or 0 with none. */
  private double slope() {
    double[] slopes = new double[count * (count - 1) / 2];
    int n = 0;
    for (int i = 0; i < count; i++) {
      for (int j = i + 1; j < count; j++) {
        long db = bytes[idx(j)] - bytes[idx(i)];
        if (db != 0) {
          slopes[n++] = (millis[idx(j)] - millis[idx(i)]) / db;
        }
      }
    }
    return n == 0 ? 0 : median(slopes, n);
  }

  private static double median(double[] a, int n) {
    double[] s = java.util.Arrays.copyOf(a, n);
    java.util.Arrays.sort(s);
    return n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
  }

  /**
   * Milliseconds per byte of the fit over the held measurements (its slope), or -1 where they
   * give none (all one size, or no positive slope): what a byte costs this way of reading, as
   * opposed to what its fixed part does.
   */
  public synchronized double fittedMillisPerByte() {
    fitMillis(0);
    return count > 0 && fitPerByte > 0 ? fitPerByte : -1;
  }

  /**
   * How many held measurements moved between {@code b / factor} and {@code b * factor} bytes:
   * none, and this way of reading was never seen near that size, its estimate for {@code b}
   * drawn from sizes far from it alone.
   */
  public synchronized int samplesNear(long b, double factor) {
    forgetOld();
    int n = 0;
    for (int i = 0; i < count; i++) {
      long s = bytes[idx(i)];
      if (s >= b / factor && s <= b * factor) {
        n++;
      }
    }
    return n;
  }

  /**
   * What {@code b} bytes cost as the measurements near that size say (between {@code b /
   * factor} and {@code b * factor} bytes): the median of their times, each moved to {@code b}
   * bytes at {@code msPerByte}; -1 with fewer than {@code min} of them. An estimate drawn from
   * every size can miss a small read by half: on the testbed, a route's 64 KiB reads took
   * 21 ms where its estimate from reads of 64 KiB to 4 MiB gave 45, and Hadoop's stream's
   * 32 where its gave 42, so the chooser left the small reads to the slower stream.
   */
  public synchronized double nearMillis(long b, double factor, double msPerByte, int min) {
    forgetOld();
    double[] t = new double[count];
    int n = 0;
    for (int i = 0; i < count; i++) {
      int j = idx(i);
      if (bytes[j] >= b / factor && bytes[j] <= b * factor) {
        double moved = millis[j] + (b - bytes[j]) * Math.max(0, msPerByte);
        // moved down, never below its time scaled down: a rate too steep for it would leave a
        // negative fixed cost
        t[n++] = b < bytes[j] ? Math.max(moved, millis[j] * b / bytes[j]) : moved;
      }
    }
    return n < Math.max(1, min) ? -1 : median(t, n);
  }

  /**
   * The estimate of {@code b} bytes from the measurements near that size where there are
   * {@code min} of them ({@link #nearMillis}, moved at {@code msPerByte}), else from every size
   * ({@link #estimateMillis(long, double)}): -1 with nothing measured.
   */
  public synchronized double estimateNear(long b, double factor, double msPerByte, int min) {
    double near = nearMillis(b, factor, msPerByte, min);
    return near >= 0 ? near : estimateMillis(b, msPerByte);
  }

  /**
   * How much slower than estimated the last {@code n} measurements were: the median of each
   * one's time over {@link #estimateNear} of its size, at least 1 (1 with fewer than {@code
   * n}). A way of reading that slows down (a reconstruction loading a route's survivors) shows
   * in its last few reads long before in an estimate over {@value #SAMPLES}; judged against the
   * estimate of each one's own size, reads of other sizes than the one at hand (a route's
   * cells, slower a byte than its small reads' fixed cost suggests) are not taken for one.
   */
  public synchronized double slowdown(int n, double factor, double msPerByte, int min) {
    forgetOld();
    if (n < 1 || count < n) {
      return 1;
    }
    double[] ratio = new double[n];
    for (int i = 0; i < n; i++) {
      int j = idx(count - n + i);
      double expected = estimateNear(bytes[j], factor, msPerByte, min);
      ratio[i] = expected > 0 ? millis[j] / expected : 1;
    }
    return Math.max(1, median(ratio, n));
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
