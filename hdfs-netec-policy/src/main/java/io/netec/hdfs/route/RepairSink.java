package io.netec.hdfs.route;

import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * Where a repair's rows go. On a DataNode each row is an internal block written to its target
 * ({@link InternalBlockSink}); on a client the rows fill the read's buffers. The router uses
 * one sink for all attempts of a request, each row on its own: an attempt starts with {@link
 * #begin}, its route writes rows, then for each row the router {@link #seal seals} it, proves it
 * through the attempt's {@link RowDigests} and either {@link #keep keeps} it (the row is done:
 * later attempts never see it) or {@link #drop drops} it (nothing of it stays; a later attempt
 * writes it again). A route only writes.
 */
public interface RepairSink {
  /**
   * Starts an attempt. The sink feeds every byte of every row, as it will keep it, to {@code
   * digests} (by the time {@link #seal} returns), and writes rebuilt blocks with {@code
   * digests}' survivors' checksum. A native attempt ({@link #repairNatively}) has no digests.
   */
  void begin(RowDigests digests);

  /**
   * The next bytes of row r, in order: {@code data}'s remaining bytes, consumed. A row gets
   * exactly {@link RepairRequest#rowLength(int)} bytes in all; more is an IOException.
   */
  void write(int row, ByteBuffer data) throws IOException;

  /**
   * The route has taken the attempt on (a switch accepted its task): it will stream, so the
   * survivors may be asked for their proofs now rather than at its first byte, and the proof
   * runs beside the stream instead of after it. A route need not say it; a sink need not care.
   */
  default void accepted() {
  }

  /**
   * Hadoop's own repair of these rows (the native route): on a DataNode its reconstructor
   * writes and finalizes those targets itself; on a client its striped stream decodes them.
   */
  void repairNatively(int[] rows) throws IOException;

  /**
   * Row r is complete: throws if it does not have all its bytes; else every byte of it has
   * been fed to the attempt's digests, and nothing of it is final yet.
   */
  void seal(int row) throws IOException;

  /** Makes sealed (or natively repaired) row r final; returns its bytes. */
  long keep(int row) throws IOException;

  /** Drops what the attempt wrote to row r; the row is ready for the next attempt. */
  void drop(int row);

  /**
   * Whether the caller no longer wants the rows (a client that ran out of patience and reads
   * them through Hadoop's stream): the router then starts no further attempt or route, and
   * blames no route for the attempt it cuts short. A sink that returns true refuses writes.
   */
  default boolean abandoned() {
    return false;
  }
}
