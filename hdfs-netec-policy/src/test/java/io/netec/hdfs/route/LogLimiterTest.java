package io.netec.hdfs.route;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.hadoop.test.GenericTestUtils.LogCapturer;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Peer-caused log lines: one per cause and period, then a count; peer text on one line. */
class LogLimiterTest {
  private static final Logger LOG = LoggerFactory.getLogger(LogLimiterTest.class);


  @Test
  void oneLinePerCauseAndPeriodThenACount() throws Exception {
    LogCapturer log = LogCapturer.captureLogs(LOG);
    try {
      LogLimiter limiter = new LogLimiter(LOG, 300);
      for (int i = 0; i < 10_000; i++) {
        limiter.info("bad-frame", "bad frame {}", i);
        if (i % 100 == 0) {
          limiter.warn("other", "other cause {}", i);
        }
      }
      assertEquals(1, Occurrences.count(log.getOutput(), "bad frame "), log.getOutput());
      assertEquals(1, Occurrences.count(log.getOutput(), "other cause "), log.getOutput());
      Thread.sleep(400);
      limiter.info("bad-frame", "bad frame {}", "again");
      assertTrue(log.getOutput().contains(
          "bad frame again (and 9999 more like it held back in the last 1 s)"), log.getOutput());
    } finally {
      log.stopCapturing();
    }
  }

  @Test
  void peerTextCannotForgeALine() {
    String s = LogLimiter.oneLine("group\n2026-11-22 ERROR forged\r\u0000" + "x".repeat(500));
    assertFalse(s.contains("\n") || s.contains("\r") || s.contains("\u0000"), s);
    assertTrue(s.startsWith("group\\x0a2026-11-22 ERROR forged\\x0d\\x00x"), s);
    assertTrue(s.length() < 260 && s.endsWith("..."), s);
  }
}
