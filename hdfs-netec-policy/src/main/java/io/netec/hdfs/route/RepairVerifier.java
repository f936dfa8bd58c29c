package io.netec.hdfs.route;

import java.io.Closeable;
import java.io.IOException;
import java.util.List;

/**
 * Proves a route's rebuilt rows before they are kept: no output of any route but native is
 * finalized on a DataNode or returned to a reader unless its fingerprint equals the decode of
 * the survivors' own (README, "Integrity").
 */
public interface RepairVerifier {
  /**
   * Starts the proof of one attempt at {@code req}: asks the survivors it decodes from for
   * their fingerprints under a fresh key, in the background while the route runs (a moment
   * after the attempt starts, or at its first byte, so that a route that declines at once
   * costs the survivors nothing).
   */
  Attempt start(RepairRequest req);

  /** The proof of one attempt; the sink feeds its {@link RowDigests}. */
  interface Attempt extends RowDigests, Closeable {
    /**
     * The route took the attempt on ({@link RepairSink#accepted}) or delivers its first byte:
     * the survivors are asked now if they were not yet.
     */
    void begin();

    /**
     * Whether row r, as fed, equals the decode of the survivors' verified bytes; waits for
     * the survivors' fingerprints.
     *
     * @return null when proven, else why not (a mismatch, stated as one)
     * @throws SurvivorFault when survivors could not prove their part (the row is unproven)
     */
    String check(int row) throws IOException;

    /**
     * After a route failed: the survivors at fault, if their proofs tell (waiting briefly for
     * them to settle): units whose proof failed (unreadable, corrupt, refused, gone); else, when
     * the route gave up for want of progress, units whose fingerprint has not come while
     * others' have (the slow ones it waited on). Empty when they do not tell.
     */
    List<Integer> culprits(boolean stalled);

    @Override
    void close();
  }
}
