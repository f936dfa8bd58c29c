package io.netec.hdfs.client;

import java.util.Collection;
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

  /** What a stream found dead. */
  void learn(Collection<DatanodeInfo> dead) {
    long t = clock.getAsLong() + TTL_MS;
    for (DatanodeInfo dn : dead) {
      until.merge(dn, t, Math::max);
    }
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
