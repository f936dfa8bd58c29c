package io.netec.hdfs.switchroute;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Rack switches ({@code netec.switch.racks}) that could not be reached of late, each until its
 * back-off ends ({@code netec.route.backoff.ms}): a plan by rack leaves them out, so their
 * racks' survivors stream to the parent instead of every task waiting for a dead switch.
 */
final class RackSwitchesDown {
  private final Map<String, Long> until = new ConcurrentHashMap<>();

  /** {@code control} is down for {@code ms} from now (0: not remembered). */
  void down(String control, long ms) {
    if (ms > 0) {
      until.put(control, System.nanoTime() + ms * 1_000_000L);
    }
  }

  /** {@code rackSwitches} without those down now, in their order. */
  Map<String, String> inUse(Map<String, String> rackSwitches) {
    if (until.isEmpty()) {
      return rackSwitches;
    }
    long now = System.nanoTime();
    until.values().removeIf(t -> t - now <= 0);
    Map<String, String> out = new LinkedHashMap<>();
    rackSwitches.forEach((rack, control) -> {
      if (!until.containsKey(control)) {
        out.put(rack, control);
      }
    });
    return out;
  }
}
