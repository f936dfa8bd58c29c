package io.netec.hdfs.route;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class ReadCostTest {
  @Test
  void nothingMeasuredIsUnknown() {
    ReadCost c = new ReadCost();
    assertEquals(-1, c.estimateMillis(1000));
    assertEquals(-1, c.bytesPerMs());
    c.add(0, 5); // no bytes: not a measurement
    c.add(10, -1);
    assertEquals(0, c.samples());
  }

  @Test
  void fitsLatencyAndRate() {
    ReadCost c = new ReadCost();
    // 20 ms fixed, 1,000 bytes per ms
    for (long b : new long[] {1_000, 64_000, 1_000_000, 4_000_000, 250_000}) {
      c.add(b, 20 + b / 1000.0);
    }
    assertEquals(20 + 2_000, c.estimateMillis(2_000_000), 1e-6);
    assertEquals(20, c.estimateMillis(0), 1e-6);
    assertEquals(1000, c.bytesPerMs(), 1e-3);
  }

  @Test
  void theFitFollowsEveryNewMeasurementAndEveryForgottenOne() {
    long[] now = {0};
    ReadCost c = new ReadCost(() -> now[0]);
    long[] sizes = {1_000, 64_000, 1_000_000, 4_000_000};
    for (int i = 0; i < ReadCost.SAMPLES; i++) {
      c.add(sizes[i % 4], 20 + sizes[i % 4] / 1000.0);
    }
    assertEquals(20 + 2_000, c.estimateMillis(2_000_000), 1e-6);
    // a whole ring of new samples: as many held, the next slot where it was, another line
    for (int i = 0; i < ReadCost.SAMPLES; i++) {
      c.add(sizes[i % 4], 5 + sizes[i % 4] / 500.0);
    }
    assertEquals(5 + 4_000, c.estimateMillis(2_000_000), 1e-6);
    // one more, later, and the fit made again (and cached); then all but it forgotten by age
    // alone, no add between: one size left, no fit, its time scaled
    now[0] += 1;
    c.add(2_000_000, 20 + 2_000);
    assertEquals(5 + 4_000, c.estimateMillis(2_000_000), 1e-6, "one sample of 16 moves nothing");
    now[0] += ReadCost.MAX_AGE_MS;
    assertEquals(1, c.samples());
    assertEquals(2 * 2_020, c.estimateMillis(4_000_000), 1e-6);
  }

  @Test
  void oneOutlierDoesNotMoveTheFit() {
    ReadCost c = new ReadCost();
    c.add(64_000, 2_000); // a cold first task: connections, JIT
    for (long b : new long[] {1_000, 64_000, 1_000_000, 4_000_000, 250_000, 500_000}) {
      c.add(b, 20 + b / 1000.0);
    }
    assertEquals(20 + 2_000, c.estimateMillis(2_000_000), 1e-6);
    assertEquals(20 + 64, c.estimateMillis(64_000), 1e-6);
  }

  @Test
  void oneSizeErrsLowWhenAskedTo() {
    ReadCost c = new ReadCost();
    c.add(1_000_000, 100);
    c.add(1_000_000, 120);
    assertEquals(0.1, c.estimateMillisLow(1_000), 1e-9, "at the fastest rate seen");
    assertEquals(200, c.estimateMillisLow(2_000_000), 1e-9);
    assertEquals(-1, new ReadCost().estimateMillisLow(1_000));
  }

  @Test
  void oneSizeWithAKnownRateTakesTheMedianFixedCost() {
    ReadCost c = new ReadCost();
    c.add(1_000, 500); // cold
    c.add(1_000, 60);
    c.add(1_000, 61);
    assertEquals(60 + 9, c.estimateMillis(9_000, 0.001), 1e-9, "median of 499, 59, 60 fixed");
  }

  @Test
  void aSlowdownIsWhatTheLastFewTookOverTheEstimateOfTheirSizes() {
    ReadCost c = new ReadCost();
    for (int i = 0; i < 10; i++) {
      c.add(1_000, 11);
    }
    assertEquals(1, c.slowdown(3, 4, 0.001, 3), 1e-9);
    assertEquals(1, new ReadCost().slowdown(3, 4, 0.001, 3), 1e-9, "nothing measured");
    c.add(1_000, 501);
    assertEquals(1, c.slowdown(3, 4, 0.001, 3), 1e-9, "one slow read of three");
    c.add(1_000, 401);
    // the estimate near 1,000 bytes is the median of 10 x 11, 501, 401: 11
    assertEquals(401.0 / 11, c.slowdown(3, 4, 0.001, 3), 1e-9, "median of 1, 45.5, 36.5");
    assertEquals(1, c.slowdown(20, 4, 0.001, 3), 1e-9, "fewer than asked for");
  }

  @Test
  void readsOfOtherSizesAtTheirUsualTimesAreNoSlowdown() {
    // a route's small reads' fixed cost is not its cells' (INEC: slower a byte on cells)
    ReadCost c = new ReadCost();
    for (int i = 0; i < 5; i++) {
      c.add(64 << 10, 21);
      c.add(1 << 20, 195);
      c.add(4 << 20, 460);
    }
    assertEquals(1, c.slowdown(3, 4, c.fittedMillisPerByte(), 3), 1e-9);
  }

  @Test
  void theMeasurementsNearASize() {
    ReadCost c = new ReadCost();
    for (int i = 0; i < 7; i++) {
      c.add(1 << 20, 195);
    }
    for (int i = 0; i < 6; i++) {
      c.add(4 << 20, 460);
    }
    assertEquals(0, c.samplesNear(1 << 16, 4));
    assertEquals(-1, c.nearMillis(1 << 16, 4, 1e-4, 1), "none near 64 KiB");
    double fromAll = c.estimateNear(1 << 16, 4, c.fittedMillisPerByte(), 3);
    assertTrue(fromAll > 100, "cells and units alone read as a large fixed cost: " + fromAll);
    c.add(1 << 16, 21);
    c.add(1 << 16, 19);
    assertEquals(-1, c.nearMillis(1 << 16, 4, 1e-4, 3), "two of three");
    c.add(1 << 18, 30); // 30 less 192 KiB at 1e-4 ms a byte: 10.34
    assertEquals(3, c.samplesNear(1 << 16, 4));
    assertEquals(19, c.nearMillis(1 << 16, 4, 1e-4, 3), 1e-9, "median of 21, 19, 10.34");
    assertEquals(19, c.estimateNear(1 << 16, 4, 1e-4, 3), 1e-9);
    assertEquals(14, c.samplesNear(1 << 20, 4), "1 MiB: the cells, 256 KiB, 4 MiB");
  }

  @Test
  void aMeasurementMovedDownIsNeverBelowItsTimeScaledDown() {
    ReadCost c = new ReadCost();
    c.add(1 << 20, 50); // at 1e-4 ms a byte, moved to 256 KiB: 50 - 78.6, below zero
    assertEquals(50.0 / 4, c.nearMillis(1 << 18, 4, 1e-4, 1), 1e-9);
    assertEquals(50 + 3 * (1 << 20) * 1e-4, c.nearMillis(4 << 20, 4, 1e-4, 1), 1e-9,
        "moved up at the rate");
  }

  @Test
  void theFitsRateAndWhetherASizeWasSeenNear() {
    ReadCost c = new ReadCost();
    assertEquals(-1, c.fittedMillisPerByte());
    assertEquals(0, c.samplesNear(1 << 16, 4));
    c.add(1 << 20, 195);
    c.add(1 << 20, 200);
    assertEquals(-1, c.fittedMillisPerByte(), "one size: no rate");
    assertEquals(0, c.samplesNear(1 << 16, 4), "64 KiB is 16x from 1 MiB");
    assertEquals(2, c.samplesNear(1 << 18, 4));
    assertEquals(2, c.samplesNear(1 << 22, 4));
    assertEquals(0, c.samplesNear((1 << 22) + 1, 4));
    c.add(1 << 16, 25);
    assertEquals(1, c.samplesNear(1 << 16, 4));
    double perByte = c.fittedMillisPerByte();
    assertEquals((197.5 - 25) / ((1 << 20) - (1 << 16)), perByte, 1e-5);
  }

  @Test
  void theAgeOfTheNewestMeasurement() {
    long[] now = {0};
    ReadCost c = new ReadCost(() -> now[0]);
    assertEquals(-1, c.millisSinceNewest());
    c.add(1_000, 11);
    now[0] += 700;
    c.add(1_000, 11);
    now[0] += 300;
    assertEquals(300, c.millisSinceNewest());
    now[0] += 40;
    assertEquals(340, c.millisSinceNewest());
    assertEquals(2, c.samples());
  }

  @Test
  void oneSizeScalesUpNeverDown() {
    ReadCost c = new ReadCost();
    c.add(1_000_000, 100);
    c.add(1_000_000, 120);
    assertEquals(110, c.estimateMillis(1_000), 1e-9, "a small read costs as much as those seen");
    assertEquals(220, c.estimateMillis(2_000_000), 1e-9);
  }

  @Test
  void oneSizeWithAKnownRateIsAFixedCostPlusTheBytes() {
    ReadCost c = new ReadCost();
    c.add(1_000, 60);
    c.add(1_000, 60);
    assertEquals(59 + 9, c.estimateMillis(9_000, 0.001), 1e-9, "59 ms fixed, 1 ms a KB");
    assertEquals(540, c.estimateMillis(9_000), 1e-9, "without a rate: the median scaled up");
  }

  @Test
  void aFitWithoutSenseFallsBackToTheMedian() {
    ReadCost c = new ReadCost();
    // larger reads faster than small ones: a negative slope is noise, not a rate
    c.add(1_000, 50);
    c.add(100_000, 40);
    c.add(1_000_000, 30);
    assertEquals(40, c.estimateMillis(1_000), 1e-9);
    assertTrue(c.estimateMillis(10_000_000) > 40);
  }

  @Test
  void oneColdTaskDoesNotPriceAWarmRoute() {
    ReadCost c = new ReadCost();
    c.add(1_000_000, 900); // the first task: connections, JIT
    c.add(1_000_000, 107);
    c.add(1_000_000, 106);
    c.add(1_000_000, 108);
    assertEquals(107.5, c.estimateMillis(1_000_000), 1e-9, "the mean would say 305");
    assertEquals(215, c.estimateMillis(2_000_000), 1e-9, "scaled up from the median");
  }

  @Test
  void keepsTheLatestSamples() {
    ReadCost c = new ReadCost();
    for (int i = 0; i < ReadCost.SAMPLES; i++) {
      c.add(1_000 + i, 1_000);
    }
    for (int i = 0; i < ReadCost.SAMPLES; i++) {
      c.add(1_000 + i, 1);
    }
    assertEquals(ReadCost.SAMPLES, c.samples());
    assertTrue(c.estimateMillis(1_000) < 2, "old samples forgotten: " + c.estimateMillis(1_000));
  }

  @Test
  void oldMeasurementsAreForgotten() {
    java.util.concurrent.atomic.AtomicLong now = new java.util.concurrent.atomic.AtomicLong();
    ReadCost c = new ReadCost(now::get);
    c.add(1_000, 100);
    now.addAndGet(ReadCost.MAX_AGE_MS / 2);
    c.add(1_000, 10);
    c.add(2_000, 20);
    c.add(4_000, 40);
    assertEquals(4, c.samples());
    now.addAndGet(ReadCost.MAX_AGE_MS / 2 + 1);
    assertEquals(3, c.samples(), "the first is older than the limit");
    assertEquals(30, c.estimateMillis(3_000), 1e-9, "fitted on the three left");
    now.addAndGet(ReadCost.MAX_AGE_MS);
    assertEquals(0, c.samples());
    assertEquals(-1, c.estimateMillis(1_000));
  }
}
