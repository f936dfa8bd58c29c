package io.netec.hdfs.route;

import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import org.apache.hadoop.hdfs.protocol.ExtendedBlock;
import org.apache.hadoop.util.DataChecksum;

/**
 * Where a survivor (a switch route's agent, an INEC participant, the proof service) reads its
 * local internal blocks and how it checks the reader's right to them: on a DataNode, its dataset,
 * its block-token secret manager and its transfer-thread limit.
 */
public interface BlockSource {
  /** Checks the token (when tokens are on) and that the block has at least minLength bytes. */
  void check(ExtendedBlock block, String token, long minLength) throws IOException;

  /**
   * The block's bytes from {@code offset}; a read of bytes that fail their checksum throws
   * (a survivor must never stream a corrupt replica). A stream that is also Hadoop's
   * {@code ByteBufferReadable} is read straight into the switch route's packet buffers; its
   * {@code read(ByteBuffer)} returns -1 at the end, else at least one byte.
   */
  InputStream open(ExtendedBlock block, long offset) throws IOException;

  /** The replica's checksum type and bytes per checksum, as its meta file says. */
  DataChecksum checksum(ExtendedBlock block) throws IOException;

  /**
   * Takes one of the node's transfers for a stream of a block (what {@code
   * dfs.datanode.max.transfer.threads} limits on a DataNode), given back by closing it.
   *
   * @throws IOException naming the limit when the node has none free
   */
  default Closeable transfer(String what) throws IOException {
    return () -> { };
  }
}
