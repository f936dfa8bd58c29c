package io.netec.hdfs.client;

import io.netec.hdfs.route.ReadCost;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
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
 * routes' is the measured cost of the rows it rebuilds through the usable route expected
 * fastest ({@link #fastestRoute}), to which the read is then sent first (a route measured
 * {@value ReadCost#MIN_TRUSTED} times; else {@value #UNMEASURED_ROUTE_LATENCY_MS} ms plus the
 * rows at the client's link rate, and no more than that once its newest measurement is
 * {@link ReadCost#RECENT_MS} old), plus
 * Hadoop's cost of the healthy part. Each is drawn from the measurements near the read's size
 * where there are some ({@link #NEAR_FACTOR}), else from every size: then a route's is at
 * least {@value #PRIOR_ROUTE_LATENCY_MS} ms plus the rows at the client's link rate, and
 * Hadoop's errs low where its measurements give no fit ({@link ReadCost#estimateMillisLow}).
 * Ties and the unknown go to Hadoop's stream:
 * it is the floor the plugin must never fall below. A read given to the routes has a budget
 * ({@link Choice#budgetMillis}): past it Hadoop's stream reads too, and a route slower than
 * that (a reconstruction loading it) is abandoned when Hadoop's stream answers first, the time
 * it had counted against it, and (unless it was cold or a probe) no route chosen again for
 * {@link ReadCost#RECENT_MS} ms. A measured route never seen near a read's size is judged
 * there by other sizes: where its least fixed cost would still win, one such read in {@value
 * #PROBE_EVERY} probes it there. A probe is left at Hadoop's expected
 * time, not hedged: Hadoop's stream then reads alone, so a probe that loses costs its read
 * about twice Hadoop's time, and the route is probed no more for {@link #PROBE_BACKOFF_MS} ms.
 */
final class ReadChooser {
  /**
   * A measured route's least fixed cost (set-up, proof) where it was not measured near a
   * read's size: a warm route read 64 KiB of a lost RS(3,2) unit on the testbed in 9-15 ms at
   * 100 Mbit/s, 5.2 of them the range on the client's link (docs/benchmarks.md, 2026-12-02).
   */
  static final double PRIOR_ROUTE_LATENCY_MS = 8;
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
   * Sizes within this factor of a read's are near it. A way of reading measured near a
   * read's size is judged there by those measurements ({@link ReadCost#nearMillis}), else by
   * every size it was measured on. A measured route never seen near a read's size is
   * probed there, when its least fixed cost ({@value
   * #PRIOR_ROUTE_LATENCY_MS} ms) would let it win: measured only on 1 MiB cells, INEC's 195 ms
   * at 100 Mbit/s (the link's 84 ms plus a slower rate) read as a fixed cost of 111 ms, so no
   * 64 KiB range of a lost RS(6,3) unit (Hadoop's stream 31 ms, a warm route 18-28 ms) was
   * ever routed and measured.
   */
  static final double NEAR_FACTOR = 4;
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
   * @param route the route that would serve ({@link #fastestRoute}), or null when none is
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
    RouteEstimate e = estimate(read, routeCost);
    double healthy = read.healthyBytes > 0 ? hadoopMillis(read.healthyBytes) : 0;
    double viaRoute = e.rebuilt + healthy;
    if (viaRoute >= viaHadoop && e.measured && e.least + healthy < viaHadoop
        && e.near == 0
        && !probeLostLately(route)
        && probeCandidates.getAndIncrement() % PROBE_EVERY == 0) {
      // left at Hadoop's expected time (RoutedRead): a probe costs a read at most that more
      return new Choice(true, () -> String.format("probing %s: never measured within %.0fx "
          + "of %d bytes (there %.1f ms from the sizes it was, at its least %.1f ms), against "
          + "Hadoop's stream %.1f ms for %d bytes", route, NEAR_FACTOR, read.routedBytes,
          viaRoute, e.least + healthy, viaHadoop, read.hadoopBytes),
          Math.max(1, viaHadoop), 0, true);
    }
    Supplier<String> why = () -> String.format("%s %.1f ms for %d bytes against Hadoop's "
        + "stream %.1f ms for %d bytes", route, viaRoute, read.routedBytes + read.healthyBytes,
        viaHadoop, read.hadoopBytes) + (e.measured ? String.format(" (the route: %.1f ms from "
        + "%s, its last %d %.2fx that, at least %.1f)", e.fromSizes, e.near > 0
        ? e.near + " measurements near this size" : "every size measured", ReadCost.MIN_TRUSTED,
        e.slowdown, e.least) : "");
    // a route's first tasks are slow by nature (connections, JIT): they are given more time,
    // as they must be to measure the route at all; a read the route overruns is hedged
    double cold = !routeCost.trusted() ? COLD_ALLOWANCE_MS : 0;
    return new Choice(viaRoute < viaHadoop, why, Math.max(viaHadoop, 2 * e.rebuilt) + cold, cold,
        false);
  }

  /**
   * Of the usable routes {@code routes} (in the router's order), the one a read of this shape
   * is expected to take least time through ({@link #estimate}: an unmeasured route by the
   * prior; ties to the earlier), so that the read is judged by, and sent to, the route the
   * chooser believes in. The router's order alone ranks routes on every size together and on
   * measurements up to ten minutes old, and its exploration puts an unmeasured route first
   * every other task: either left small reads to Hadoop's stream, judged by a route the
   * chooser took for unmeasured, where a measured one would have won them. A measured route
   * that wins the read is preferred; where none does, a route judged at the prior (unmeasured,
   * or unused for {@link ReadCost#RECENT_MS}) is tried if its prior is the least, and so
   * measured. Outside {@code netec.client.reads=cost}, the router's first. Null when {@code
   * routes} is empty.
   */
  String fastestRoute(ReadShape read, List<String> routes, Function<String, ReadCost> costs) {
    if (routes.isEmpty() || !mode.equals("cost")) {
      return routes.isEmpty() ? null : routes.get(0);
    }
    String best = null;
    double bestMillis = Double.MAX_VALUE;
    String bestMeasured = null;
    double bestMeasuredMillis = Double.MAX_VALUE;
    for (String r : routes) {
      RouteEstimate e = estimate(read, costs.apply(r));
      if (e.rebuilt < bestMillis) {
        best = r;
        bestMillis = e.rebuilt;
      }
      if (e.measured && e.rebuilt < bestMeasuredMillis) {
        bestMeasured = r;
        bestMeasuredMillis = e.rebuilt;
      }
    }
    // a measured route that wins the read keeps it: a route judged at the prior (unmeasured,
    // or unused for RECENT_MS) is tried where no measured one wins, not in place of one that
    // does (a slow one would lose its read to the hedge and leave every route for 30 s, then
    // be judged at the prior again: a loop)
    double healthy = read.healthyBytes > 0 ? hadoopMillis(read.healthyBytes) : 0;
    double viaHadoop = hadoopMillis(read.hadoopBytes);
    if (bestMeasured != null && bestMeasuredMillis + healthy < viaHadoop) {
      return bestMeasured;
    }
    return best;
  }

  /** What a route is expected to take for a read's rebuilt rows, and from what. */
  private static final class RouteEstimate {
    /** Measured {@value ReadCost#MIN_TRUSTED} times, the newest under RECENT_MS old. */
    boolean measured;
    /** Its measurements near the read's size ({@link #NEAR_FACTOR}). */
    int near;
    /** Its estimate from its measurements near the size, or from every size. */
    double fromSizes;
    /** How much slower than estimated its last few reads were (at least 1). */
    double slowdown;
    /** A measured route's least: the prior fixed cost and the rows at the link. */
    double least;
    /** The estimate the choice uses. */
    double rebuilt;
  }

  /**
   * A route's expected time for the read's rebuilt rows. A route measured fewer than {@value
   * ReadCost#MIN_TRUSTED} times is judged by the prior {@value #UNMEASURED_ROUTE_LATENCY_MS}
   * ms plus the rows at the client's link, and so measured; one not measured for {@link
   * ReadCost#RECENT_MS} ms by the lesser of that and its measurements (one left for being slow
   * would else be shunned until they expire). A measured one by its measurements near the
   * read's size (an estimate from every size missed
   * small reads by half), else by every size and then at least {@value
   * #PRIOR_ROUTE_LATENCY_MS} ms plus the rows at the link (the client's link bounds a route as
   * well, and a route's task never comes for free: its set-up and proof); either raised by
   * how much slower than that its last few reads were, each against its own size's estimate
   * (a route slowing down, as when a reconstruction loads it, is left after two slow reads,
   * not after half its measurements).
   */
  private RouteEstimate estimate(ReadShape read, ReadCost routeCost) {
    RouteEstimate e = new RouteEstimate();
    double perByte = linkBytesPerMs > 0 ? 1 / linkBytesPerMs
        : hadoopMillis(1L << 30) / (1L << 30);
    double atLink = read.routedBytes * perByte;
    e.measured = routeCost.trusted() && routeCost.millisSinceNewest() <= ReadCost.RECENT_MS;
    e.least = PRIOR_ROUTE_LATENCY_MS + atLink;
    double prior = UNMEASURED_ROUTE_LATENCY_MS + atLink;
    if (!routeCost.trusted()) {
      e.rebuilt = prior;
      return e;
    }
    double routeRate = routeCost.fittedMillisPerByte();
    double rate = routeRate > 0 ? routeRate : perByte;
    e.near = routeCost.samplesNear(read.routedBytes, NEAR_FACTOR);
    e.fromSizes = routeCost.estimateNear(read.routedBytes, NEAR_FACTOR, rate, 1);
    if (e.fromSizes < 0) { // its measurements expired since trusted() was asked
      e.measured = false;
      e.rebuilt = prior;
      return e;
    }
    e.slowdown = routeCost.slowdown(ReadCost.MIN_TRUSTED, NEAR_FACTOR, rate, 1);
    // measured near the size, what it took speaks; drawn from other sizes, at least the least
    e.rebuilt = e.near > 0 ? e.fromSizes * e.slowdown
        : Math.max(e.fromSizes * e.slowdown, e.least);
    if (!e.measured) {
      // not for RECENT_MS: its measurements hold it back no more than the prior would (one
      // left for being slow is tried again), nor does the prior hold back one they favour
      // (else a route unused for 30 s is never given a small read again)
      e.rebuilt = Math.min(e.rebuilt, prior);
    }
    return e;
  }

  /**
   * Hadoop's stream's time for {@code bytes}: measured (by its reads near that size where it
   * has {@value ReadCost#MIN_TRUSTED} and a fitted rate, else by every size, erring low), or at
   * the configured link rate.
   */
  private double hadoopMillis(long bytes) {
    // near the size only where a rate moves the reads to it, and three say the same
    double rate = hadoop.fittedMillisPerByte();
    double near = rate > 0 ? hadoop.nearMillis(bytes, NEAR_FACTOR, rate, ReadCost.MIN_TRUSTED)
        : -1;
    double measured = near >= 0 ? near : hadoop.estimateMillisLow(bytes);
    if (linkBytesPerMs > 0) {
      return Math.max(measured, bytes / linkBytesPerMs);
    }
    return measured;
  }
}
