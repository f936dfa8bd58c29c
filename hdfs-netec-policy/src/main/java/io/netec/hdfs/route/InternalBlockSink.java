package io.netec.hdfs.route;

import java.io.IOException;
import java.nio.ByteBuffer;
import org.apache.hadoop.hdfs.server.datanode.DataNode;

/**
 * A DataNode's sink: row r is the rebuilt internal block {@code task.erasedIndex(r)}, streamed
 * to {@code task.target(r)} with an {@link InternalBlockWriter} opened on its first bytes and
 * finalized only when the whole block arrived; an abort leaves no replica on any target. The
 * native route runs Hadoop's reconstructor, which writes the targets itself; when another
 * route served, Hadoop's reservation for the task is released.
 */
public final class InternalBlockSink implements RepairSink {
  private final DataNode dn;
  private final ReconstructionTask task;
  private final InternalBlockWriter[] writers;
  private long nativeWritten = -1;

  public InternalBlockSink(DataNode dn, ReconstructionTask task) {
    this.dn = dn;
    this.task = task;
    this.writers = new InternalBlockWriter[task.erasedCount()];
  }

  private InternalBlockWriter writer(int row) throws IOException {
    if (writers[row] == null) {
      writers[row] = InternalBlockWriter.open(dn, task, row);
    }
    return writers[row];
  }

  @Override
  public void write(int row, ByteBuffer data) throws IOException {
    InternalBlockWriter w = writer(row);
    if (w.written() + data.remaining() > task.internalBlockLength(task.erasedIndex(row))) {
      throw new IOException("route delivered more than the " + w.block() + "'s "
          + task.internalBlockLength(task.erasedIndex(row)) + " bytes");
    }
    w.write(data);
  }

  @Override
  public void repairNatively() throws IOException {
    if (task.hadoopTask() == null) {
      throw new RouteDeclinedException("task has no Hadoop reconstructor");
    }
    long written = task.hadoopTask().runNative();
    if (written != task.bytesToRebuild()) {
      throw new IOException("Hadoop's reconstruction wrote " + written + " of "
          + task.bytesToRebuild() + " bytes (see the DataNode log for its error)");
    }
    nativeWritten = written;
  }

  @Override
  public long complete() throws IOException {
    if (nativeWritten >= 0) {
      return nativeWritten; // Hadoop wrote and released everything itself
    }
    long written = 0;
    try {
      for (int r = 0; r < writers.length; r++) {
        writer(r).finish(); // refuses a block whose length is not the expected one
        written += writers[r].written();
      }
    } catch (IOException e) {
      abort();
      throw e;
    }
    closeAll();
    if (task.hadoopTask() != null) {
      task.hadoopTask().releaseServedElsewhere(written);
    }
    return written;
  }

  @Override
  public void abort() {
    closeAll();
    nativeWritten = -1;
  }

  private void closeAll() {
    for (int r = 0; r < writers.length; r++) {
      if (writers[r] != null) {
        writers[r].close(); // aborts a block not finished
        writers[r] = null;
      }
    }
  }
}
