package io.netec.hdfs.inecroute;

import io.netec.hdfs.route.SurvivorFault;
import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.net.Socket;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The participants' reports of one {@link InecRepair}, each read on a watcher thread of its
 * own as its vertex ends ({@link VertexReport}'s status, then a text). The first failure ends
 * the repair at once: it closes the rebuilding node's inputs, so its recv-ec stops waiting.
 * {@link #rootCause} then names the failure to report.
 */
final class RepairReports {
  private static final ExecutorService WATCHERS = Executors.newCachedThreadPool(r -> {
    Thread t = new Thread(r, "inec-repair-watch");
    t.setDaemon(true);
    return t;
  });

  private final AtomicReference<IOException> failure = new AtomicReference<>();
  private final List<IOException> reports = Collections.synchronizedList(new ArrayList<>());
  private final List<Future<?>> watchers = new ArrayList<>();
  /** The rebuilding node's inputs; guards the first failure's closing of them. */
  private final List<InecEngine.Conn> inputs = new ArrayList<>();

  /**
   * Watches one joined participant's control connection for its report.
   *
   * @param unit the survivor the participant serves (a zeros vertex: its host's own unit)
   * @param outputUnit the unit of the participant its output goes to, -1 for ours
   */
  void watch(Socket control, String who, int unit, int outputUnit) {
    watchers.add(WATCHERS.submit(() -> read(control, who, unit, outputUnit)));
  }

  boolean failed() {
    return failure.get() != null;
  }

  /** The first failure reported, or the repair's end; null while neither came. */
  IOException failure() {
    return failure.get();
  }

  /** One of the rebuilding node's inputs, closed by a failure; throws one that came first. */
  void addInput(InecEngine.Conn in) throws IOException {
    synchronized (inputs) {
      inputs.add(in);
      if (failure.get() != null) {
        throw failure.get();
      }
    }
  }

  /** Waits for every participant's report, each within {@code timeoutMs}; throws a failure. */
  void awaitAll(long timeoutMs) throws IOException {
    for (Future<?> w : watchers) {
      try {
        w.get(timeoutMs, TimeUnit.MILLISECONDS);
      } catch (TimeoutException e) {
        throw new IOException("a participant did not report within " + timeoutMs + " ms");
      } catch (Exception e) {
        throw new IOException(e);
      }
      if (failure.get() != null) {
        throw failure.get();
      }
    }
  }

  /** The repair is over: the watchers' work stops, and every input is closed. */
  void end() {
    synchronized (inputs) {
      failure.compareAndSet(null, new IOException("repair over"));
      for (InecEngine.Conn c : inputs) {
        c.close();
      }
    }
  }

  /**
   * A participant's report that its own replica failed (a checksum error, a replica gone): the
   * surest cause a broken repair can have.
   */
  static final class OwnReplicaFault extends SurvivorFault {
    OwnReplicaFault(int unit, String message) {
      super(unit, message);
    }
  }

  /**
   * The failure to report for a broken repair. When one participant fails, its streams close
   * and its neighbours fail too ("closed by the peer", or a stall or a reset of their own):
   * wait briefly for every report and name a participant's own replica's fault if one came,
   * else the first report that is not "closed by the peer" (a refused token, say), else the
   * first report, else what the rebuilding node itself saw ({@code seen}). A failing
   * participant sends its report before it closes its streams, but the report is written by
   * its event loop while the teardown is not, so a neighbour's report can come first (the
   * likely reading of one fresh-clone CI run, where a corrupt survivor's INEC attempt was not
   * blamed on the survivor: before, the first such report was named at once).
   */
  IOException rootCause(IOException seen) {
    long deadline = System.nanoTime() + 2_000_000_000L;
    IOException other = null;
    while (true) {
      synchronized (reports) {
        for (IOException r : reports) {
          if (r instanceof OwnReplicaFault) {
            return r;
          }
          if (other == null && !(r instanceof InecEngine.StreamLost)) {
            other = r;
          }
        }
      }
      boolean allIn = watchers.stream().allMatch(Future::isDone);
      if (allIn || System.nanoTime() > deadline) {
        break;
      }
      try {
        Thread.sleep(10);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
    }
    if (other != null) {
      return other;
    }
    synchronized (reports) {
      return reports.isEmpty() ? seen : reports.get(0);
    }
  }

  /** Reads one participant's report; a failure closes our inputs, ending the repair now. */
  private void read(Socket c, String who, int unit, int outputUnit) {
    IOException bad;
    try {
      DataInputStream in = new DataInputStream(new BufferedInputStream(c.getInputStream()));
      int status = in.readUnsignedByte();
      String message = in.readUTF();
      if (status == VertexReport.DONE) {
        return;
      }
      String text = "INEC participant " + who + " failed: " + message;
      if (status == VertexReport.STREAM_LOST) {
        bad = new InecEngine.StreamLost(text);
      } else if (status == VertexReport.SURVIVOR_FAULT) {
        bad = new OwnReplicaFault(unit, text);
      } else if (status == VertexReport.OUTPUT_UNREACHABLE && outputUnit >= 0) {
        bad = new SurvivorFault(outputUnit, text + " (unit " + outputUnit + "'s participant)");
      } else {
        bad = new IOException(text);
      }
    } catch (EOFException e) {
      bad = new InecEngine.StreamLost("INEC participant " + who + " closed without a report");
    } catch (IOException e) {
      bad = new IOException("INEC participant " + who + ": " + e);
    }
    reports.add(bad);
    synchronized (inputs) {
      if (failure.compareAndSet(null, bad)) {
        for (InecEngine.Conn conn : inputs) {
          conn.close();
        }
      }
    }
  }
}
