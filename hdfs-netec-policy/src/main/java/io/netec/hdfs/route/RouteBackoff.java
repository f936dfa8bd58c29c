package io.netec.hdfs.route;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Routes passed over for a while ({@code netec.route.backoff.ms}): one that could not reach its
 * service, or failed on its own account, is not asked again until its back-off ends; one line
 * when it goes away, one when it is back. Plain and thread-safe; its clock is given.
 */
final class RouteBackoff {
  private static final Logger LOG = LoggerFactory.getLogger(ReconstructionRouter.class);

  private static final class PassedOver {
    final long untilNanos;
    final String reason;

    PassedOver(long untilNanos, String reason) {
      this.untilNanos = untilNanos;
      this.reason = reason;
    }
  }

  private final long backoffNanos;
  private final LongSupplier nanoClock;
  private final Map<String, PassedOver> passedOver = new ConcurrentHashMap<>();

  RouteBackoff(long backoffMs, LongSupplier nanoClock) {
    this.backoffNanos = backoffMs * 1_000_000L;
    this.nanoClock = nanoClock;
  }

  /**
   * Passes route {@code name} over for the back-off (none when it is 0); logs only when it was
   * usable before.
   *
   * @param failing it failed on its own account (else its service was unreachable)
   */
  void passOver(String name, String reason, boolean failing) {
    if (backoffNanos == 0) {
      return;
    }
    PassedOver before = passedOver.put(name,
        new PassedOver(nanoClock.getAsLong() + backoffNanos, reason));
    if (before == null) {
      LOG.warn("Route {} {} ({}); not asked again for {} ms", name,
          failing ? "failing" : "unavailable", reason, backoffNanos / 1_000_000);
    }
  }

  /** Why route {@code name} is passed over now, or null: it may be asked. */
  String passedOver(String name) {
    PassedOver p = passedOver.get(name);
    return p != null && nanoClock.getAsLong() - p.untilNanos < 0 ? p.reason : null;
  }

  /** Route {@code name} served or answered: usable again, said once. */
  void usable(String name) {
    if (passedOver.remove(name) != null) {
      LOG.info("Route {} usable again", name);
    }
  }
}
