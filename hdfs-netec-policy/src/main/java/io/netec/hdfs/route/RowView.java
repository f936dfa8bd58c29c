package io.netec.hdfs.route;

import java.io.IOException;

/**
 * The sink as one attempt sees it: the attempt's rows 0..n-1 are the sink's rows {@code
 * rows}; what the attempt wrote to a row it did not keep is dropped.
 */
final class RowView implements RepairSink {
  private final RepairSink sink;
  private final int[] rows;
  private final boolean[] settled;
  RepairVerifier.Attempt proof;
  private boolean written;
  private boolean fenced;

  RowView(RepairSink sink, int[] rows) {
    this.sink = sink;
    this.rows = rows;
    this.settled = new boolean[rows.length];
  }

  /** The route returned: a write from a thread it left behind is refused from now on. */
  synchronized void fence() {
    fenced = true;
  }

  @Override
  public void begin(RowDigests digests) {
    sink.begin(digests == null ? null : new RowDigests() {
      @Override
      public void update(int row, long position, java.nio.ByteBuffer data) {
        digests.update(attemptRow(row), position, data);
      }

      @Override
      public org.apache.hadoop.util.DataChecksum survivorsChecksum() throws IOException {
        return digests.survivorsChecksum();
      }
    });
  }

  /** The attempt's row of sink row {@code row}. */
  private int attemptRow(int row) {
    for (int r = 0; r < rows.length; r++) {
      if (rows[r] == row) {
        return r;
      }
    }
    throw new IllegalArgumentException("row " + row + " is not in this attempt");
  }

  private int row(int r) {
    if (r < 0 || r >= rows.length) {
      throw new IllegalArgumentException("the attempt has no row " + r);
    }
    return rows[r];
  }

  @Override
  public synchronized void write(int r, java.nio.ByteBuffer data) throws IOException {
    if (fenced) {
      throw new IOException("the attempt is over: a write after the route returned");
    }
    if (!written) {
      written = true;
      accepted(); // the route delivers: its survivors are asked now at the latest
    }
    sink.write(row(r), data);
  }

  @Override
  public void accepted() {
    if (proof != null) {
      proof.begin();
    }
  }

  @Override
  public void repairNatively(int[] attemptRows) throws IOException {
    int[] mine = new int[attemptRows.length];
    for (int i = 0; i < mine.length; i++) {
      mine[i] = row(attemptRows[i]);
    }
    sink.repairNatively(mine);
  }

  @Override
  public void seal(int r) throws IOException {
    sink.seal(row(r));
  }

  @Override
  public long keep(int r) throws IOException {
    settled[r] = true;
    return sink.keep(row(r));
  }

  @Override
  public void drop(int r) {
    settled[r] = true;
    sink.drop(row(r));
  }

  /** Drops every row the attempt did not keep. */
  void dropAll() {
    for (int r = 0; r < rows.length; r++) {
      if (!settled[r]) {
        drop(r);
      }
    }
  }
}
