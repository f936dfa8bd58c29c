package io.netec.hdfs.route;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import org.apache.hadoop.hdfs.server.datanode.DataNode;
import org.apache.hadoop.hdfs.util.DataTransferThrottler;

/**
 * A DataNode's sink: row r is the rebuilt internal block {@code task.erasedIndex(r)}, streamed
 * to {@code task.target(r)} with an {@link InternalBlockWriter} opened on its first bytes with
 * the survivors' checksum, every packet shown to the attempt's proof before it is checksummed,
 * and finalized only when the router keeps the row (whole and proven); a dropped row leaves no
 * replica on its target. Hadoop's repair controls apply as to its own reconstruction: the bytes
 * a route delivers count against the DataNode's EC reconstruction read and write throttles
 * ({@code dfs.datanode.ec.reconstruct.read|write.bandwidthPerSec}). The native route runs
 * Hadoop's reconstructor for the rows still open, which writes those targets itself. {@link
 * #settle} then does Hadoop's bookkeeping for what the routes did (xmits, EC metrics).
 */
public final class InternalBlockSink implements RepairSink {
  private final DataNode dn;
  private final ReconstructionTask task;
  private final InternalBlockWriter[] writers;
  private final boolean[] nativeRows;
  private final DataTransferThrottler readThrottler;
  private final DataTransferThrottler writeThrottler;
  private RowDigests digests;
  private long routedBytes;
  private long routedIn;
  private long writeNanos;
  private long attemptStart;
  private long attemptNanos;
  /** Read-throttle bytes owed but not yet charged (k / rows a rebuilt byte, in whole bytes). */
  private double readOwed;

  public InternalBlockSink(DataNode dn, ReconstructionTask task) {
    this.dn = dn;
    this.task = task;
    this.writers = new InternalBlockWriter[task.erasedCount()];
    this.nativeRows = new boolean[task.erasedCount()];
    this.readThrottler = dn == null ? null : dn.getEcReconstuctReadThrottler();
    this.writeThrottler = dn == null ? null : dn.getEcReconstuctWriteThrottler();
  }

  @Override
  public void begin(RowDigests d) {
    this.digests = d;
    this.attemptStart = System.nanoTime();
  }

  private InternalBlockWriter writer(int row) throws IOException {
    if (writers[row] == null) {
      if (digests == null) {
        throw new IOException("a route wrote outside a proven attempt");
      }
      RowDigests d = digests;
      writers[row] = InternalBlockWriter.open(dn, task, row, d.survivorsChecksum(),
          (position, bytes) -> d.update(row, position, bytes));
    }
    return writers[row];
  }

  @Override
  public void write(int row, ByteBuffer data) throws IOException {
    InternalBlockWriter w = writer(row);
    int n = data.remaining();
    if (w.written() + n > task.internalBlockLength(task.erasedIndex(row))) {
      throw new IOException("route delivered more than the " + w.block() + "'s "
          + task.internalBlockLength(task.erasedIndex(row)) + " bytes");
    }
    // What Hadoop's reconstruction throttles, as StripedBlockReconstructor charges it: reads
    // of k sources for each stripe of the rows rebuilt (k times a row's bytes, shared by the
    // rows), and each row's bytes written out
    if (readThrottler != null) {
      readOwed += (double) n * task.policy().getNumDataUnits() / writers.length;
      long charge = (long) readOwed;
      readOwed -= charge;
      readThrottler.throttle(charge);
    }
    if (writeThrottler != null) {
      writeThrottler.throttle(n);
    }
    long t = System.nanoTime();
    w.write(data);
    writeNanos += System.nanoTime() - t;
    routedIn += n;
  }

  @Override
  public void repairNatively(int[] rows) throws IOException {
    if (task.hadoopTask() == null) {
      throw new RouteDeclinedException("task has no Hadoop reconstructor");
    }
    short[] indices = new short[rows.length];
    long expected = 0;
    for (int i = 0; i < rows.length; i++) {
      indices[i] = (short) task.erasedIndex(rows[i]);
      expected += task.internalBlockLength(indices[i]);
    }
    long written = task.hadoopTask().runNative(indices);
    if (written != expected) {
      throw new IOException("Hadoop's reconstruction wrote " + written + " of " + expected
          + " bytes of units " + Arrays.toString(indices) + " (see the DataNode log for its "
          + "error)");
    }
    for (int r : rows) {
      nativeRows[r] = true;
    }
  }

  @Override
  public void seal(int row) throws IOException {
    if (nativeRows[row]) {
      return;
    }
    if (writers[row] == null) {
      throw new IOException("no bytes of " + task.internalBlock(task.erasedIndex(row)));
    }
    long t = System.nanoTime();
    writers[row].flushData(); // refuses a block whose length is not the expected one
    writeNanos += System.nanoTime() - t;
    attemptNanos += System.nanoTime() - attemptStart;
    attemptStart = System.nanoTime();
  }

  @Override
  public long keep(int row) throws IOException {
    long bytes = task.internalBlockLength(task.erasedIndex(row));
    if (nativeRows[row]) {
      return bytes; // Hadoop wrote, finalized and counted it itself
    }
    long t = System.nanoTime();
    try {
      writers[row].finish();
    } finally {
      writers[row] = null;
      writeNanos += System.nanoTime() - t;
    }
    routedBytes += bytes;
    return bytes;
  }

  @Override
  public void drop(int row) {
    if (writers[row] != null) {
      writers[row].close(); // aborts a block not finished
      writers[row] = null;
    }
  }

  /**
   * After the router: Hadoop's bookkeeping for a task the routes served in whole or part, as
   * StripedBlockReconstructor.run() does it for its own (when the native route ran, Hadoop's
   * reconstructor counted its part and gave its xmits back itself).
   *
   * @param outcome the router's outcome (its proof failures are Hadoop's invalid
   *     reconstructions), or null when the router itself failed
   */
  public void settle(ReconstructionRouter.Outcome outcome) {
    for (int r = 0; r < writers.length; r++) {
      drop(r);
    }
    if (task.hadoopTask() != null) {
      task.hadoopTask().settle(new ReconstructionTask.RoutedWork(routedBytes, routedIn,
          Math.max(0, attemptNanos - writeNanos) / 1_000_000, writeNanos / 1_000_000,
          outcome == null || outcome.route == null,
          outcome == null ? 0 : outcome.verifyFailures));
    }
  }
}
