package io.netec.hdfs.route;

import java.io.BufferedOutputStream;
import java.io.Closeable;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.util.EnumSet;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.StorageType;
import org.apache.hadoop.hdfs.DFSUtilClient;
import org.apache.hadoop.hdfs.protocol.DatanodeInfo;
import org.apache.hadoop.hdfs.protocol.DatanodeInfo.DatanodeInfoBuilder;
import org.apache.hadoop.hdfs.protocol.ExtendedBlock;
import org.apache.hadoop.hdfs.protocol.datatransfer.BlockConstructionStage;
import org.apache.hadoop.hdfs.protocol.datatransfer.IOStreamPair;
import org.apache.hadoop.hdfs.protocol.datatransfer.PacketHeader;
import org.apache.hadoop.hdfs.protocol.datatransfer.Sender;
import org.apache.hadoop.hdfs.security.token.block.BlockTokenIdentifier;
import org.apache.hadoop.hdfs.server.datanode.CachingStrategy;
import org.apache.hadoop.hdfs.server.datanode.DataNode;
import org.apache.hadoop.io.IOUtils;
import org.apache.hadoop.net.NetUtils;
import org.apache.hadoop.security.token.Token;
import org.apache.hadoop.util.DataChecksum;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Streams one rebuilt internal block to its target DataNode the way Hadoop's own EC
 * reconstruction does: a DataNode-initiated {@code writeBlock} (empty client name, stage
 * PIPELINE_SETUP_CREATE, one target, the group's generation stamp, a WRITE token), data
 * packets with checksums, then an empty last packet on which the target finalizes the replica.
 *
 * <p>The block carries the checksum type and bytes per checksum it is given: the survivors'
 * (what Hadoop's reconstruction takes from its sources), so every replica of the group agrees
 * and the file's checksum stays the same. Each packet's bytes go to a {@link Tap} (the proof
 * of the attempt) right before they are checksummed and sent, so what is proven is exactly
 * what the target stores.
 *
 * <p>Guarantees: {@link #finish()} refuses to finalize a block whose length differs from the
 * expected internal block length; {@link #abort()} (also run on any failure, and by close()
 * before finish()) ends the connection before the last packet and returns once the target has
 * discarded its temporary replica, so a target never keeps a partial block and the next route
 * can write the same block id at once.
 */
public final class InternalBlockWriter implements Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(InternalBlockWriter.class);
  /** Packet size Hadoop's writers use. */
  private static final int PACKET_SIZE = 64 * 1024;
  /** Longest wait in {@link #abort()} for the target to drop the partial replica. */
  static final int ABORT_WAIT_MS = 10_000;

  private final ExtendedBlock block;
  private final DatanodeInfo target;
  private final long expectedLength;
  private final DataChecksum checksum;
  private final int chunksPerPacket;
  private final byte[] data;
  private final byte[] sums;
  private final Socket socket;
  private final DataOutputStream out;
  private final DataInputStream in;
  private final Tap tap;
  private int buffered;
  private long offsetInBlock;
  private long seqno;
  private boolean done;
  private boolean finished;
  private boolean aborted;

  private InternalBlockWriter(ExtendedBlock block, DatanodeInfo target, long expectedLength,
      DataChecksum checksum, Socket socket, DataOutputStream out, DataInputStream in, Tap tap) {
    this.tap = tap;
    this.block = block;
    this.target = target;
    this.expectedLength = expectedLength;
    this.checksum = checksum;
    int chunk = checksum.getBytesPerChecksum() + checksum.getChecksumSize();
    this.chunksPerPacket = Math.max((PACKET_SIZE - PacketHeader.PKT_MAX_HEADER_LEN) / chunk, 1);
    this.data = new byte[chunksPerPacket * checksum.getBytesPerChecksum()];
    this.sums = new byte[chunksPerPacket * checksum.getChecksumSize()];
    this.socket = socket;
    this.out = out;
    this.in = in;
  }

  /** What a writer does with a packet's bytes just before it checksums and sends them. */
  public interface Tap {
    /** Bytes [position, position + remaining) of the block; the buffer is not moved. */
    void sent(long position, ByteBuffer data);
  }

  /**
   * Opens a writer for rebuilt block {@code task.erasedIndex(slot)} to {@code task.target(slot)},
   * checksummed as {@code checksum} says (the survivors' type: the group's replicas must agree),
   * every packet's bytes shown to {@code tap} first.
   */
  public static InternalBlockWriter open(DataNode dn, ReconstructionTask task, int slot,
      DataChecksum checksum, Tap tap) throws IOException {
    int index = task.erasedIndex(slot);
    return open(dn, task.internalBlock(index), task.internalBlockLength(index), task.target(slot),
        task.targetStorageType(slot), task.targetStorageId(slot), checksum, tap);
  }

  public static InternalBlockWriter open(DataNode dn, ExtendedBlock block, long length,
      DatanodeInfo target, StorageType storageType, String storageId, DataChecksum checksum,
      Tap tap) throws IOException {
    Configuration conf = dn.getConf();
    // a fresh object: DataChecksum holds its running state
    checksum = DataChecksum.newDataChecksum(checksum.getChecksumType(),
        checksum.getBytesPerChecksum());
    Socket socket = null;
    DataOutputStream out = null;
    DataInputStream in = null;
    boolean ok = false;
    try {
      InetSocketAddress addr = NetUtils.createSocketAddr(
          target.getXferAddr(dn.getDnConf().getConnectToDnViaHostname()));
      socket = dn.newSocket();
      NetUtils.connect(socket, addr, dn.getDnConf().getSocketTimeout());
      socket.setTcpNoDelay(dn.getDnConf().getDataTransferServerTcpNoDelay());
      socket.setSoTimeout(dn.getDnConf().getSocketTimeout());
      Token<BlockTokenIdentifier> token = dn.getBlockAccessToken(block,
          EnumSet.of(BlockTokenIdentifier.AccessMode.WRITE), new StorageType[] {storageType},
          new String[] {storageId});
      OutputStream rawOut = NetUtils.getOutputStream(socket,
          dn.getDnConf().getSocketWriteTimeout());
      InputStream rawIn = NetUtils.getInputStream(socket);
      IOStreamPair sasl = dn.getSaslClient().socketSend(socket, rawOut, rawIn,
          dn.getDataEncryptionKeyFactoryForBlock(block), token, target);
      out = new DataOutputStream(new BufferedOutputStream(sasl.out,
          DFSUtilClient.getSmallBufferSize(conf)));
      in = new DataInputStream(sasl.in);
      DatanodeInfo source = new DatanodeInfoBuilder().setNodeID(dn.getDatanodeId()).build();
      new Sender(out).writeBlock(block, storageType, token, "", new DatanodeInfo[] {target},
          new StorageType[] {storageType}, source, BlockConstructionStage.PIPELINE_SETUP_CREATE,
          0, 0, 0, 0, checksum, CachingStrategy.newDefaultStrategy(), false, false, null,
          storageId, new String[] {storageId});
      ok = true;
      return new InternalBlockWriter(block, target, length, checksum, socket, out, in, tap);
    } finally {
      if (!ok) {
        IOUtils.closeStream(out);
        IOUtils.closeStream(in);
        IOUtils.closeSocket(socket);
      }
    }
  }

  public ExtendedBlock block() {
    return block;
  }

  /** Bytes accepted so far. */
  public long written() {
    return offsetInBlock + buffered;
  }

  public void write(byte[] b, int off, int len) throws IOException {
    checkOpen(len);
    while (len > 0) {
      int n = Math.min(len, data.length - buffered);
      System.arraycopy(b, off, data, buffered, n);
      buffered += n;
      off += n;
      len -= n;
      if (buffered == data.length) {
        sendPacket(false);
      }
    }
  }

  /** Writes the buffer's remaining bytes; its position moves to its limit. */
  public void write(ByteBuffer src) throws IOException {
    checkOpen(src.remaining());
    while (src.hasRemaining()) {
      int n = Math.min(src.remaining(), data.length - buffered);
      src.get(data, buffered, n);
      buffered += n;
      if (buffered == data.length) {
        sendPacket(false);
      }
    }
  }

  private void checkOpen(int len) throws IOException {
    if (done) {
      throw new IOException("writer for " + block + " is closed");
    }
    if (written() + len > expectedLength) {
      abort();
      throw new IOException("rebuilt " + block + " would exceed its length " + expectedLength);
    }
  }

  /**
   * Sends the bytes held back in a partial packet (so the tap has seen every byte) and checks
   * the block is whole; nothing is final until {@link #finish()}.
   */
  public void flushData() throws IOException {
    if (done) {
      throw new IOException("writer for " + block + " is closed");
    }
    if (written() != expectedLength) {
      abort();
      throw new IOException("rebuilt " + block + " has " + written() + " bytes, expected "
          + expectedLength + "; not finalized on " + target);
    }
    if (buffered > 0) {
      sendPacket(false);
    }
  }

  /** Sends the last packet; the target then finalizes the replica and reports it. */
  public void finish() throws IOException {
    flushData();
    try {
      sendPacket(true);
      out.flush();
    } catch (IOException e) {
      abort();
      throw e;
    }
    done = true;
    finished = true;
    close();
  }

  private void sendPacket(boolean last) throws IOException {
    int len = last ? 0 : buffered;
    int sumLen = checksum.getChecksumSize() * ((len + checksum.getBytesPerChecksum() - 1)
        / checksum.getBytesPerChecksum());
    if (len > 0) {
      if (tap != null) {
        tap.sent(offsetInBlock, ByteBuffer.wrap(data, 0, len));
      }
      checksum.calculateChunkedSums(data, 0, len, sums, 0);
    }
    PacketHeader header = new PacketHeader(4 + sumLen + len, offsetInBlock, seqno++, last, len,
        false);
    try {
      header.write(out);
      out.write(sums, 0, sumLen);
      out.write(data, 0, len);
    } catch (IOException e) {
      abort();
      throw new IOException("sending " + block + " to " + target + " failed at offset "
          + offsetInBlock, e);
    }
    offsetInBlock += len;
    buffered = 0;
  }

  /**
   * Drops the block: ends our side of the connection before the last packet, then waits (at
   * most {@value #ABORT_WAIT_MS} ms) for the target to close its side. The target removes the
   * partial replica before it closes, so when abort() returns the next route can write the
   * same block id; without the wait it would find the replica still there and refuse
   * (ReplicaAlreadyExistsException, same generation stamp).
   */
  public void abort() {
    if (aborted) {
      return;
    }
    aborted = true;
    done = true;
    try {
      // FIN after the bytes already sent; what is still buffered in `out` is never sent.
      socket.shutdownOutput();
      socket.setSoTimeout(ABORT_WAIT_MS);
      byte[] drain = new byte[512];
      while (in.read(drain) >= 0) {
        // a DataNode-initiated write gets no replies; read until the target closes
      }
    } catch (IOException e) {
      LOG.debug("Abort of {} to {}: {}", block, target, e.toString());
    } finally {
      IOUtils.closeSocket(socket);
      IOUtils.closeStream(out);
      IOUtils.closeStream(in);
    }
  }

  /** After {@link #finish()} releases the connection; before it, aborts the block. */
  @Override
  public void close() {
    if (!finished) {
      abort();
      return;
    }
    IOUtils.closeStream(out);
    IOUtils.closeStream(in);
    IOUtils.closeSocket(socket);
  }
}
