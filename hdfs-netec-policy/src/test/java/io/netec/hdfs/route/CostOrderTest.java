package io.netec.hdfs.route;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** A task's route order and the routes' back-off, without a router or a route's work. */
class CostOrderTest {
  private static final long UNIT = 1 << 20;

  private static ReconstructionRoute named(String name) {
    return new ReconstructionRoute() {
      @Override
      public String name() {
        return name;
      }

      @Override
      public long repair(RepairRequest req, RepairSink sink) {
        throw new UnsupportedOperationException("orders only");
      }
    };
  }

  private static List<ReconstructionRoute> routes(String... names) {
    List<ReconstructionRoute> r = new ArrayList<>();
    for (String n : names) {
      r.add(named(n));
    }
    r.add(new NativeRoute());
    return r;
  }

  private static List<String> names(List<ReconstructionRoute> order) {
    List<String> n = new ArrayList<>();
    order.forEach(r -> n.add(r.name()));
    return n;
  }

  private static void measure(RouteMetrics m, String route, double msPerUnit) {
    for (int i = 1; i <= ReadCost.MIN_TRUSTED; i++) {
      m.cost(route).add(UNIT * i, msPerUnit * i);
    }
  }

  @Test
  void theConfiguredOrderUntilMeasuredThenCheapestFirstNativeLast() {
    RouteMetrics m = new RouteMetrics();
    CostOrder o = new CostOrder(routes("a", "b", "c"), m);
    assertTrue(o.isConfigured(o.next(UNIT)), "nothing measured");
    measure(m, "a", 50);
    measure(m, "b", 20);
    measure(m, "c", 30);
    List<ReconstructionRoute> order = o.next(UNIT);
    assertEquals(List.of("b", "c", "a", "native"), names(order));
    assertFalse(o.isConfigured(order));
  }

  @Test
  void tiesKeepTheConfiguredOrder() {
    RouteMetrics m = new RouteMetrics();
    CostOrder o = new CostOrder(routes("a", "b"), m);
    measure(m, "a", 40);
    measure(m, "b", 40);
    assertTrue(o.isConfigured(o.next(UNIT)));
  }

  @Test
  void oneTaskInEveryFewExploresTheFirstUnmeasuredRoute() {
    RouteMetrics m = new RouteMetrics();
    CostOrder o = new CostOrder(routes("a", "b", "c"), m);
    measure(m, "a", 10);
    List<String> firsts = new ArrayList<>();
    for (int i = 0; i < 2 * CostOrder.EXPLORE_EVERY; i++) {
      firsts.add(o.next(UNIT).get(0).name());
    }
    List<String> expected = new ArrayList<>();
    for (int i = 0; i < 2 * CostOrder.EXPLORE_EVERY; i++) {
      expected.add(i % CostOrder.EXPLORE_EVERY == CostOrder.EXPLORE_EVERY - 1 ? "b" : "a");
    }
    assertEquals(expected, firsts);
  }

  @Test
  void aPeekTakesNoTurn() {
    RouteMetrics m = new RouteMetrics();
    CostOrder o = new CostOrder(routes("a", "b"), m);
    measure(m, "a", 10);
    assertEquals(CostOrder.EXPLORE_EVERY, 2, "the turns below assume one in 2");
    assertEquals("a", o.peek(UNIT).get(0).name());
    assertEquals("a", o.peek(UNIT).get(0).name(), "still turn 0");
    assertEquals("a", o.next(UNIT).get(0).name());
    assertEquals("b", o.peek(UNIT).get(0).name(), "turn 1 explores");
  }

  @Test
  void aBackedOffRouteIsPassedOverUntilItsBackOffEnds() {
    AtomicLong now = new AtomicLong(1_000_000_000L);
    RouteBackoff b = new RouteBackoff(500, now::get);
    assertNull(b.passedOver("a"));
    b.passOver("a", "unreachable", false);
    assertEquals("unreachable", b.passedOver("a"));
    now.addAndGet(499_000_000L);
    assertEquals("unreachable", b.passedOver("a"), "1 ms before its end");
    now.addAndGet(1_000_000L);
    assertNull(b.passedOver("a"), "its back-off over");
    b.passOver("a", "failed: x", true);
    assertEquals("failed: x", b.passedOver("a"));
    b.usable("a");
    assertNull(b.passedOver("a"), "it served: usable at once");
  }

  @Test
  void noBackOffPassesNothingOver() {
    RouteBackoff b = new RouteBackoff(0, System::nanoTime);
    b.passOver("a", "unreachable", false);
    assertNull(b.passedOver("a"));
  }
}
