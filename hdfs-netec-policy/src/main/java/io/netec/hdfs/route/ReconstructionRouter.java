package io.netec.hdfs.route;

import io.netec.hdfs.NetecSettings;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.server.datanode.DataNode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tries the configured routes in order for each repair, the same on a DataNode (its
 * reconstruction tasks) and on a client (its degraded reads). A route that declines is
 * skipped; one that fails is retried {@code netec.route.retries} times, then the next route
 * runs; native is always last. A route that cannot reach its service is not asked again for
 * {@code netec.route.backoff.ms} (one log line when it goes away, one when it is back). Each
 * repair ends with one log line naming the route that served it and why the others were
 * passed over; the same line goes to {@link RouteMetrics#recentTasks()}.
 */
public final class ReconstructionRouter {
  private static final Logger LOG = LoggerFactory.getLogger(ReconstructionRouter.class);

  private final List<ReconstructionRoute> routes;
  private final int retries;
  private final long backoffNanos;
  private final RouteMetrics metrics;
  private final RouteContext context;
  private final RouteRegistry registry;
  /** Routes whose service was unreachable, until when (System.nanoTime) and why. */
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
    /** The route that served it, or null when none did. */
    public final String route;
    /** Bytes delivered to the sink. */
    public final long bytes;
    /** Bytes the serving route received (its ingress), -1 when not known. */
    public final long bytesIn;
    /** Why the routes before it did not serve ("" when the first one did). */
    public final String others;

    Outcome(String route, long bytes, long bytesIn, String others) {
      this.route = route;
      this.bytes = bytes;
      this.bytesIn = bytesIn;
      this.others = others;
    }
  }

  public ReconstructionRouter(List<ReconstructionRoute> routes, int retries, long backoffMs,
      RouteMetrics metrics) {
    this(routes, retries, backoffMs, metrics, null, null);
  }

  private ReconstructionRouter(List<ReconstructionRoute> routes, int retries, long backoffMs,
      RouteMetrics metrics, RouteContext context, RouteRegistry registry) {
    if (routes.isEmpty() || !NativeRoute.NAME.equals(routes.get(routes.size() - 1).name())) {
      throw new IllegalArgumentException("the native route must be last");
    }
    if (retries < 0 || backoffMs < 0) {
      throw new IllegalArgumentException("retries and back-off must be >= 0");
    }
    this.routes = Collections.unmodifiableList(new ArrayList<>(routes));
    this.retries = retries;
    this.backoffNanos = backoffMs * 1_000_000L;
    this.metrics = metrics;
    this.context = context;
    this.registry = registry;
    for (ReconstructionRoute r : routes) {
      metrics.registerRoute(r.name());
    }
  }

  /**
   * The router of one side, as the configuration says: the routes ServiceLoader finds, the
   * settings parsed once, the routes of netec.route.order built.
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
        new RouteMetrics(), ctx, registry);
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

  /** Repairs {@code req} into {@code sink} through the first route that succeeds. */
  public Outcome repair(RepairRequest req, RepairSink sink) {
    metrics.taskReceived();
    try {
      return route(req, sink);
    } finally {
      metrics.taskEnded();
    }
  }

  private Outcome route(RepairRequest req, RepairSink sink) {
    long taskStart = System.currentTimeMillis();
    List<String> passed = new ArrayList<>();
    for (ReconstructionRoute route : routes) {
      String name = route.name();
      Unavailable down = unavailable.get(name);
      if (down != null && System.nanoTime() - down.untilNanos < 0) {
        metrics.skipped(name);
        passed.add(name + " unavailable: " + down.reason);
        continue;
      }
      boolean last = route == routes.get(routes.size() - 1);
      int attempts = last ? 1 : 1 + retries;
      for (int attempt = 1; attempt <= attempts; attempt++) {
        long start = System.nanoTime();
        try {
          long bytesIn = route.repair(req, sink);
          long bytes = sink.complete();
          long ms = (System.nanoTime() - start) / 1_000_000;
          available(name);
          metrics.served(name, bytes, bytesIn, ms);
          String others = String.join("; ", passed);
          metrics.outcome(req, name, bytes, ms, taskStart, others);
          LOG.info("{} served by route {} ({} bytes in {} ms{}){}", req, name, bytes, ms,
              bytesIn >= 0 ? ", " + bytesIn + " bytes in" : "",
              others.isEmpty() ? "" : "; " + others);
          return new Outcome(name, bytes, bytesIn, others);
        } catch (RouteUnavailableException e) {
          sink.abort();
          metrics.unavailable(name);
          unavailable(name, oneLine(e.getMessage()));
          passed.add(name + " unavailable: " + oneLine(e.getMessage()));
          break;
        } catch (RouteDeclinedException e) {
          sink.abort();
          available(name);
          metrics.declined(name);
          passed.add(name + " declined: " + oneLine(e.getMessage()));
          break;
        } catch (Exception | LinkageError e) {
          sink.abort();
          available(name);
          metrics.failed(name);
          long ms = (System.nanoTime() - start) / 1_000_000;
          LOG.warn("{}: route {} failed after {} ms (attempt {} of {}): {}", req, name, ms,
              attempt, attempts, oneLine(e.toString()));
          LOG.debug("{}: route {} failure", req, name, e);
          passed.add(name + " failed: " + oneLine(e.toString()));
        }
      }
    }
    String others = String.join("; ", passed);
    metrics.outcome(req, null, 0, 0, taskStart, others);
    LOG.error("{} was not rebuilt by any route: {}", req, others);
    return new Outcome(null, 0, -1, others);
  }

  /** Marks a route unreachable for the back-off; logs only when it was reachable before. */
  private void unavailable(String name, String reason) {
    if (backoffNanos == 0) {
      return;
    }
    Unavailable before = unavailable.put(name,
        new Unavailable(System.nanoTime() + backoffNanos, reason));
    if (before == null) {
      LOG.warn("Route {} unavailable ({}); not asked again for {} ms", name, reason,
          backoffNanos / 1_000_000);
    }
  }

  /** Peer-supplied text on one line: a reason may not forge log lines. */
  private static String oneLine(String s) {
    return s == null ? "" : LogLimiter.oneLine(s);
  }

  private void available(String name) {
    if (unavailable.remove(name) != null) {
      LOG.info("Route {} reachable again", name);
    }
  }
}
