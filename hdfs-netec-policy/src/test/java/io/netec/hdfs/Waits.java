package io.netec.hdfs;

import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The suites' one way to wait for something another thread or process brings about: poll a
 * condition until it holds or a deadline passes (on the monotonic clock), never a bare sleep.
 */
public final class Waits {
  private Waits() {
  }

  /** A condition a test waits for; it may throw (a NameNode call, say). */
  public interface Condition {
    boolean holds() throws Exception;
  }

  /** Whether {@code c} held within {@code timeoutMs}, polled every {@code pollMs}. */
  public static boolean within(long timeoutMs, long pollMs, Condition c) throws Exception {
    if (timeoutMs < 0 || pollMs <= 0) {
      throw new IllegalArgumentException("timeout " + timeoutMs + " ms, poll " + pollMs
          + " ms: the timeout may not be negative, the poll must be positive");
    }
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
    while (!c.holds()) {
      if (System.nanoTime() - deadline > 0) {
        return false;
      }
      Thread.sleep(pollMs);
    }
    return true;
  }

  /** Waits up to {@code timeoutMs} for {@code c}; else fails, saying what and {@code state}. */
  public static void until(String what, long timeoutMs, Condition c, Supplier<String> state)
      throws Exception {
    if (!within(timeoutMs, 20, c)) {
      throw new AssertionError(what + " not reached in " + timeoutMs / 1000.0 + " s "
          + state.get());
    }
  }

  /** As {@link #until(String, long, Condition, Supplier)}, with no state to add. */
  public static void until(String what, long timeoutMs, Condition c) throws Exception {
    until(what, timeoutMs, c, () -> "");
  }
}
