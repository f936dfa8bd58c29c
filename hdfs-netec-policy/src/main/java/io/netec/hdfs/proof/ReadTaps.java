package io.netec.hdfs.proof;

import io.netec.hdfs.codec.Fingerprint;
import java.io.Closeable;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Fingerprints wanted by proofs of a DataNode's local blocks, fed by the DataNode's own verified
 * reads: when an agent or an INEC participant streams a range for a route, the same bytes, just
 * after their checksums were verified, go into the fingerprint of every proof of that range, so
 * a survivor proves what it streams without reading it twice. A proof reads itself only what no
 * stream read (the start of the range, read before the proof arrived, or all of it when the
 * route did not stream from this survivor). Each byte of a wanted range is fingerprinted once.
 */
public final class ReadTaps {
  /** How long after a block's last stream closed a proof takes it that the route has read. */
  static final long STREAMED_LATELY_NANOS = 5_000_000_000L;
  /** Intervals kept of a block's streamed bytes (a stream's sequential reads make one). */
  static final int MAX_EXTENTS = 64;
  private final Map<Long, CopyOnWriteArrayList<Want>> wants = new ConcurrentHashMap<>();
  /** Streams of a block open now. */
  private final Map<Long, Integer> open = new ConcurrentHashMap<>();
  /** When a block's last stream closed (System.nanoTime). */
  private final Map<Long, Long> lastClosed = new ConcurrentHashMap<>();
  /**
   * The bytes of a block its open streams have read (merged intervals, start -> end): a proof
   * that comes while they run reads those itself at once, since a stream reads each byte of
   * its range once. Dropped when the block's last stream closes (a late proof then reads at
   * once anyway: {@link #doneStreaming}), so what an earlier stream read never sends a proof
   * to read what a later one is about to.
   */
  private final Map<Long, TreeMap<Long, Long>> streamed = new ConcurrentHashMap<>();

  /** A stream of the block opened (its reads will feed the taps). */
  public void streamOpened(long blockId) {
    open.merge(blockId, 1, Integer::sum);
  }

  /**
   * A stream of the block closed: proofs of it then wait no longer for streams (what is not
   * fingerprinted yet, they read themselves at once).
   */
  public void streamClosed(long blockId) {
    if (open.computeIfPresent(blockId, (id, n) -> n <= 1 ? null : n - 1) == null) {
      streamed.remove(blockId);
    }
    long now = System.nanoTime();
    lastClosed.put(blockId, now);
    if (lastClosed.size() > 4096) {
      lastClosed.values().removeIf(t -> now - t > STREAMED_LATELY_NANOS);
    }
    if (streamed.size() > 4096) { // an offer raced a close: only open blocks' are kept
      streamed.keySet().removeIf(id -> !open.containsKey(id));
    }
    CopyOnWriteArrayList<Want> l = wants.get(blockId);
    if (l != null) {
      for (Want w : l) {
        w.wake();
      }
    }
  }

  /**
   * Whether the block's streams are done: none is open, and one closed in the last few
   * seconds (a route's stream ran, and what it did not read no stream will). A block no stream
   * read lately may yet be streamed by a route that has not reached it.
   */
  boolean doneStreaming(long blockId) {
    Long t = lastClosed.get(blockId);
    return !open.containsKey(blockId) && t != null
        && System.nanoTime() - t < STREAMED_LATELY_NANOS;
  }

  /**
   * Bytes of block {@code blockId} at [position, position + remaining), just read and verified;
   * the buffer is not moved.
   */
  public void offer(long blockId, long position, ByteBuffer span) {
    if (open.containsKey(blockId)) {
      TreeMap<Long, Long> read = streamed.computeIfAbsent(blockId, id -> new TreeMap<>());
      synchronized (read) {
        if (read.size() >= MAX_EXTENTS) {
          read.clear(); // scattered reads: proofs wait for the streams, as without extents
        }
        merge(read, position, position + span.remaining());
      }
    }
    CopyOnWriteArrayList<Want> l = wants.get(blockId);
    if (l != null) {
      for (Want w : l) {
        w.feed(position, span);
      }
    }
  }

  /** Whether a proof wants bytes of block {@code blockId} now. */
  boolean wanted(long blockId) {
    CopyOnWriteArrayList<Want> l = wants.get(blockId);
    return l != null && !l.isEmpty();
  }

  /** Wants bytes [offset, offset + length) of block {@code blockId} into {@code f}. */
  Want want(long blockId, long offset, long length, Fingerprint f) {
    Want w = new Want(blockId, offset, offset + length, f);
    // added inside compute, so that a close emptying the list cannot drop it meanwhile
    wants.compute(blockId, (id, l) -> {
      CopyOnWriteArrayList<Want> list = l == null ? new CopyOnWriteArrayList<>() : l;
      list.add(w);
      return list;
    });
    // taken after the want is in place, so that no byte a stream reads is in neither
    TreeMap<Long, Long> read = streamed.get(blockId);
    if (read != null) {
      synchronized (read) {
        Map.Entry<Long, Long> first = read.floorEntry(offset);
        for (Map.Entry<Long, Long> e : (first == null ? read
            : read.tailMap(first.getKey(), true)).entrySet()) {
          if (e.getKey() >= w.end) {
            break;
          }
          long a = Math.max(e.getKey(), offset);
          long b = Math.min(e.getValue(), w.end);
          if (a < b) {
            w.before.put(a, b);
          }
        }
      }
    }
    return w;
  }

  /** Adds [a, b) to disjoint intervals {@code m}, merging what touches it. */
  private static void merge(TreeMap<Long, Long> m, long a, long b) {
    if (a >= b) {
      return;
    }
    Map.Entry<Long, Long> left = m.floorEntry(a);
    if (left != null && left.getValue() >= a) {
      if (left.getValue() >= b) {
        return; // a stream's sequential reads mostly end here or just below
      }
      a = left.getKey();
    }
    Map.Entry<Long, Long> next;
    while ((next = m.ceilingEntry(a)) != null && next.getKey() <= b) {
      b = Math.max(b, next.getValue());
      m.remove(next.getKey());
    }
    m.put(a, b);
  }

  /** One proof's range of one block: what has been fed so far. */
  final class Want implements Closeable {
    private final long blockId;
    private final long offset;
    private final long end;
    private final Fingerprint f;
    /** Disjoint covered intervals, start -> end. */
    private final TreeMap<Long, Long> covered = new TreeMap<>();
    /** What streams had read of the range when the proof came (no stream reads it again). */
    private final TreeMap<Long, Long> before = new TreeMap<>();
    private long bytes;

    private Want(long blockId, long offset, long end, Fingerprint f) {
      this.blockId = blockId;
      this.offset = offset;
      this.end = end;
      this.f = f;
    }

    /** Fingerprints the parts of the span inside the range and not yet covered. */
    synchronized void feed(long position, ByteBuffer span) {
      long from = Math.max(position, offset);
      long to = Math.min(position + span.remaining(), end);
      while (from < to) {
        // the next uncovered piece from `from`
        Map.Entry<Long, Long> before = covered.floorEntry(from);
        if (before != null && before.getValue() > from) {
          from = before.getValue();
          continue;
        }
        Map.Entry<Long, Long> after = covered.higherEntry(from);
        long stop = after == null ? to : Math.min(to, after.getKey());
        ByteBuffer piece = span.duplicate();
        piece.position(span.position() + (int) (from - position));
        piece.limit(span.position() + (int) (stop - position));
        f.update(from - offset, piece);
        bytes += stop - from;
        cover(from, stop);
        from = stop;
      }
      notifyAll();
    }

    private void cover(long a, long b) {
      merge(covered, a, b);
    }

    synchronized boolean complete() {
      return bytes == end - offset;
    }

    synchronized long bytes() {
      return bytes;
    }

    /**
     * A part no stream will read again, for the proof to read now: what the block's streams
     * had read of the range when the proof came (a small range a route streamed before its
     * proof was asked for is read at once, not after the stream closes), or the part before
     * the first covered byte when a stream started after the range's start; else null.
     */
    synchronized long[] headGap() {
      for (Map.Entry<Long, Long> e : before.entrySet()) {
        long[] g = uncoveredIn(e.getKey(), e.getValue());
        if (g != null) {
          return g;
        }
      }
      if (covered.isEmpty() || covered.firstKey() == offset) {
        return null;
      }
      return uncoveredIn(offset, covered.firstKey());
    }

    /** The first part of [a, b) not covered, or null. */
    private long[] uncoveredIn(long a, long b) {
      long at = a;
      while (at < b) {
        Map.Entry<Long, Long> c = covered.floorEntry(at);
        if (c != null && c.getValue() > at) {
          at = c.getValue();
          continue;
        }
        Long next = covered.higherKey(at);
        return new long[] {at, next == null ? b : Math.min(b, next)};
      }
      return null;
    }

    /** The first part not covered, at most {@code max} bytes, or null. */
    synchronized long[] firstGap(long max) {
      long[] g = uncoveredIn(offset, end);
      if (g != null) {
        g[1] = Math.min(g[1], g[0] + max);
      }
      return g;
    }

    /**
     * Waits up to {@code ms} for more bytes; whether some came. False at once when the block's
     * streams are done (none open, one closed lately): no more will come from them.
     */
    synchronized boolean awaitProgress(long ms) throws InterruptedException {
      long had = bytes;
      long deadline = System.nanoTime() + ms * 1_000_000L;
      while (bytes == had && bytes < end - offset && !doneStreaming(blockId)) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          return false;
        }
        wait((left + 999_999L) / 1_000_000L); // rounded up: the whole time, not a ms less
      }
      return bytes != had || bytes == end - offset;
    }

    synchronized void wake() {
      notifyAll();
    }

    @Override
    public void close() {
      wants.computeIfPresent(blockId, (id, l) -> {
        l.remove(this);
        return l.isEmpty() ? null : l;
      });
    }
  }
}
