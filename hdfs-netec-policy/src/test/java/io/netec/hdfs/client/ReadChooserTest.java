package io.netec.hdfs.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netec.hdfs.route.ReadCost;
import org.junit.jupiter.api.Test;

/** The chooser's decisions, on the shapes of reads the issue names. */
class ReadChooserTest {
  private static final int K = 6;
  private static final long CELL = 1 << 20;
  /** 100 Mbit/s in bytes per millisecond. */
  private static final double SLOW = 100e6 / 8 / 1000;
  private static final double FAST = 10e9 / 8 / 1000;

  /** A range of {@code len} inside one lost unit: Hadoop moves k times it, a route once. */
  private static ReadChooser.ReadShape insideLostUnit(long len) {
    return new ReadChooser.ReadShape(K * len, len, 0);
  }

  /** Whole stripes with one lost unit: Hadoop moves k cells a stripe, a route as many. */
  private static ReadChooser.ReadShape wholeStripes(int stripes) {
    return new ReadChooser.ReadShape(stripes * K * CELL, stripes * CELL,
        stripes * (K - 1) * CELL);
  }

  /** Hadoop's stream measured on a link of {@code bytesPerMs}, with 2 ms per read. */
  private static ReadCost hadoopOn(double bytesPerMs) {
    ReadCost c = new ReadCost();
    for (long b : new long[] {64 << 10, 1 << 20, 6 << 20, 256 << 10}) {
      c.add(b, 2 + b / bytesPerMs);
    }
    return c;
  }

  /** A route measured warm at {@code fixedMs} plus the slow link's time of its bytes. */
  private static ReadCost routeWarmAt(double fixedMs) {
    ReadCost c = new ReadCost();
    for (long b : new long[] {64 << 10, 1 << 20, 64 << 10, 4 << 20}) {
      c.add(b, fixedMs + b / SLOW);
    }
    return c;
  }

  @Test
  void aLostUnitsRangeOnASlowLinkGoesThroughTheRoute() {
    ReadChooser ch = new ReadChooser("cost", 0, hadoopOn(SLOW));
    for (long len : new long[] {64 << 10, 1 << 20, 4 << 20}) {
      ReadChooser.Choice c = ch.choose(insideLostUnit(len), "switch", routeWarmAt(25));
      assertTrue(c.routes, len + ": " + c.reason());
      // the route may run until Hadoop's stream would have been done, and twice its own time
      double route = 25 + len / SLOW;
      double hadoop = 2 + K * len / SLOW;
      assertEquals(Math.max(hadoop, 2 * route), c.budgetMillis, 1, c.reason());
    }
  }

  @Test
  void aRouteLeftForBeingSlowIsTriedAgainOnceItsMeasurementsAreOld() {
    long[] now = {0};
    ReadCost route = new ReadCost(() -> now[0]);
    for (int i = 0; i < ReadCost.MIN_TRUSTED; i++) {
      route.add(1 << 20, 900); // a reconstruction loads it (or its first tasks were cold)
    }
    ReadChooser ch = new ReadChooser("cost", 0, hadoopOn(SLOW));
    assertFalse(ch.choose(insideLostUnit(1 << 20), "switch", route).routes);
    now[0] += ReadCost.RECENT_MS;
    assertFalse(ch.choose(insideLostUnit(1 << 20), "switch", route).routes, "still recent");
    now[0] += 1;
    ReadChooser.Choice c = ch.choose(insideLostUnit(1 << 20), "switch", route);
    assertTrue(c.routes, "tried again as if unmeasured: " + c.reason());
    route.add(1 << 20, 900); // slow again
    assertFalse(ch.choose(insideLostUnit(1 << 20), "switch", route).routes, "left again");
  }

  @Test
  void aRouteLosingToHadoopsStreamLeavesEveryRouteForAWhile() {
    long[] now = {0};
    ReadChooser ch = new ReadChooser("cost", 0, hadoopOn(SLOW), () -> now[0]);
    ReadCost inec = routeWarmAt(25);
    ReadCost sw = routeWarmAt(25);
    assertTrue(ch.choose(insideLostUnit(1 << 20), "switch", sw).routes);
    ch.routeLostToHadoop("inec"); // a reconstruction loads the survivors both routes read
    ReadChooser.Choice c = ch.choose(insideLostUnit(1 << 20), "switch", sw);
    assertFalse(c.routes, "the switch is left too: " + c.reason());
    assertTrue(c.reason().contains("inec"), c.reason());
    assertFalse(ch.choose(insideLostUnit(1 << 20), "inec", inec).routes);
    now[0] += ReadCost.RECENT_MS + 1;
    assertTrue(ch.choose(insideLostUnit(1 << 20), "switch", sw).routes, "tried again");
  }

  /**
   * A cold route's reads have a budget too, larger by the cold allowance: waited for long
   * enough to be measured, never for its own timeouts (a read once took 38.5 s that way).
   */
  @Test
  void aRoutesFirstTasksHaveALargerBudgetNotNone() {
    ReadChooser ch = new ReadChooser("cost", 0, hadoopOn(SLOW));
    ReadCost route = new ReadCost();
    double hadoop = 2 + K * (1 << 20) / SLOW;
    double unmeasured = ReadChooser.UNMEASURED_ROUTE_LATENCY_MS + (1 << 20) / SLOW;
    for (int i = 0; i < ReadCost.MIN_TRUSTED; i++) {
      ReadChooser.Choice c = ch.choose(insideLostUnit(1 << 20), "switch", route);
      assertTrue(c.routes, c.reason());
      assertEquals(Math.max(hadoop, 2 * unmeasured) + ReadChooser.COLD_ALLOWANCE_MS,
          c.budgetMillis, 1, "a cold task: " + c.reason());
      assertEquals(ReadChooser.COLD_ALLOWANCE_MS, c.coldMillis);
      route.add(1 << 20, 100);
    }
    ReadChooser.Choice measured = ch.choose(insideLostUnit(1 << 20), "switch", route);
    assertTrue(measured.routes, measured.reason());
    assertEquals(hadoop, measured.budgetMillis, 1, "no cold allowance once measured");
    assertEquals(0.0, measured.coldMillis);
  }

  @Test
  void aReadForcedThroughTheRoutesHasNoBudget() {
    ReadChooser ch = new ReadChooser("routes", 0, hadoopOn(SLOW));
    assertEquals(0.0, ch.choose(insideLostUnit(1 << 20), "switch", routeWarmAt(25)).budgetMillis);
  }

  @Test
  void anUnmeasuredRouteIsTriedWhereItWouldWinWarmButNotOnA64KibRange() {
    ReadChooser ch = new ReadChooser("cost", 0, hadoopOn(SLOW));
    // 64 KiB: Hadoop's 6 x 64 KiB (33 ms) beats a route that might take 40 ms to set up
    assertFalse(ch.choose(insideLostUnit(64 << 10), "switch", new ReadCost()).routes);
    assertTrue(ch.choose(insideLostUnit(1 << 20), "switch", new ReadCost()).routes);
  }

  @Test
  void atOneGigabitAnUnmeasuredRouteIsTriedOnTheCellsItWouldWinWarm() {
    // Hadoop's stream as the testbed measured it at 1 Gbit/s: 64 KiB x 6 in 8 ms, 6 MiB in 57
    ReadCost hadoop = new ReadCost();
    hadoop.add(6 * (64 << 10), 8);
    hadoop.add(6 << 20, 57);
    ReadChooser ch = new ReadChooser("cost", 0, hadoop);
    // RS(6,3): a lost cell costs Hadoop's stream 6 MiB, 57 ms; routes took 47 ms warm
    ReadChooser.Choice rs63 = ch.choose(new ReadChooser.ReadShape(6 << 20, 1 << 20, 0),
        "switch", new ReadCost());
    assertTrue(rs63.routes, rs63.reason());
    // RS(3,2): 3 MiB, about 31 ms; routes took 53-59 ms: not tried
    ReadChooser.Choice rs32 = ch.choose(new ReadChooser.ReadShape(3 << 20, 1 << 20, 0),
        "switch", new ReadCost());
    assertFalse(rs32.routes, rs32.reason());
    // nor a 64 KiB range of either
    assertFalse(ch.choose(new ReadChooser.ReadShape(6 * (64 << 10), 64 << 10, 0), "switch",
        new ReadCost()).routes);
  }

  @Test
  void hadoopMeasuredOnlyOnLargeReadsIsNotThoughtSlowOnSmallOnes() {
    // the testbed's case: Hadoop's stream timed on two cell reads (3 MiB and 1 MiB moved);
    // a 64 KiB range then costs it 3 x 64 KiB at that rate, not as much as a cell
    ReadCost hadoop = new ReadCost();
    hadoop.add(3 << 20, 270);
    hadoop.add(3 << 20, 275);
    ReadChooser ch = new ReadChooser("cost", 0, hadoop);
    ReadChooser.Choice c = ch.choose(new ReadChooser.ReadShape(3 * (64 << 10), 64 << 10, 0),
        "switch", routeWarmAt(40));
    assertFalse(c.routes, c.reason());
  }

  @Test
  void aSequentialScanOfWholeStripesStaysWithHadoop() {
    ReadChooser ch = new ReadChooser("cost", 0, hadoopOn(SLOW));
    ReadChooser.Choice c = ch.choose(wholeStripes(4), "switch", new ReadCost());
    assertFalse(c.routes, c.reason());
  }

  @Test
  void aSmallRangeOnAFastLinkStaysWithHadoop() {
    ReadChooser ch = new ReadChooser("cost", 0, hadoopOn(FAST));
    ReadChooser.Choice c = ch.choose(insideLostUnit(64 << 10), "switch", new ReadCost());
    assertFalse(c.routes, c.reason());
  }

  @Test
  void aRouteMeasuredSlowLosesToHadoop() {
    ReadChooser ch = new ReadChooser("cost", 0, hadoopOn(SLOW));
    ReadCost slowRoute = new ReadCost();
    for (long b : new long[] {64 << 10, 1 << 20, 4 << 20}) {
      slowRoute.add(b, 500 + 10 * b / SLOW); // ten times slower than the link, plus 0.5 s
    }
    ReadChooser.Choice c = ch.choose(insideLostUnit(1 << 20), "switch", slowRoute);
    assertFalse(c.routes, c.reason());
  }

  @Test
  void oneSlowFirstTaskDoesNotShutARouteOut() {
    ReadChooser ch = new ReadChooser("cost", 0, hadoopOn(SLOW));
    ReadCost cold = new ReadCost();
    cold.add(64 << 10, 2_000); // its first task: connections, JIT
    assertTrue(ch.choose(insideLostUnit(1 << 20), "switch", cold).routes);
    cold.add(1 << 20, 2_000);
    cold.add(4 << 20, 3_000); // three: now it is judged on them
    assertFalse(ch.choose(insideLostUnit(1 << 20), "switch", cold).routes);
  }

  @Test
  void aRouteSeenOnlyOnSmallReadsIsJudgedByItsFixedCostOnLargeOnes() {
    // the testbed's case: three 64 KiB reads through the route at about 60 ms each (a fixed
    // cost of some 55 ms); a whole cell through it then costs about 55 + 84 ms, not 16 x 60
    ReadChooser ch = new ReadChooser("cost", 0, hadoopOn(SLOW));
    ReadCost smallOnly = new ReadCost();
    for (double ms : new double[] {58, 62, 60}) {
      smallOnly.add(64 << 10, ms);
    }
    assertFalse(ch.choose(insideLostUnit(64 << 10), "switch", smallOnly).routes,
        "64 KiB: Hadoop's 3 x 64 KiB is quicker than the route's fixed cost");
    ReadChooser.Choice c = ch.choose(insideLostUnit(1 << 20), "switch", smallOnly);
    assertTrue(c.routes, c.reason());
  }

  /** The testbed's case at 100 Mbit/s: INEC measured on 1 MiB cells of RS(6,3) only. */
  private static ReadCost routeOnCellsOnly() {
    ReadCost c = new ReadCost();
    for (double ms : new double[] {195.7, 200.9, 194.7, 197.6, 153.0}) {
      c.add(1 << 20, ms); // the link's 84 ms and a slower rate, no fixed cost of 111 ms
    }
    return c;
  }

  @Test
  void aRouteMeasuredOnlyOnCellsIsProbedOnA64KibRangeThenJudgedByWhatItTook() {
    ReadChooser ch = new ReadChooser("cost", 0, hadoopOn(SLOW));
    ReadCost route = routeOnCellsOnly();
    ReadChooser.Choice first = ch.choose(insideLostUnit(64 << 10), "inec", route);
    assertTrue(first.routes && first.probe, first.reason());
    double hadoop = 2 + K * (64 << 10) / SLOW;
    assertEquals(hadoop, first.budgetMillis, 1, "hedged at Hadoop's time: " + first.reason());
    assertEquals(0.0, first.coldMillis);
    assertFalse(first.lossLeavesRoutes(), "a probe that loses leaves no route aside");
    for (int i = 1; i < ReadChooser.PROBE_EVERY; i++) {
      ReadChooser.Choice c = ch.choose(insideLostUnit(64 << 10), "inec", route);
      assertFalse(c.routes, "one read in " + ReadChooser.PROBE_EVERY + " probes: " + c.reason());
    }
    ReadChooser.Choice again = ch.choose(insideLostUnit(64 << 10), "inec", route);
    assertTrue(again.probe, again.reason());
    route.add(64 << 10, 24); // what the probe took: a warm route's 18-28 ms
    ReadChooser.Choice c = ch.choose(insideLostUnit(64 << 10), "inec", route);
    assertTrue(c.routes && !c.probe, c.reason());
    assertTrue(c.lossLeavesRoutes(), "a measured route that loses was loaded");
    // and one that took as long as Hadoop's stream, or longer, is not chosen there
    ReadCost slow = routeOnCellsOnly();
    slow.add(64 << 10, 60);
    ReadChooser ch2 = new ReadChooser("cost", 0, hadoopOn(SLOW));
    ReadChooser.Choice c2 = ch2.choose(insideLostUnit(64 << 10), "inec", slow);
    assertFalse(c2.routes, c2.reason());
  }

  @Test
  void aRouteWhoseProbeLostIsProbedNoMoreForAWhile() {
    long[] now = {0};
    ReadChooser ch = new ReadChooser("cost", 0, hadoopOn(SLOW), () -> now[0]);
    ReadCost route = new ReadCost(() -> now[0]);
    for (double ms : new double[] {195.7, 200.9, 194.7}) {
      route.add(1 << 20, ms);
    }
    assertTrue(ch.choose(insideLostUnit(64 << 10), "inec", route).probe);
    ch.probeLost("inec"); // and its lower bound pushed out of the ring by cells since
    for (int i = 0; i < 3 * ReadChooser.PROBE_EVERY; i++) {
      now[0] += 1_000;
      route.add(1 << 20, 195); // the route's cells keep it measured and recent
      ReadChooser.Choice c = ch.choose(insideLostUnit(64 << 10), "inec", route);
      assertFalse(c.routes, i + ": " + c.reason());
    }
    now[0] += ReadChooser.PROBE_BACKOFF_MS;
    for (int i = 0; i < ReadCost.MIN_TRUSTED; i++) {
      route.add(1 << 20, 195); // the older cells are forgotten by now: measured anew
    }
    boolean probed = false;
    for (int i = 0; i < ReadChooser.PROBE_EVERY; i++) {
      probed |= ch.choose(insideLostUnit(64 << 10), "inec", route).probe;
    }
    assertTrue(probed, "probed again once the back-off is over");
  }

  @Test
  void noProbeWhereEvenARoutesLeastFixedCostLoses() {
    // RS(3,2) at 10 Gbit/s: Hadoop's stream moves 3 x 64 KiB in 2.2 ms, under a route's least
    ReadChooser ch = new ReadChooser("cost", 0, hadoopOn(FAST));
    ReadChooser.ReadShape small = new ReadChooser.ReadShape(3 * (64 << 10), 64 << 10, 0);
    for (int i = 0; i < 2 * ReadChooser.PROBE_EVERY; i++) {
      ReadChooser.Choice c = ch.choose(small, "inec", routeOnCellsOnly());
      assertFalse(c.routes, c.reason());
    }
  }

  @Test
  void noProbeOfAnUnmeasuredRouteNorAfterARouteLost() {
    long[] now = {0};
    ReadChooser ch = new ReadChooser("cost", 0, hadoopOn(SLOW), () -> now[0]);
    ReadCost cold = new ReadCost(() -> now[0]);
    cold.add(1 << 20, 195); // below MIN_TRUSTED: the unmeasured prior speaks, no probe
    ReadChooser.Choice c = ch.choose(insideLostUnit(64 << 10), "inec", cold);
    assertFalse(c.routes, c.reason());
    ch.routeLostToHadoop("inec");
    ReadChooser.Choice lost = ch.choose(insideLostUnit(64 << 10), "inec", routeOnCellsOnly());
    assertFalse(lost.routes, lost.reason());
  }

  @Test
  void aRouteThatSlowsDownIsLeftAfterTwoSlowReads() {
    ReadChooser ch = new ReadChooser("cost", 0, hadoopOn(SLOW));
    ReadCost route = routeWarmAt(25);
    for (int i = 0; i < 8; i++) {
      route.add(1 << 20, 25 + (1 << 20) / SLOW);
    }
    assertTrue(ch.choose(insideLostUnit(1 << 20), "switch", route).routes);
    route.add(1 << 20, 3_000); // a reconstruction now loads the switch
    assertTrue(ch.choose(insideLostUnit(1 << 20), "switch", route).routes, "one slow read");
    route.add(1 << 20, 2_500);
    ReadChooser.Choice c = ch.choose(insideLostUnit(1 << 20), "switch", route);
    assertFalse(c.routes, c.reason());
  }

  @Test
  void theConfiguredLinkRateCountsBeforeAnythingIsMeasured() {
    ReadChooser.Choice c = new ReadChooser("cost", SLOW, new ReadCost())
        .choose(insideLostUnit(1 << 20), "inec", new ReadCost());
    assertTrue(c.routes, c.reason());
    c = new ReadChooser("cost", 0, new ReadCost())
        .choose(insideLostUnit(1 << 20), "inec", new ReadCost());
    assertFalse(c.routes, "nothing known: Hadoop's stream, " + c.reason());
  }

  @Test
  void aRouteMeasuredNearASmallSizeIsJudgedThereNotByItsCells() {
    // INEC on the testbed: 64 KiB in 21 ms, cells and units slower a byte than the link
    ReadCost route = new ReadCost();
    for (int i = 0; i < 3; i++) {
      route.add(64 << 10, 21);
    }
    for (int i = 0; i < 7; i++) {
      route.add(1 << 20, 195);
    }
    for (int i = 0; i < 6; i++) {
      route.add(4 << 20, 460);
    }
    assertTrue(route.estimateMillis(64 << 10) > 100, "every size together: a large fixed cost");
    ReadChooser ch = new ReadChooser("cost", 0, hadoopOn(SLOW));
    ReadChooser.Choice c = ch.choose(insideLostUnit(64 << 10), "inec", route);
    assertTrue(c.routes && !c.probe, c.reason());
    assertTrue(c.reason().contains("3 measurements near this size"), c.reason());
    // the budget: Hadoop's expected time, and at least twice what the route took there
    assertEquals(Math.max(2 + K * (64 << 10) / SLOW, 2 * 21), c.budgetMillis, 0.01,
        c.reason());
    // its cells stay judged by the cells: 1 MiB at 195 ms against Hadoop's 505
    assertTrue(ch.choose(insideLostUnit(1 << 20), "inec", route).routes);
  }

  @Test
  void hadoopsStreamIsJudgedByItsReadsNearTheSize() {
    // small degraded reads pay Hadoop's k connections, large ones barely: a line through
    // all of them, the small ones few, puts a 384 KiB read at 31 ms where it took 45
    ReadCost hadoop = new ReadCost();
    for (int i = 0; i < 3; i++) {
      hadoop.add(6 * (64 << 10), 45);
    }
    for (int i = 0; i < 7; i++) {
      hadoop.add(6 << 20, 500);
    }
    for (int i = 0; i < 6; i++) {
      hadoop.add(24 << 20, 2_000);
    }
    double fromAll = hadoop.estimateMillisLow(6 * (64 << 10));
    assertTrue(fromAll < 36, "the line through every size: " + fromAll);
    ReadCost route = new ReadCost();
    for (int i = 0; i < 3; i++) {
      route.add(64 << 10, 40);
    }
    ReadChooser.Choice c = new ReadChooser("cost", 0, hadoop)
        .choose(insideLostUnit(64 << 10), "switch", route);
    assertTrue(c.routes, c.reason());
    assertTrue(c.reason().contains("against Hadoop's stream 45.0 ms"), c.reason());
  }

  @Test
  void aReadIsSentToTheRouteTheChooserExpectsFastestNotAStaleOneTheRouterPutFirst() {
    long[] now = {0};
    ReadChooser ch = new ReadChooser("cost", 0, hadoopOn(SLOW), () -> now[0]);
    ReadCost stale = new ReadCost(() -> now[0]);
    for (int i = 0; i < 3; i++) {
      stale.add(1 << 20, 150); // the switch's cells, a minute ago: the router still ranks it
    }
    now[0] += 60_000;
    ReadCost fresh = new ReadCost(() -> now[0]);
    for (int i = 0; i < 3; i++) {
      fresh.add(64 << 10, 21);
      fresh.add(1 << 20, 110);
    }
    java.util.Map<String, ReadCost> costs = java.util.Map.of("switch", stale, "inec", fresh);
    ReadChooser.ReadShape small = insideLostUnit(64 << 10);
    // judged by the prior (40 ms and the range at the link), the switch loses to Hadoop's 33.5
    assertFalse(ch.choose(small, "switch", stale).routes);
    String route = ch.fastestRoute(small, java.util.List.of("switch", "inec"), costs::get);
    assertEquals("inec", route);
    ReadChooser.Choice c = ch.choose(small, route, costs.get(route));
    assertTrue(c.routes, c.reason());
    assertEquals("inec", ch.fastestRoute(insideLostUnit(1 << 20),
        java.util.List.of("switch", "inec"), costs::get), "110 ms against 40 + 84");
    // the router's exploration put a route measured once first: judged by the prior (40 ms
    // and the range at the link), it would leave the small read to Hadoop's stream
    ReadCost once = new ReadCost(() -> now[0]);
    once.add(1 << 20, 100);
    java.util.Map<String, ReadCost> exploring = java.util.Map.of("switch", once, "inec", fresh);
    assertEquals("inec", ch.fastestRoute(small, java.util.List.of("switch", "inec"),
        exploring::get));
    // where no measured route wins and the prior is the least, the unmeasured route is tried
    // (and so measured)
    ReadCost slowCells = new ReadCost(() -> now[0]);
    for (int i = 0; i < 3; i++) {
      slowCells.add(1 << 20, 600); // Hadoop's stream: 505
    }
    assertEquals("switch", ch.fastestRoute(insideLostUnit(1 << 20),
        java.util.List.of("inec", "switch"), java.util.Map.of("switch", once, "inec",
            slowCells)::get), "40 + 84 ms against 600");
    // forced reads keep the router's order
    assertEquals("switch", new ReadChooser("routes", 0, hadoopOn(SLOW)).fastestRoute(small,
        java.util.List.of("switch", "inec"), costs::get));
    assertNull(ch.fastestRoute(small, java.util.List.of(), costs::get));
  }

  @Test
  void hadoopsStreamMeasuredOnOneSizeOnlyStillErrsLow() {
    // no fit (one size): its reads of 3 MiB are not taken for what 1 MiB costs
    ReadCost hadoop = new ReadCost();
    for (int i = 0; i < 3; i++) {
      hadoop.add(3 << 20, 270);
    }
    ReadCost route = new ReadCost();
    for (int i = 0; i < 3; i++) {
      route.add(1 << 18, 150);
    }
    ReadChooser.Choice c = new ReadChooser("cost", 0, hadoop)
        .choose(new ReadChooser.ReadShape(1 << 20, 1 << 18, 0), "switch", route);
    assertFalse(c.routes, c.reason());
    assertTrue(c.reason().contains("against Hadoop's stream 90.0 ms"), c.reason());
  }

  @Test
  void aRouteUnusedForAWhileIsJudgedByNoMoreThanThePriorNorHeldBackByIt() {
    long[] now = {0};
    ReadChooser ch = new ReadChooser("cost", 0, hadoopOn(SLOW), () -> now[0]);
    ReadCost good = new ReadCost(() -> now[0]);
    ReadCost bad = new ReadCost(() -> now[0]);
    for (int i = 0; i < 3; i++) {
      good.add(64 << 10, 11); // RS(3,2)'s switch on the testbed, warm
      bad.add(64 << 10, 900); // loaded by a reconstruction
    }
    now[0] += 2 * ReadCost.RECENT_MS;
    ReadChooser.Choice c = ch.choose(insideLostUnit(64 << 10), "switch", good);
    assertTrue(c.routes, "a minute unused, not shunned from small reads: " + c.reason());
    assertTrue(c.reason().startsWith("switch 11.0 ms"), c.reason());
    ReadChooser.Choice cell = ch.choose(insideLostUnit(1 << 20), "switch", bad);
    assertTrue(cell.routes, "tried again at the prior, 40 ms and the cell at the link: "
        + cell.reason());
  }

  @Test
  void aMeasuredRouteThatWinsIsNotPassedOverForOneJudgedAtThePrior() {
    long[] now = {0};
    ReadChooser ch = new ReadChooser("cost", 0, hadoopOn(SLOW), () -> now[0]);
    ReadCost slow = new ReadCost(() -> now[0]);
    for (int i = 0; i < 3; i++) {
      slow.add(1 << 20, 900); // loaded a while ago
    }
    now[0] += 2 * ReadCost.RECENT_MS;
    ReadCost steady = new ReadCost(() -> now[0]);
    for (int i = 0; i < 3; i++) {
      steady.add(1 << 20, 130); // above the prior's 40 + 84 ms, well under Hadoop's 505
    }
    java.util.Map<String, ReadCost> costs = java.util.Map.of("a", steady, "b", slow);
    // b at the prior would win on estimates, lose its read to the hedge, leave every route
    // for 30 s, and be judged at the prior again
    assertEquals("a", ch.fastestRoute(insideLostUnit(1 << 20), java.util.List.of("b", "a"),
        costs::get));
  }

  @Test
  void modesAndNoRoute() {
    ReadChooser.ReadShape r = insideLostUnit(1 << 20);
    assertFalse(new ReadChooser("hadoop", SLOW, hadoopOn(SLOW)).choose(r, "switch",
        new ReadCost()).routes);
    assertTrue(new ReadChooser("routes", 0, new ReadCost()).choose(wholeStripes(1), "switch",
        new ReadCost()).routes);
    assertFalse(new ReadChooser("routes", SLOW, hadoopOn(SLOW)).choose(r, null, null).routes);
  }
}
