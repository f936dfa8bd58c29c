package io.netec.hdfs.client;

import io.netec.hdfs.route.ReadCost;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * Chooses, for one positional read that touches lost units, between Hadoop's striped stream
 * and the routes, by the time each is expected to take. Plain class, no I/O.
 *
 * <p>Hadoop's stream decodes a lost byte from k survivors' bytes at the same offset, so a
 * range inside a lost unit costs the client's link k times its size; a route delivers it once,
 * rebuilt, after its fixed cost. Both read the healthy units' bytes the same way. The times:
 * Hadoop's is its measured cost (or the configured link rate) of the bytes it would move; the
 * routes' is the first usable route's measured cost of the rows it rebuilds (once it has
 * {@value ReadCost#MIN_TRUSTED} measurements, the newest under {@link ReadCost#RECENT_MS} old;
 * else {@value #UNMEASURED_ROUTE_LATENCY_MS} ms plus the rows at the client's link rate), and
 * at least {@value #PRIOR_ROUTE_LATENCY_MS} ms
 * plus the rows at the client's link rate, plus Hadoop's cost of the healthy part. Hadoop's
 * estimate errs low where its measurements give no fit ({@link ReadCost#estimateMillisLow}).
 * Ties and the unknown go to Hadoop's stream:
 * it is the floor the plugin must never fall below. A read given to the routes has a budget
 * ({@link Choice#budgetMillis}): past it Hadoop's stream reads too, and a route slower than
 * that (a reconstruction loading it) is abandoned when Hadoop's stream answers first, the time
 * it had counted against it, and (unless it was cold or a probe) no route chosen again for
 * {@link ReadCost#RECENT_MS} ms. A measured route's estimate for a size far from all it was
 * measured on is drawn from those sizes alone: where its least fixed cost would still win,
 * one such read in {@value #PROBE_EVERY} probes it there. A probe is left at Hadoop's expected
 * time, not hedged: Hadoop's stream then reads alone, so a probe that loses costs its read
 * about twice Hadoop's time, and the route is probed no more for {@link #PROBE_BACKOFF_MS} ms.
 */
final class ReadChooser {
  /** A route's least fixed cost once measured: set-up, proof. */
  static final double PRIOR_ROUTE_LATENCY_MS = 20;
  /**
   * A route's fixed cost until it has been measured {@value ReadCost#MIN_TRUSTED} times: above
   * what routes took warm on the testbed at 1 Gbit/s (33-38 ms for a 64 KiB range), so that no
   * 64 KiB range is spent on finding out (at 100 Mbit/s one costs Hadoop's stream 17-34 ms),
   * yet low enough that a route is tried where it wins once warm: a lost cell of RS(6,3) at
   * 1 Gbit/s (Hadoop's stream 57 ms, a route 47 ms), which 80 ms never tried. The price: at
   * 100 Mbit/s, where routes took up to 50 ms warm, a range of RS(6,3) between about 100 and
   * 130 KB may be tried and lost narrowly; that measures the route, which is then judged by
   * its measurements.
   */
  static final double UNMEASURED_ROUTE_LATENCY_MS = 40;
  /**
   * What a route's first tasks may take beyond a warm task's budget before Hadoop's stream
   * reads too: a cold first task (its connections, the JIT) took 900 ms against 107 warm.
   */
  static final double COLD_ALLOWANCE_MS = 2_000;
  /**
   * A measured route is probed on a read of a size it was never seen near (within this
   * factor), when its least fixed cost ({@value #PRIOR_ROUTE_LATENCY_MS} ms) would let it win:
   * its estimate there is drawn from other sizes alone. Measured only on 1 MiB cells, INEC's
   * 195 ms at 100 Mbit/s (the link's 84 ms plus a slower rate) read as a fixed cost of 111 ms,
   * so no 64 KiB range of a lost RS(6,3) unit (Hadoop's stream 31 ms, a warm route 18-28 ms)
   * was ever routed and measured.
   */
  static final double PROBE_SIZE_FACTOR = 4;
  /** Of the reads that could probe a route, one in this many does (the first one first). */
  static final int PROBE_EVERY = 8;
  /**
   * A route whose probe lost is probed no more for this long (ReadCost's ten minutes): the
   * lost probe's time is one measurement among sixteen, soon pushed out by the route's cells,
   * and a route steadily slower on small reads would else lose one small read in eight.
   */
  static final long PROBE_BACKOFF_MS = 600_000;

  /** What a read touching lost units moves, per way of reading it. */
  static final class ReadShape {
    /** Bytes Hadoop's stream would move to serve the read (healthy ones plus k per lost one). */
    final long hadoopBytes;
    /** Bytes the routes would rebuild (rows times the rebuilt range). */
    final long routedBytes;
    /** Bytes of healthy units the read returns (read by Hadoop's stream either way). */
    final long healthyBytes;

    ReadShape(long hadoopBytes, long routedBytes, long healthyBytes) {
      this.hadoopBytes = hadoopBytes;
      this.routedBytes = routedBytes;
      this.healthyBytes = healthyBytes;
    }
  }

  /**
   * A choice, why, and how long the routes may take before the read leaves them. The reason is
   * worded only when asked for ({@link #toString}, as a log line's argument): most choices are
   * held back by the log's limiter, and formatting each was a visible part of a small read.
   */
  static final class Choice {
    final boolean routes;
    private final Supplier<String> reason;
    /**
     * Milliseconds the routes have to rebuild the read's lost ranges before Hadoop's stream
     * reads the range too, the first answer serving the read (0: no budget, the routes' own
     * timeouts alone): Hadoop's stream's expected time for the whole read, and at least twice
     * the route's estimate (a route a little slower than its measurements is not hedged for
     * nothing). A route with fewer than {@value ReadCost#MIN_TRUSTED} measurements (cold:
     * connections, JIT) has {@value ReadChooser#COLD_ALLOWANCE_MS} ms more, so that it is
     * measured rather than left on its first task, and is hedged past that as any route is:
     * without a budget, one such read on the testbed, its route cold while a reconstruction
     * ran, went through four failing attempts (two routes, two tries each, 5-8 s apiece) and
     * took 38.5 s against Hadoop's 1.4 s.
     */
    final double budgetMillis;
    /**
     * The part of {@link #budgetMillis} a cold route is given ({@value
     * ReadChooser#COLD_ALLOWANCE_MS} ms, or 0): a cold route that loses to Hadoop's stream was
     * cold, not loaded, so the other reads do not leave the routes for it.
     */
    final double coldMillis;
    /**
     * A probe: the route is tried on a size it was not measured near, with Hadoop's expected
     * time as its budget, past which it is left and Hadoop's stream reads alone; a probe that
     * loses was unknown there, not loaded, so the other reads do not leave the routes for it.
     */
    final boolean probe;

    Choice(boolean routes, String reason) {
      this(routes, () -> reason, 0, 0, false);
    }

    Choice(boolean routes, Supplier<String> reason, double budgetMillis, double coldMillis,
        boolean probe) {
      this.routes = routes;
      this.reason = reason;
      this.budgetMillis = budgetMillis;
      this.coldMillis = coldMillis;
      this.probe = probe;
    }

    /** Whether losing to Hadoop's stream leaves every route a while (a measured route's). */
    boolean lossLeavesRoutes() {
      return coldMillis <= 0 && !probe;
    }

    String reason() {
      return reason.get();
    }

    @Override
    public String toString() {
      return reason();
    }
  }

  private final String mode;
  private final double linkBytesPerMs;
  private final ReadCost hadoop;
  private final LongSupplier clockMs;
  /** The last time a read's route lost to Hadoop's stream, or null: none yet. */
  private volatile Lost lost;
  /** Reads that could have probed a route so far ({@link #PROBE_EVERY}). */
  private final AtomicLong probeCandidates = new AtomicLong();
  /** When each route's last probe lost (clock ms). */
  private final Map<String, Long> probesLost = new ConcurrentHashMap<>();

  /** A route that lost to Hadoop's stream, and when (clock ms). */
  private static final class Lost {
    final String route;
    final long atMs;

    Lost(String route, long atMs) {
      this.route = route;
      this.atMs = atMs;
    }
  }

  /**
   * @param mode netec.client.reads: cost, routes or hadoop
   * @param linkBytesPerMs the client's configured link rate, 0 when to be learned
   * @param hadoop this client's measured cost of reads through Hadoop's stream
   */
  ReadChooser(String mode, double linkBytesPerMs, ReadCost hadoop) {
    this(mode, linkBytesPerMs, hadoop, org.apache.hadoop.util.Time::monotonicNow);
  }

  ReadChooser(String mode, double linkBytesPerMs, ReadCost hadoop, LongSupplier clockMs) {
    this.mode = mode;
    this.linkBytesPerMs = linkBytesPerMs;
    this.hadoop = hadoop;
    this.clockMs = clockMs;
  }

  /**
   * A read's route lost to Hadoop's stream (its hedge answered first): every route is left
   * for {@link ReadCost#RECENT_MS} ms, not only that one, since what loads one route's
   * survivors (a reconstruction reading them) loads every route's.
   */
  void routeLostToHadoop(String route) {
    lost = new Lost(route, clockMs.getAsLong());
  }

  /**
   * A probe of {@code route} ran past its budget and was left: that route is probed no more
   * for {@link #PROBE_BACKOFF_MS}.
   */
  void probeLost(String route) {
    probesLost.put(route, clockMs.getAsLong());
  }

  /** Whether {@code route} lost a probe less than {@link #PROBE_BACKOFF_MS} ago. */
  private boolean probeLostLately(String route) {
    Long at = probesLost.get(route);
    return at != null && clockMs.getAsLong() - at < PROBE_BACKOFF_MS;
  }

  /** Whether Hadoop's stream's reads are to be timed (no configured link rate replaces them). */
  boolean measuresHadoop() {
    return mode.equals("cost") && linkBytesPerMs <= 0;
  }

  /** The cost of reads through Hadoop's stream, which callers feed as they time them. */
  ReadCost hadoopCost() {
    return hadoop;
  }

  /**
   * @param route the route that would serve (the first usable), or null when none is
   * @param routeCost that route's measured cost
   */
  Choice choose(ReadShape read, String route, ReadCost routeCost) {
    if (route == null) {
      return new Choice(false, "no route is usable");
    }
    if (mode.equals("hadoop")) {
      return new Choice(false, "netec.client.reads=hadoop");
    }
    if (mode.equals("routes")) {
      return new Choice(true, "netec.client.reads=routes");
    }
    double viaHadoop = hadoopMillis(read.hadoopBytes);
    if (viaHadoop < 0) {
      return new Choice(false, "nothing measured yet (Hadoop's stream measures this link)");
    }
    Lost last = lost;
    long sinceLost = last == null ? Long.MAX_VALUE : clockMs.getAsLong() - last.atMs;
    if (sinceLost <= ReadCost.RECENT_MS) {
      return new Choice(false, () -> String.format("a read through %s lost to Hadoop's stream "
          + "%d ms ago: what loads one route's survivors loads every route's (Hadoop's stream "
          + "for %d s after that)", last.route, sinceLost, ReadCost.RECENT_MS / 1000), 0, 0,
          false);
    }
    // a route measured fewer than MIN_TRUSTED times is judged by the prior (and so measured)
    double perByte = linkBytesPerMs > 0 ? 1 / linkBytesPerMs
        : hadoopMillis(1L << 30) / (1L << 30);
    double atLink = read.routedBytes * perByte;
    // the client's link bounds a route as well, and a route's task never comes for free (its
    // set-up and proof): a tie goes to Hadoop's stream
    // a route's estimate errs high: the fit over its measurements, or what its last few
    // took if that is more (a route slowing down, as when a reconstruction loads it, is
    // left after two slow reads, not after half its measurements)
    // measurements older than ReadCost.RECENT_MS no longer speak: the route is tried again
    // as if unmeasured (one left for being slow would else be shunned until they expire)
    // what its last few took is read at the route's own rate where its measurements give
    // one (a route slower per byte than the link is not thought to have a large fixed cost)
    long age = routeCost.millisSinceNewest();
    boolean measured = routeCost.trusted() && age <= ReadCost.RECENT_MS;
    double routeRate = routeCost.fittedMillisPerByte();
    double healthy = read.healthyBytes > 0 ? hadoopMillis(read.healthyBytes) : 0;
    double least = PRIOR_ROUTE_LATENCY_MS + atLink; // a measured route's least
    double rebuilt = measured
        ? Math.max(Math.max(routeCost.estimateMillis(read.routedBytes, perByte),
            routeCost.recentMillis(read.routedBytes, routeRate > 0 ? routeRate : perByte,
                ReadCost.MIN_TRUSTED)),
            least)
        : UNMEASURED_ROUTE_LATENCY_MS + atLink;
    double viaRoute = rebuilt + healthy;
    if (viaRoute >= viaHadoop && measured && least + healthy < viaHadoop
        && !routeCost.measuredNear(read.routedBytes, PROBE_SIZE_FACTOR)
        && !probeLostLately(route)
        && probeCandidates.getAndIncrement() % PROBE_EVERY == 0) {
      // left at Hadoop's expected time (RoutedRead): a probe costs a read at most that more
      return new Choice(true, () -> String.format("probing %s: measured only on sizes more "
          + "than %.0fx from %d bytes (there %.1f ms, at its least %.1f ms), against Hadoop's "
          + "stream %.1f ms for %d bytes", route, PROBE_SIZE_FACTOR, read.routedBytes,
          viaRoute, least + healthy, viaHadoop, read.hadoopBytes),
          Math.max(1, viaHadoop), 0, true);
    }
    Supplier<String> why = () -> String.format("%s %.1f ms for %d bytes against Hadoop's "
        + "stream %.1f ms for %d bytes", route, viaRoute, read.routedBytes + read.healthyBytes,
        viaHadoop, read.hadoopBytes);
    // a route's first tasks are slow by nature (connections, JIT): they are given more time,
    // as they must be to measure the route at all; a read the route overruns is hedged
    double cold = !routeCost.trusted() ? COLD_ALLOWANCE_MS : 0;
    return new Choice(viaRoute < viaHadoop, why, Math.max(viaHadoop, 2 * rebuilt) + cold, cold,
        false);
  }

  /** Hadoop's stream's time for {@code bytes}: measured, or at the configured link rate. */
  private double hadoopMillis(long bytes) {
    double measured = hadoop.estimateMillisLow(bytes);
    if (linkBytesPerMs > 0) {
      return Math.max(measured, bytes / linkBytesPerMs);
    }
    return measured;
  }
}
