package io.netec.hdfs.client;

import io.netec.hdfs.route.RepairRequest;
import io.netec.hdfs.route.RepairSink;
import io.netec.hdfs.route.RouteDeclinedException;
import io.netec.hdfs.route.RowDigests;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Row r fills rows[r]; a sealed row's bytes, as they will be returned, go to the attempt's
 * proof; the native route declines (the caller reads the range through Hadoop's stream).
 */
final class RowSink implements RepairSink {
  private final String src;
  private final RepairRequest req;
  private final byte[][] rows;
  private final int[] filled;
  private RowDigests digests;
  /** Set by the reader's thread when it leaves the routes; the route's thread writes. */
  private volatile boolean abandoned;
  private final long total;
  /** Bytes written so far (the reader's thread watches the route's progress). */
  private final AtomicLong written = new AtomicLong();

  RowSink(String src, RepairRequest req, byte[][] rows) {
    this.src = src;
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
