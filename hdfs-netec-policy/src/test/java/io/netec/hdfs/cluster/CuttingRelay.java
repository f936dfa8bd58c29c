package io.netec.hdfs.cluster;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A TCP relay put in front of a listener (registered in ServiceDirectory in its place). Each
 * connection is passed through both ways until {@code after} bytes went towards the listener;
 * then the fault happens once per relay — {@code atThreshold} runs (e.g. kills a DataNode) —
 * and, if {@code cut}, that connection is closed on both sides (a dropped connection).
 */
final class CuttingRelay extends Relay {
  private final long after;
  private final boolean cut;
  private final Runnable atThreshold;
  private final AtomicBoolean fired = new AtomicBoolean();
  final AtomicLong cuts = new AtomicLong();

  CuttingRelay(InetSocketAddress target, long after, boolean cut, Runnable atThreshold)
      throws IOException {
    super(target, "cutting-relay");
    this.after = after;
    this.cut = cut;
    this.atThreshold = atThreshold;
  }

  /** Whether a connection crossed the threshold. */
  boolean fired() {
    return fired.get();
  }

  @Override
  void copy(InputStream from, OutputStream to, boolean forward) throws IOException {
    byte[] buf = new byte[16 * 1024];
    long moved = 0;
    int n;
    while ((n = from.read(buf)) > 0) {
      if (forward && moved + n > after) {
        if (fired.compareAndSet(false, true) && atThreshold != null) {
          atThreshold.run();
        }
        if (cut) {
          cuts.incrementAndGet();
          return;
        }
      }
      to.write(buf, 0, n);
      moved += n;
    }
  }
}
