package io.netec.hdfs.proof;

import io.netec.hdfs.switchroute.wire.ControlFrames;
import io.netec.hdfs.switchroute.wire.ProtocolException;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.io.IOUtils;
import org.apache.hadoop.util.DataChecksum;

/**
 * One survivor's part of a proof, asked of its DataNode's {@link ProofService} on a thread of
 * its own: the replica's checksum comes first, then the fingerprint, or a failure naming why.
 * Closing it ends the call.
 */
final class ProofCall implements Runnable {
  /** Connecting to a proof service: a DataNode that does not answer within this is at fault. */
  static final int CONNECT_MS = 5_000;
  private static final ExecutorService CALLS = Executors.newCachedThreadPool(r -> {
    Thread t = new Thread(r, "netec-proof-call");
    t.setDaemon(true);
    return t;
  });
  /** Waiters of every call, woken whenever any call learns something. */
  private static final Object CHANGED = new Object();

  private final int unit;
  private final InetSocketAddress service;
  private final ProofRequest request;
  private final Socket socket = new Socket();
  private DataChecksum checksum;
  private byte[] fingerprint;
  private String failure;
  private boolean closed;

  private ProofCall(int unit, InetSocketAddress service, ProofRequest request) {
    this.unit = unit;
    this.service = service;
    this.request = request;
  }

  /** A call to {@code service} for unit {@code unit}'s part, not started yet. */
  static ProofCall prepare(int unit, InetSocketAddress service, ProofRequest request) {
    return new ProofCall(unit, service, request);
  }

  /** Starts asking (a closed call fails at once). */
  void start() {
    CALLS.execute(this);
  }

  int unit() {
    return unit;
  }

  @Override
  public void run() {
    try {
      if (service == null) {
        throw new IOException("the DataNode of unit " + unit + " has no address");
      }
      socket.connect(service, CONNECT_MS);
      socket.setTcpNoDelay(true);
      DataOutputStream out = new DataOutputStream(new BufferedOutputStream(
          socket.getOutputStream()));
      ControlFrames.write(out, request.toJson());
      DataInputStream in = new DataInputStream(new BufferedInputStream(socket.getInputStream()));
      ProofAnswer first = ProofAnswer.fromJson(ControlFrames.read(in));
      if (!first.ok() || first.checksum() == null) {
        fail(first.ok() ? "answered a fingerprint before its checksum" : describe(first));
        return;
      }
      set(first.checksum(), null);
      ProofAnswer second = ProofAnswer.fromJson(ControlFrames.read(in));
      if (!second.ok() || second.fingerprint() == null) {
        fail(second.ok() ? "answered no fingerprint" : describe(second));
        return;
      }
      set(null, second.fingerprint());
    } catch (IOException | ProtocolException e) {
      fail("proof service " + service + ": " + e);
    } finally {
      IOUtils.closeSocket(socket);
    }
  }

  private static String describe(ProofAnswer a) {
    return a.fault().name().toLowerCase(java.util.Locale.ROOT) + ": " + a.reason();
  }

  private void set(DataChecksum c, byte[] fp) {
    synchronized (CHANGED) {
      if (c != null) {
        checksum = c;
      }
      if (fp != null) {
        fingerprint = fp;
      }
      CHANGED.notifyAll();
    }
  }

  private void fail(String why) {
    synchronized (CHANGED) {
      if (failure == null && fingerprint == null) {
        failure = closed ? "closed" : why;
      }
      CHANGED.notifyAll();
    }
  }

  DataChecksum checksumNow() {
    synchronized (CHANGED) {
      return checksum;
    }
  }

  /** Why the call failed, or null. */
  String failure() {
    synchronized (CHANGED) {
      return failure;
    }
  }

  boolean hasFingerprint() {
    synchronized (CHANGED) {
      return fingerprint != null;
    }
  }

  /** The fingerprint, waiting until {@code deadline} (System.nanoTime); null if failed or late. */
  byte[] awaitFingerprint(long deadline) {
    synchronized (CHANGED) {
      while (fingerprint == null && failure == null) {
        long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
        if (left <= 0) {
          return null;
        }
        try {
          CHANGED.wait(left);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return null;
        }
      }
      return fingerprint;
    }
  }

  /** Waits until any call learns something, or {@code ms}. */
  static void awaitAny(List<ProofCall> calls, long ms) {
    synchronized (CHANGED) {
      try {
        CHANGED.wait(ms);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  void close() {
    synchronized (CHANGED) {
      closed = true;
    }
    IOUtils.closeSocket(socket);
  }
}
