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
   * A participant's report that its own survivor failed its vertex ({@link
   * VertexReport#SURVIVOR_FAULT}: a checksum error reading the replica, the participant busy,
   * no transfer free): the surest cause a broken repair can have.
   */
  static final class OwnSurvivorFault extends SurvivorFault {
    OwnSurvivorFault(int unit, String message) {
      super(unit, message);
    }
  }

  /**
   * How long a report that is neither a closed stream nor a survivor's own fault waits for
   * one: the race is a failing participant's event loop, which writes its report, against its
   * teardown, which breaks its neighbours at once. (Waiting for every report would wait 2 s
   * on a vertex that failed at its join: its neighbours wait on it until the repair ends.)
   */
  static final long OWN_FAULT_GRACE_MS = 250;

  /**
   * The failure to report for a broken repair. When one participant fails, its streams close
   * and its neighbours fail too ("closed by the peer", or a stall or a reset of their own):
   * wait briefly for every report and name a participant's own survivor's fault if one came,
   * else the first report that is not "closed by the peer" (a refused token, say; once one
   * came, an own fault is waited for {@value #OWN_FAULT_GRACE_MS} ms more at most), else the
   * first report, else what the rebuilding node itself saw ({@code seen}). A failing
   * participant sends its report before it closes its streams, but the report is written by
   * its event loop while the teardown is not, so a neighbour's report can come first (the
   * likely reading of one fresh-clone CI run, where a corrupt survivor's INEC attempt was not
   * blamed on the survivor: before, the first such report was named at once). Whether every
   * watcher is done is asked before the reports are read: asked after, a report added in
   * between was missed (RepairReportsTest caught it on the fresh-clone CI, naming a closed
   * stream over a refused token).
   */
  IOException rootCause(IOException seen) {
    long deadline = System.nanoTime() + 2_000_000_000L;
    while (true) {
      // whether every watcher is done, asked before the reports are read: a report added
      // between the two would else be missed (a watcher adds its report, then is done)
      boolean allIn = watchers.stream().allMatch(Future::isDone);
      IOException named = named(allIn);
      if (named != null || allIn) {
        return named != null ? named : seen;
      }
      if (first(IOException.class, true) != null) { // another failure came: a grace only
        deadline = Math.min(deadline,
            System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(OWN_FAULT_GRACE_MS));
      }
      if (System.nanoTime() > deadline) {
        IOException last = named(true);
        return last != null ? last : seen;
      }
      try {
        Thread.sleep(10);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        IOException last = named(true);
        return last != null ? last : seen;
      }
    }
  }

  /**
   * The report that names the cause: an own survivor's fault; or, when no more are awaited
   * ({@code last}), the first that is not a closed stream, else the first; null when none is
   * to be named yet (or none came, when last).
   */
  private IOException named(boolean last) {
    IOException own = first(OwnSurvivorFault.class, true);
    if (own != null || !last) {
      return own;
    }
    IOException other = first(IOException.class, true);
    return other != null ? other : first(IOException.class, false);
  }

  /**
   * The first report of {@code kind}, a closed stream ({@link InecEngine.StreamLost}) not
   * counted when {@code notLost}; null when none came.
   */
  private IOException first(Class<? extends IOException> kind, boolean notLost) {
    synchronized (reports) {
      for (IOException r : reports) {
        if (kind.isInstance(r) && !(notLost && r instanceof InecEngine.StreamLost)) {
          return r;
        }
      }
      return null;
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
        bad = new OwnSurvivorFault(unit, text);
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
