package io.netec.hdfs.route;

import io.netec.hdfs.NetecSettings;
import io.netec.hdfs.proof.ProofVerifier;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.server.datanode.DataNode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tries the configured routes in order for each repair, the same on a DataNode (its
 * reconstruction tasks) and on a client (its degraded reads), row by row: each attempt of a
 * route is proven by the {@link RepairVerifier} and every row it rebuilt that is proven is kept;
 * rows not proven (a wrong byte anywhere, an incomplete row) are dropped and go to the next
 * attempt. A route that declines is skipped; one that fails is retried {@code
 * netec.route.retries} times, then the next route runs; native is always last. A failure caused
 * by survivors ({@link SurvivorFault}: unreadable, stalled past the progress timeout, unable to
 * prove their part) is not the route's: the route runs again without them where spares exist.
 * A route that cannot reach its service, or that failed on its own account, is not asked again
 * for {@code netec.route.backoff.ms} (one log line when it goes away, one when it is back).
 * Each repair ends with one log line naming the route that served each row and why the others
 * were passed over; the same line goes to {@link RouteMetrics#recentTasks()}.
 *
 * <p>{@code netec.route.order} is the set of routes allowed and their order until they have
 * been measured; once every network route has recent measurements (its served tasks' bytes and
 * times, {@link ReadCost}), each task tries them cheapest first for its size, ties in the
 * configured order. A route is measured as it serves (when it comes first, or the routes
 * before it decline, fail or are backed off); measurements expire after ten minutes, and then
 * the configured order holds again until it is measured anew.
 */
public final class ReconstructionRouter {
  private static final Logger LOG = LoggerFactory.getLogger(ReconstructionRouter.class);
  /** Lines a faulty route or peer can cause: one per cause every 10 s, then a count. */
  private final LogLimiter limited = new LogLimiter(LOG, 10_000);

  private final List<ReconstructionRoute> routes;
  private final int retries;
  private final long backoffNanos;
  private final int stallTimeoutMs;
  private final RouteMetrics metrics;
  private final RepairVerifier verifier;
  private final RouteContext context;
  private final RouteRegistry registry;
  /** Routes passed over for now (unreachable, or failing), until when and why. */
  private final Map<String, Unavailable> unavailable = new ConcurrentHashMap<>();

  private static final class Unavailable {
    final long untilNanos;
    final String reason;

    Unavailable(long untilNanos, String reason) {
      this.untilNanos = untilNanos;
      this.reason = reason;
    }
  }

  /** How a repair went. */
  public static final class Outcome {
    /** The route that served the last rows, or null when some row was rebuilt by none. */
    public final String route;
    /** Bytes delivered to the sink and kept. */
    public final long bytes;
    /** Bytes the serving routes received (their ingress), -1 when not known. */
    public final long bytesIn;
    /** Why the routes before it did not serve ("" when the first one did). */
    public final String others;
    /** Route that kept each row (null for a row none rebuilt). */
    public final List<String> rowRoutes;
    /** Attempts whose output did not match the survivors' fingerprints. */
    public final int verifyFailures;

    Outcome(String route, long bytes, long bytesIn, String others, List<String> rowRoutes,
        int verifyFailures) {
      this.verifyFailures = verifyFailures;
      this.route = route;
      this.bytes = bytes;
      this.bytesIn = bytesIn;
      this.others = others;
      this.rowRoutes = Collections.unmodifiableList(rowRoutes);
    }
  }

  /**
   * A router of routes given as a list.
   *
   * @param stallTimeoutMs a route's progress limit when spare survivors exist (Hadoop's
   *     striped-read timeout); 0: the routes' own
   */
  public ReconstructionRouter(List<ReconstructionRoute> routes, int retries, long backoffMs,
      int stallTimeoutMs, RouteMetrics metrics, RepairVerifier verifier) {
    this(routes, retries, backoffMs, stallTimeoutMs, metrics, verifier, null, null);
  }

  private ReconstructionRouter(List<ReconstructionRoute> routes, int retries, long backoffMs,
      int stallTimeoutMs, RouteMetrics metrics, RepairVerifier verifier, RouteContext context,
      RouteRegistry registry) {
    if (routes.isEmpty() || !NativeRoute.NAME.equals(routes.get(routes.size() - 1).name())) {
      throw new IllegalArgumentException("the native route must be last");
    }
    if (retries < 0 || backoffMs < 0 || stallTimeoutMs < 0) {
      throw new IllegalArgumentException("retries, back-off and stall timeout must be >= 0");
    }
    this.routes = Collections.unmodifiableList(new ArrayList<>(routes));
    this.retries = retries;
    this.backoffNanos = backoffMs * 1_000_000L;
    this.stallTimeoutMs = stallTimeoutMs;
    this.metrics = metrics;
    this.verifier = java.util.Objects.requireNonNull(verifier,
        "a router proves every route's rows: it needs a verifier");
    this.context = context;
    this.registry = registry;
    for (ReconstructionRoute r : routes) {
      metrics.registerRoute(r.name());
    }
  }

  /**
   * The router of one side, as the configuration says: the routes ServiceLoader finds, the
   * settings parsed once, the routes of netec.route.order built, their output proven through
   * the survivors' proof services.
   *
   * @param dataNode the DataNode, or null on a client
   * @param blocks the DataNode's blocks, or null on a client
   * @throws IllegalArgumentException naming the key and value at fault
   */
  public static ReconstructionRouter start(Configuration conf, DataNode dataNode,
      BlockSource blocks) {
    ClassLoader loader = conf.getClassLoader() != null ? conf.getClassLoader()
        : ReconstructionRouter.class.getClassLoader();
    RouteRegistry registry = RouteRegistry.load(loader);
    NetecSettings settings = NetecSettings.parse(conf, registry.names());
    RouteContext ctx = new RouteContext(settings, conf, dataNode, blocks);
    List<ReconstructionRoute> routes = new ArrayList<>();
    for (String name : settings.routeOrder()) {
      if (name.equals(NativeRoute.NAME)) {
        routes.add(new NativeRoute());
        continue;
      }
      ReconstructionRoute r = registry.get(name).create(ctx);
      if (!name.equals(r.name())) {
        throw new IllegalArgumentException("route factory "
            + registry.get(name).getClass().getName() + " named '" + name
            + "' made a route named '" + r.name() + "'");
      }
      routes.add(r);
    }
    return new ReconstructionRouter(routes, settings.routeRetries(), settings.routeBackoffMs(),
        settings.stallTimeoutMs(), new RouteMetrics(), new ProofVerifier(settings), ctx,
        registry);
  }


  /**
   * One task in this many, while some network route is measured and another is not, tries the
   * unmeasured one first: else a route behind one that always serves would never be measured,
   * however much faster it is (a route's measurements expire after ten minutes, so a route
   * long unused is measured anew the same way).
   */
  static final int EXPLORE_EVERY = 2;
  /** Tasks ordered so far (each order numbered, for exploration). */
  private final java.util.concurrent.atomic.AtomicLong tasksOrdered =
      new java.util.concurrent.atomic.AtomicLong();

  /**
   * A task's route order, fixed before the task runs: a client judges (budget, blame) the
   * route its task will try first, not one another task's exploration has since put first.
   */
  public static final class Order {
    final List<ReconstructionRoute> routes;

    private Order(List<ReconstructionRoute> routes) {
      this.routes = routes;
    }
  }

  /**
   * The order of the next task of {@code bytes}, to be passed to {@link #repair(RepairRequest,
   * RepairSink, Order)} by a caller that judges its first route. It takes a task's number
   * (an exploration's turn) whether or not the caller then runs it, so that a turn its caller
   * declines (a read left to Hadoop's stream) passes on rather than being offered to every
   * read after it; the tasks run with it take no other.
   */
  public Order order(long bytes) {
    return new Order(byCost(bytes, tasksOrdered.getAndIncrement()));
  }

  /**
   * The routes for task number {@code task} of {@code bytes}, native last: the network routes
   * cheapest first by their measured cost when each is measured; otherwise
   * netec.route.order's order, but for one task in {@value #EXPLORE_EVERY}, which tries the
   * first unmeasured route first.
   */
  private List<ReconstructionRoute> byCost(long bytes, long task) {
    int n = routes.size() - 1;
    if (n < 2) {
      return routes;
    }
    double[] est = new double[n];
    int unmeasured = -1;
    for (int i = 0; i < n; i++) {
      ReadCost c = metrics.cost(routes.get(i).name());
      if (c.samples() < ReadCost.MIN_TRUSTED) {
        unmeasured = unmeasured < 0 ? i : unmeasured;
      } else {
        est[i] = c.estimateMillis(bytes);
      }
    }
    if (unmeasured >= 0) {
      if (unmeasured == 0 || task % EXPLORE_EVERY != EXPLORE_EVERY - 1) {
        return routes;
      }
      List<ReconstructionRoute> out = new ArrayList<>(routes);
      out.add(0, out.remove(unmeasured));
      return out;
    }
    Integer[] order = new Integer[n];
    for (int i = 0; i < n; i++) {
      order[i] = i;
    }
    Arrays.sort(order, java.util.Comparator.comparingDouble(i -> est[i])); // stable: ties
    if (isIdentity(order)) {
      return routes;
    }
    List<ReconstructionRoute> out = new ArrayList<>();
    for (Integer i : order) {
      out.add(routes.get(i));
    }
    out.add(routes.get(n));
    return out;
  }

  private static boolean isIdentity(Integer[] order) {
    for (int i = 0; i < order.length; i++) {
      if (order[i] != i) {
        return false;
      }
    }
    return true;
  }

  public List<String> routeNames() {
    List<String> n = new ArrayList<>();
    for (ReconstructionRoute r : routes) {
      n.add(r.name());
    }
    return n;
  }

  /** Whether any route besides native is configured. */
  public boolean hasNetworkRoutes() {
    return routes.size() > 1;
  }

  /**
   * The route that would take the next task of {@code bytes} first (a peek: no turn taken):
   * the first in order (by cost, when measured) besides native that is not passed over for its
   * back-off; null when none.
   */
  public String firstUsableNetworkRoute(long bytes) {
    return firstUsableNetworkRoute(new Order(byCost(bytes, tasksOrdered.get())));
  }

  /** The route {@code order}'s task will try first now (null: none but native). */
  public String firstUsableNetworkRoute(Order order) {
    for (ReconstructionRoute r : order.routes) {
      Unavailable down = unavailable.get(r.name());
      if (!r.name().equals("native")
          && (down == null || System.nanoTime() - down.untilNanos >= 0)) {
        return r.name();
      }
    }
    return null;
  }

  public RouteMetrics metrics() {
    return metrics;
  }

  /** The context the routes were built with (null for a router built from a list). */
  public RouteContext context() {
    return context;
  }

  /** The routes this process has (null for a router built from a list). */
  public RouteRegistry registry() {
    return registry;
  }

  /** Repairs {@code req} into {@code sink}, each row through the first route that proves it. */
  public Outcome repair(RepairRequest req, RepairSink sink) {
    return repair(req, sink, null);
  }

  /** As {@link #repair(RepairRequest, RepairSink)}, in a fixed order (null: ordered now). */
  public Outcome repair(RepairRequest req, RepairSink sink, Order order) {
    metrics.taskReceived();
    Task task = new Task(req, sink, order);
    try {
      return task.run();
    } catch (RuntimeException | LinkageError e) { // a bug: nothing partial stays, one ERROR line
      LOG.error("{}: the router failed", req, e);
      task.dropOpen();
      return new Outcome(null, task.bytes, -1, "router failed: " + oneLine(e.toString()),
          Arrays.asList(task.keptBy), task.verifyFailures);
    } finally {
      metrics.taskEnded();
    }
  }

  /** One repair: which rows are kept, by which route, and what the routes said. */
  private final class Task {
    final RepairRequest req;
    final RepairSink sink;
    final String[] keptBy;
    final List<String> passed = new ArrayList<>();
    final List<String> served = new ArrayList<>();
    final long taskStart = System.currentTimeMillis();
    long bytes;
    long bytesIn;
    boolean bytesInKnown = true;
    int verifyFailures;

    final Order fixed;

    Task(RepairRequest req, RepairSink sink, Order fixed) {
      this.req = req;
      this.sink = sink;
      this.fixed = fixed;
      this.keptBy = new String[req.rows()];
    }

    int[] open() {
      int n = 0;
      int[] rows = new int[keptBy.length];
      for (int r = 0; r < keptBy.length; r++) {
        if (keptBy[r] == null) {
          rows[n++] = r;
        }
      }
      return Arrays.copyOf(rows, n);
    }

    Outcome run() {
      List<ReconstructionRoute> order = fixed != null ? fixed.routes
          : byCost(req.bytesToRebuild(), tasksOrdered.getAndIncrement());
      if (order != routes) {
        metrics.orderedByCost();
        StringBuilder why = new StringBuilder();
        for (ReconstructionRoute r : order.subList(0, order.size() - 1)) {
          ReadCost c = metrics.cost(r.name());
          why.append(why.length() > 0 ? ", " : "").append(r.name()).append(
              c.samples() < ReadCost.MIN_TRUSTED
                  ? " (measured " + c.samples() + " times: tried to measure it)"
                  : String.format(java.util.Locale.ROOT, " %.0f ms",
                      c.estimateMillis(req.bytesToRebuild())));
        }
        limited.info("order", "{}: routes tried by measured cost, {} (configured {})", req,
            why, routeNames());
      }
      for (ReconstructionRoute route : order) {
        if (open().length == 0 || sink.abandoned()) {
          break;
        }
        String name = route.name();
        Unavailable down = unavailable.get(name);
        if (down != null && System.nanoTime() - down.untilNanos < 0) {
          metrics.skipped(name);
          passed.add(name + " unavailable: " + down.reason);
          continue;
        }
        runRoute(route);
      }
      int[] left = open();
      String others = String.join("; ", passed);
      String last = null;
      for (String r : keptBy) {
        last = r != null ? r : last;
      }
      if (left.length > 0 && sink.abandoned()) {
        metrics.outcome(req, null, bytes, 0, taskStart, others);
        LOG.info("{} abandoned by its caller after {} ms (read another way): {}", req,
            System.currentTimeMillis() - taskStart, others);
        return new Outcome(null, bytes, -1, others, Arrays.asList(keptBy), verifyFailures);
      }
      if (left.length > 0) {
        metrics.outcome(req, null, bytes, 0, taskStart, others);
        String part = bytes > 0 ? " (" + String.join("; ", served) + " served the others)" : "";
        LOG.error("{} was not rebuilt by any route: units {}{}: {}", req,
            Arrays.toString(units(left)), part, others);
        return new Outcome(null, bytes, -1, others, Arrays.asList(keptBy), verifyFailures);
      }
      long ms = System.currentTimeMillis() - taskStart;
      metrics.outcome(req, String.join("+", new LinkedHashSet<>(Arrays.asList(keptBy))), bytes,
          ms, taskStart, others);
      LOG.info("{} served by route {}{}", req, String.join("; route ", served),
          others.isEmpty() ? "" : "; " + others);
      return new Outcome(last, bytes, bytesInKnown ? bytesIn : -1, others,
          Arrays.asList(keptBy), verifyFailures);
    }

    /** Drops every row not kept. */
    void dropOpen() {
      for (int r : open()) {
        try {
          sink.drop(r);
        } catch (RuntimeException e) {
          LOG.warn("{}: dropping row {} failed: {}", req, r, e.toString());
        }
      }
    }

    int[] units(int[] rows) {
      int[] erased = req.erased();
      int[] u = new int[rows.length];
      for (int i = 0; i < rows.length; i++) {
        u[i] = erased[rows[i]];
      }
      return u;
    }

    /** Every attempt of one route; returns when it served all it could or gave up. */
    void runRoute(ReconstructionRoute route) {
      String name = route.name();
      boolean isNative = route == routes.get(routes.size() - 1);
      int attempts = isNative ? 1 : 1 + retries;
      Set<Integer> faulty = new LinkedHashSet<>();
      String failure = null;
      for (int attempt = 1; attempt <= attempts && open().length > 0 && !sink.abandoned(); ) {
        int[] rows = open();
        RepairRequest sub = req.withRows(rows).without(faulty);
        if (!isNative) { // the caller's own limit (a client's socket timeout) or a spare's
          int stall = sub.spareSurvivors() > 0 ? stallTimeoutMs : 0;
          int own = req.progressTimeoutMs();
          sub = sub.withProgressTimeout(own > 0 && (stall == 0 || own < stall) ? own : stall);
        }
        RepairVerifier.Attempt proof = null;
        RowView view = new RowView(sink, rows);
        long start = System.nanoTime();
        try {
          proof = isNative ? null : verifier.start(sub);
          view.proof = proof;
          view.begin(proof);
          long in;
          IOException routeFailure = null;
          try {
            in = route.repair(sub, view);
          } catch (RouteDeclinedException e) {
            throw e; // nothing was done
          } catch (IOException e) {
            in = -1;
            routeFailure = e;
          } finally {
            view.fence(); // what the route writes from now on is refused, never kept
          }
          // Whatever the route says, each row it completed is proven and kept on its own.
          Proven p = prove(name, view, rows, proof, routeFailure == null);
          long ms = (System.nanoTime() - start) / 1_000_000;
          if (p.bytes > 0) {
            available(name);
            bytes += p.bytes;
            if (in >= 0) {
              bytesIn += in;
            } else {
              bytesInKnown = false;
            }
            metrics.served(name, p.bytes, in, ms);
            // the cost model's sample in fractions of a ms: a fast task is not free
            metrics.cost(name).add(p.bytes, (System.nanoTime() - start) / 1e6);
            served.add(name + " (" + (p.kept.size() == req.rows() ? "" : "units "
                + p.kept + ": ") + p.bytes + " bytes in " + ms + " ms"
                + (in >= 0 ? ", " + in + " bytes in" : "") + ")");
          }
          if (routeFailure != null) {
            throw routeFailure;
          }
          if (p.mismatch != null) {
            metrics.verifyFailed(name);
            verifyFailures++;
            limited.warn("verify-" + name, "{}: route {} delivered units {} that do not match "
                + "the survivors' fingerprints, not kept (attempt {} of {}): {}", req, name,
                p.mismatchUnits, attempt, attempts, p.mismatch);
            throw new IOException("rebuilt units " + p.mismatchUnits
                + " do not match the survivors' fingerprints: " + p.mismatch);
          }
          if (p.incomplete != null) {
            throw new IOException(p.incomplete);
          }
          return; // every open row kept
        } catch (RouteUnavailableException e) {
          view.dropAll();
          metrics.unavailable(name);
          unavailable(name, oneLine(e.getMessage()), false);
          passed.add(name + " unavailable: " + oneLine(e.getMessage()));
          return;
        } catch (RouteDeclinedException e) {
          view.dropAll();
          available(name);
          metrics.declined(name);
          passed.add(name + " declined: " + oneLine(e.getMessage()));
          return;
        } catch (Exception | LinkageError e) {
          view.dropAll();
          long ms = (System.nanoTime() - start) / 1_000_000;
          if (sink.abandoned()) { // the caller cut it short: neither route nor survivor blamed
            passed.add(name + " abandoned by the caller after " + ms + " ms");
            return;
          }
          SurvivorFault fault = survivorFault(e, proof, sub, stalled(e));
          if (fault != null) {
            metrics.survivorFault(name);
            List<Integer> fresh = new ArrayList<>();
            for (int u : fault.units()) {
              if (!faulty.contains(u)) {
                fresh.add(u);
              }
            }
            String why = oneLine(fault.getMessage());
            if (!isNative && !fresh.isEmpty() && sub.spareSurvivors() >= fresh.size()) {
              LOG.warn("{}: route {} attempt without units {} after {} ms: {}", req, name,
                  fresh, ms, why);
              passed.add(name + " without units " + fresh + ": " + why);
              faulty.addAll(fresh);
              continue; // the same attempt again, spares in their place: not the route's fault
            }
            passed.add(name + " failed for survivors " + Arrays.toString(fault.units()) + ": "
                + why);
            return; // no spare left: the next route, the route not blamed
          }
          metrics.failed(name);
          failure = oneLine(e.toString());
          LOG.warn("{}: route {} failed after {} ms (attempt {} of {}): {}", req, name, ms,
              attempt, attempts, failure);
          LOG.debug("{}: route {} failure", req, name, e);
          attempt++;
        } finally {
          if (proof != null) {
            proof.close();
          }
        }
      }
      if (failure != null) {
        passed.add(name + " failed: " + failure);
        if (!isNative) {
          unavailable(name, "failed: " + failure, true);
        }
      }
    }

    /**
     * Seals, proves and keeps each row of an attempt: rows that are whole and proven are kept
     * (by this route), the rest dropped. A native attempt keeps what Hadoop wrote.
     */
    Proven prove(String name, RowView view, int[] rows, RepairVerifier.Attempt proof,
        boolean routeDone) throws IOException {
      Proven p = new Proven();
      int[] erased = req.erased();
      for (int r = 0; r < rows.length; r++) {
        try {
          view.seal(r);
        } catch (IOException e) {
          view.drop(r);
          if (routeDone) {
            p.incomplete = "unit " + erased[rows[r]] + ": " + e.getMessage();
          }
          continue;
        }
        String why = proof == null ? null : proof.check(r); // a SurvivorFault ends the attempt
        if (why != null) {
          view.drop(r);
          p.mismatch = p.mismatch == null ? why : p.mismatch;
          p.mismatchUnits.add(erased[rows[r]]);
          continue;
        }
        p.bytes += view.keep(r);
        keptBy[rows[r]] = name;
        p.kept.add(erased[rows[r]]);
      }
      return p;
    }
  }

  /** What an attempt proved. */
  private static final class Proven {
    long bytes;
    final List<Integer> kept = new ArrayList<>();
    final List<Integer> mismatchUnits = new ArrayList<>();
    String mismatch;
    String incomplete;
  }

  /** Whether the route gave up for want of progress ({@link RouteStalledException}). */
  private static boolean stalled(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof RouteStalledException) {
        return true;
      }
    }
    return false;
  }

  /**
   * The survivors behind a failure: named by the route or the proof ({@link SurvivorFault}),
   * or told by the attempt's proof (survivors whose proof failed, or that lagged behind the
   * others), when no more than the spares.
   */
  private static SurvivorFault survivorFault(Throwable e, RepairVerifier.Attempt proof,
      RepairRequest sub, boolean stalled) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof SurvivorFault) {
        return (SurvivorFault) t;
      }
    }
    if (proof == null) {
      return null;
    }
    List<Integer> culprits = proof.culprits(stalled);
    if (!culprits.isEmpty() && culprits.size() <= sub.spareSurvivors()) {
      return new SurvivorFault(culprits, "units " + culprits + " failed or lagged behind the "
          + "others (" + oneLine(e.toString()) + ")");
    }
    return null;
  }

  /**
   * Passes a route over for the back-off; logs only when it was usable before.
   *
   * @param failing it failed on its own account (else its service was unreachable)
   */
  private void unavailable(String name, String reason, boolean failing) {
    if (backoffNanos == 0) {
      return;
    }
    Unavailable before = unavailable.put(name,
        new Unavailable(System.nanoTime() + backoffNanos, reason));
    if (before == null) {
      LOG.warn("Route {} {} ({}); not asked again for {} ms", name,
          failing ? "failing" : "unavailable", reason, backoffNanos / 1_000_000);
    }
  }

  /** Peer-supplied text on one line: a reason may not forge log lines. */
  private static String oneLine(String s) {
    return s == null ? "" : LogLimiter.oneLine(s);
  }

  private void available(String name) {
    if (unavailable.remove(name) != null) {
      LOG.info("Route {} usable again", name);
    }
  }

  /**
   * The sink as one attempt sees it: the attempt's rows 0..n-1 are the sink's rows {@code
   * rows}; what the attempt wrote to a row it did not keep is dropped.
   */
  private static final class RowView implements RepairSink {
    private final RepairSink sink;
    private final int[] rows;
    private final boolean[] settled;
    RepairVerifier.Attempt proof;
    private boolean written;
    private boolean fenced;

    RowView(RepairSink sink, int[] rows) {
      this.sink = sink;
      this.rows = rows;
      this.settled = new boolean[rows.length];
    }

    /** The route returned: a write from a thread it left behind is refused from now on. */
    synchronized void fence() {
      fenced = true;
    }

    @Override
    public void begin(RowDigests digests) {
      sink.begin(digests == null ? null : new RowDigests() {
        @Override
        public void update(int row, long position, java.nio.ByteBuffer data) {
          digests.update(attemptRow(row), position, data);
        }

        @Override
        public org.apache.hadoop.util.DataChecksum survivorsChecksum() throws IOException {
          return digests.survivorsChecksum();
        }
      });
    }

    /** The attempt's row of sink row {@code row}. */
    private int attemptRow(int row) {
      for (int r = 0; r < rows.length; r++) {
        if (rows[r] == row) {
          return r;
        }
      }
      throw new IllegalArgumentException("row " + row + " is not in this attempt");
    }

    private int row(int r) {
      if (r < 0 || r >= rows.length) {
        throw new IllegalArgumentException("the attempt has no row " + r);
      }
      return rows[r];
    }

    @Override
    public synchronized void write(int r, java.nio.ByteBuffer data) throws IOException {
      if (fenced) {
        throw new IOException("the attempt is over: a write after the route returned");
      }
      if (!written && proof != null) {
        written = true;
        proof.begin(); // the route delivers: its survivors are asked now at the latest
      }
      sink.write(row(r), data);
    }

    @Override
    public void repairNatively(int[] attemptRows) throws IOException {
      int[] mine = new int[attemptRows.length];
      for (int i = 0; i < mine.length; i++) {
        mine[i] = row(attemptRows[i]);
      }
      sink.repairNatively(mine);
    }

    @Override
    public void seal(int r) throws IOException {
      sink.seal(row(r));
    }

    @Override
    public long keep(int r) throws IOException {
      settled[r] = true;
      return sink.keep(row(r));
    }

    @Override
    public void drop(int r) {
      settled[r] = true;
      sink.drop(row(r));
    }

    /** Drops every row the attempt did not keep. */
    void dropAll() {
      for (int r = 0; r < rows.length; r++) {
        if (!settled[r]) {
          drop(r);
        }
      }
    }
  }
}
