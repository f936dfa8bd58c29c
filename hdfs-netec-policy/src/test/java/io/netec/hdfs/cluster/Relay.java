package io.netec.hdfs.cluster;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;

/**
 * A TCP relay put in front of a listener (registered in ServiceDirectory, or advertised, in its
 * place): every connection it accepts is joined to a new one to the target, and each direction
 * copied by a thread of its own through {@link #copy}, which the faulty relays override; when a
 * direction ends, both connections are closed.
 */
abstract class Relay implements AutoCloseable {
  private final ServerSocket server;
  private final InetSocketAddress target;

  Relay(InetSocketAddress target, String name) throws IOException {
    this.target = target;
    this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    Thread t = new Thread(this::acceptLoop, name + "-" + server.getLocalPort());
    t.setDaemon(true);
    t.start();
  }

  InetSocketAddress address() {
    return new InetSocketAddress("127.0.0.1", server.getLocalPort());
  }

  int port() {
    return server.getLocalPort();
  }

  /**
   * Copies one direction until it ends: towards the target (what the dialler sends) or from
   * it. Returning or throwing closes both connections.
   */
  abstract void copy(InputStream from, OutputStream to, boolean towardsTarget) throws Exception;

  private void acceptLoop() {
    while (!server.isClosed()) {
      try {
        Socket dialler = server.accept();
        Socket upstream = new Socket(target.getAddress(), target.getPort());
        dialler.setTcpNoDelay(true);
        upstream.setTcpNoDelay(true);
        pump(dialler.getInputStream(), upstream.getOutputStream(), true, dialler, upstream);
        pump(upstream.getInputStream(), dialler.getOutputStream(), false, dialler, upstream);
      } catch (IOException e) {
        return;
      }
    }
  }

  private void pump(InputStream from, OutputStream to, boolean towardsTarget, Socket a,
      Socket b) {
    Thread t = new Thread(() -> {
      try {
        copy(from, to, towardsTarget);
      } catch (Exception e) {
        // the other side closed, or the fault ended the connection
      } finally {
        closeQuietly(a);
        closeQuietly(b);
      }
    }, getClass().getSimpleName() + "-pump");
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
