package io.netec.hdfs.route;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One repair by the router: its routes tried in order, each attempt proven row by row, which
 * rows are kept and by which route, and what the routes said (see {@link ReconstructionRouter}).
 */
final class RepairTask {
  /** The router's lines: operators read one category for routing, whichever class logs. */
  private static final Logger LOG = LoggerFactory.getLogger(ReconstructionRouter.class);
  private final ReconstructionRouter router;
  final RepairRequest req;
  final RepairSink sink;
  final String[] keptBy;
  final List<String> passed = new ArrayList<>();
  final List<String> served = new ArrayList<>();
  final long taskStart = System.currentTimeMillis();
  long bytes;
  long bytesIn;
  boolean bytesInKnown = true;
  int verifyFailures;

  final ReconstructionRouter.Order fixed;

  RepairTask(ReconstructionRouter router, RepairRequest req, RepairSink sink,
      ReconstructionRouter.Order fixed) {
    this.router = router;
    this.req = req;
    this.sink = sink;
    this.fixed = fixed;
    this.keptBy = new String[req.rows()];
  }

  int[] open() {
    int n = 0;
    int[] rows = new int[keptBy.length];
    for (int r = 0; r < keptBy.length; r++) {
      if (keptBy[r] == null) {
        rows[n++] = r;
      }
    }
    return Arrays.copyOf(rows, n);
  }

  ReconstructionRouter.Outcome run() {
    List<ReconstructionRoute> order = fixed != null ? fixed.routes
        : router.costOrder.next(req.bytesToRebuild());
    if (!router.costOrder.isConfigured(order)) {
      router.metrics.orderedByCost();
      StringBuilder why = new StringBuilder();
      for (ReconstructionRoute r : order.subList(0, order.size() - 1)) {
        ReadCost c = router.metrics.cost(r.name());
        why.append(why.length() > 0 ? ", " : "").append(r.name()).append(
            !c.trusted()
                ? " (measured " + c.samples() + " times: tried to measure it)"
                : String.format(java.util.Locale.ROOT, " %.0f ms",
                    c.estimateMillis(req.bytesToRebuild())));
      }
      router.limited.info("order", "{}: routes tried by measured cost, {} (configured {})", req,
          why, router.routeNames());
    }
    for (ReconstructionRoute route : order) {
      if (open().length == 0 || sink.abandoned()) {
        break;
      }
      String name = route.name();
      String down = router.backoff.passedOver(name);
      if (down != null) {
        router.metrics.skipped(name);
        passed.add(name + " unavailable: " + down);
        continue;
      }
      runRoute(route);
    }
    int[] left = open();
    String others = String.join("; ", passed);
    String last = null;
    for (String r : keptBy) {
      last = r != null ? r : last;
    }
    if (left.length > 0 && sink.abandoned()) {
      router.metrics.outcome(req, null, bytes, 0, taskStart, others);
      LOG.info("{} abandoned by its caller after {} ms (read another way): {}", req,
          System.currentTimeMillis() - taskStart, others);
      return new ReconstructionRouter.Outcome(null, bytes, -1, others, Arrays.asList(keptBy),
          verifyFailures);
    }
    if (left.length > 0) {
      router.metrics.outcome(req, null, bytes, 0, taskStart, others);
      String part = bytes > 0 ? " (" + String.join("; ", served) + " served the others)" : "";
      LOG.error("{} was not rebuilt by any route: units {}{}: {}", req,
          Arrays.toString(units(left)), part, others);
      return new ReconstructionRouter.Outcome(null, bytes, -1, others, Arrays.asList(keptBy),
          verifyFailures);
    }
    long ms = System.currentTimeMillis() - taskStart;
    router.metrics.outcome(req, String.join("+", new LinkedHashSet<>(Arrays.asList(keptBy))), bytes,
        ms, taskStart, others);
    LOG.info("{} served by route {}{}", req, String.join("; route ", served),
        others.isEmpty() ? "" : "; " + others);
    return new ReconstructionRouter.Outcome(last, bytes, bytesInKnown ? bytesIn : -1, others,
        Arrays.asList(keptBy), verifyFailures);
  }

  /** Drops every row not kept. */
  void dropOpen() {
    for (int r : open()) {
      try {
        sink.drop(r);
      } catch (RuntimeException e) {
        LOG.warn("{}: dropping row {} failed: {}", req, r, e.toString());
      }
    }
  }

  int[] units(int[] rows) {
    int[] erased = req.erased();
    int[] u = new int[rows.length];
    for (int i = 0; i < rows.length; i++) {
      u[i] = erased[rows[i]];
    }
    return u;
  }

  /** Every attempt of one route; returns when it served all it could or gave up. */
  void runRoute(ReconstructionRoute route) {
    String name = route.name();
    boolean isNative = route == router.routes.get(router.routes.size() - 1);
    int attempts = isNative ? 1 : 1 + router.retries;
    Set<Integer> faulty = new LinkedHashSet<>();
    String failure = null;
    for (int attempt = 1; attempt <= attempts && open().length > 0 && !sink.abandoned(); ) {
      int[] rows = open();
      RepairRequest sub = req.withRows(rows).without(faulty);
      if (!isNative) { // the caller's own limit (a client's socket timeout) or a spare's
        int stall = sub.spareSurvivors() > 0 ? router.stallTimeoutMs : 0;
        int own = req.progressTimeoutMs();
        sub = sub.withProgressTimeout(own > 0 && (stall == 0 || own < stall) ? own : stall);
      }
      RepairVerifier.Attempt proof = null;
      RowView view = new RowView(sink, rows);
      long start = System.nanoTime();
      try {
        proof = isNative ? null : router.verifier.start(sub);
        view.proof = proof;
        view.begin(proof);
        long in;
        IOException routeFailure = null;
        try {
          in = route.repair(sub, view);
        } catch (RouteDeclinedException e) {
          throw e; // nothing was done
        } catch (IOException e) {
          in = -1;
          routeFailure = e;
        } finally {
          view.fence(); // what the route writes from now on is refused, never kept
        }
        // Whatever the route says, each row it completed is proven and kept on its own.
        Proven p = prove(name, view, rows, proof, routeFailure == null);
        long ms = (System.nanoTime() - start) / 1_000_000;
        if (p.bytes > 0) {
          router.backoff.usable(name);
          bytes += p.bytes;
          if (in >= 0) {
            bytesIn += in;
          } else {
            bytesInKnown = false;
          }
          router.metrics.served(name, p.bytes, in, ms);
          // the cost model's sample in fractions of a ms: a fast task is not free
          router.metrics.cost(name).add(p.bytes, (System.nanoTime() - start) / 1e6);
          served.add(name + " (" + (p.kept.size() == req.rows() ? "" : "units "
              + p.kept + ": ") + p.bytes + " bytes in " + ms + " ms"
              + (in >= 0 ? ", " + in + " bytes in" : "") + ")");
        }
        if (routeFailure != null) {
          throw routeFailure;
        }
        if (p.mismatch != null) {
          router.metrics.verifyFailed(name);
          verifyFailures++;
          router.limited.warn("verify-" + name, "{}: route {} delivered units {} that do not match "
              + "the survivors' fingerprints, not kept (attempt {} of {}): {}", req, name,
              p.mismatchUnits, attempt, attempts, p.mismatch);
          throw new IOException("rebuilt units " + p.mismatchUnits
              + " do not match the survivors' fingerprints: " + p.mismatch);
        }
        if (p.incomplete != null) {
          throw new IOException(p.incomplete);
        }
        return; // every open row kept
      } catch (RouteUnavailableException e) {
        view.dropAll();
        router.metrics.unavailable(name);
        router.backoff.passOver(name, oneLine(e.getMessage()), false);
        passed.add(name + " unavailable: " + oneLine(e.getMessage()));
        return;
      } catch (RouteDeclinedException e) {
        view.dropAll();
        router.backoff.usable(name);
        router.metrics.declined(name);
        passed.add(name + " declined: " + oneLine(e.getMessage()));
        return;
      } catch (Exception | LinkageError e) {
        view.dropAll();
        long ms = (System.nanoTime() - start) / 1_000_000;
        if (sink.abandoned()) { // the caller cut it short: neither route nor survivor blamed
          passed.add(name + " abandoned by the caller after " + ms + " ms");
          return;
        }
        SurvivorFault fault = survivorFault(e, proof, sub, stalled(e));
        if (fault != null) {
          router.metrics.survivorFault(name);
          List<Integer> fresh = new ArrayList<>();
          for (int u : fault.units()) {
            if (!faulty.contains(u)) {
              fresh.add(u);
            }
          }
          String why = oneLine(fault.getMessage());
          if (!isNative && !fresh.isEmpty() && sub.spareSurvivors() >= fresh.size()) {
            LOG.warn("{}: route {} attempt without units {} after {} ms: {}", req, name,
                fresh, ms, why);
            passed.add(name + " without units " + fresh + ": " + why);
            faulty.addAll(fresh);
            continue; // the same attempt again, spares in their place: not the route's fault
          }
          passed.add(name + " failed for survivors " + Arrays.toString(fault.units()) + ": "
              + why);
          return; // no spare left: the next route, the route not blamed
        }
        router.metrics.failed(name);
        failure = oneLine(e.toString());
        LOG.warn("{}: route {} failed after {} ms (attempt {} of {}): {}", req, name, ms,
            attempt, attempts, failure);
        LOG.debug("{}: route {} failure", req, name, e);
        attempt++;
      } finally {
        if (proof != null) {
          proof.close();
        }
      }
    }
    if (failure != null) {
      passed.add(name + " failed: " + failure);
      if (!isNative) {
        router.backoff.passOver(name, "failed: " + failure, true);
      }
    }
  }

  /**
   * Seals, proves and keeps each row of an attempt: rows that are whole and proven are kept
   * (by this route), the rest dropped. A native attempt keeps what Hadoop wrote.
   */
  Proven prove(String name, RowView view, int[] rows, RepairVerifier.Attempt proof,
      boolean routeDone) throws IOException {
    Proven p = new Proven();
    int[] erased = req.erased();
    for (int r = 0; r < rows.length; r++) {
      try {
        view.seal(r);
      } catch (IOException e) {
        view.drop(r);
        if (routeDone) {
          p.incomplete = "unit " + erased[rows[r]] + ": " + e.getMessage();
        }
        continue;
      }
      String why = proof == null ? null : proof.check(r); // a SurvivorFault ends the attempt
      if (why != null) {
        view.drop(r);
        p.mismatch = p.mismatch == null ? why : p.mismatch;
        p.mismatchUnits.add(erased[rows[r]]);
        continue;
      }
      p.bytes += view.keep(r);
      keptBy[rows[r]] = name;
      p.kept.add(erased[rows[r]]);
    }
    return p;
  }

  /** What an attempt proved. */
  private static final class Proven {
    long bytes;
    final List<Integer> kept = new ArrayList<>();
    final List<Integer> mismatchUnits = new ArrayList<>();
    String mismatch;
    String incomplete;
  }

  /** Whether the route gave up for want of progress ({@link RouteStalledException}). */
  private static boolean stalled(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof RouteStalledException) {
        return true;
      }
    }
    return false;
  }

  /**
   * The survivors behind a failure: named by the route or the proof ({@link SurvivorFault}),
   * or told by the attempt's proof (survivors whose proof failed, or that lagged behind the
   * others), when no more than the spares.
   */
  private static SurvivorFault survivorFault(Throwable e, RepairVerifier.Attempt proof,
      RepairRequest sub, boolean stalled) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof SurvivorFault) {
        return (SurvivorFault) t;
      }
    }
    if (proof == null) {
      return null;
    }
    List<Integer> culprits = proof.culprits(stalled);
    if (!culprits.isEmpty() && culprits.size() <= sub.spareSurvivors()) {
      return new SurvivorFault(culprits, "units " + culprits + " failed or lagged behind the "
          + "others (" + oneLine(e.toString()) + ")");
    }
    return null;
  }

  /** Peer-supplied text on one line: a reason may not forge log lines. */
  static String oneLine(String s) {
    return s == null ? "" : LogLimiter.oneLine(s);
  }
}
