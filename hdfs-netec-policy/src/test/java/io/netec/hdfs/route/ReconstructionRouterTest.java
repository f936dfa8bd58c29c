package io.netec.hdfs.route;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netec.hdfs.NetecConfigKeys;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.StorageType;
import org.apache.hadoop.hdfs.protocol.DatanodeInfo;
import org.apache.hadoop.hdfs.protocol.DatanodeInfo.DatanodeInfoBuilder;
import org.apache.hadoop.hdfs.protocol.ErasureCodingPolicy;
import org.apache.hadoop.hdfs.protocol.ExtendedBlock;
import org.apache.hadoop.io.erasurecode.ECSchema;
import org.apache.hadoop.test.GenericTestUtils.LogCapturer;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * The router's rules, the same for a DataNode's tasks and a client's reads: order, decline,
 * failure, retry, the sink completed or aborted after every attempt, the back-off of an
 * unreachable route with one log line per change of state, and its configuration errors.
 */
class ReconstructionRouterTest {
  private static final int UNIT = 4096;
  private final List<String> calls = new ArrayList<>();
  private final ErasureCodingPolicy policy =
      new ErasureCodingPolicy(new ECSchema("netec", 3, 2), 1024 * 1024);

  /** A request for unit 4 of a group whose units are all UNIT bytes long. */
  private RepairRequest request() {
    DatanodeInfo dn = new DatanodeInfoBuilder().build();
    ExtendedBlock group = new ExtendedBlock("bp", -1024L, 3L * UNIT, 1001);
    List<RepairRequest.Survivor> s = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      s.add(new RepairRequest.Survivor(i, dn, new ExtendedBlock("bp", -1024L + i, UNIT, 1001),
          ""));
    }
    return new RepairRequest("Task blk_-1024", group, 3L * UNIT, policy, new int[] {4}, 0,
        UNIT, s);
  }

  /** The row a route writes: its name's bytes repeated. */
  private static byte[] rowOf(String who) {
    byte[] b = new byte[UNIT];
    for (int i = 0; i < b.length; i++) {
      b[i] = (byte) who.charAt(i % who.length());
    }
    return b;
  }

  /** An in-memory sink that records what the router does to it. */
  private final class MemorySink implements RepairSink {
    final byte[] row = new byte[UNIT];
    int filled;
    boolean nativeFails;

    @Override
    public void write(int r, ByteBuffer data) throws IOException {
      if (filled + data.remaining() > UNIT) {
        throw new IOException("too many bytes");
      }
      int n = data.remaining();
      data.get(row, filled, n);
      filled += n;
    }

    @Override
    public void repairNatively() throws IOException {
      calls.add("native");
      if (nativeFails) {
        throw new IOException("Hadoop's reconstruction wrote 10 of 4096 bytes");
      }
      write(0, ByteBuffer.wrap(rowOf("native")));
    }

    @Override
    public long complete() throws IOException {
      if (filled != UNIT) {
        throw new IOException("row has " + filled + " of " + UNIT + " bytes");
      }
      calls.add("complete");
      return filled;
    }

    @Override
    public void abort() {
      calls.add("abort");
      Arrays.fill(row, (byte) 0);
      filled = 0;
    }
  }

  /**
   * A route that acts out a script, one entry per call: "ok", "half" (writes half the row and
   * returns), "fail-mid" (writes half, then fails), "decline", "fail", "unavailable".
   */
  private ReconstructionRoute route(String name, String... script) {
    return new ReconstructionRoute() {
      private int call;

      @Override
      public String name() {
        return name;
      }

      @Override
      public long repair(RepairRequest req, RepairSink sink) throws IOException {
        String what = script[Math.min(call++, script.length - 1)];
        calls.add(name + ":" + what);
        byte[] row = rowOf(name);
        switch (what) {
          case "decline":
            throw new RouteDeclinedException("not now\nFORGED line");
          case "unavailable":
            throw new RouteUnavailableException("connection refused");
          case "fail":
            throw new IOException("broken");
          case "fail-mid":
            sink.write(0, ByteBuffer.wrap(row, 0, UNIT / 2));
            throw new IOException("cut mid-stream");
          case "half":
            sink.write(0, ByteBuffer.wrap(row, 0, UNIT / 2));
            return UNIT / 2;
          default:
            sink.write(0, ByteBuffer.wrap(row));
            return 7;
        }
      }
    };
  }

  private static ReconstructionRouter router(int retries, long backoffMs, RouteMetrics m,
      ReconstructionRoute... routes) {
    List<ReconstructionRoute> l = new ArrayList<>(Arrays.asList(routes));
    l.add(new NativeRoute());
    return new ReconstructionRouter(l, retries, backoffMs, m);
  }

  @Test
  void firstRouteThatSucceedsServes() {
    RouteMetrics metrics = new RouteMetrics();
    MemorySink sink = new MemorySink();
    ReconstructionRouter.Outcome o = router(1, 0, metrics, route("a", "decline"),
        route("b", "ok")).repair(request(), sink);
    assertEquals("b", o.route);
    assertEquals(UNIT, o.bytes);
    assertEquals(7, o.bytesIn);
    assertArrayEquals(rowOf("b"), sink.row);
    assertEquals(List.of("a:decline", "abort", "b:ok", "complete"), calls);
    assertEquals(1, metrics.get("a", "Declined"));
    assertEquals(1, metrics.get("b", "Served"));
    assertEquals(UNIT, metrics.get("b", "Bytes"));
    assertEquals(7, metrics.get("b", "BytesIn"));
    assertFalse(o.others.contains("\n"), "peer text cannot break a log line: " + o.others);
    assertEquals("a declined: not now\\x0aFORGED line", o.others);
  }

  @Test
  void failedRouteIsRetriedThenNextRouteRunsOnAnAbortedSink() {
    RouteMetrics metrics = new RouteMetrics();
    MemorySink sink = new MemorySink();
    ReconstructionRouter.Outcome o = router(1, 0, metrics, route("a", "fail-mid", "fail", "ok"))
        .repair(request(), sink);
    assertEquals("native", o.route);
    assertEquals(List.of("a:fail-mid", "abort", "a:fail", "abort", "native", "complete"), calls);
    assertArrayEquals(rowOf("native"), sink.row, "no byte of the failed attempt is left");
    assertEquals(2, metrics.get("a", "Failed"));
    assertEquals(1, metrics.get("native", "Served"));
  }

  @Test
  void retrySucceeds() {
    ReconstructionRouter.Outcome o = router(1, 0, new RouteMetrics(), route("a", "fail", "ok"))
        .repair(request(), new MemorySink());
    assertEquals("a", o.route);
    assertEquals(List.of("a:fail", "abort", "a:ok", "complete"), calls);
  }

  @Test
  void routeThatDeliversPartOfARowHasFailed() {
    RouteMetrics metrics = new RouteMetrics();
    MemorySink sink = new MemorySink();
    ReconstructionRouter.Outcome o = router(0, 0, metrics, route("a", "half"), route("b", "ok"))
        .repair(request(), sink);
    assertEquals("b", o.route);
    assertArrayEquals(rowOf("b"), sink.row);
    assertEquals(1, metrics.get("a", "Failed"));
    assertTrue(o.others.contains("2048 of 4096"), o.others);
  }

  @Test
  void failedNativeRunMeansNoRoute() {
    RouteMetrics metrics = new RouteMetrics();
    MemorySink sink = new MemorySink();
    sink.nativeFails = true;
    ReconstructionRouter.Outcome o = router(1, 0, metrics).repair(request(), sink);
    assertNull(o.route);
    assertEquals(1, metrics.get("native", "Failed"));
    assertEquals("none", metrics.recentTasks()[0].split("\t")[2]);
  }

  @Test
  void unreachableRouteIsNotAskedAgainUntilItsBackOffEnds() throws Exception {
    LogCapturer log = LogCapturer.captureLogs(LoggerFactory.getLogger(ReconstructionRouter.class));
    try {
      RouteMetrics metrics = new RouteMetrics();
      ReconstructionRouter r = router(3, 300, metrics,
          route("sw", "unavailable", "unavailable", "ok"));
      for (int i = 0; i < 5; i++) {
        assertEquals("native", r.repair(request(), new MemorySink()).route);
      }
      // asked once (an unavailable route is not retried), then passed over for the back-off
      assertEquals(1, calls.stream().filter(c -> c.startsWith("sw:")).count(), calls.toString());
      assertEquals(1, metrics.get("sw", "Unavailable"));
      assertEquals(4, metrics.get("sw", "Skipped"));
      assertTrue(metrics.recentTasks()[4].endsWith("sw unavailable: connection refused"),
          metrics.recentTasks()[4]);
      Thread.sleep(400);
      assertEquals("native", r.repair(request(), new MemorySink()).route); // still down
      Thread.sleep(400);
      assertEquals("sw", r.repair(request(), new MemorySink()).route);
      String out = log.getOutput();
      assertEquals(1,
          Occurrences.count(out, "Route sw unavailable (connection refused); not asked again"),
          "one line when it went away, none while it stayed away: " + out);
      assertEquals(1, Occurrences.count(out, "Route sw reachable again"), out);
    } finally {
      log.stopCapturing();
    }
  }

  @Test
  void zeroBackOffAsksEveryTime() {
    RouteMetrics metrics = new RouteMetrics();
    ReconstructionRouter r = router(0, 0, metrics, route("sw", "unavailable"));
    for (int i = 0; i < 3; i++) {
      r.repair(request(), new MemorySink());
    }
    assertEquals(3, metrics.get("sw", "Unavailable"));
    assertEquals(0, metrics.get("sw", "Skipped"));
  }


  @Test
  void nativeRouteOnADataNodeSinkChecksHadoopsBytes() throws Exception {
    DatanodeInfo dn = new DatanodeInfoBuilder().build();
    ExtendedBlock group = new ExtendedBlock("bp", -1024L, 3L * 1024 * 1024, 1001);
    long[] released = {-1};
    long[] wrote = {1024 * 1024};
    ReconstructionTask t = new ReconstructionTask(group, policy, new byte[] {0, 1, 2, 3},
        new DatanodeInfo[] {dn, dn, dn, dn}, new short[] {4}, new DatanodeInfo[] {dn},
        new StorageType[] {StorageType.DISK}, new String[] {"s"},
        new ReconstructionTask.HadoopTask() {
          @Override
          public long runNative() {
            return wrote[0];
          }

          @Override
          public void releaseServedElsewhere(long bytes) {
            released[0] = bytes;
          }
        });
    RouteMetrics metrics = new RouteMetrics();
    ReconstructionRouter r = router(1, 0, metrics);
    assertEquals("native", r.repair(t.repairRequest(b -> ""), new InternalBlockSink(null, t))
        .route);
    assertEquals(-1, released[0], "Hadoop's own run releases its resources itself");
    wrote[0] = 10; // a run that wrote less than the block failed, whatever Hadoop logged
    assertNull(r.repair(t.repairRequest(b -> ""), new InternalBlockSink(null, t)).route);
    assertEquals(1, metrics.get("native", "Failed"));
  }

  @Test
  void taskRequestCoversEveryErasedBlockFromEveryLiveOne() {
    DatanodeInfo dn = new DatanodeInfoBuilder().build();
    ExtendedBlock group = new ExtendedBlock("bp", -1024L, 2L * 1024 * 1024 + 5, 1001);
    // units 0 and 1 hold 1 MiB, unit 2 the last 5 bytes, parity units 1 MiB
    ReconstructionTask t = new ReconstructionTask(group, policy, new byte[] {0, 1, 3},
        new DatanodeInfo[] {dn, dn, dn}, new short[] {2, 4}, new DatanodeInfo[] {dn, dn},
        new StorageType[] {StorageType.DISK, StorageType.DISK}, new String[] {"s", "t"}, null);
    RepairRequest req = t.repairRequest(b -> "token-of-" + b.getBlockId());
    assertArrayEquals(new int[] {2, 4}, req.erased());
    assertEquals(0, req.offset());
    assertEquals(1024 * 1024, req.length());
    assertArrayEquals(new long[] {5, 1024 * 1024}, req.rowLengths());
    assertEquals(3, req.survivors().size());
    assertEquals(1, req.survivors().get(1).index);
    assertEquals("token-of--1023", req.survivors().get(1).token);
  }

  @Test
  void defaultOrderIsSwitchInecNativeOnEverySide() {
    ReconstructionRouter r = ReconstructionRouter.start(new Configuration(false), null, null);
    assertEquals(List.of("switch", "inec", "native"), r.routeNames());
    MemorySink sink = new MemorySink();
    ReconstructionRouter.Outcome o = r.repair(request(), sink);
    assertEquals("native", o.route);
    assertTrue(o.others.startsWith("switch declined: netec.switch.address is not set; inec "),
        o.others);
  }

  @Test
  void nativeIsAlwaysLastEvenWhenListedFirst() {
    Configuration conf = new Configuration(false);
    conf.set(NetecConfigKeys.ROUTE_ORDER, "native,inec");
    assertEquals(List.of("inec", "native"),
        ReconstructionRouter.start(conf, null, null).routeNames());
  }

  @Test
  void badConfigurationNamesTheKey() {
    assertBadConf(NetecConfigKeys.ROUTE_ORDER, "switch,teleport", "netec.route.order");
    assertBadConf(NetecConfigKeys.ROUTE_ORDER, "inec,inec", "twice");
    assertBadConf(NetecConfigKeys.ROUTE_RETRIES, "-1", "netec.route.retries");
    assertBadConf(NetecConfigKeys.ROUTE_CLASS_PREFIX + "mine", String.class.getName(),
        "META-INF/services/io.netec.hdfs.route.RouteFactory");
  }

  private static void assertBadConf(String key, String value, String expected) {
    Configuration conf = new Configuration(false);
    conf.set(key, value);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> ReconstructionRouter.start(conf, null, null));
    assertTrue(e.getMessage().contains(expected) && e.getMessage().contains(key),
        e.getMessage());
  }

  @Test
  void metricsReadableAsJmxAttributes() throws Exception {
    RouteMetrics metrics = new RouteMetrics();
    long before = System.currentTimeMillis() - 1;
    router(0, 0, metrics, route("a", "ok")).repair(request(), new MemorySink());
    assertEquals(1L, metrics.getAttribute("Tasks"));
    assertEquals(0L, metrics.getAttribute("InFlight"), "gauge back to 0 after the task");
    assertEquals(1L, metrics.getAttribute("a.Served"));
    String[] recent = (String[]) metrics.getAttribute("RecentTasks");
    assertEquals(1, recent.length);
    String[] fields = recent[0].split("\t", -1);
    assertEquals(List.of("blk_-1024_1001", "[4]", "a", "4096"),
        List.of(fields).subList(0, 4));
    long start = Long.parseLong(fields[5]);
    assertTrue(start > before && start <= System.currentTimeMillis(), "task start " + start);
    assertTrue(Arrays.stream(metrics.getMBeanInfo().getAttributes())
        .anyMatch(a -> a.getName().equals("native.Failed")));
    assertTrue(Arrays.stream(metrics.getMBeanInfo().getAttributes())
        .anyMatch(a -> a.getName().equals("a.Skipped")));
  }

  @Test
  void metricsPublishedThroughMetrics2() {
    RouteMetrics metrics = new RouteMetrics();
    router(1, 0, metrics, route("a", "fail"), route("b", "ok")).repair(request(),
        new MemorySink());
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
    assertEquals(4096L, values.get("BBytes"));
    assertEquals(7L, values.get("BBytesIn"));
    assertEquals(0L, values.get("NativeServed"));
  }
}
