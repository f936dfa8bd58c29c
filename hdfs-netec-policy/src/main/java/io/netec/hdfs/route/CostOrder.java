package io.netec.hdfs.route;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The order a task tries the routes in (native always last): {@code netec.route.order}'s until
 * every network route is measured ({@link ReadCost#MIN_TRUSTED} served tasks), then cheapest
 * first by the measured cost of the task's size, ties in the configured order. While one is
 * measured and another is not, one task in {@value #EXPLORE_EVERY} tries the first unmeasured
 * one first: else a route behind one that always serves would never be measured, however much
 * faster it is (measurements expire after ten minutes, so a route long unused is measured anew
 * the same way). Plain and thread-safe: the tasks are numbered as they are ordered.
 */
final class CostOrder {
  /** One task in this many explores an unmeasured route (see the class comment). */
  static final int EXPLORE_EVERY = 2;

  private final List<ReconstructionRoute> configured;
  private final RouteMetrics metrics;
  /** Tasks ordered so far (each order numbered, for exploration). */
  private final AtomicLong tasksOrdered = new AtomicLong();

  /** @param configured the routes in netec.route.order's order, native last */
  CostOrder(List<ReconstructionRoute> configured, RouteMetrics metrics) {
    this.configured = configured;
    this.metrics = metrics;
  }

  /** The order of the next task of {@code bytes}, which takes its turn. */
  List<ReconstructionRoute> next(long bytes) {
    return order(bytes, tasksOrdered.getAndIncrement());
  }

  /** The order the next task of {@code bytes} would get (a peek: no turn taken). */
  List<ReconstructionRoute> peek(long bytes) {
    return order(bytes, tasksOrdered.get());
  }

  /** Whether {@code order} is the configured one (the same list: no cost decided it). */
  boolean isConfigured(List<ReconstructionRoute> order) {
    return order == configured;
  }

  /** The routes for task number {@code task} of {@code bytes}. */
  private List<ReconstructionRoute> order(long bytes, long task) {
    int n = configured.size() - 1;
    if (n < 2) {
      return configured;
    }
    double[] est = new double[n];
    int unmeasured = -1;
    for (int i = 0; i < n; i++) {
      ReadCost c = metrics.cost(configured.get(i).name());
      if (!c.trusted()) {
        unmeasured = unmeasured < 0 ? i : unmeasured;
      } else {
        est[i] = c.estimateMillis(bytes);
      }
    }
    if (unmeasured >= 0) {
      if (unmeasured == 0 || task % EXPLORE_EVERY != EXPLORE_EVERY - 1) {
        return configured;
      }
      List<ReconstructionRoute> out = new ArrayList<>(configured);
      out.add(0, out.remove(unmeasured));
      return out;
    }
    Integer[] byCost = new Integer[n];
    for (int i = 0; i < n; i++) {
      byCost[i] = i;
    }
    Arrays.sort(byCost, Comparator.comparingDouble(i -> est[i])); // stable: ties
    if (isIdentity(byCost)) {
      return configured;
    }
    List<ReconstructionRoute> out = new ArrayList<>();
    for (Integer i : byCost) {
      out.add(configured.get(i));
    }
    out.add(configured.get(n));
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
}
