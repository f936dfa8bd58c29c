package io.netec.hdfs.route;

import io.netec.hdfs.NetecConfigKeys;
import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.apache.hadoop.conf.Configuration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tries the configured routes in order for each task. A route that declines is skipped; one
 * that fails is retried {@code netec.route.retries} times, then the next route runs. The native
 * route is always last. Every decision is logged with the task, route, reason, bytes and time.
 */
public final class ReconstructionRouter {
  private static final Logger LOG = LoggerFactory.getLogger(ReconstructionRouter.class);

  private final List<ReconstructionRoute> routes;
  private final int retries;
  private final RouteMetrics metrics;

  public ReconstructionRouter(List<ReconstructionRoute> routes, int retries,
      RouteMetrics metrics) {
    if (routes.isEmpty() || !NativeRoute.NAME.equals(routes.get(routes.size() - 1).name())) {
      throw new IllegalArgumentException("the native route must be last");
    }
    if (retries < 0) {
      throw new IllegalArgumentException("retries must be >= 0");
    }
    this.routes = Collections.unmodifiableList(new ArrayList<>(routes));
    this.retries = retries;
    this.metrics = metrics;
    for (ReconstructionRoute r : routes) {
      metrics.registerRoute(r.name());
    }
  }

  /** Builds the routes of netec.route.order; a bad key value throws, naming the key. */
  public static ReconstructionRouter fromConf(RouteContext ctx, RouteMetrics metrics) {
    Configuration conf = ctx.conf();
    int retries = conf.getInt(NetecConfigKeys.ROUTE_RETRIES, NetecConfigKeys.ROUTE_RETRIES_DEFAULT);
    if (retries < 0) {
      throw new IllegalArgumentException(NetecConfigKeys.ROUTE_RETRIES + " must be >= 0, is "
          + retries);
    }
    Set<String> names = new LinkedHashSet<>();
    for (String n : conf.getTrimmedStrings(NetecConfigKeys.ROUTE_ORDER,
        NetecConfigKeys.ROUTE_ORDER_DEFAULT.split(","))) {
      if (!names.add(n)) {
        throw new IllegalArgumentException(NetecConfigKeys.ROUTE_ORDER + " names route '" + n
            + "' twice");
      }
    }
    names.remove(NativeRoute.NAME);
    List<ReconstructionRoute> routes = new ArrayList<>();
    for (String n : names) {
      routes.add(createRoute(n, ctx));
    }
    routes.add(new NativeRoute());
    return new ReconstructionRouter(routes, retries, metrics);
  }

  private static ReconstructionRoute createRoute(String name, RouteContext ctx) {
    String key = NetecConfigKeys.ROUTE_CLASS_PREFIX + name;
    String cls = ctx.conf().getTrimmed(key);
    if (cls == null) {
      switch (name) {
        case "switch":
          return new io.netec.hdfs.switchroute.SwitchRoute(ctx);
        case "inec":
          return new io.netec.hdfs.inecroute.InecRoute(ctx);
        default:
          throw new IllegalArgumentException(NetecConfigKeys.ROUTE_ORDER + " names unknown route '"
              + name + "'; built in are switch, inec, native, or set " + key);
      }
    }
    try {
      Class<? extends ReconstructionRoute> c =
          ctx.conf().getClassByName(cls).asSubclass(ReconstructionRoute.class);
      Constructor<? extends ReconstructionRoute> ctor = c.getConstructor(RouteContext.class);
      ReconstructionRoute r = ctor.newInstance(ctx);
      if (!name.equals(r.name())) {
        throw new IllegalArgumentException(key + "=" + cls + " makes a route named '" + r.name()
            + "', not '" + name + "'");
      }
      return r;
    } catch (ClassNotFoundException | ClassCastException | NoSuchMethodException
        | InstantiationException | IllegalAccessException e) {
      throw new IllegalArgumentException(key + "=" + cls
          + " is not a ReconstructionRoute class with a public (RouteContext) constructor", e);
    } catch (InvocationTargetException e) {
      throw new IllegalArgumentException(key + "=" + cls + " failed to start: " + e.getCause(),
          e.getCause());
    }
  }

  public List<String> routeNames() {
    List<String> n = new ArrayList<>();
    for (ReconstructionRoute r : routes) {
      n.add(r.name());
    }
    return n;
  }

  public RouteMetrics metrics() {
    return metrics;
  }

  /** Rebuilds the task through the first route that succeeds; returns that route's name. */
  public String reconstruct(ReconstructionTask task) {
    metrics.taskReceived();
    try {
      return route(task);
    } finally {
      metrics.taskEnded();
    }
  }

  private String route(ReconstructionTask task) {
    long taskStart = System.currentTimeMillis();
    StringBuilder skipped = new StringBuilder();
    for (ReconstructionRoute route : routes) {
      boolean last = route == routes.get(routes.size() - 1);
      int attempts = last ? 1 : 1 + retries;
      for (int attempt = 1; attempt <= attempts; attempt++) {
        long start = System.nanoTime();
        try {
          long bytes = route.reconstruct(task);
          long ms = (System.nanoTime() - start) / 1_000_000;
          metrics.served(route.name(), bytes, ms);
          metrics.outcome(task, route.name(), bytes, ms, taskStart, others(skipped));
          if (!last && task.hadoopTask() != null) {
            task.hadoopTask().releaseServedElsewhere(bytes);
          }
          LOG.info("Task {} served by route {} ({} bytes in {} ms){}", task, route.name(), bytes,
              ms, skipped);
          return route.name();
        } catch (RouteDeclinedException e) {
          metrics.declined(route.name());
          LOG.info("Task {}: route {} declined: {}", task, route.name(), e.getMessage());
          skipped.append("; ").append(route.name()).append(" declined: ").append(e.getMessage());
          break;
        } catch (Exception | LinkageError e) {
          metrics.failed(route.name());
          long ms = (System.nanoTime() - start) / 1_000_000;
          LOG.warn("Task {}: route {} failed after {} ms (attempt {} of {}): {}", task,
              route.name(), ms, attempt, attempts, e.toString(), e);
          skipped.append("; ").append(route.name()).append(" failed: ").append(e);
        }
      }
    }
    metrics.outcome(task, null, 0, 0, taskStart, others(skipped));
    LOG.error("Task {} was not rebuilt by any route{}", task, skipped);
    return null;
  }

  private static String others(StringBuilder skipped) {
    return skipped.length() == 0 ? "" : skipped.substring(2);
  }
}
