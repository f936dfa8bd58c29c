package io.netec.hdfs.route;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netec.hdfs.NetecConfigKeys;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.StorageType;
import org.apache.hadoop.hdfs.protocol.DatanodeInfo;
import org.apache.hadoop.hdfs.protocol.DatanodeInfo.DatanodeInfoBuilder;
import org.apache.hadoop.hdfs.protocol.ErasureCodingPolicy;
import org.apache.hadoop.hdfs.protocol.ExtendedBlock;
import org.apache.hadoop.io.erasurecode.ECSchema;
import org.junit.jupiter.api.Test;

/** The router's order, decline, failure and retry rules, and its configuration errors. */
class ReconstructionRouterTest {
  private final List<String> calls = new ArrayList<>();
  private long nativeRuns;
  private long released = -1;

  private ReconstructionTask task() {
    ErasureCodingPolicy p = new ErasureCodingPolicy(new ECSchema("netec", 3, 2), 1024 * 1024);
    DatanodeInfo dn = new DatanodeInfoBuilder().build();
    // Group of 3 MiB: every internal block is 1 MiB.
    ExtendedBlock group = new ExtendedBlock("bp", -1024L, 3L * 1024 * 1024, 1001);
    return new ReconstructionTask(group, p, new byte[] {0, 1, 2, 3},
        new DatanodeInfo[] {dn, dn, dn, dn}, new short[] {4}, new DatanodeInfo[] {dn},
        new StorageType[] {StorageType.DISK}, new String[] {"s"},
        new ReconstructionTask.HadoopTask() {
          @Override
          public long runNative() {
            calls.add("native");
            nativeRuns++;
            return 1024 * 1024;
          }

          @Override
          public void releaseServedElsewhere(long bytes) {
            released = bytes;
          }
        });
  }

  /** A route that acts out a script: "ok", "decline" or "fail", one entry per call. */
  private ReconstructionRoute route(String name, String... script) {
    return new ReconstructionRoute() {
      private int call;

      @Override
      public String name() {
        return name;
      }

      @Override
      public long reconstruct(ReconstructionTask t) throws IOException {
        String what = script[Math.min(call++, script.length - 1)];
        calls.add(name + ":" + what);
        if (what.equals("decline")) {
          throw new RouteDeclinedException("not now");
        }
        if (what.equals("fail")) {
          throw new IOException("broken");
        }
        return t.bytesToRebuild();
      }
    };
  }

  @Test
  void firstRouteThatSucceedsServesAndHadoopIsReleased() {
    RouteMetrics metrics = new RouteMetrics();
    ReconstructionRouter r = new ReconstructionRouter(
        List.of(route("a", "decline"), route("b", "ok"), new NativeRoute()), 1, metrics);
    assertEquals("b", r.reconstruct(task()));
    assertEquals(List.of("a:decline", "b:ok"), calls);
    assertEquals(0, nativeRuns);
    assertEquals(1024 * 1024, released);
    assertEquals(1, metrics.get("a", "Declined"));
    assertEquals(1, metrics.get("b", "Served"));
    assertEquals(1024 * 1024, metrics.get("b", "Bytes"));
  }

  @Test
  void failedRouteIsRetriedThenNextRouteRuns() {
    RouteMetrics metrics = new RouteMetrics();
    ReconstructionRouter r = new ReconstructionRouter(
        List.of(route("a", "fail", "fail", "ok"), new NativeRoute()), 1, metrics);
    assertEquals("native", r.reconstruct(task()));
    assertEquals(List.of("a:fail", "a:fail", "native"), calls);
    assertEquals(2, metrics.get("a", "Failed"));
    assertEquals(1, metrics.get("native", "Served"));
    assertEquals(-1, released, "Hadoop's own run releases its resources itself");
  }

  @Test
  void retrySucceeds() {
    ReconstructionRouter r = new ReconstructionRouter(
        List.of(route("a", "fail", "ok"), new NativeRoute()), 1, new RouteMetrics());
    assertEquals("a", r.reconstruct(task()));
    assertEquals(List.of("a:fail", "a:ok"), calls);
  }

  @Test
  void incompleteNativeRunIsAFailure() throws Exception {
    ReconstructionTask t = task();
    // This task's block is 1 MiB; a native run that wrote less is reported as failed.
    ReconstructionTask shortRun = new ReconstructionTask(t.blockGroup(), t.policy(),
        t.liveIndices(), t.sources(), new short[] {4}, new DatanodeInfo[] {t.target(0)},
        new StorageType[] {StorageType.DISK}, new String[] {"s"},
        new ReconstructionTask.HadoopTask() {
          @Override
          public long runNative() {
            return 10;
          }

          @Override
          public void releaseServedElsewhere(long b) {
          }
        });
    RouteMetrics metrics = new RouteMetrics();
    assertNull(new ReconstructionRouter(List.of(new NativeRoute()), 1, metrics)
        .reconstruct(shortRun));
    assertEquals(1, metrics.get("native", "Failed"));
  }

  @Test
  void defaultOrderEndsWithNative() {
    ReconstructionRouter r = ReconstructionRouter.fromConf(
        new RouteContext(new Configuration(false), null), new RouteMetrics());
    assertEquals(List.of("switch", "inec", "native"), r.routeNames());
    assertEquals("native", r.reconstruct(task()));
    assertTrue(calls.contains("native"));
  }

  @Test
  void nativeIsAlwaysLastEvenWhenListedFirst() {
    Configuration conf = new Configuration(false);
    conf.set(NetecConfigKeys.ROUTE_ORDER, "native,inec");
    assertEquals(List.of("inec", "native"),
        ReconstructionRouter.fromConf(new RouteContext(conf, null), new RouteMetrics())
            .routeNames());
  }

  @Test
  void badConfigurationNamesTheKey() {
    assertBadConf(NetecConfigKeys.ROUTE_ORDER, "switch,teleport", "netec.route.order");
    assertBadConf(NetecConfigKeys.ROUTE_ORDER, "inec,inec", "twice");
    assertBadConf(NetecConfigKeys.ROUTE_RETRIES, "-1", "netec.route.retries");
    Configuration conf = new Configuration(false);
    conf.set(NetecConfigKeys.ROUTE_ORDER, "mine");
    conf.set(NetecConfigKeys.ROUTE_CLASS_PREFIX + "mine", String.class.getName());
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> ReconstructionRouter.fromConf(new RouteContext(conf, null), new RouteMetrics()));
    assertTrue(e.getMessage().contains("netec.route.class.mine"), e.getMessage());
  }

  private static void assertBadConf(String key, String value, String expected) {
    Configuration conf = new Configuration(false);
    conf.set(key, value);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> ReconstructionRouter.fromConf(new RouteContext(conf, null), new RouteMetrics()));
    assertTrue(e.getMessage().contains(expected), e.getMessage());
  }

  @Test
  void metricsReadableAsJmxAttributes() throws Exception {
    RouteMetrics metrics = new RouteMetrics();
    long before = System.currentTimeMillis() - 1;
    new ReconstructionRouter(List.of(route("a", "ok"), new NativeRoute()), 0, metrics)
        .reconstruct(task());
    assertEquals(1L, metrics.getAttribute("Tasks"));
    assertEquals(0L, metrics.getAttribute("InFlight"), "gauge back to 0 after the task");
    assertEquals(1L, metrics.getAttribute("a.Served"));
    String[] recent = (String[]) metrics.getAttribute("RecentTasks");
    assertEquals(1, recent.length);
    String[] fields = recent[0].split("\t", -1);
    assertEquals(List.of("blk_-1024_1001", "[4]", "a", "1048576"),
        List.of(fields).subList(0, 4));
    long start = Long.parseLong(fields[5]);
    assertTrue(start > before && start <= System.currentTimeMillis(), "task start " + start);
    assertTrue(java.util.Arrays.stream(metrics.getMBeanInfo().getAttributes())
        .anyMatch(a -> a.getName().equals("native.Failed")));
  }

  @Test
  void metricsPublishedThroughMetrics2() {
    RouteMetrics metrics = new RouteMetrics();
    new ReconstructionRouter(List.of(route("a", "fail"), route("b", "ok"), new NativeRoute()), 1,
        metrics).reconstruct(task());
    org.apache.hadoop.metrics2.impl.MetricsCollectorImpl collector =
        new org.apache.hadoop.metrics2.impl.MetricsCollectorImpl();
    metrics.getMetrics(collector, true);
    java.util.Map<String, Number> values = new java.util.HashMap<>();
    collector.getRecords().forEach(rec -> {
      assertEquals(RouteMetrics.RECORD, rec.name());
      rec.metrics().forEach(m -> values.put(m.name(), m.value()));
    });
    assertEquals(1L, values.get("Tasks"));
    assertEquals(0L, values.get("InFlight"));
    assertEquals(2L, values.get("AFailed"), "tried once, retried once");
    assertEquals(1L, values.get("BServed"));
    assertEquals(1048576L, values.get("BBytes"));
    assertEquals(0L, values.get("NativeServed"));
  }
}
