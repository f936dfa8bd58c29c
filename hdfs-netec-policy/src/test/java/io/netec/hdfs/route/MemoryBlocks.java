package io.netec.hdfs.route;

import io.netec.hdfs.codec.MatrixAccumulator;
import io.netec.hdfs.codec.RsMatrix;
import io.netec.hdfs.proof.ReadTaps;
import io.netec.hdfs.switchroute.BufferReadableBytes;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongFunction;
import org.apache.hadoop.fs.ChecksumException;
import org.apache.hadoop.hdfs.protocol.ExtendedBlock;
import org.apache.hadoop.util.DataChecksum;

/**
 * The one in-memory block store of the tests: internal blocks keyed by block id, served as a
 * DataNode's dataset serves them to survivor agents, INEC participants and proofs, with the
 * faults a real one has (corrupt replicas, checksum errors part way, refused tokens, stalls,
 * slow closes); and a real RS group's units to fill it with.
 */
public class MemoryBlocks implements BlockSource {
  private final Map<Long, byte[]> blocks = new ConcurrentHashMap<>();
  /** Block ids whose reads fail as a corrupt replica's do. */
  public final Set<Long> corrupt = ConcurrentHashMap.newKeySet();
  /** Block id -> the position its reads fail at (a checksum error part way through). */
  public final Map<Long, Long> failAt = new ConcurrentHashMap<>();
  /**
   * Block id -> {position, ms}: a stream's read that reaches the position first waits that long
   * (a slow disk, or a survivor whose link backs off), once a stream.
   */
  public final Map<Long, long[]> pauseAt = new ConcurrentHashMap<>();
  /** Block id -> how long closing a stream of it takes (a slow teardown), in ms. */
  public final Map<Long, Long> closeMillis = new ConcurrentHashMap<>();
  /** Block id -> the token its reads need; null (the default): every token is accepted. */
  public volatile LongFunction<String> token;
  /** While set, opening a block waits: a survivor that stalls. */
  public volatile boolean stall;
  /**
   * Even block ids are read through arrays only, odd ones also straight into the reader's
   * buffers (ByteBufferReadable), so the code under test takes both paths; false: every block
   * is ByteBufferReadable, as a DataNode's are.
   */
  public volatile boolean evenIdsArraysOnly = true;
  /**
   * Where set, the streams feed these taps as a DataNode's verified reads do: each open and
   * close told, each range read offered.
   */
  public volatile ReadTaps taps;

  public void put(long blockId, byte[] bytes) {
    blocks.put(blockId, bytes);
  }

  @Override
  public void check(ExtendedBlock block, String token, long minLength) throws IOException {
    LongFunction<String> need = this.token;
    if (need != null && !need.apply(block.getBlockId()).equals(token)) {
      throw new IOException("block token rejected for " + block);
    }
    byte[] b = blocks.get(block.getBlockId());
    if (b == null || b.length < minLength) {
      throw new IOException("no block " + block + " of " + minLength + " bytes here");
    }
  }

  @Override
  public InputStream open(ExtendedBlock block, long offset) throws IOException {
    while (stall) {
      try {
        Thread.sleep(20);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new java.io.InterruptedIOException("stalled open of " + block);
      }
    }
    long id = block.getBlockId();
    byte[] b = blocks.get(id);
    if (b == null) {
      throw new IOException("no block " + block + " here");
    }
    if (corrupt.contains(id)) {
      throw new ChecksumException("Checksum error: " + block + " at " + offset, offset);
    }
    Tap tap = new Tap(taps, id);
    InputStream in = new TappedBuffers(tap, b, (int) offset);
    if ((id & 1) == 0 && evenIdsArraysOnly) {
      in = new FilterInputStream(in) { // arrays only: hides ByteBufferReadable
      };
    }
    Long fail = failAt.get(id);
    if (fail != null) {
      in = failingAt(in, block, offset, fail);
    }
    long[] pause = pauseAt.get(id);
    if (pause != null) {
      in = pausingAt(in, offset, pause[0], pause[1]);
    }
    Long close = closeMillis.get(id);
    return close == null ? in : closingSlowly(in, close);
  }

  @Override
  public DataChecksum checksum(ExtendedBlock block) {
    return DataChecksum.newDataChecksum(DataChecksum.Type.CRC32C, 512);
  }

  /** The taps a stream feeds: told when it opens, fed each range it reads, told once it closes. */
  private static final class Tap {
    private final ReadTaps taps;
    private final long id;
    private final java.util.concurrent.atomic.AtomicBoolean closed =
        new java.util.concurrent.atomic.AtomicBoolean();

    Tap(ReadTaps taps, long id) {
      this.taps = taps;
      this.id = id;
      if (taps != null) {
        taps.streamOpened(id);
      }
    }

    void read(byte[] b, int at, int n) {
      if (taps != null && n > 0) {
        taps.offer(id, at, ByteBuffer.wrap(b, at, n));
      }
    }

    void close() {
      if (taps != null && closed.compareAndSet(false, true)) {
        taps.streamClosed(id);
      }
    }
  }

  private static final class TappedBuffers extends BufferReadableBytes {
    private final Tap tap;

    TappedBuffers(Tap tap, byte[] b, int offset) {
      super(b, offset, b.length - offset);
      this.tap = tap;
    }

    @Override
    public synchronized int read(byte[] to, int off, int len) {
      int at = pos;
      int n = super.read(to, off, len);
      tap.read(buf, at, n);
      return n;
    }

    @Override
    public synchronized int read(ByteBuffer dst) {
      int at = pos;
      int n = super.read(dst);
      tap.read(buf, at, n);
      return n;
    }

    @Override
    public void close() {
      tap.close();
    }
  }

  /**
   * A stream that knows where in its block it is: {@link #before} sees each read first, with
   * the position and the length asked for, and may shorten it, wait or throw.
   */
  private abstract static class Positioned extends FilterInputStream {
    private long pos;

    Positioned(InputStream in, long offset) {
      super(in);
      this.pos = offset;
    }

    /** How much of {@code len} bytes at {@code pos} to read now. */
    abstract int before(long pos, int len) throws IOException;

    @Override
    public int read() throws IOException {
      byte[] one = new byte[1];
      return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
    }

    @Override
    public int read(byte[] to, int off, int len) throws IOException {
      int n = super.read(to, off, before(pos, len));
      pos += Math.max(n, 0);
      return n;
    }
  }

  private static InputStream failingAt(InputStream in, ExtendedBlock block, long offset,
      long fail) {
    return new Positioned(in, offset) {
      @Override
      int before(long pos, int len) throws IOException {
        if (pos >= fail) {
          throw new ChecksumException("Checksum error: " + block + " at " + pos, pos);
        }
        return (int) Math.min(len, fail - pos);
      }
    };
  }

  private static InputStream pausingAt(InputStream in, long offset, long at, long millis) {
    return new Positioned(in, offset) {
      private boolean paused;

      @Override
      int before(long pos, int len) throws IOException {
        if (!paused && pos + len > at) {
          paused = true;
          try {
            Thread.sleep(millis);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new java.io.InterruptedIOException("paused read at " + pos);
          }
        }
        return len;
      }
    };
  }

  private static InputStream closingSlowly(InputStream in, long millis) {
    return new FilterInputStream(in) {
      @Override
      public void close() throws IOException {
        try {
          Thread.sleep(millis);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        super.close();
      }
    };
  }

  /** k data units of {@code unit} random bytes and their m parity units, Hadoop's RS code. */
  public static byte[][] group(int k, int m, int unit, long seed) {
    byte[][] u = new byte[k + m][unit];
    Random r = new Random(seed);
    for (int i = 0; i < k; i++) {
      r.nextBytes(u[i]);
    }
    MatrixAccumulator acc = MatrixAccumulator.java(k, m, RsMatrix.parityRows(k, m));
    byte[][] parity = new byte[m][];
    System.arraycopy(u, k, parity, 0, m);
    for (int j = 0; j < k; j++) {
      acc.accumulate(j, u[j], 0, unit, parity, new int[m]);
    }
    return u;
  }
}
