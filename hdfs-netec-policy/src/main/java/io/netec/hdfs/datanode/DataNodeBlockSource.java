package io.netec.hdfs.datanode;

import io.netec.hdfs.route.BlockSource;
import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.io.Closeable;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import org.apache.hadoop.fs.ByteBufferReadable;
import org.apache.hadoop.fs.ChecksumException;
import org.apache.hadoop.hdfs.DFSConfigKeys;
import org.apache.hadoop.hdfs.protocol.ExtendedBlock;
import org.apache.hadoop.hdfs.security.token.block.BlockTokenIdentifier;
import org.apache.hadoop.hdfs.server.datanode.BlockMetadataHeader;
import org.apache.hadoop.hdfs.server.datanode.BlockScanner;
import org.apache.hadoop.hdfs.server.datanode.DataNode;
import org.apache.hadoop.hdfs.server.datanode.fsdataset.FsDatasetSpi;
import org.apache.hadoop.hdfs.server.datanode.fsdataset.FsVolumeSpi;
import org.apache.hadoop.hdfs.server.datanode.metrics.DataNodeMetrics;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.apache.hadoop.io.IOUtils;
import org.apache.hadoop.util.DataChecksum;

/**
 * A DataNode as the survivors' block source: its dataset, its block-token checks, reads
 * verified against the replica's checksums (as Hadoop's own reconstruction verifies what it
 * reads), so a corrupt replica fails the route instead of entering a rebuilt block, and the
 * DataNode's own duties kept: every stream is one of the DataNode's transfers (counted in its
 * active xceivers, refused beyond {@code dfs.datanode.max.transfer.threads} as its own transfer
 * server refuses), and a read that fails is handled as the DataNode handles its own: a replica
 * that fails its checksum is reported bad to the NameNode at once, and a disk error marks the
 * block suspect for the block scanner and asks for a check of the volume (as its BlockSender
 * does).
 */
public final class DataNodeBlockSource implements BlockSource {
  private static final Logger LOG = LoggerFactory.getLogger(DataNodeBlockSource.class);
  /** Bytes verified per read of the data and meta files. */
  private static final int SPAN = 64 * 1024;

  private final DataNode dn;
  private final boolean tokens;
  /** The block-token proofs this DataNode accepted lately (each is good once). */
  private final io.netec.hdfs.route.TokenProof.Verifier proofs =
      new io.netec.hdfs.route.TokenProof.Verifier();
  /** This DataNode's block keys, as the proofs need them. */
  private final io.netec.hdfs.route.TokenProof.Keys keys =
      new io.netec.hdfs.route.TokenProof.Keys() {
        @Override
        public byte[] password(BlockTokenIdentifier id) throws IOException {
          return dn.getBlockPoolTokenSecretManager().retrievePassword(id);
        }

        @Override
        public void checkRead(BlockTokenIdentifier id, ExtendedBlock block) throws IOException {
          dn.getBlockPoolTokenSecretManager().checkAccess(id, null, block,
              BlockTokenIdentifier.AccessMode.READ);
        }
      };
  private final LongAdder refusedTransfers = new LongAdder();
  /** Proofs of local blocks, fed by every verified read of this DataNode's survivors. */
  private final io.netec.hdfs.proof.ReadTaps taps = new io.netec.hdfs.proof.ReadTaps();

  public DataNodeBlockSource(DataNode dn) {
    this.dn = dn;
    this.tokens = dn.getConf().getBoolean(DFSConfigKeys.DFS_BLOCK_ACCESS_TOKEN_ENABLE_KEY,
        DFSConfigKeys.DFS_BLOCK_ACCESS_TOKEN_ENABLE_DEFAULT);
  }

  /** What the proof service fingerprints from this DataNode's verified reads. */
  public io.netec.hdfs.proof.ReadTaps taps() {
    return taps;
  }

  /** Streams refused because the DataNode had no transfer free. */
  public long refusedTransfers() {
    return refusedTransfers.sum();
  }

  @Override
  public Closeable transfer(String what) throws IOException {
    int max = dn.getConf().getInt(DFSConfigKeys.DFS_DATANODE_MAX_RECEIVER_THREADS_KEY,
        DFSConfigKeys.DFS_DATANODE_MAX_RECEIVER_THREADS_DEFAULT);
    DataNodeMetrics m = dn.getMetrics();
    synchronized (this) {
      // as DataXceiverServer: refused when the active count is past the limit
      if (dn.getXceiverCount() + 1 > max) {
        refusedTransfers.increment();
        throw new IOException("DataNode " + dn.getDisplayName() + " is at its transfer limit ("
            + dn.getXceiverCount() + " active, "
            + DFSConfigKeys.DFS_DATANODE_MAX_RECEIVER_THREADS_KEY + "=" + max + "): " + what
            + " refused");
      }
      m.incrDataNodeActiveXceiversCount();
    }
    AtomicBoolean open = new AtomicBoolean(true);
    return () -> {
      if (open.compareAndSet(true, false)) {
        m.decrDataNodeActiveXceiversCount();
      }
    };
  }

  @Override
  public DataChecksum checksum(ExtendedBlock block) throws IOException {
    try (DataInputStream m = new DataInputStream(new BufferedInputStream(
        dn.getFSDataset().getMetaDataInputStream(block)))) {
      return BlockMetadataHeader.readHeader(m).getChecksum();
    } catch (IOException e) {
      failedRead(block, e);
      throw e;
    }
  }

  /**
   * A read of a local replica failed: what the DataNode does when a read of its own fails. A
   * checksum mismatch: the replica is corrupt, reported to the NameNode at once (what Hadoop's
   * reconstruction does for a corrupt source, through the reconstructing DataNode), so it is
   * not chosen as a source again. Any other error of the disk: as the DataNode's BlockSender,
   * the block is marked suspect for the block scanner and the volume is checked.
   */
  void failedRead(ExtendedBlock block, IOException e) {
    FsVolumeSpi volume = dn.getFSDataset().getVolume(block);
    if (e instanceof ChecksumException) {
      LOG.warn("Survivor read of {} failed its checksum, reporting it bad: {}", block,
          e.getMessage());
      try {
        dn.reportBadBlocks(block);
      } catch (IOException r) {
        LOG.warn("Reporting bad block {} failed: {}", block, r.toString());
      }
    } else if (volume != null && !(e instanceof java.io.FileNotFoundException)) {
      LOG.warn("Survivor read of {} failed: {}; checking volume {}", block, e.toString(),
          volume);
      if (dn.getBlockScanner().isEnabled()) {
        markSuspect(volume.getStorageID(), block);
      }
      dn.checkDiskErrorAsync(volume);
    }
  }

  @Override
  public void check(ExtendedBlock block, String token, long minLength) throws IOException {
    if (tokens) { // a proof of the token, never the token (TokenProof), and the token's terms
      proofs.verify(token, block, keys);
    }
    long len = dn.getFSDataset().getLength(block);
    if (len < minLength) {
      throw new IOException(block + " has " + len + " bytes here, " + minLength + " asked");
    }
  }

  /** BlockScanner.markSuspectBlock (package-private), resolved once; null if absent. */
  private static final java.lang.reflect.Method MARK_SUSPECT = markSuspectMethod();

  private static java.lang.reflect.Method markSuspectMethod() {
    try {
      java.lang.reflect.Method m = BlockScanner.class.getDeclaredMethod("markSuspectBlock",
          String.class, ExtendedBlock.class);
      m.setAccessible(true);
      return m;
    } catch (ReflectiveOperationException | RuntimeException e) {
      return null;
    }
  }

  /** Tells the block scanner to look at the replica first; false where it cannot be told. */
  private boolean markSuspect(String storageId, ExtendedBlock block) {
    if (MARK_SUSPECT == null) {
      return false;
    }
    try {
      MARK_SUSPECT.invoke(dn.getBlockScanner(), storageId, block);
      return true;
    } catch (ReflectiveOperationException e) {
      return false;
    }
  }

  @Override
  public InputStream open(ExtendedBlock block, long offset) throws IOException {
    SurvivorFaultInjector.get().beforeOpen(dn, block);
    try {
      return new Verified(this, dn, block, offset);
    } catch (IOException e) {
      failedRead(block, e);
      throw e;
    }
  }

  /**
   * The block's bytes from an offset, each checksum chunk verified before it is returned; read
   * into arrays or, with no copy of its own between, into a caller's (direct) buffer.
   */
  private static final class Verified extends InputStream implements ByteBufferReadable {
    private final DataNodeBlockSource source;
    private final DataNode dn;
    private final ExtendedBlock block;
    private final InputStream data;
    private final DataInputStream meta;
    private final DataChecksum sum;
    private final long length;
    private final ByteBuffer buf;
    private final ByteBuffer sums;
    private long bufStart; // block offset of buf's first byte
    private long skip;     // bytes of the first span before the asked offset
    private volatile boolean closed;

    Verified(DataNodeBlockSource source, DataNode dn, ExtendedBlock block, long offset)
        throws IOException {
      this.source = source;
      this.dn = dn;
      FsDatasetSpi<?> ds = dn.getFSDataset();
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
      source.taps.streamOpened(block.getBlockId());
    }

    /** Reads and verifies the next span; false at the end of the block. */
    private boolean fill() throws IOException {
      if (closed) {
        throw new IOException("read of " + block + " after its stream was closed");
      }
      try {
        return fillSpan();
      } catch (IOException e) {
        if (!closed) { // a read cut short by our own close (a stream ended) is no disk error
          source.failedRead(block, e);
        }
        throw e;
      }
    }

    private boolean fillSpan() throws IOException {
      SurvivorFaultInjector.get().beforeRead(dn, block, bufStart + buf.limit());
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
      // verified: every proof of this range takes the bytes from here (ReadTaps)
      ByteBuffer span = buf.duplicate();
      span.position(0).limit(n);
      source.taps.offer(block.getBlockId(), bufStart, span);
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
    public synchronized void close() {
      if (closed) {
        return;
      }
      closed = true;
      IOUtils.closeStream(data);
      IOUtils.closeStream(meta);
      source.taps.streamClosed(block.getBlockId());
    }
  }
}
