package io.netec.hdfs.client;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;
import org.apache.hadoop.hdfs.protocol.DatanodeInfo;

/**
 * DataNodes that a stream of this file system failed to connect to in the last
 * {@link #TTL_MS} ms. Hadoop's streams each learn a dead DataNode again (one failed connection
 * and one decode each); the plugin's streams share what they learned, so a positional read of
 * a unit on a DataNode found dead a moment ago can be planned as the lost unit it is (and go
 * through a route) before the NameNode stops listing it. A DataNode back within the period is
 * read through a route meanwhile, which still returns the file's bytes. Plain and thread-safe.
 */
final class DeadNodes {
  static final long TTL_MS = 30_000;
  private final Map<DatanodeInfo, Long> until = new ConcurrentHashMap<>();
  private final LongSupplier clock;

  DeadNodes(LongSupplier clockMs) {
    this.clock = clockMs;
  }

  /**
   * A stream found {@code dn} dead (a connection failed). Stamped once: finding it dead again
   * within the period does not extend it (Hadoop's streams keep their dead nodes for their
   * life, and a long-lived stream must not keep a live DataNode out of everyone's plans).
   */
  void learn(DatanodeInfo dn) {
    long now = clock.getAsLong();
    until.compute(dn, (k, t) -> t != null && t - now > 0 ? t : now + TTL_MS);
  }

  boolean isDead(DatanodeInfo dn) {
    Long t = until.get(dn);
    if (t == null) {
      return false;
    }
    if (t - clock.getAsLong() <= 0) {
      until.remove(dn, t);
      return false;
    }
    return true;
  }
}
