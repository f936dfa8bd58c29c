package io.netec.hdfs.client;

import io.netec.hdfs.route.DecodeSurvivors;
import io.netec.hdfs.route.LogLimiter;
import io.netec.hdfs.route.ReconstructionRouter;
import io.netec.hdfs.route.RepairRequest;
import io.netec.hdfs.route.RepairSink;
import io.netec.hdfs.route.RouteDeclinedException;
import io.netec.hdfs.route.RowDigests;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.hadoop.hdfs.DFSStripedInputStream;
import org.apache.hadoop.hdfs.protocol.DatanodeInfo;
import org.apache.hadoop.hdfs.NetecStripedStreamAccess;
import org.apache.hadoop.hdfs.protocol.ErasureCodingPolicy;
import org.apache.hadoop.hdfs.protocol.LocatedBlocks;
import org.apache.hadoop.hdfs.protocol.LocatedStripedBlock;
import org.apache.hadoop.hdfs.util.StripedBlockUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A NETEC file's stream: Hadoop's striped stream, whose positional reads of lost units go
 * through the routes where that is faster. Every stateful read, every read of healthy units,
 * and every positional read the cost model ({@link ReadChooser}) gives to Hadoop is Hadoop's
 * own, with all it does (checksums, corrupt-replica reports, statistics, tokens, dead nodes).
 * A unit is lost when the NameNode does not list it, or when this stream, or another of the
 * same file system a moment ago ({@link DeadNodes}), failed to connect to its DataNode.
 *
 * <p>A routed read rebuilds the lost units' range of each block group it touches through the
 * router (switch, INEC, any route; each attempt proven against the survivors) and reads the
 * healthy units' bytes through Hadoop's stream. Anything a route throws, and a router that
 * rebuilds nothing, sends the read to Hadoop's stream; a route that runs past the read's
 * budget (Hadoop's stream's expected time, at least twice the route's: {@link
 * ReadChooser.Choice#budgetMillis}) is hedged by Hadoop's stream, and the first to answer
 * serves the read; a stalled route gives up after
 * {@code dfs.client.socket-timeout}, as Hadoop's reads do.
 */
final class NetecStripedInputStream extends NetecStripedStreamAccess {
  private static final Logger LOG = LoggerFactory.getLogger(NetecStripedInputStream.class);
  private static final LogLimiter CHOICES = new LogLimiter(LOG, 10_000);
  /** A block token handed to a route's survivors must stay valid this long. */
  private static final long TOKEN_MARGIN_MS = 10_000;

  private final String src;
  private final ErasureCodingPolicy policy;
  private final ReconstructionRouter router;
  private final ReadChooser chooser;
  private final DeadNodes deadNodes;
  /** Runs the routes' tasks, so that a read can leave one that overruns its budget. */
  private final ExecutorService routedReads;
  /** Permits of the file system's hedges running at once. */
  private final java.util.concurrent.Semaphore hedges;
  private final int socketTimeoutMs;

  /** A stream like Hadoop's {@code opened} (which the caller closes) of a NETEC file. */
  NetecStripedInputStream(DFSStripedInputStream opened, ReconstructionRouter router,
      ReadChooser chooser, DeadNodes deadNodes, ExecutorService routedReads,
      java.util.concurrent.Semaphore hedges)
      throws IOException {
    super(opened);
    LocatedBlocks blocks = locatedBlocksOf(opened);
    this.src = getSrc();
    this.policy = blocks.getErasureCodingPolicy();
    this.router = router;
    this.chooser = chooser;
    this.deadNodes = deadNodes;
    this.routedReads = routedReads;
    this.hedges = hedges;
    this.socketTimeoutMs = client().getConf().getSocketTimeout();
  }

  @Override
  public int read(long position, byte[] buffer, int offset, int length) throws IOException {
    validatePositionedReadArgs(position, buffer, offset, length);
    Plan plan = planRead(position, length);
    if (plan != null && plan.throughRoutes && readThroughRoutes(plan, buffer, offset)) {
      return plan.length;
    }
    return timedHadoop(plan, position, buffer, offset, length);
  }

  @Override
  public int read(long position, ByteBuffer buf) throws IOException {
    Plan plan = planRead(position, buf.remaining());
    if (plan == null || !plan.throughRoutes) {
      return super.read(position, buf);
    }
    byte[] tmp = new byte[plan.length];
    if (!readThroughRoutes(plan, tmp, 0)) {
      return super.read(position, buf);
    }
    buf.put(tmp);
    return plan.length;
  }

  /**
   * The plan of a positional read, {@link Plan#throughRoutes} when it touches lost units and
   * the cost model gives it to the routes (then with block tokens that will not expire on the
   * survivors); null when Hadoop's stream answers at once (EOF, nothing asked) and when
   * planning itself fails (Hadoop's stream then reads as ever).
   */
  private Plan planRead(long position, int length) throws IOException {
    if (isClosed() || length <= 0 || position < 0 || position >= getFileLength()) {
      return null; // Hadoop's stream answers (or throws) at once
    }
    try {
      Plan plan = plan(position, length);
      if (plan.lost.isEmpty()) {
        return plan;
      }
      ReconstructionRouter.Order order = router.order(plan.routedBytes());
      String route = router.firstUsableNetworkRoute(order);
      ReadChooser.Choice c = chooser.choose(plan.shape(), route,
          route == null ? null : router.metrics().cost(route));
      if (!c.routes) {
        ClientReadCounters.HADOOP_CHOSEN.increment();
        CHOICES.info("hadoop", "{}: lost units' reads through Hadoop's stream: {}", src,
            c.reason);
        return plan;
      }
      ClientReadCounters.ROUTES_CHOSEN.increment();
      CHOICES.info("routes", "{}: lost units' reads through the routes: {}", src, c.reason);
      boolean refreshed = false;
      for (long groupStart : plan.groupStarts) {
        refreshed |= refreshIfTokensExpire(groupStart, TOKEN_MARGIN_MS);
      }
      Plan routed = refreshed ? plan(position, length) : plan;
      routed.throughRoutes = true;
      routed.route = route;
      routed.order = order;
      routed.budgetMillis = c.budgetMillis;
      routed.hadoopMillis = c.hadoopMillis;
      return routed;
    } catch (InterruptedIOException e) {
      throw e;
    } catch (IOException | RuntimeException e) {
      LOG.warn("{}: planning a read of {} bytes at {} failed, read through Hadoop's stream: "
          + "{}", src, length, position, LogLimiter.oneLine(e.toString()));
      return null;
    }
  }

  /**
   * A read through Hadoop's stream, timed for the cost model when no link rate is configured
   * to replace it (never a read that found a DataNode dead, whose time is a connection's
   * failure, not the link's).
   */
  private int timedHadoop(Plan plan, long position, byte[] buffer, int offset, int length)
      throws IOException {
    if (plan == null || !chooser.measuresHadoop()) {
      return super.read(position, buffer, offset, length);
    }
    int dead = localDeadCount();
    long t0 = System.nanoTime();
    int n = super.read(position, buffer, offset, length);
    double ms = (System.nanoTime() - t0) / 1e6;
    if (n == plan.length && localDeadCount() == dead) {
      chooser.hadoopCost().add(plan.hadoopBytes, ms);
    }
    return n;
  }

  @Override
  protected void foundDead(DatanodeInfo dn) {
    deadNodes.learn(dn);
  }

  // ---- the plan of one read -------------------------------------------------------------------

  /** One cell's part of a read: file bytes [filePos, filePos + len) of unit {@code unit}. */
  private static final class Part {
    final LocatedStripedBlock group;
    final long filePos;
    final int len;
    final int unit;
    final long unitOffset;
    final boolean lost;

    Part(LocatedStripedBlock group, long filePos, int len, int unit, long unitOffset,
        boolean lost) {
      this.group = group;
      this.filePos = filePos;
      this.len = len;
      this.unit = unit;
      this.unitOffset = unitOffset;
      this.lost = lost;
    }
  }

  /** A read cut into cells, and what each way of serving it moves. */
  private static final class Plan {
    final int length;
    /** The cost model gave this read to the routes. */
    boolean throughRoutes;
    /** The route the cost model judged (the first usable), first in {@link #order}. */
    String route;
    /** The order the plan's tasks try the routes in, fixed when the route was judged. */
    ReconstructionRouter.Order order;
    /** How long the routes may take before the read leaves them (0: no limit of its own). */
    double budgetMillis;
    /** Hadoop's stream's expected time for the whole read. */
    double hadoopMillis;
    /** Hadoop's stream reading the whole range once the routes ran past the budget. */
    CompletableFuture<byte[]> hedge;
    /** The route answered first: the hedge stops. */
    volatile boolean hedgeCancelled;
    /** The whole read's bytes from Hadoop's stream when, hedging a route, it answered. */
    byte[] hedged;
    final List<Part> parts = new ArrayList<>();
    final List<Part> lost = new ArrayList<>();
    long hadoopBytes;
    long healthyBytes;
    /** Per group touched with lost parts: the request the routes would serve. */
    final List<RepairRequest> requests = new ArrayList<>();
    /** The file offset of each request's group. */
    final List<Long> groupStarts = new ArrayList<>();

    Plan(int length) {
      this.length = length;
    }

    long routedBytes() {
      long b = 0;
      for (RepairRequest r : requests) {
        b += r.bytesToRebuild();
      }
      return b;
    }

    ReadChooser.ReadShape shape() {
      return new ReadChooser.ReadShape(hadoopBytes, routedBytes(), healthyBytes);
    }
  }

  /** The read cut into cells, or null for what Hadoop's stream answers at once (EOF, 0). */
  private Plan plan(long position, int length) throws IOException {
    long fileLength = getFileLength();
    if (length <= 0 || position < 0 || position >= fileLength) {
      return null;
    }
    int k = policy.getNumDataUnits();
    long cell = policy.getCellSize();
    Plan plan = new Plan((int) Math.min(length, fileLength - position));
    long end = position + plan.length;
    long x = position;
    while (x < end) {
      LocatedStripedBlock g = groupAt(x);
      long groupEnd = Math.min(end, g.getStartOffset() + g.getBlockSize());
      List<Part> groupParts = new ArrayList<>();
      while (x < groupEnd) {
        long inGroup = x - g.getStartOffset();
        long c = inGroup / cell;
        int unit = (int) (c % k);
        int len = (int) Math.min(groupEnd - x, (c + 1) * cell - inGroup);
        long unitOffset = (c / k) * cell + inGroup % cell;
        Part p = new Part(g, x, len, unit, unitOffset, lost(g, unit));
        groupParts.add(p);
        x += len;
      }
      addGroup(plan, g, groupParts);
    }
    return plan;
  }

  /**
   * Adds one group's parts: Hadoop's stream reads k survivors' bytes at every in-cell offset a
   * lost part covers (healthy parts at those offsets among them) and healthy parts elsewhere
   * once; the routes rebuild each lost unit over the unit range its parts span.
   */
  private void addGroup(Plan plan, LocatedStripedBlock g, List<Part> parts) {
    int k = policy.getNumDataUnits();
    long cell = policy.getCellSize();
    // lost unit -> {from, to}: the unit range its parts span
    Map<Integer, long[]> lostUnits = new TreeMap<>();
    for (Part p : parts) {
      plan.parts.add(p);
      if (p.lost) {
        plan.lost.add(p);
        long[] span = lostUnits.computeIfAbsent(p.unit, u -> new long[] {Long.MAX_VALUE, 0});
        span[0] = Math.min(span[0], p.unitOffset);
        span[1] = Math.max(span[1], p.unitOffset + p.len);
      } else {
        plan.healthyBytes += p.len;
      }
    }
    // Per stripe, the in-cell offsets a lost part covers, and the healthy parts outside them.
    long stripeOf = -1;
    long lo = 0;
    long hi = 0;
    for (int i = 0; i <= parts.size(); i++) {
      Part p = i < parts.size() ? parts.get(i) : null;
      long stripe = p == null ? -2 : p.unitOffset / cell;
      if (stripe != stripeOf) {
        if (stripeOf >= 0) {
          plan.hadoopBytes += k * Math.max(0, hi - lo) + healthyOutside(parts, stripeOf, lo, hi);
        }
        stripeOf = stripe;
        lo = cell;
        hi = 0;
      }
      if (p != null && p.lost) {
        lo = Math.min(lo, p.unitOffset % cell);
        hi = Math.max(hi, p.unitOffset % cell + p.len);
      }
    }
    if (lostUnits.isEmpty()) {
      return;
    }
    List<RepairRequest.Survivor> survivors = new ArrayList<>();
    for (int i = 0; i < k + policy.getNumParityUnits(); i++) {
      int j = slot(g, i);
      if (lostUnits.containsKey(i) || j < 0 || lost(g, i)
          || StripedBlockUtil.getInternalBlockLength(g.getBlockSize(), policy, i) == 0) {
        continue;
      }
      survivors.add(new RepairRequest.Survivor(i, g.getLocations()[j],
          StripedBlockUtil.constructInternalBlock(g.getBlock(), policy, i), token(g, j)));
    }
    // Lost units spanning the same range: one task of several rows; else a task each, so that
    // no unit is rebuilt over more than its own parts.
    boolean same = lostUnits.values().stream().map(java.util.Arrays::toString).distinct()
        .count() == 1;
    List<int[]> tasks = new ArrayList<>();
    if (same) {
      tasks.add(lostUnits.keySet().stream().mapToInt(Integer::intValue).toArray());
    } else {
      for (int u : lostUnits.keySet()) {
        tasks.add(new int[] {u});
      }
    }
    for (int[] erased : tasks) {
      long[] span = lostUnits.get(erased[0]);
      plan.requests.add(new RepairRequest("Read of " + src + " " + g.getBlock().getLocalBlock()
          + " units " + java.util.Arrays.toString(erased) + " from " + span[0], g.getBlock(),
          g.getBlockSize(), policy, erased, span[0], span[1] - span[0], survivors)
          .withProgressTimeout(socketTimeoutMs));
      plan.groupStarts.add(g.getStartOffset());
    }
  }

  /** Healthy bytes of stripe {@code stripe} outside in-cell offsets [lo, hi). */
  private long healthyOutside(List<Part> parts, long stripe, long lo, long hi) {
    long cell = policy.getCellSize();
    long b = 0;
    for (Part p : parts) {
      if (!p.lost && p.unitOffset / cell == stripe) {
        long a = p.unitOffset % cell;
        long e = a + p.len;
        long overlap = Math.max(0, Math.min(e, hi) - Math.max(a, lo));
        b += p.len - overlap;
      }
    }
    return b;
  }

  /**
   * Whether unit {@code index} of the group cannot be read from a DataNode: the NameNode does
   * not list it, or this stream or another of this file system's found its DataNode dead.
   */
  private boolean lost(LocatedStripedBlock g, int index) {
    int j = slot(g, index);
    return j < 0 || deadHere(g.getLocations()[j]) || deadNodes.isDead(g.getLocations()[j]);
  }

  // ---- a routed read --------------------------------------------------------------------------

  /**
   * Lost parts rebuilt through the router, healthy parts read through Hadoop's stream; false
   * when a route did not rebuild a lost part (the caller then reads it all through Hadoop's
   * stream, in one read, as Hadoop would have).
   */
  private boolean readThroughRoutes(Plan plan, byte[] buffer, int offset) throws IOException {
    long start = plan.parts.get(0).filePos;
    long readStart = System.nanoTime();
    for (int q = 0; q < plan.requests.size(); q++) {
      RepairRequest req = plan.requests.get(q);
      byte[][] rows = new byte[req.erased().length][];
      for (int r = 0; r < rows.length; r++) {
        rows[r] = new byte[(int) req.rowLength(r)];
      }
      long t0 = System.nanoTime();
      RowSink sink = new RowSink(req, rows);
      ReconstructionRouter.Outcome o = repairWithin(plan, req, sink, readStart);
      // null with the sink abandoned: the hedge answered first; else null: a route's Error
      boolean failed = o == null ? !sink.abandoned() : o.route == null;
      if (failed) {
        ClientReadCounters.ROUTES_FAILED.increment();
        if (o != null) {
          LOG.info("{}: {} rebuilt by no route ({}); the read goes to Hadoop's stream", src,
              req, o.others);
        }
      }
      if (plan.hedged != null) { // Hadoop's stream, hedging, read the whole range
        System.arraycopy(plan.hedged, 0, buffer, offset, plan.length);
        return true;
      }
      if (failed || o == null) {
        return false;
      }
      ClientReadCounters.served(o.route, o.bytesIn);
      int returned = 0;
      for (Part p : plan.lost) {
        if (p.group.getBlock().equals(req.blockGroup())
            && DecodeSurvivors.contains(req.erased(), p.unit) && p.unitOffset >= req.offset()
            && p.unitOffset + p.len <= req.offset() + req.length()) {
          System.arraycopy(rows[indexOf(req.erased(), p.unit)], (int) (p.unitOffset
              - req.offset()), buffer, offset + (int) (p.filePos - start), p.len);
          returned += p.len;
        }
      }
      countRouted(returned, (System.nanoTime() - t0) / 1_000_000);
    }
    // Healthy parts in runs of consecutive file bytes, each one read of Hadoop's stream.
    int i = 0;
    while (i < plan.parts.size()) {
      Part p = plan.parts.get(i);
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
      readFullyThroughHadoop(runStart, buffer, offset + (int) (runStart - start), runLen);
    }
    return true;
  }

  /**
   * The router's repair of {@code req} into {@code sink} on the routed-read pool. Once the
   * plan's budget (from {@code readStart}) runs out, Hadoop's stream reads the whole range
   * too (a hedged read, as Hadoop's own {@code dfs.client.hedged.read} does between replicas):
   * whichever answers first serves the read. When Hadoop's stream does, its bytes are in
   * {@link Plan#hedged}, the sink is abandoned (the router stops without blaming a route),
   * the time is counted against the judged route, and null is returned. Null too when the
   * router throws (a route's bug).
   */
  private ReconstructionRouter.Outcome repairWithin(Plan plan, RepairRequest req, RowSink sink,
      long readStart) throws IOException {
    CompletableFuture<ReconstructionRouter.Outcome> task;
    try {
      task = CompletableFuture.supplyAsync(() -> router.repair(req, sink, plan.order),
          routedReads);
    } catch (RejectedExecutionException e) { // the file system is closing
      throw new IOException(src + ": the file system is closed", e);
    }
    try {
      if (plan.budgetMillis > 0) {
        if (plan.hedge == null) { // one hedge a read, however many groups it touches
          long deadline = readStart + (long) (plan.budgetMillis * 1e6);
          try {
            return task.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
          } catch (TimeoutException e) {
            plan.hedge = hedgeThroughHadoop(plan);
          }
        }
        if (plan.hedge == null) { // no hedge free: the route alone, within its own timeouts
          return task.get();
        }
        try {
          CompletableFuture.anyOf(task, plan.hedge).get();
        } catch (ExecutionException e) {
          // one of them failed: the other one's answer is awaited below
        }
        if (!task.isDone() && hedgeAnswer(plan)) {
          sink.abandon();
          double ms = (System.nanoTime() - readStart) / 1e6;
          // the route took at least as long as Hadoop's stream started at its budget: a
          // measurement of it (a lower bound), and every route left a while (the chooser)
          router.metrics().cost(plan.route).add(plan.routedBytes(), ms);
          ClientReadCounters.ROUTES_ABANDONED.increment();
          chooser.routeLostToHadoop(plan.route);
          LOG.warn("{}: {} through route {} left after {} ms, {}% delivered: Hadoop's stream, "
              + "started at the read's budget of {} ms (Hadoop's expected time, at least "
              + "twice the route's), answered first", src, req, plan.route, Math.round(ms),
              Math.round(100 * sink.delivered()), Math.round(plan.budgetMillis));
          return null;
        }
      }
      ReconstructionRouter.Outcome o = task.get();
      if (o == null || o.route == null) {
        hedgeAnswer(plan); // the routes failed: a hedge running serves
        return o;
      }
      if (plan.hedge != null && !plan.hedge.isDone()) {
        plan.hedgeCancelled = true; // the route answered first: the hedge stops at its next stripe
      }
      return o;
    } catch (InterruptedException e) {
      sink.abandon();
      plan.hedgeCancelled = true;
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
        hedgeAnswer(plan); // a hedge running answers for the routes
        return null;
      } catch (InterruptedException ie) {
        Thread.currentThread().interrupt();
        throw new InterruptedIOException("interrupted reading " + src);
      }
    }
  }

  /**
   * Whether the plan's hedge (if one was started) read the whole range: its bytes are then in
   * {@link Plan#hedged}. Waits for a hedge still running.
   */
  private static boolean hedgeAnswer(Plan plan) throws InterruptedException {
    if (plan.hedge == null) {
      return false;
    }
    try {
      plan.hedged = plan.hedge.get();
      return plan.hedged != null;
    } catch (ExecutionException e) {
      return false; // Hadoop's stream failed too: the caller reads through it once more
    }
  }

  /**
   * Hadoop's stream reading the plan's whole range on the routed-read pool, a stripe at a
   * time, stopping (null) once {@link Plan#hedgeCancelled}: a hedge the route beat does not
   * go on loading the survivors. Null when the file system's hedges are all running.
   */
  private CompletableFuture<byte[]> hedgeThroughHadoop(Plan plan) throws IOException {
    if (!hedges.tryAcquire()) {
      ClientReadCounters.HEDGES_REFUSED.increment();
      return null;
    }
    ClientReadCounters.HEDGED.increment();
    long position = plan.parts.get(0).filePos;
    int stripe = policy.getCellSize() * policy.getNumDataUnits();
    try {
      return CompletableFuture.supplyAsync(() -> {
        byte[] b = new byte[plan.length];
        try {
          for (int done = 0; done < plan.length; ) {
            if (plan.hedgeCancelled) {
              return null;
            }
            int n = (int) Math.min(plan.length - done,
                stripe - (position + done) % stripe); // to the next stripe's start
            readFullyThroughHadoop(position + done, b, done, n);
            done += n;
          }
        } catch (IOException e) {
          throw new java.io.UncheckedIOException(e);
        }
        return b;
      }, routedReads).whenComplete((b, e) -> hedges.release());
    } catch (RejectedExecutionException e) { // the file system is closing
      hedges.release();
      throw new IOException(src + ": the file system is closed", e);
    }
  }

  private void readFullyThroughHadoop(long position, byte[] buffer, int offset, int length)
      throws IOException {
    int done = 0;
    while (done < length) {
      int n = super.read(position + done, buffer, offset + done, length - done);
      if (n < 0) {
        throw new IOException(src + " ended at " + (position + done));
      }
      done += n;
    }
  }

  /**
   * Row r fills rows[r]; a sealed row's bytes, as they will be returned, go to the attempt's
   * proof; the native route declines (the caller reads the range through Hadoop's stream).
   */
  private final class RowSink implements RepairSink {
    private final RepairRequest req;
    private final byte[][] rows;
    private final int[] filled;
    private RowDigests digests;
    /** Set by the reader's thread when it leaves the routes; the route's thread writes. */
    private volatile boolean abandoned;
    private final long total;
    /** Bytes written so far (the reader's thread watches the route's progress). */
    private final java.util.concurrent.atomic.AtomicLong written =
        new java.util.concurrent.atomic.AtomicLong();

    RowSink(RepairRequest req, byte[][] rows) {
      this.req = req;
      this.rows = rows;
      this.filled = new int[rows.length];
      long t = 0;
      for (byte[] r : rows) {
        t += r.length;
      }
      this.total = t;
    }

    /** The fraction of the rows' bytes the current attempt has written. */
    double delivered() {
      return total == 0 ? 1 : (double) written.get() / total;
    }

    @Override
    public void begin(RowDigests d) {
      this.digests = d;
    }

    /** The reader reads through Hadoop's stream: no byte more is taken. */
    void abandon() {
      abandoned = true;
    }

    @Override
    public boolean abandoned() {
      return abandoned;
    }

    @Override
    public void write(int row, ByteBuffer data) throws IOException {
      if (abandoned) {
        throw new IOException("the reader of " + src + " left for Hadoop's stream");
      }
      if (data.remaining() > rows[row].length - filled[row]) {
        throw new IOException("route delivered more than unit " + req.erased()[row] + "'s "
            + rows[row].length + " bytes");
      }
      int n = data.remaining();
      data.get(rows[row], filled[row], n);
      filled[row] += n;
      written.addAndGet(n);
    }

    @Override
    public void repairNatively(int[] which) throws IOException {
      // Hadoop's stream then reads the client's whole range once, healthy parts and all,
      // rather than cell by cell here and the healthy parts again after
      throw new RouteDeclinedException("the client reads it through Hadoop's stream whole");
    }

    @Override
    public void seal(int row) throws IOException {
      if (filled[row] != rows[row].length) {
        throw new IOException("route delivered " + filled[row] + " of unit "
            + req.erased()[row] + "'s " + rows[row].length + " bytes");
      }
      if (digests != null) {
        digests.update(row, 0, ByteBuffer.wrap(rows[row]));
      }
    }

    @Override
    public long keep(int row) {
      return filled[row];
    }

    @Override
    public void drop(int row) {
      written.addAndGet(-filled[row]);
      filled[row] = 0;
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

  /** Where internal block {@code index} of the group is listed, or -1. */
  private static int slot(LocatedStripedBlock g, int index) {
    byte[] idx = g.getBlockIndices();
    for (int j = 0; j < idx.length; j++) {
      if (idx[j] == index) {
        return j;
      }
    }
    return -1;
  }

  /** The READ token of the group's j-th location, as survivors check it ("" if none). */
  private static String token(LocatedStripedBlock g, int j) {
    try {
      return g.getBlockTokens()[j].encodeToUrlString();
    } catch (IOException e) {
      return "";
    }
  }

  @Override
  public String toString() {
    return "NetecStripedInputStream{" + src + "}";
  }
}
