package io.netec.hdfs.cluster;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;

/**
 * A TCP relay put in front of a listener that keeps a copy of every byte sent towards it (up
 * to 16 MiB): what an eavesdropper on that listener's link would see of the requests.
 */
final class RecordingRelay extends Relay {
  private static final int MAX = 16 << 20;
  private final ByteArrayOutputStream seen = new ByteArrayOutputStream();
  final String name;

  RecordingRelay(InetSocketAddress target, String name) throws IOException {
    super(target, "recording-relay");
    this.name = name;
  }

  /** The bytes sent towards the listener so far. */
  synchronized byte[] seen() {
    return seen.toByteArray();
  }

  @Override
  void copy(InputStream from, OutputStream to, boolean towardsTarget) throws IOException {
    byte[] buf = new byte[16 * 1024];
    int n;
    while ((n = from.read(buf)) > 0) {
      if (towardsTarget) {
        synchronized (this) {
          seen.write(buf, 0, Math.max(0, Math.min(n, MAX - seen.size())));
        }
      }
      to.write(buf, 0, n);
    }
  }
}
