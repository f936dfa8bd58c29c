package io.netec.hdfs.route;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netec.hdfs.NetecConfigKeys;
import io.netec.hdfs.proof.ProofService;
import io.netec.hdfs.proof.ProofVerifier;
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
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * The router's rules, the same for a DataNode's tasks and a client's reads: order, decline,
 * failure, retry, every row proven before it is kept (real fingerprints from a real proof
 * service over an RS(3,2) group in memory), rows kept one by one, survivors at fault replaced by
 * spares without blaming the route, the back-off of an unreachable or failing route with one
 * log line per change of state, and its configuration errors.
 */
class ReconstructionRouterTest {
  private static final int UNIT = 4096;
  private static final long GROUP_ID = -1024L;
  private final List<String> calls = new ArrayList<>();
  private final List<RepairRequest> asked = new ArrayList<>();
  private final ErasureCodingPolicy policy =
      new ErasureCodingPolicy(new ECSchema("netec", 3, 2), UNIT);
  private final byte[][] units = MemoryBlocks.group(3, 2, UNIT, 7);
  private final MemoryBlocks blocks = new MemoryBlocks();
  private ProofService proofs;
  private ProofVerifier verifier;

  @BeforeEach
  void startProofService() throws IOException {
    for (int i = 0; i < units.length; i++) {
      blocks.put(GROUP_ID + i, units[i]);
    }
    proofs = new ProofService(blocks, "127.0.0.1", 0, 16, 5_000);
    verifier = new ProofVerifier(dn -> proofs.address(), 5_000);
  }

  @AfterEach
  void stopProofService() {
    proofs.close();
  }

  /** A request for units {@code erased} of the group, from every other unit. */
  private RepairRequest request(int... erased) {
    DatanodeInfo dn = new DatanodeInfoBuilder().build();
    ExtendedBlock group = new ExtendedBlock("bp", GROUP_ID, 3L * UNIT, 1001);
    List<RepairRequest.Survivor> s = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      final int unit = i;
      if (Arrays.stream(erased).noneMatch(e -> e == unit)) {
        s.add(new RepairRequest.Survivor(i, dn, new ExtendedBlock("bp", GROUP_ID + i, UNIT,
            1001), ""));
      }
    }
    return new RepairRequest("Task blk_-1024", group, 3L * UNIT, policy, erased, 0, UNIT, s);
  }

  private RepairRequest request() {
    return request(4);
  }

  /** Bytes that are not unit {@code unit}: the right length, wrong from byte 100 on. */
  private byte[] junk(int unit) {
    byte[] b = units[unit].clone();
    b[100] ^= 1;
    return b;
  }

  /** An in-memory sink of any rows that records what the router does to it. */
  private final class MemorySink implements RepairSink {
    final int[] erased;
    final byte[][] row;
    final int[] filled;
    boolean nativeFails;
    /** The caller leaves at the route's first write (a client past its budget). */
    boolean abandonOnWrite;
    volatile boolean abandoned;
    RowDigests digests;

    MemorySink(int... erased) {
      this.erased = erased.length == 0 ? new int[] {4} : erased;
      this.row = new byte[this.erased.length][UNIT];
      this.filled = new int[this.erased.length];
    }

    @Override
    public void begin(RowDigests d) {
      digests = d;
    }

    @Override
    public boolean abandoned() {
      return abandoned;
    }

    @Override
    public void write(int r, ByteBuffer data) throws IOException {
      if (abandonOnWrite) {
        abandoned = true;
        throw new IOException("the reader left");
      }
      if (filled[r] + data.remaining() > UNIT) {
        throw new IOException("too many bytes");
      }
      int n = data.remaining();
      data.get(row[r], filled[r], n);
      filled[r] += n;
    }

    @Override
    public void repairNatively(int[] rows) throws IOException {
      calls.add("native" + (rows.length == erased.length ? "" : Arrays.toString(rows)));
      if (nativeFails) {
        throw new IOException("Hadoop's reconstruction wrote 10 of 4096 bytes");
      }
      for (int r : rows) {
        row[r] = units[erased[r]].clone();
        filled[r] = UNIT;
      }
    }

    @Override
    public void seal(int r) throws IOException {
      if (filled[r] != UNIT) {
        throw new IOException("row has " + filled[r] + " of " + UNIT + " bytes");
      }
      if (digests != null) {
        digests.update(r, 0, ByteBuffer.wrap(row[r]));
      }
    }

    @Override
    public long keep(int r) {
      calls.add("keep" + (erased.length == 1 ? "" : " " + erased[r]));
      return filled[r];
    }

    @Override
    public void drop(int r) {
      calls.add("drop" + (erased.length == 1 ? "" : " " + erased[r]));
      Arrays.fill(row[r], (byte) 0);
      filled[r] = 0;
    }
  }

  /**
   * A route that acts out a script, one entry per call: "ok" (the true units), "junk" (one
   * wrong byte a row), "half" (half of each row, then returns), "fail-mid" (half a row, then
   * fails), "first-ok" (row 0 true, the others junk), "decline", "fail", "unavailable",
   * "survivor" (fails naming the first survivor it was given as at fault).
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
        asked.add(req);
        int[] erased = req.erased();
        switch (what) {
          case "decline":
            throw new RouteDeclinedException("not now\nFORGED line");
          case "unavailable":
            throw new RouteUnavailableException("connection refused");
          case "fail":
            throw new IOException("broken");
          case "survivor":
            throw new SurvivorFault(req.survivors().get(0).index, "its disk is gone");
          case "fail-mid":
            sink.write(0, ByteBuffer.wrap(units[erased[0]], 0, UNIT / 2));
            throw new IOException("cut mid-stream");
          default:
            for (int r = 0; r < erased.length; r++) {
              byte[] b = what.equals("junk") || (what.equals("first-ok") && r > 0)
                  ? junk(erased[r]) : units[erased[r]];
              sink.write(r, ByteBuffer.wrap(b, 0, what.equals("half") ? UNIT / 2 : UNIT));
            }
            return 7;
        }
      }
    };
  }

  private ReconstructionRouter router(int retries, long backoffMs, RouteMetrics m,
      ReconstructionRoute... routes) {
    List<ReconstructionRoute> l = new ArrayList<>(Arrays.asList(routes));
    l.add(new NativeRoute());
    return new ReconstructionRouter(l, retries, backoffMs, 5_000, m, verifier);
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
    assertArrayEquals(units[4], sink.row[0]);
    assertEquals(List.of("a:decline", "drop", "b:ok", "keep"), calls);
    assertEquals(1, metrics.get("a", "Declined"));
    assertEquals(1, metrics.get("b", "Served"));
    assertEquals(UNIT, metrics.get("b", "Bytes"));
    assertEquals(7, metrics.get("b", "BytesIn"));
    assertFalse(o.others.contains("\n"), "peer text cannot break a log line: " + o.others);
    assertEquals("a declined: not now\\x0aFORGED line", o.others);
    assertEquals(1, proofs.answered() / 3, "three survivors proved one attempt");
  }

  /** Route {@code name} measured {@link ReadCost#MIN_TRUSTED} times, 50 ms a unit. */
  private static void measure(RouteMetrics metrics, String name) {
    for (int i = 0; i < ReadCost.MIN_TRUSTED; i++) {
      metrics.cost(name).add(UNIT * (i + 1L), 50.0 * (i + 1));
    }
  }

  @Test
  void measuredRoutesAreTriedCheapestFirstTheConfiguredOrderOtherwise() {
    RouteMetrics metrics = new RouteMetrics();
    ReconstructionRouter r = router(0, 0, metrics, route("a", "ok"), route("b", "ok"));
    assertEquals("a", r.repair(request(), new MemorySink()).route, "configured order");
    measure(metrics, "a");
    for (int task = 1; task <= CostOrder.EXPLORE_EVERY; task++) {
      // b not measured yet: the configured order, but for one task in EXPLORE_EVERY
      String expected = task % CostOrder.EXPLORE_EVERY
          == CostOrder.EXPLORE_EVERY - 1 ? "b" : "a";
      assertEquals(expected, r.firstUsableNetworkRoute(UNIT));
      assertEquals(expected, r.repair(request(), new MemorySink()).route, "task " + task);
    }
    for (int i = 0; i < ReadCost.MIN_TRUSTED; i++) {
      metrics.cost("b").add(UNIT * (i + 1L), 5.0 * (i + 1));
    }
    long before = metrics.orderedByCostCount();
    calls.clear();
    assertEquals("b", r.repair(request(), new MemorySink()).route, "b measured cheaper");
    assertEquals(List.of("b:ok", "keep"), calls);
    assertEquals(before + 1, metrics.orderedByCostCount());
    assertEquals("b", r.firstUsableNetworkRoute(UNIT));
  }

  @Test
  void aRouteFasterOnceWarmIsPreferredThoughItsFirstTaskWasSlow() {
    RouteMetrics metrics = new RouteMetrics();
    ReconstructionRouter r = router(0, 0, metrics, route("a", "ok"), route("b", "ok"));
    for (double ms : new double[] {138, 140, 139}) {
      metrics.cost("a").add(UNIT, ms);
    }
    for (double ms : new double[] {900, 107, 106}) { // b's first task was cold
      metrics.cost("b").add(UNIT, ms);
    }
    assertEquals("b", r.firstUsableNetworkRoute(UNIT), "b is 107 ms warm against a's 139");
    assertEquals("b", r.repair(request(), new MemorySink()).route);
  }

  @Test
  void aTaskRunsTheOrderItsCallerJudgedThoughOtherTasksRanBetween() {
    RouteMetrics metrics = new RouteMetrics();
    ReconstructionRouter r = router(0, 0, metrics, route("a", "ok"), route("b", "ok"));
    measure(metrics, "a");
    assertEquals(2, CostOrder.EXPLORE_EVERY, "the turns below assume one in 2");
    ReconstructionRouter.Order judged = r.order(UNIT); // turn 0: the configured order
    assertEquals("a", r.firstUsableNetworkRoute(judged));
    assertEquals("b", r.firstUsableNetworkRoute(UNIT), "the next task would explore b");
    assertEquals("b", r.repair(request(), new MemorySink()).route, "another caller's task");
    assertEquals("a", r.repair(request(), new MemorySink(), judged).route,
        "the judged order, not the one of the turn now");
    assertEquals("a", r.firstUsableNetworkRoute(UNIT), "a fixed order's task took no turn");
  }

  @Test
  void aCallerMayPutTheRouteItJudgedFirst() {
    RouteMetrics metrics = new RouteMetrics();
    ReconstructionRouter r = router(0, 0, metrics, route("a", "ok"), route("b", "ok"));
    ReconstructionRouter.Order order = r.order(UNIT);
    assertEquals(List.of("a", "b"), r.usableNetworkRoutes(order), "native is not one");
    assertSame(order, ReconstructionRouter.withFirst(order, "a"), "first already");
    assertSame(order, ReconstructionRouter.withFirst(order, null), "none judged");
    assertSame(order, ReconstructionRouter.withFirst(order, "native"), "not a network route");
    ReconstructionRouter.Order bFirst = ReconstructionRouter.withFirst(order, "b");
    assertEquals(List.of("b", "a"), r.usableNetworkRoutes(bFirst));
    long before = metrics.orderedByCostCount();
    calls.clear();
    assertEquals("b", r.repair(request(), new MemorySink(), bFirst).route);
    assertEquals(List.of("b:ok", "keep"), calls);
    assertEquals(before + 1, metrics.orderedByCostCount(), "an order not the configured one");
    before = metrics.orderedByCostCount();
    r.repair(request(), new MemorySink(), ReconstructionRouter.withFirst(r.order(UNIT), "a"));
    assertEquals(before, metrics.orderedByCostCount(), "the configured order, unchanged");
  }

  @Test
  void aTurnItsCallerDeclinesPassesOn() {
    RouteMetrics metrics = new RouteMetrics();
    ReconstructionRouter r = router(0, 0, metrics, route("a", "ok"), route("b", "ok"));
    measure(metrics, "a");
    assertEquals("a", r.firstUsableNetworkRoute(r.order(UNIT)), "turn 0");
    // turn 1 explores b; its caller reads through Hadoop's stream instead and runs no task
    assertEquals("b", r.firstUsableNetworkRoute(r.order(UNIT)), "turn 1");
    assertEquals("a", r.firstUsableNetworkRoute(r.order(UNIT)),
        "turn 2: the measured route again, not the declined exploration over and over");
  }

  @Test
  void aRouteBehindOneThatAlwaysServesIsMeasuredToo() {
    RouteMetrics metrics = new RouteMetrics();
    ReconstructionRouter r = router(0, 0, metrics, route("a", "ok"), route("b", "ok"));
    measure(metrics, "a");
    List<String> served = new ArrayList<>();
    for (int i = 0; i < CostOrder.EXPLORE_EVERY * ReadCost.MIN_TRUSTED; i++) {
      String next = r.firstUsableNetworkRoute(UNIT);
      String route = r.repair(request(), new MemorySink()).route;
      assertEquals(next, route, "the client's choice judges the route that then serves");
      served.add(route);
    }
    assertEquals(ReadCost.MIN_TRUSTED, java.util.Collections.frequency(served, "b"), served
        .toString());
    assertEquals("b", served.get(CostOrder.EXPLORE_EVERY - 1));
    assertEquals(ReadCost.MIN_TRUSTED, metrics.cost("b").samples(), "b now measured");
  }

  @Test
  void failedRouteIsRetriedThenNextRouteRunsOnADroppedRow() {
    RouteMetrics metrics = new RouteMetrics();
    MemorySink sink = new MemorySink();
    ReconstructionRouter.Outcome o = router(1, 0, metrics, route("a", "fail-mid", "fail", "ok"))
        .repair(request(), sink);
    assertEquals("native", o.route);
    assertEquals(List.of("a:fail-mid", "drop", "a:fail", "drop", "native", "keep"), calls);
    assertArrayEquals(units[4], sink.row[0], "no byte of the failed attempt is left");
    assertEquals(2, metrics.get("a", "Failed"));
    assertEquals(1, metrics.get("native", "Served"));
  }

  @Test
  void anAbandonedTaskEndsWithoutBlameOrAnotherRoute() {
    RouteMetrics metrics = new RouteMetrics();
    MemorySink sink = new MemorySink();
    sink.abandonOnWrite = true;
    ReconstructionRouter r = router(1, 60_000, metrics, route("a", "ok"), route("b", "ok"));
    ReconstructionRouter.Outcome o = r.repair(request(), sink);
    assertNull(o.route);
    assertEquals(List.of("a:ok", "drop"), calls, "no retry, no other route, not native");
    assertEquals(0, metrics.get("a", "Failed"));
    assertTrue(o.others.startsWith("a abandoned by the caller after "), o.others);
    calls.clear();
    assertEquals("a", r.repair(request(), new MemorySink()).route, "a not backed off");
    assertEquals(List.of("a:ok", "keep"), calls);
  }

  @Test
  void retrySucceeds() {
    ReconstructionRouter.Outcome o = router(1, 0, new RouteMetrics(), route("a", "fail", "ok"))
        .repair(request(), new MemorySink());
    assertEquals("a", o.route);
    assertEquals(List.of("a:fail", "drop", "a:ok", "keep"), calls);
  }

  @Test
  void routeThatDeliversPartOfARowHasFailed() {
    RouteMetrics metrics = new RouteMetrics();
    MemorySink sink = new MemorySink();
    ReconstructionRouter.Outcome o = router(0, 0, metrics, route("a", "half"), route("b", "ok"))
        .repair(request(), sink);
    assertEquals("b", o.route);
    assertArrayEquals(units[4], sink.row[0]);
    assertEquals(1, metrics.get("a", "Failed"));
    assertTrue(o.others.contains("2048 of 4096"), o.others);
  }

  @Test
  void aRowThatDoesNotMatchItsProofIsNeverKept() {
    LogCapturer log = LogCapturer.captureLogs(LoggerFactory.getLogger(ReconstructionRouter.class));
    try {
      RouteMetrics metrics = new RouteMetrics();
      MemorySink sink = new MemorySink();
      ReconstructionRouter.Outcome o = router(1, 0, metrics, route("a", "junk"))
          .repair(request(), sink);
      assertEquals("native", o.route);
      // junk twice (tried, retried), dropped both times; native's bytes are the unit's
      assertEquals(List.of("a:junk", "drop", "a:junk", "drop", "native", "keep"), calls);
      assertArrayEquals(units[4], sink.row[0]);
      assertEquals(2, metrics.get("a", "VerifyFailed"));
      assertEquals(2, metrics.get("a", "Failed"));
      assertEquals(0, metrics.get("a", "Bytes"));
      assertEquals(2, o.verifyFailures);
      assertTrue(o.others.contains("do not match the survivors' fingerprints"), o.others);
      // logged once per cause, not once per attempt
      assertEquals(1, Occurrences.count(log.getOutput(), "that do not match"), log.getOutput());
    } finally {
      log.stopCapturing();
    }
  }

  @Test
  void eachRowStandsOnItsOwn() {
    RouteMetrics metrics = new RouteMetrics();
    MemorySink sink = new MemorySink(3, 4);
    ReconstructionRouter.Outcome o = router(0, 0, metrics, route("a", "first-ok"))
        .repair(request(3, 4), sink);
    // unit 3 proven and kept from route a; unit 4 failed its proof and went to native alone
    assertEquals(List.of("a:first-ok", "keep 3", "drop 4", "native[1]", "keep 4"), calls);
    assertEquals(List.of("a", "native"), o.rowRoutes);
    assertArrayEquals(units[3], sink.row[0]);
    assertArrayEquals(units[4], sink.row[1]);
    assertEquals(UNIT, metrics.get("a", "Bytes"));
    assertEquals(1, metrics.get("a", "VerifyFailed"));
    assertEquals(2L * UNIT, o.bytes);
  }

  @Test
  void aSurvivorAtFaultIsReplacedBySpareAndTheRouteNotBlamed() {
    RouteMetrics metrics = new RouteMetrics();
    MemorySink sink = new MemorySink();
    ReconstructionRouter.Outcome o = router(0, 10_000, metrics,
        route("a", "survivor", "ok")).repair(request(), sink);
    assertEquals("a", o.route);
    assertArrayEquals(units[4], sink.row[0]);
    assertEquals(1, metrics.get("a", "SurvivorFaults"));
    assertEquals(0, metrics.get("a", "Failed"));
    assertEquals(2, asked.size());
    assertTrue(o.others.startsWith("a without units [0]: its disk is gone"), o.others);
    assertEquals(4, asked.get(0).survivors().size());
    assertTrue(asked.get(1).survivors().stream().noneMatch(s -> s.index == 0),
        "the second attempt does without unit 0");
    assertEquals(5_000, asked.get(0).progressTimeoutMs(), "a spare exists: Hadoop's limit");
    assertEquals(0, asked.get(1).progressTimeoutMs(), "no spare left: the route's own");
    // without spares the route is passed over, still not blamed (and not backed off)
    calls.clear();
    o = router(0, 10_000, metrics, route("b", "survivor")).repair(request(3, 4),
        new MemorySink(3, 4));
    assertEquals("native", o.route);
    assertEquals(0, metrics.get("b", "Failed"));
    assertTrue(o.others.startsWith("b failed for survivors [0]"), o.others);
  }

  @Test
  void aCorruptSurvivorIsFoundByItsProofAndReplaced() {
    blocks.corrupt.add(GROUP_ID + 1);
    RouteMetrics metrics = new RouteMetrics();
    MemorySink sink = new MemorySink();
    ReconstructionRouter.Outcome o = router(0, 0, metrics, route("a", "ok"))
        .repair(request(), sink);
    // unit 1 cannot prove its part: the attempt is run again without it, from the spare
    assertEquals("a", o.route);
    assertEquals(1, metrics.get("a", "SurvivorFaults"));
    assertTrue(asked.get(1).survivors().stream().noneMatch(s -> s.index == 1));
    assertEquals(1, proofs.corrupt());
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
      assertEquals(1, Occurrences.count(out, "Route sw usable again"), out);
    } finally {
      log.stopCapturing();
    }
  }

  @Test
  void aFailingRouteIsBackedOffToo() throws Exception {
    RouteMetrics metrics = new RouteMetrics();
    ReconstructionRouter r = router(0, 300, metrics, route("sw", "fail", "ok"));
    assertEquals("native", r.repair(request(), new MemorySink()).route);
    assertEquals("native", r.repair(request(), new MemorySink()).route);
    assertEquals(1, metrics.get("sw", "Failed"));
    assertEquals(1, metrics.get("sw", "Skipped"), "passed over during its back-off");
    Thread.sleep(400);
    assertEquals("sw", r.repair(request(), new MemorySink()).route);
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
    List<ReconstructionTask.RoutedWork> settled = new ArrayList<>();
    long[] wrote = {1024 * 1024};
    ErasureCodingPolicy big = new ErasureCodingPolicy(new ECSchema("netec", 3, 2), 1024 * 1024);
    ReconstructionTask t = new ReconstructionTask(group, big, new byte[] {0, 1, 2, 3},
        new DatanodeInfo[] {dn, dn, dn, dn}, new short[] {4}, new DatanodeInfo[] {dn},
        new StorageType[] {StorageType.DISK}, new String[] {"s"},
        new ReconstructionTask.HadoopTask() {
          @Override
          public long runNative(short[] erased) {
            assertArrayEquals(new short[] {4}, erased);
            return wrote[0];
          }

          @Override
          public void settle(ReconstructionTask.RoutedWork w) {
            settled.add(w);
          }
        });
    RouteMetrics metrics = new RouteMetrics();
    ReconstructionRouter r = router(1, 0, metrics);
    InternalBlockSink sink = new InternalBlockSink(null, t);
    ReconstructionRouter.Outcome o = r.repair(t.repairRequest(b -> ""), sink);
    assertEquals("native", o.route);
    sink.settle(o);
    assertEquals(1, settled.size(), "settled once");
    assertEquals(0, settled.get(0).bytesWritten, "Hadoop wrote and counted the block itself");
    wrote[0] = 10; // a run that wrote less than the block failed, whatever Hadoop logged
    assertNull(r.repair(t.repairRequest(b -> ""), new InternalBlockSink(null, t)).route);
    assertEquals(1, metrics.get("native", "Failed"));
  }

  @Test
  void taskRequestCoversEveryErasedBlockFromEveryLiveOne() {
    DatanodeInfo dn = new DatanodeInfoBuilder().build();
    ExtendedBlock group = new ExtendedBlock("bp", -1024L, 2L * 1024 * 1024 + 5, 1001);
    // units 0 and 1 hold 1 MiB, unit 2 the last 5 bytes, parity units 1 MiB
    ErasureCodingPolicy big = new ErasureCodingPolicy(new ECSchema("netec", 3, 2), 1024 * 1024);
    ReconstructionTask t = new ReconstructionTask(group, big, new byte[] {0, 1, 3},
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
    sink.nativeFails = false;
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
    router(0, 0, metrics, route("a", "junk")).repair(request(), new MemorySink());
    org.apache.hadoop.metrics2.impl.MetricsCollectorImpl collector =
        new org.apache.hadoop.metrics2.impl.MetricsCollectorImpl();
    metrics.getMetrics(collector, true);
    java.util.Map<String, Number> values = new java.util.HashMap<>();
    collector.getRecords().forEach(rec -> {
      assertEquals(RouteMetrics.RECORD, rec.name());
      rec.metrics().forEach(m -> values.put(m.name(), m.value()));
    });
    assertEquals(2L, values.get("Tasks"));
    assertEquals(0L, values.get("InFlight"));
    assertEquals(3L, values.get("AFailed"), "tried once, retried once; then wrong bytes");
    assertEquals(1L, values.get("AVerifyFailed"));
    assertEquals(1L, values.get("BServed"));
    assertEquals(4096L, values.get("BBytes"));
    assertEquals(7L, values.get("BBytesIn"));
    assertEquals(1L, values.get("NativeServed"), "after the wrong bytes");
  }
}
