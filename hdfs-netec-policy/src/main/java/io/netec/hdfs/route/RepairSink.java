package io.netec.hdfs.route;

import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * Where a repair's rows go. On a DataNode each row is an internal block written to its target
 * ({@link InternalBlockSink}); on a client the rows fill the read's buffers. The router uses
 * one sink for all routes of a request: after a route's attempt it calls {@link #complete()}
 * (the attempt delivered every row) or {@link #abort()} (nothing partial stays), so a route
 * only writes.
 */
public interface RepairSink {
  /**
   * The next bytes of row r, in order: {@code data}'s remaining bytes, consumed. A row gets
   * exactly {@link RepairRequest#rowLength(int)} bytes in all; more is an IOException.
   */
  void write(int row, ByteBuffer data) throws IOException;

  /**
   * Hadoop's own repair of the same request (the native route): on a DataNode its
   * reconstructor writes the targets itself; on a client its striped stream decodes the rows.
   */
  void repairNatively() throws IOException;

  /** Ends a successful attempt: checks every row is whole and keeps it; returns its bytes. */
  long complete() throws IOException;

  /** Ends a failed attempt: drops what it wrote; the sink is ready for the next route. */
  void abort();
}
