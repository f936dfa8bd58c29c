package io.netec.hdfs.cluster;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A TCP relay put in front of a listener (registered in ServiceDirectory in its place). Each
 * connection is passed through both ways until {@code after} bytes went towards the listener;
 * then the fault happens once per relay — {@code atThreshold} runs (e.g. kills a DataNode) —
 * and, if {@code cut}, that connection is closed on both sides (a dropped connection).
 */
final class CuttingRelay implements AutoCloseable {
  private final ServerSocket server;
  private final InetSocketAddress target;
  private final long after;
  private final boolean cut;
  private final Runnable atThreshold;
  private final AtomicBoolean fired = new AtomicBoolean();
  final AtomicLong cuts = new AtomicLong();

  CuttingRelay(InetSocketAddress target, long after, boolean cut, Runnable atThreshold)
      throws IOException {
    this.target = target;
    this.after = after;
    this.cut = cut;
    this.atThreshold = atThreshold;
    this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    Thread t = new Thread(this::acceptLoop, "cutting-relay-" + server.getLocalPort());
    t.setDaemon(true);
    t.start();
  }

  InetSocketAddress address() {
    return new InetSocketAddress("127.0.0.1", server.getLocalPort());
  }

  /** Whether a connection crossed the threshold. */
  boolean fired() {
    return fired.get();
  }

  private void acceptLoop() {
    while (!server.isClosed()) {
      try {
        Socket in = server.accept();
        Socket out = new Socket(target.getAddress(), target.getPort());
        in.setTcpNoDelay(true);
        out.setTcpNoDelay(true);
        pump(in.getInputStream(), out.getOutputStream(), true, in, out);
        pump(out.getInputStream(), in.getOutputStream(), false, in, out);
      } catch (IOException e) {
        return;
      }
    }
  }

  private void pump(InputStream from, OutputStream to, boolean forward, Socket a, Socket b) {
    Thread t = new Thread(() -> {
      byte[] buf = new byte[16 * 1024];
      long moved = 0;
      try {
        int n;
        while ((n = from.read(buf)) > 0) {
          if (forward && moved + n > after) {
            if (fired.compareAndSet(false, true) && atThreshold != null) {
              atThreshold.run();
            }
            if (cut) {
              cuts.incrementAndGet();
              break;
            }
          }
          to.write(buf, 0, n);
          moved += n;
        }
      } catch (IOException e) {
        // the other side closed: close both below
      }
      closeQuietly(a);
      closeQuietly(b);
    }, "cutting-relay-pump");
    t.setDaemon(true);
    t.start();
  }

  private static void closeQuietly(Socket s) {
    try {
      s.close();
    } catch (IOException e) {
      // already closed
    }
  }

  @Override
  public void close() throws IOException {
    server.close();
  }
}
