package io.netec.hdfs.datanode;

import io.netec.hdfs.route.BlockSource;
import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import org.apache.hadoop.fs.ByteBufferReadable;
import org.apache.hadoop.hdfs.DFSConfigKeys;
import org.apache.hadoop.hdfs.protocol.ExtendedBlock;
import org.apache.hadoop.hdfs.security.token.block.BlockTokenIdentifier;
import org.apache.hadoop.hdfs.server.datanode.BlockMetadataHeader;
import org.apache.hadoop.hdfs.server.datanode.DataNode;
import org.apache.hadoop.hdfs.server.datanode.fsdataset.FsDatasetSpi;
import org.apache.hadoop.io.IOUtils;
import org.apache.hadoop.security.token.Token;
import org.apache.hadoop.util.DataChecksum;

/**
 * A DataNode as the survivors' block source: its dataset, its block-token checks, and reads
 * verified against the replica's checksums (as Hadoop's own reconstruction verifies what it
 * reads), so a corrupt replica fails the route instead of entering a rebuilt block.
 */
public final class DataNodeBlockSource implements BlockSource {
  /** Bytes verified per read of the data and meta files. */
  private static final int SPAN = 64 * 1024;

  private final DataNode dn;
  private final boolean tokens;

  public DataNodeBlockSource(DataNode dn) {
    this.dn = dn;
    this.tokens = dn.getConf().getBoolean(DFSConfigKeys.DFS_BLOCK_ACCESS_TOKEN_ENABLE_KEY,
        DFSConfigKeys.DFS_BLOCK_ACCESS_TOKEN_ENABLE_DEFAULT);
  }

  @Override
  public void check(ExtendedBlock block, String token, long minLength) throws IOException {
    if (tokens) {
      Token<BlockTokenIdentifier> t = new Token<>();
      try {
        t.decodeFromUrlString(token);
      } catch (IOException | IllegalArgumentException e) {
        throw new IOException("unreadable block token for " + block);
      }
      dn.getBlockPoolTokenSecretManager().checkAccess(t, null, block,
          BlockTokenIdentifier.AccessMode.READ);
    }
    long len = dn.getFSDataset().getLength(block);
    if (len < minLength) {
      throw new IOException(block + " has " + len + " bytes here, " + minLength + " asked");
    }
  }

  @Override
  public InputStream open(ExtendedBlock block, long offset) throws IOException {
    return new Verified(dn.getFSDataset(), block, offset);
  }

  /**
   * The block's bytes from an offset, each checksum chunk verified before it is returned; read
   * into arrays or, with no copy of its own between, into a caller's (direct) buffer.
   */
  private static final class Verified extends InputStream implements ByteBufferReadable {
    private final ExtendedBlock block;
    private final InputStream data;
    private final DataInputStream meta;
    private final DataChecksum sum;
    private final long length;
    private final ByteBuffer buf;
    private final ByteBuffer sums;
    private long bufStart; // block offset of buf's first byte
    private long skip;     // bytes of the first span before the asked offset

    Verified(FsDatasetSpi<?> ds, ExtendedBlock block, long offset) throws IOException {
      this.block = block;
      this.length = ds.getLength(block);
      DataInputStream m = null;
      InputStream d = null;
      try {
        m = new DataInputStream(new BufferedInputStream(ds.getMetaDataInputStream(block)));
        this.sum = BlockMetadataHeader.readHeader(m).getChecksum();
        int bpc = sum.getBytesPerChecksum();
        long start = Math.min(offset, length) / bpc * bpc;
        IOUtils.skipFully(m, start / bpc * sum.getChecksumSize());
        d = ds.getBlockInputStream(block, start);
        this.bufStart = start;
        this.skip = offset - start;
        int span = Math.max(bpc, SPAN / bpc * bpc);
        this.buf = ByteBuffer.allocate(span);
        this.sums = ByteBuffer.allocate(span / bpc * sum.getChecksumSize());
        buf.limit(0);
      } catch (IOException | RuntimeException e) {
        IOUtils.closeStream(m);
        IOUtils.closeStream(d);
        throw e;
      }
      this.meta = m;
      this.data = d;
    }

    /** Reads and verifies the next span; false at the end of the block. */
    private boolean fill() throws IOException {
      bufStart += buf.limit();
      long left = length - bufStart;
      if (left <= 0) {
        return false;
      }
      int n = (int) Math.min(buf.capacity(), left);
      int chunks = (n + sum.getBytesPerChecksum() - 1) / sum.getBytesPerChecksum();
      buf.clear();
      IOUtils.readFully(data, buf.array(), 0, n);
      buf.limit(n);
      sums.clear();
      meta.readFully(sums.array(), 0, chunks * sum.getChecksumSize());
      sums.limit(chunks * sum.getChecksumSize());
      // throws ChecksumException naming the block and the position of the bad chunk
      sum.verifyChunkedSums(buf, sums, block.toString(), bufStart);
      buf.position((int) Math.min(skip, n));
      skip -= buf.position();
      return true;
    }

    @Override
    public int read() throws IOException {
      byte[] one = new byte[1];
      return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      if (len == 0) {
        return 0;
      }
      while (!buf.hasRemaining()) {
        if (!fill()) {
          return -1;
        }
      }
      int n = Math.min(len, buf.remaining());
      buf.get(b, off, n);
      return n;
    }

    @Override
    public int read(ByteBuffer dst) throws IOException {
      if (!dst.hasRemaining()) {
        return 0;
      }
      while (!buf.hasRemaining()) {
        if (!fill()) {
          return -1;
        }
      }
      int n = Math.min(dst.remaining(), buf.remaining());
      dst.put(buf.array(), buf.arrayOffset() + buf.position(), n);
      buf.position(buf.position() + n);
      return n;
    }

    @Override
    public void close() {
      IOUtils.closeStream(data);
      IOUtils.closeStream(meta);
    }
  }
}
