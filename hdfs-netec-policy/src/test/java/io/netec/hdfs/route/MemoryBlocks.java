package io.netec.hdfs.route;

import io.netec.hdfs.codec.MatrixAccumulator;
import io.netec.hdfs.codec.RsMatrix;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.hadoop.hdfs.protocol.ExtendedBlock;
import org.apache.hadoop.util.DataChecksum;

/**
 * Internal blocks in memory, served as a DataNode's dataset serves them to survivors (tokens
 * "" accepted), keyed by block id; and a real RS group's units to fill them with.
 */
public class MemoryBlocks implements BlockSource {
  private final Map<Long, byte[]> blocks = new ConcurrentHashMap<>();
  /** Block ids whose reads fail as a corrupt replica's do. */
  public final java.util.Set<Long> corrupt = ConcurrentHashMap.newKeySet();
  /** Block id -> the position its reads fail at (a checksum error part way through). */
  public final Map<Long, Long> failAt = new ConcurrentHashMap<>();

  public void put(long blockId, byte[] bytes) {
    blocks.put(blockId, bytes);
  }

  @Override
  public void check(ExtendedBlock block, String token, long minLength) throws IOException {
    byte[] b = blocks.get(block.getBlockId());
    if (b == null || b.length < minLength) {
      throw new IOException("no block " + block + " of " + minLength + " bytes here");
    }
  }

  @Override
  public InputStream open(ExtendedBlock block, long offset) throws IOException {
    byte[] b = blocks.get(block.getBlockId());
    if (corrupt.contains(block.getBlockId())) {
      throw new org.apache.hadoop.fs.ChecksumException("Checksum error: " + block
          + " at " + offset, offset);
    }
    Long fail = failAt.get(block.getBlockId());
    if (fail != null) {
      return new java.io.FilterInputStream(
          new ByteArrayInputStream(b, (int) offset, b.length - (int) offset)) {
        private long pos = offset;

        @Override
        public int read() throws IOException {
          byte[] one = new byte[1];
          return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] to, int off, int len) throws IOException {
          if (pos >= fail) {
            throw new org.apache.hadoop.fs.ChecksumException("Checksum error: " + block
                + " at " + pos, pos);
          }
          int n = super.read(to, off, (int) Math.min(len, fail - pos));
          pos += Math.max(n, 0);
          return n;
        }
      };
    }
    return new ByteArrayInputStream(b, (int) offset, b.length - (int) offset);
  }

  @Override
  public DataChecksum checksum(ExtendedBlock block) {
    return DataChecksum.newDataChecksum(DataChecksum.Type.CRC32C, 512);
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
