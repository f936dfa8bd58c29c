package io.netec.hdfs.client;

import io.netec.hdfs.route.DecodeSurvivors;
import io.netec.hdfs.route.LogLimiter;
import io.netec.hdfs.route.ReconstructionRouter;
import io.netec.hdfs.route.RepairRequest;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.UncheckedIOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One positional read the cost model gave to the routes: its lost parts rebuilt through the
 * router (each attempt proven against the survivors), its healthy parts read through Hadoop's
 * stream. Past its budget ({@link ReadChooser.Choice#budgetMillis}) Hadoop's stream reads the
 * whole range too (a hedged read, as Hadoop's own {@code dfs.client.hedged.read} does between
 * replicas) and the first to answer serves the read; anything a route throws, and a router
 * that rebuilds nothing, leaves the read to Hadoop's stream.
 */
final class RoutedRead {
  /** The stream's category: operators read a file's reads in one, whichever class logs. */
  private static final Logger LOG = LoggerFactory.getLogger(NetecStripedInputStream.class);

  /** What a routed read needs of its stream: Hadoop's reads, and its statistics. */
  interface HadoopReads {
    /** Reads {@code length} bytes at {@code position} through Hadoop's stream, all of them. */
    void readFullyThroughHadoop(long position, byte[] buffer, int offset, int length)
        throws IOException;

    /** Counts bytes the routes served in the stream's and the file system's statistics. */
    void countRouted(int bytes, long millis);
  }

  /** What every routed read of one file system shares. */
  static final class Shared {
    final ReconstructionRouter router;
    final ReadChooser chooser;
    /** Runs the routes' tasks, so that a read can leave one that overruns its budget. */
    final ExecutorService routedReads;
    /** Permits of the file system's hedges running at once. */
    final Semaphore hedges;

    Shared(ReconstructionRouter router, ReadChooser chooser, ExecutorService routedReads,
        Semaphore hedges) {
      this.router = router;
      this.chooser = chooser;
      this.routedReads = routedReads;
      this.hedges = hedges;
    }
  }

  final ReadPlan plan;
  private final String src;
  private final int stripeBytes;
  private final Shared shared;
  private final HadoopReads stream;
  /** The route the cost model judged (the first usable), first in {@link #order}. */
  private final String route;
  /** The order the plan's tasks try the routes in, fixed when the route was judged. */
  private final ReconstructionRouter.Order order;
  /**
   * The cost model's choice: how long the routes may take before the read leaves them (0: no
   * limit of its own), the part of that for a cold route, whether it is a probe (left at its
   * budget, not hedged), and whether losing to Hadoop's stream leaves every route a while.
   */
  private final ReadChooser.Choice choice;
  /** Hadoop's stream reading the whole range once the routes ran past the budget. */
  private CompletableFuture<byte[]> hedge;
  /** The route answered first: the hedge stops. */
  private volatile boolean hedgeCancelled;
  /** The whole read's bytes from Hadoop's stream when, hedging a route, it answered. */
  private byte[] hedged;

  RoutedRead(ReadPlan plan, String src, int stripeBytes, Shared shared, HadoopReads stream,
      String route, ReconstructionRouter.Order order, ReadChooser.Choice choice) {
    this.plan = plan;
    this.src = src;
    this.stripeBytes = stripeBytes;
    this.shared = shared;
    this.stream = stream;
    this.route = route;
    this.order = order;
    this.choice = choice;
  }

  /**
   * The read into {@code buffer} at {@code offset}: lost parts rebuilt through the router,
   * healthy parts read through Hadoop's stream; false when a route did not rebuild a lost part
   * (the caller then reads it all through Hadoop's stream, in one read, as Hadoop would have).
   */
  boolean readInto(byte[] buffer, int offset) throws IOException {
    long start = plan.position();
    long readStart = System.nanoTime();
    // what the routes served, counted only once the whole read is theirs: a later group
    // that falls back (or the hedge) has Hadoop's stream read the whole range, and count it
    java.util.List<Runnable> counts = new java.util.ArrayList<>();
    for (RepairRequest req : plan.requests()) {
      byte[][] rows = new byte[req.erased().length][];
      for (int r = 0; r < rows.length; r++) {
        rows[r] = new byte[(int) req.rowLength(r)];
      }
      long t0 = System.nanoTime();
      RowSink sink = new RowSink(src, req, rows);
      ReconstructionRouter.Outcome o = repairWithin(req, sink, readStart);
      // null with the sink abandoned: the hedge answered first; else null: a route's Error
      boolean failed = o == null ? !sink.abandoned() : o.route == null;
      if (failed) {
        ClientReadCounters.ROUTES_FAILED.increment();
        if (o != null) {
          LOG.info("{}: {} rebuilt by no route ({}); the read goes to Hadoop's stream", src,
              req, o.others);
        }
      }
      if (hedged != null) { // Hadoop's stream, hedging, read the whole range
        System.arraycopy(hedged, 0, buffer, offset, plan.length);
        return true;
      }
      if (failed || o == null) {
        return false;
      }
      int returned = 0;
      for (ReadPlan.Part p : plan.lost) {
        if (p.group.getBlock().equals(req.blockGroup())
            && DecodeSurvivors.contains(req.erased(), p.unit) && p.unitOffset >= req.offset()
            && p.unitOffset + p.len <= req.offset() + req.length()) {
          System.arraycopy(rows[indexOf(req.erased(), p.unit)], (int) (p.unitOffset
              - req.offset()), buffer, offset + (int) (p.filePos - start), p.len);
          returned += p.len;
        }
      }
      String served = o.route;
      long bytesIn = o.bytesIn;
      int bytes = returned;
      long millis = (System.nanoTime() - t0) / 1_000_000;
      counts.add(() -> {
        ClientReadCounters.served(served, bytesIn);
        stream.countRouted(bytes, millis);
      });
    }
    // Healthy parts in runs of consecutive file bytes, each one read of Hadoop's stream.
    int i = 0;
    while (i < plan.parts.size()) {
      ReadPlan.Part p = plan.parts.get(i);
      if (p.lost) {
        i++;
        continue;
      }
      long runStart = p.filePos;
      int runLen = 0;
      while (i < plan.parts.size() && !plan.parts.get(i).lost) {
        runLen += plan.parts.get(i).len;
        i++;
      }
      stream.readFullyThroughHadoop(runStart, buffer, offset + (int) (runStart - start),
          runLen);
    }
    counts.forEach(Runnable::run);
    return true;
  }

  /**
   * A probe past its budget (Hadoop's expected time): its task is abandoned at once and the
   * read goes to Hadoop's stream alone (null, the sink abandoned), so that a probe that loses
   * costs its read the budget more than Hadoop's stream, no route streaming beside it. The
   * time is the route's measurement at this size (a lower bound), and the chooser probes the
   * route no more for a while ({@link ReadChooser#probeLost}).
   */
  private ReconstructionRouter.Outcome probeLost(RepairRequest req, RowSink sink,
      long readStart) {
    double ms = leave(sink, readStart);
    shared.chooser.probeLost(route);
    LOG.warn("{}: {} through route {} left after {} ms, {}% delivered: a probe of the route at "
        + "this size, past its budget of {} ms (Hadoop's expected time); Hadoop's stream reads "
        + "it", src, req, route, Math.round(ms), Math.round(100 * sink.delivered()),
        Math.round(choice.budgetMillis));
    return null;
  }

  /**
   * The routes' task is left for Hadoop's stream: the sink abandoned (the router stops
   * without blaming a route), the time so far counted against the judged route (a
   * measurement of it, a lower bound) and the read counted as left; returns that time (ms).
   */
  private double leave(RowSink sink, long readStart) {
    sink.abandon();
    double ms = (System.nanoTime() - readStart) / 1e6;
    shared.router.metrics().cost(route).add(plan.routedBytes(), ms);
    ClientReadCounters.ROUTES_ABANDONED.increment();
    return ms;
  }

  /**
   * The router's repair of {@code req} into {@code sink} on the routed-read pool. Once the
   * budget (from {@code readStart}) runs out, Hadoop's stream reads the whole range too:
   * whichever answers first serves the read. When Hadoop's stream does, its bytes are in
   * {@link #hedged}, the sink is abandoned (the router stops without blaming a route), the
   * time is counted against the judged route, and null is returned. Null too when the router
   * throws (a route's bug).
   */
  private ReconstructionRouter.Outcome repairWithin(RepairRequest req, RowSink sink,
      long readStart) throws IOException {
    CompletableFuture<ReconstructionRouter.Outcome> task;
    try {
      task = CompletableFuture.supplyAsync(() -> shared.router.repair(req, sink, order),
          shared.routedReads);
    } catch (RejectedExecutionException e) { // the file system is closing
      throw new IOException(src + ": the file system is closed", e);
    }
    try {
      if (choice.budgetMillis > 0) {
        long deadline = readStart + (long) (choice.budgetMillis * 1e6);
        while (!task.isDone()) {
          if (hedge != null && hedge.isDone() && !hedge.isCompletedExceptionally()
              && hedge.getNow(null) == null) {
            // a hedge an earlier group's route beat stopped: this group's route gets its own
            hedge = null;
          }
          if (hedge == null) { // started once the read's budget is spent
            try {
              return task.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (TimeoutException e) {
              if (choice.probe) {
                return probeLost(req, sink, readStart);
              }
              hedge = hedgeThroughHadoop();
            }
            if (hedge == null) { // no hedge free: the route alone, within its own timeouts
              break;
            }
          }
          try {
            CompletableFuture.anyOf(task, hedge).get();
          } catch (ExecutionException e) {
            // one of them failed: the other one's answer is awaited
          }
          if (task.isDone()) {
            break;
          }
          if (hedgeAnswer()) {
            // the route took at least as long as Hadoop's stream started at its budget; a
            // measured route that lost was loaded, and every route is left a while (the
            // chooser), a cold one is measured on
            double ms = leave(sink, readStart);
            if (choice.lossLeavesRoutes()) {
              shared.chooser.routeLostToHadoop(route);
            }
            LOG.warn("{}: {} through route {} left after {} ms, {}% delivered: Hadoop's "
                + "stream, started at the read's budget of {} ms (Hadoop's expected time, at "
                + "least twice the route's{}), answered first", src, req, route,
                Math.round(ms), Math.round(100 * sink.delivered()),
                Math.round(choice.budgetMillis), choice.coldMillis > 0
                    ? ", and " + Math.round(choice.coldMillis) + " ms for a cold route" : "");
            return null;
          }
          if (hedge.isCompletedExceptionally()) { // Hadoop's stream failed: the route alone
            break;
          }
          // else the hedge stopped for an earlier group's route just now: another one
        }
      }
      ReconstructionRouter.Outcome o = task.get();
      if (o == null || o.route == null) {
        hedgeAnswer(); // the routes failed: a hedge running serves
        return o;
      }
      if (hedge != null && !hedge.isDone()) {
        hedgeCancelled = true; // the route answered first: the hedge stops at its next stripe
      }
      return o;
    } catch (InterruptedException e) {
      sink.abandon();
      hedgeCancelled = true;
      Thread.currentThread().interrupt();
      throw new InterruptedIOException("interrupted reading " + src);
    } catch (ExecutionException e) { // a route's Error the router let through
      Throwable cause = e.getCause();
      if (cause instanceof VirtualMachineError) {
        throw (VirtualMachineError) cause;
      }
      LOG.warn("{}: {} failed through the routes: {}", src, req,
          LogLimiter.oneLine(String.valueOf(cause)));
      try {
        hedgeAnswer(); // a hedge running answers for the routes
        return null;
      } catch (InterruptedException ie) {
        Thread.currentThread().interrupt();
        throw new InterruptedIOException("interrupted reading " + src);
      }
    }
  }

  /**
   * Whether the hedge (if one was started) read the whole range: its bytes are then in {@link
   * #hedged}. Waits for a hedge still running.
   */
  private boolean hedgeAnswer() throws InterruptedException {
    if (hedge == null) {
      return false;
    }
    try {
      hedged = hedge.get();
      return hedged != null;
    } catch (ExecutionException e) {
      return false; // Hadoop's stream failed too: the caller reads through it once more
    }
  }

  /**
   * Hadoop's stream reading the whole range on the routed-read pool, a stripe at a time,
   * stopping (null) once {@link #hedgeCancelled}: a hedge the route beat does not go on
   * loading the survivors. Null when the file system's hedges are all running.
   */
  private CompletableFuture<byte[]> hedgeThroughHadoop() throws IOException {
    if (!shared.hedges.tryAcquire()) {
      ClientReadCounters.HEDGES_REFUSED.increment();
      return null;
    }
    ClientReadCounters.HEDGED.increment();
    hedgeCancelled = false; // any earlier hedge of this read has ended
    long position = plan.position();
    try {
      return CompletableFuture.supplyAsync(() -> {
        byte[] b = new byte[plan.length];
        try {
          for (int done = 0; done < plan.length; ) {
            if (hedgeCancelled) {
              return null;
            }
            int n = (int) Math.min(plan.length - done,
                stripeBytes - (position + done) % stripeBytes); // to the next stripe's start
            stream.readFullyThroughHadoop(position + done, b, done, n);
            done += n;
          }
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
        return b;
      }, shared.routedReads).whenComplete((b, e) -> shared.hedges.release());
    } catch (RejectedExecutionException e) { // the file system is closing
      shared.hedges.release();
      throw new IOException(src + ": the file system is closed", e);
    }
  }

  private static int indexOf(int[] a, int v) {
    for (int i = 0; i < a.length; i++) {
      if (a[i] == v) {
        return i;
      }
    }
    throw new IllegalStateException(v + " not among " + java.util.Arrays.toString(a));
  }
}
