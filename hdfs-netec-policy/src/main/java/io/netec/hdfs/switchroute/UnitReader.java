package io.netec.hdfs.switchroute;

import io.netec.hdfs.codec.GaloisField;
import io.netec.hdfs.route.BlockSource;
import io.netec.hdfs.switchroute.wire.NetecPacketCodec;
import io.netec.hdfs.switchroute.wire.StreamRequest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;
import org.apache.hadoop.fs.ByteBufferReadable;
import org.apache.hadoop.io.IOUtils;

/**
 * One survivor stream's unit: its request and the block read for it, stripe by stripe, into
 * DATA frames (pre-multiplied by the request's coefficient when the task asks). The same for a
 * TCP stream and a datagram stream; it runs on a reader executor, never on an I/O loop (block
 * reads may block). {@link #close} gives back the agent's stream count and the DataNode's
 * transfer.
 */
final class UnitReader implements Closeable {
  final StreamRequest req;
  private final int task;
  private final int array;
  private final int sender;
  private final BlockSource source;
  private final LongAdder bytesSent;
  private final Runnable release;
  private InputStream in;
  private long inOffset;
  /** A source that is only an InputStream is read here, then copied into the frame. */
  private byte[] scratch;
  private boolean closed;
  /** One of the DataNode's transfers, held while the stream is open. */
  Closeable transfer;

  /**
   * @param bytesSent counts the payload bytes framed
   * @param release runs once on close: the stream no longer counts against the agent
   */
  UnitReader(StreamRequest req, int task, int array, int sender, BlockSource source,
      LongAdder bytesSent, Runnable release) {
    this.req = req;
    this.task = task;
    this.array = array;
    this.sender = sender;
    this.source = source;
    this.bytesSent = bytesSent;
    this.release = release;
  }

  /**
   * The frames {@code window} allows now, taken from it, until they fill {@code room} bytes
   * (a channel's room before it is unwritable; the one frame that crosses it is kept). On a
   * failure the frames built are released and the failure thrown.
   */
  List<ByteBuf> frames(SendWindow window, ByteBufAllocator alloc, long room)
      throws IOException {
    List<ByteBuf> batch = new ArrayList<>();
    try {
      while (window.canSend() && room > 0) {
        ByteBuf frame = data(window.take(), alloc);
        room -= frame.readableBytes();
        batch.add(frame);
      }
    } catch (IOException | RuntimeException e) {
      batch.forEach(ByteBuf::release);
      throw e;
    }
    return batch;
  }

  /**
   * Stripe {@code seq}'s DATA frame, built here (off the event loop) in a pooled direct buffer:
   * a source that reads into buffers ({@link ByteBufferReadable}, as the DataNode's does)
   * reads straight into the frame; any other is read through one scratch array.
   */
  ByteBuf data(long seq, ByteBufAllocator alloc) throws IOException {
    int len = req.payloadLength(seq);
    long offset = req.offset() + seq * req.payload();
    int have = (int) Math.max(0, Math.min(req.streamBytes(seq), req.unitLength() - offset));
    bytesSent.add(len);
    return NetecPacketCodec.dataFrame(task, array, sender, (int) (seq % req.slots()), seq, len,
        payload -> read(payload, offset, have), alloc);
  }

  /**
   * The unit's bytes [offset, offset + have) into the payload, multiplied by the request's
   * coefficient in a pre-multiplied task, zeros after them.
   */
  private void read(ByteBuffer payload, long offset, int have) throws IOException {
    if (have > 0) {
      int start = payload.position();
      if (in == null || inOffset != offset) {
        IOUtils.closeStream(in);
        in = source.open(req.block(), offset);
        inOffset = offset;
      }
      int end = payload.limit();
      payload.limit(payload.position() + have);
      if (in instanceof ByteBufferReadable) {
        while (payload.hasRemaining()) {
          if (((ByteBufferReadable) in).read(payload) < 0) {
            throw new EOFException(req.block() + " ends before byte " + (offset + have));
          }
        }
      } else {
        if (scratch == null) {
          scratch = new byte[req.payload()];
        }
        IOUtils.readFully(in, scratch, 0, have);
        payload.put(scratch, 0, have);
      }
      if (req.coefficient() != 1) {
        GaloisField.multiply(req.coefficient(), payload.duplicate().position(start));
      }
      payload.limit(end);
      inOffset += have;
    }
    while (payload.hasRemaining()) {
      payload.put((byte) 0); // past the unit's or the stream's end (the last stripe only)
    }
  }

  @Override
  public void close() {
    IOUtils.closeStream(in);
    in = null;
    if (!closed) {
      closed = true;
      release.run();
      IOUtils.closeStream(transfer);
    }
  }
}
