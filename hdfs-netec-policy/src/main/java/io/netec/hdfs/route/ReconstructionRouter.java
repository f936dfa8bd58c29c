package io.netec.hdfs.route;

import io.netec.hdfs.NetecSettings;
import io.netec.hdfs.proof.ProofVerifier;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
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
 *
 * <p>By job: this class builds the routes and answers callers; {@link RepairTask} runs one
 * repair; {@link CostOrder} orders a task's routes; {@link RouteBackoff} passes routes over;
 * {@link RowView} is the sink as one attempt sees it.
 */
public final class ReconstructionRouter {
  private static final Logger LOG = LoggerFactory.getLogger(ReconstructionRouter.class);
  /** Lines a faulty route or peer can cause: one per cause every 10 s, then a count. */
  final LogLimiter limited = new LogLimiter(LOG, 10_000);

  /** netec.route.order's routes, native last. */
  final List<ReconstructionRoute> routes;
  final int retries;
  final int stallTimeoutMs;
  final RouteMetrics metrics;
  final RepairVerifier verifier;
  /** Routes passed over for now (unreachable, or failing), until when and why. */
  final RouteBackoff backoff;
  /** Each task's route order, by measured cost. */
  final CostOrder costOrder;
  private final RouteContext context;
  private final RouteRegistry registry;

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
    this.backoff = new RouteBackoff(backoffMs, System::nanoTime);
    this.stallTimeoutMs = stallTimeoutMs;
    this.metrics = metrics;
    this.verifier = java.util.Objects.requireNonNull(verifier,
        "a router proves every route's rows: it needs a verifier");
    this.context = context;
    this.registry = registry;
    this.costOrder = new CostOrder(this.routes, metrics);
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
    return new Order(costOrder.next(bytes));
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
    return firstUsableNetworkRoute(new Order(costOrder.peek(bytes)));
  }

  /** The route {@code order}'s task will try first now (null: none but native). */
  public String firstUsableNetworkRoute(Order order) {
    List<String> usable = usableNetworkRoutes(order);
    return usable.isEmpty() ? null : usable.get(0);
  }

  /** The network routes {@code order}'s task may try now (none passed over), in its order. */
  public List<String> usableNetworkRoutes(Order order) {
    List<String> usable = new ArrayList<>();
    for (ReconstructionRoute r : order.routes) {
      if (!r.name().equals("native") && backoff.passedOver(r.name()) == null) {
        usable.add(r.name());
      }
    }
    return usable;
  }

  /**
   * {@code order} with network route {@code first} tried first, the others in their order;
   * {@code order} itself when that route is first already, or not one of its network routes.
   */
  public static Order withFirst(Order order, String first) {
    List<ReconstructionRoute> routes = new ArrayList<>(order.routes);
    for (int i = 1; i < routes.size(); i++) {
      if (routes.get(i).name().equals(first) && !first.equals(NativeRoute.NAME)) {
        routes.add(0, routes.remove(i));
        return new Order(routes);
      }
    }
    return order;
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
    RepairTask task = new RepairTask(this, req, sink, order);
    try {
      return task.run();
    } catch (RuntimeException | LinkageError e) { // a bug: nothing partial stays, one ERROR line
      LOG.error("{}: the router failed", req, e);
      task.dropOpen();
      return new Outcome(null, task.bytes, -1, "router failed: "
          + RepairTask.oneLine(e.toString()),
          Arrays.asList(task.keptBy), task.verifyFailures);
    } finally {
      metrics.taskEnded();
    }
  }
}
