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
 * after their checksums were verified, are copied to every proof of that range, so a survivor
 * proves what it streams without reading it twice. The stream's thread only copies (the
 * fingerprint is computed on the proof's own thread, off the stream's path); a proof that falls
 * behind by more than {@value #QUEUED_BYTES} bytes misses what comes meanwhile, which it then reads itself,
 * as it reads what no stream read (the start of the range, read before the proof arrived, or
 * all of it when the route did not stream from this survivor). Each byte of a wanted range is
 * fingerprinted once.
 */
public final class ReadTaps {
  /** Bytes a proof may have waiting; beyond, spans are dropped (the proof reads them itself). */
  static final int QUEUED_BYTES = 8 << 20;
  private final Map<Long, CopyOnWriteArrayList<Want>> wants = new ConcurrentHashMap<>();

  /**
   * Bytes of block {@code blockId} at [position, position + remaining), just read and verified;
   * the buffer is not moved.
   */
  public void offer(long blockId, long position, ByteBuffer span) {
    CopyOnWriteArrayList<Want> l = wants.get(blockId);
    if (l != null) {
      for (Want w : l) {
        w.offer(position, span);
      }
    }
  }

  /** Wants bytes [offset, offset + length) of block {@code blockId} into {@code f}. */
  Want want(long blockId, long offset, long length, Fingerprint f) {
    Want w = new Want(blockId, offset, offset + length, f);
    wants.computeIfAbsent(blockId, id -> new CopyOnWriteArrayList<>()).add(w);
    return w;
  }

  /** One proof's range of one block: what has been fed so far. */
  final class Want implements Closeable {
    private final long blockId;
    private final long offset;
    private final long end;
    private final Fingerprint f;
    /** Disjoint covered intervals, start -> end. */
    private final TreeMap<Long, Long> covered = new TreeMap<>();
    private long bytes;
    /** Copies of stream spans inside the range, for the proof's thread: {position, bytes}. */
    private final java.util.concurrent.LinkedBlockingQueue<Object[]> queue =
        new java.util.concurrent.LinkedBlockingQueue<>();
    private final java.util.concurrent.atomic.AtomicLong queued =
        new java.util.concurrent.atomic.AtomicLong();

    private Want(long blockId, long offset, long end, Fingerprint f) {
      this.blockId = blockId;
      this.offset = offset;
      this.end = end;
      this.f = f;
    }

    /** On a stream's thread: copies what of the span is inside the range, for the proof. */
    void offer(long position, ByteBuffer span) {
      long from = Math.max(position, offset);
      long to = Math.min(position + span.remaining(), end);
      if (from >= to) {
        return;
      }
      if (queued.addAndGet(to - from) > QUEUED_BYTES) {
        queued.addAndGet(from - to); // the proof is behind: it reads these itself
        return;
      }
      byte[] copy = new byte[(int) (to - from)];
      span.duplicate().position(span.position() + (int) (from - position)).get(copy);
      queue.offer(new Object[] {from, copy});
    }

    /**
     * On the proof's thread: fingerprints what streams copied, waiting up to {@code ms} for the
     * first span; whether any came.
     */
    boolean drain(long ms) throws InterruptedException {
      Object[] first = queue.poll(ms, java.util.concurrent.TimeUnit.MILLISECONDS);
      if (first == null) {
        return false;
      }
      java.util.List<Object[]> spans = new java.util.ArrayList<>();
      spans.add(first);
      queue.drainTo(spans);
      for (Object[] sp : spans) {
        byte[] b = (byte[]) sp[1];
        queued.addAndGet(-b.length);
        feed((Long) sp[0], ByteBuffer.wrap(b));
      }
      return true;
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
    }

    private void cover(long a, long b) {
      Map.Entry<Long, Long> left = covered.floorEntry(a);
      if (left != null && left.getValue() == a) {
        a = left.getKey();
        covered.remove(left.getKey());
      }
      Long right = covered.get(b);
      if (right != null) {
        covered.remove(b);
        b = right;
      }
      covered.put(a, b);
    }

    synchronized boolean complete() {
      return bytes == end - offset;
    }

    synchronized long bytes() {
      return bytes;
    }

    /**
     * The part before the first covered byte when a stream started after the range's start
     * (what it read before the proof came), else null.
     */
    synchronized long[] headGap() {
      if (covered.isEmpty() || covered.firstKey() == offset) {
        return null;
      }
      return new long[] {offset, covered.firstKey()};
    }

    /** The first part not covered, at most {@code max} bytes, or null. */
    synchronized long[] firstGap(long max) {
      long at = offset;
      for (Map.Entry<Long, Long> e : covered.entrySet()) {
        if (e.getKey() > at) {
          break;
        }
        at = Math.max(at, e.getValue());
      }
      if (at >= end) {
        return null;
      }
      Long next = covered.higherKey(at);
      long stop = Math.min(next == null ? end : next, end);
      return new long[] {at, Math.min(stop, at + max)};
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
