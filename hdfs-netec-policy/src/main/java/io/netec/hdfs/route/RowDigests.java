package io.netec.hdfs.route;

import java.io.IOException;
import java.nio.ByteBuffer;
import org.apache.hadoop.util.DataChecksum;

/**
 * What a sink owes the proof of an attempt: every byte of every row it keeps, fed at the last
 * place the sink holds it (a DataNode's block writer, just before it checksums a packet; a
 * client's buffer), and, for rebuilt blocks, the checksum the group's replicas carry.
 */
public interface RowDigests {
  /** Adds bytes [position, position + remaining) of row r; the buffer is not moved. */
  void update(int row, long position, ByteBuffer data);

  /**
   * The checksum type and bytes per checksum of the survivors' replicas, which a rebuilt replica
   * must carry; waits for the first survivor's answer.
   *
   * @throws IOException when no survivor tells in time (the attempt then cannot be proven)
   */
  DataChecksum survivorsChecksum() throws IOException;
}
