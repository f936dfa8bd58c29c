package io.netec.hdfs.client;

import io.netec.hdfs.route.RepairRequest;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.hadoop.hdfs.protocol.ErasureCodingPolicy;
import org.apache.hadoop.hdfs.protocol.LocatedStripedBlock;
import org.apache.hadoop.hdfs.util.StripedBlockUtil;

/**
 * One positional read cut into cells, and what each way of serving it moves: Hadoop's striped
 * stream decodes a lost byte from k survivors' bytes at the same in-cell offset, so it moves k
 * bytes for each lost one (and healthy bytes at other offsets once); the routes rebuild each
 * lost unit over the unit range the read's parts span, one {@link RepairRequest} per group (a
 * task of several rows when the lost units span one range). Plain: the stream gives it its
 * groups (which it may fetch from the NameNode) and which units are lost; the plan itself reads
 * nothing. The requests (survivors, their blocks and tokens) are built only when asked for:
 * most reads that touch a lost unit are small and go to Hadoop's stream, which needs only the
 * byte counts, and building them was a visible part of such a read's time.
 */
final class ReadPlan {
  /** The stream's view the plan needs: its block groups, and which units it cannot read. */
  interface Layout {
    /** The block group holding file offset {@code offset}. */
    LocatedStripedBlock groupAt(long offset) throws IOException;

    /** Whether unit {@code index} of {@code g} cannot be read from a DataNode. */
    boolean lost(LocatedStripedBlock g, int index);
  }

  /** One cell's part of a read: file bytes [filePos, filePos + len) of unit {@code unit}. */
  static final class Part {
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

  /** Bytes the read returns (the range, cut at the file's end). */
  final int length;
  final List<Part> parts = new ArrayList<>();
  final List<Part> lost = new ArrayList<>();
  /** Bytes Hadoop's stream would move to serve the read. */
  long hadoopBytes;
  /** Bytes of healthy units the read returns (read by Hadoop's stream either way). */
  long healthyBytes;
  /** Bytes the routes would rebuild (every task's rows). */
  private long routedBytes;
  /** The routes' tasks, each one group's lost units over one unit range. */
  private final List<Task> tasks = new ArrayList<>();
  /** The file offset of each task's group. */
  final List<Long> groupStarts = new ArrayList<>();
  /** {@link #requests()}, once built. */
  private List<RepairRequest> requests;
  private final String src;
  private final ErasureCodingPolicy policy;
  private final int progressTimeoutMs;
  private final Layout layout;

  /** One task of the routes: lost units of a group over unit range [from, to). */
  private static final class Task {
    final LocatedStripedBlock group;
    final int[] erased;
    final long from;
    final long to;
    /** Every lost unit of the group the read touches (none of them is a survivor). */
    final Set<Integer> lostUnits;

    Task(LocatedStripedBlock group, int[] erased, long from, long to,
        Set<Integer> lostUnits) {
      this.group = group;
      this.erased = erased;
      this.from = from;
      this.to = to;
      this.lostUnits = lostUnits;
    }
  }

  private ReadPlan(int length, String src, ErasureCodingPolicy policy, int progressTimeoutMs,
      Layout layout) {
    this.length = length;
    this.src = src;
    this.policy = policy;
    this.progressTimeoutMs = progressTimeoutMs;
    this.layout = layout;
  }

  /** The file offset the read starts at. */
  long position() {
    return parts.get(0).filePos;
  }

  /** Bytes the routes would rebuild. */
  long routedBytes() {
    return routedBytes;
  }

  /**
   * Per task, the request the routes would serve (in {@link #groupStarts}' order): the lost
   * units over their range, and every other unit that holds bytes, where it is and its READ
   * token, as survivors. Built on the first call, from the groups as the plan found them (and
   * the dead nodes known then); not thread-safe: a plan belongs to one read.
   */
  List<RepairRequest> requests() {
    if (requests == null) {
      List<RepairRequest> r = new ArrayList<>(tasks.size());
      for (Task t : tasks) {
        r.add(request(t));
      }
      requests = r;
    }
    return requests;
  }

  private RepairRequest request(Task t) {
    LocatedStripedBlock g = t.group;
    List<RepairRequest.Survivor> survivors = new ArrayList<>();
    for (int i = 0; i < policy.getNumDataUnits() + policy.getNumParityUnits(); i++) {
      int j = slot(g, i);
      if (t.lostUnits.contains(i) || j < 0 || layout.lost(g, i)
          || StripedBlockUtil.getInternalBlockLength(g.getBlockSize(), policy, i) == 0) {
        continue;
      }
      survivors.add(new RepairRequest.Survivor(i, g.getLocations()[j],
          StripedBlockUtil.constructInternalBlock(g.getBlock(), policy, i), token(g, j)));
    }
    return new RepairRequest("Read of " + src + " " + g.getBlock().getLocalBlock() + " units "
        + Arrays.toString(t.erased) + " from " + t.from, g.getBlock(), g.getBlockSize(), policy,
        t.erased, t.from, t.to - t.from, survivors).withProgressTimeout(progressTimeoutMs);
  }

  ReadChooser.ReadShape shape() {
    return new ReadChooser.ReadShape(hadoopBytes, routedBytes(), healthyBytes);
  }

  /**
   * The read of {@code length} bytes at {@code position} of {@code src} (a file of {@code
   * fileLength} bytes), or null for what Hadoop's stream answers at once (EOF, nothing asked).
   *
   * @param progressTimeoutMs each request's progress timeout (the client's socket timeout)
   */
  static ReadPlan of(String src, ErasureCodingPolicy policy, long fileLength, long position,
      int length, int progressTimeoutMs, Layout layout) throws IOException {
    if (length <= 0 || position < 0 || position >= fileLength) {
      return null;
    }
    int k = policy.getNumDataUnits();
    long cell = policy.getCellSize();
    ReadPlan plan = new ReadPlan((int) Math.min(length, fileLength - position), src, policy,
        progressTimeoutMs, layout);
    long end = position + plan.length;
    long x = position;
    while (x < end) {
      LocatedStripedBlock g = layout.groupAt(x);
      long groupEnd = Math.min(end, g.getStartOffset() + g.getBlockSize());
      List<Part> groupParts = new ArrayList<>();
      while (x < groupEnd) {
        // Hadoop's striping, cell by cell (StripedBlockUtil's own cell type is package-private
        // and its range division allocates a stripe of buffers per read, the cost a read left
        // to Hadoop's stream must not pay); ReadPlanTest maps every part back through
        // StripedBlockUtil.offsetInBlkToOffsetInBG
        long inGroup = x - g.getStartOffset();
        long c = inGroup / cell;
        int unit = (int) (c % k);
        int len = (int) Math.min(groupEnd - x, (c + 1) * cell - inGroup);
        long unitOffset = (c / k) * cell + inGroup % cell;
        groupParts.add(new Part(g, x, len, unit, unitOffset, layout.lost(g, unit)));
        x += len;
      }
      plan.addGroup(g, groupParts);
    }
    return plan;
  }

  /**
   * Adds one group's parts: Hadoop's stream reads k survivors' bytes at every in-cell offset a
   * lost part covers (healthy parts at those offsets among them) and healthy parts elsewhere
   * once; the routes rebuild each lost unit over the unit range its parts span.
   */
  private void addGroup(LocatedStripedBlock g, List<Part> groupParts) {
    int k = policy.getNumDataUnits();
    long cell = policy.getCellSize();
    // lost unit -> {from, to}: the unit range its parts span
    Map<Integer, long[]> lostUnits = new TreeMap<>();
    for (Part p : groupParts) {
      parts.add(p);
      if (p.lost) {
        lost.add(p);
        long[] span = lostUnits.computeIfAbsent(p.unit, u -> new long[] {Long.MAX_VALUE, 0});
        span[0] = Math.min(span[0], p.unitOffset);
        span[1] = Math.max(span[1], p.unitOffset + p.len);
      } else {
        healthyBytes += p.len;
      }
    }
    // Per stripe, the in-cell offsets a lost part covers, and the healthy parts outside them.
    long stripeOf = -1;
    long lo = 0;
    long hi = 0;
    for (int i = 0; i <= groupParts.size(); i++) {
      Part p = i < groupParts.size() ? groupParts.get(i) : null;
      long stripe = p == null ? -2 : p.unitOffset / cell;
      if (stripe != stripeOf) {
        if (stripeOf >= 0) {
          hadoopBytes += k * Math.max(0, hi - lo)
              + healthyOutside(groupParts, cell, stripeOf, lo, hi);
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
    // Lost units spanning the same range: one task of several rows; else a task each, so that
    // no unit is rebuilt over more than its own parts.
    // (plain loops, not streams: a client's first few hundred reads run this interpreted)
    long[] first = null;
    boolean same = true;
    for (long[] span : lostUnits.values()) {
      same &= first == null || Arrays.equals(first, span);
      first = first == null ? span : first;
    }
    List<int[]> erasedEach = new ArrayList<>();
    if (same) {
      int[] all = new int[lostUnits.size()];
      int i = 0;
      for (int u : lostUnits.keySet()) {
        all[i++] = u;
      }
      erasedEach.add(all);
    } else {
      for (int u : lostUnits.keySet()) {
        erasedEach.add(new int[] {u});
      }
    }
    for (int[] erased : erasedEach) {
      long[] span = lostUnits.get(erased[0]);
      tasks.add(new Task(g, erased, span[0], span[1], lostUnits.keySet()));
      groupStarts.add(g.getStartOffset());
      for (int u : erased) { // as RepairRequest#rowLength: a short unit ends early
        long unitLength = StripedBlockUtil.getInternalBlockLength(g.getBlockSize(), policy, u);
        routedBytes += Math.max(0, Math.min(span[1] - span[0], unitLength - span[0]));
      }
    }
  }

  /** Healthy bytes of stripe {@code stripe} outside in-cell offsets [lo, hi). */
  private static long healthyOutside(List<Part> parts, long cell, long stripe, long lo,
      long hi) {
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

  /** Where internal block {@code index} of the group is listed, or -1. */
  static int slot(LocatedStripedBlock g, int index) {
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
}
