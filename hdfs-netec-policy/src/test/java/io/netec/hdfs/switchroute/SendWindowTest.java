package io.netec.hdfs.switchroute;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A survivor stream's send window, without a socket. */
class SendWindowTest {
  private static List<Long> drain(SendWindow w) {
    List<Long> sent = new ArrayList<>();
    while (w.canSend()) {
      sent.add(w.take());
    }
    return sent;
  }

  @Test
  void sendsTheSetupsWindowThenWhatEachAckAllows() {
    SendWindow w = new SendWindow(10, 3);
    assertEquals(List.of(0L, 1L, 2L), drain(w));
    w.onAck(1, 3, false); // stripe 0 arrived: up to 4
    assertEquals(List.of(3L), drain(w));
    w.onAck(4, 3, false);
    assertEquals(List.of(4L, 5L, 6L), drain(w));
  }

  @Test
  void neverPastTheStreamsEnd() {
    SendWindow w = new SendWindow(4, 2);
    drain(w);
    w.onAck(2, 100, false);
    assertEquals(List.of(2L, 3L), drain(w));
    assertFalse(w.canSend());
    assertEquals(4, w.next());
  }

  @Test
  void aLateAckDoesNotShrinkTheWindow() {
    SendWindow w = new SendWindow(100, 4);
    w.onAck(8, 4, false); // up to 12
    w.onAck(2, 4, false); // older, reordered: up to 6 would shrink it
    List<Long> expected = new ArrayList<>();
    for (long s = 0; s < 12; s++) {
      expected.add(s);
    }
    assertEquals(expected, drain(w));
  }

  @Test
  void retxGoesBackToTheReadersFirstMissingStripe() {
    SendWindow w = new SendWindow(100, 4);
    drain(w); // 0..3
    w.onAck(1, 4, true); // stripe 1 lost
    assertEquals(List.of(1L, 2L, 3L, 4L), drain(w), "go-back-N from 1, up to 1 + 4");
  }

  @Test
  void aRetxAheadOfWhatWasSentOnlyMovesTheLimit() {
    SendWindow w = new SendWindow(100, 2);
    drain(w); // 0, 1
    w.onAck(5, 2, true); // a reader ACKing ahead of the data
    assertEquals(List.of(2L, 3L, 4L, 5L, 6L), drain(w), "nothing skipped, nothing repeated");
  }

  @Test
  void aZeroWindowStillLetsOneStripeThrough() {
    SendWindow w = new SendWindow(10, 0);
    assertEquals(List.of(0L), drain(w), "a window of 0 is one: the stream cannot stall");
    w.onAck(1, 0, false);
    assertTrue(w.canSend());
  }
}
