package io.netec.hdfs.switchroute.wire;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.codec.CorruptedFrameException;
import io.netty.handler.codec.MessageToByteEncoder;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;

/**
 * Netty framing of NetEC packets on a TCP stream: back to back, delimited by the header's
 * payload length. A packet that fails its checks cannot be trusted to delimit the next one, so
 * the decoder fails the connection (CorruptedFrameException) rather than guess.
 */
public final class NetecPacketCodec {
  private NetecPacketCodec() {
  }

  /**
   * Bytes to packets, one per call (Netty passes each on before decoding the next): each frame
   * copied out of the cumulation into an array of its own, then checked in place; the packet's
   * payload is a view of that copy, so handlers may keep packets or pass them on.
   */
  public static final class Decoder extends ByteToMessageDecoder {
    public Decoder() {
      // Frames straddle socket reads; a composite cumulation appends the next read without
      // copying it (the merging default copies every read that follows a partial frame).
      setCumulator(COMPOSITE_CUMULATOR);
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out)
        throws CorruptedFrameException {
      int len = frameLength(in);
      if (len < 0 || in.readableBytes() < len) {
        return;
      }
      byte[] frame = new byte[len];
      in.readBytes(frame, 0, len);
      try {
        out.add(NetecPacket.decodeFrame(frame, 0, len));
      } catch (ProtocolException e) {
        throw new CorruptedFrameException("malformed NetEC packet: " + e.getMessage());
      }
    }
  }

  /**
   * Bytes to packets where they lie, for a pipeline whose handlers are done with each packet
   * when their channelRead returns (on the channel's event loop) and keep nothing of it without
   * copying, as the switch's survivor streams are: each packet views its frame in the buffer
   * the transport read into (no staging copy; checked and aggregated there) and is passed on
   * at once, while that buffer is alive. Only a frame split between two reads is put together,
   * in one direct buffer of this handler's own. After a malformed frame nothing more is read
   * from the connection (it cannot be trusted to delimit the next one).
   */
  public static final class InPlaceDecoder extends ChannelInboundHandlerAdapter {
    /** A frame split between reads, put together here (allocated at the first split). */
    private ByteBuf carry;
    private boolean broken;

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
      if (!(msg instanceof ByteBuf)) {
        ctx.fireChannelRead(msg);
        return;
      }
      ByteBuf in = (ByteBuf) msg;
      try {
        if (broken) {
          return;
        }
        if (carry != null && carry.isReadable()) {
          if (!fillCarry(in)) {
            return; // the whole read went into the split frame, which is still short
          }
          pass(ctx, carry, frameLength(carry));
          carry.clear();
        }
        int len;
        while ((len = frameLength(in)) >= 0 && in.readableBytes() >= len) {
          pass(ctx, in, len);
          in.skipBytes(len);
        }
        if (in.isReadable()) {
          if (carry == null) {
            carry = ctx.alloc().directBuffer(NetecPacket.HEADER_BYTES + 0xffff);
          }
          carry.writeBytes(in);
        }
      } finally {
        in.release();
      }
    }

    /** Moves bytes of {@code in} into the split frame; true once it is whole. */
    private boolean fillCarry(ByteBuf in) {
      if (carry.readableBytes() < NetecPacket.HEADER_BYTES) {
        carry.writeBytes(in, Math.min(in.readableBytes(),
            NetecPacket.HEADER_BYTES - carry.readableBytes()));
        if (carry.readableBytes() < NetecPacket.HEADER_BYTES) {
          return false;
        }
      }
      int need = frameLength(carry) - carry.readableBytes();
      int n = Math.min(need, in.readableBytes());
      carry.writeBytes(in, n);
      return n == need;
    }

    /** The frame at the buffer's reader index as a packet viewing it, to the next handler. */
    private void pass(ChannelHandlerContext ctx, ByteBuf buf, int len)
        throws CorruptedFrameException {
      ByteBuffer frame = buf.nioBuffer(buf.readerIndex(), len).order(ByteOrder.BIG_ENDIAN);
      NetecPacket p;
      try {
        p = NetecPacket.decodeFrame(frame);
      } catch (ProtocolException e) {
        broken = true;
        throw new CorruptedFrameException("malformed NetEC packet: " + e.getMessage());
      }
      ctx.fireChannelRead(p);
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
      if (carry != null) {
        carry.release();
        carry = null;
      }
    }
  }

  /** The length of the frame at the buffer's reader index, or -1 before its header is in. */
  private static int frameLength(ByteBuf in) {
    return in.readableBytes() < NetecPacket.HEADER_BYTES ? -1
        : NetecPacket.HEADER_BYTES + in.getUnsignedShort(in.readerIndex() + 14);
  }

  /**
   * Packets to bytes, straight into the channel's (direct) buffer: the header with its
   * checksum (computed over the payload where it lies, before any copy of it), then the payload
   * in one copy. Frames already built ({@link ByteBuf}, see {@link #frame}) pass through.
   */
  public static final class Encoder extends MessageToByteEncoder<NetecPacket> {
    @Override
    protected void encode(ChannelHandlerContext ctx, NetecPacket p, ByteBuf out) {
      writeFrame(p, out);
    }
  }

  /**
   * The packet as one frame in a (pooled, direct) buffer of {@code alloc}: for a sender that
   * builds frames off the event loop and reuses the payload's array once this returns.
   */
  public static ByteBuf frame(NetecPacket p, ByteBufAllocator alloc) {
    ByteBuf out = alloc.directBuffer(p.encodedLength());
    writeFrame(p, out);
    return out;
  }

  /** Puts exactly a payload's bytes at a buffer's position (up to its limit). */
  public interface PayloadWriter {
    void write(ByteBuffer payload) throws IOException;
  }

  /**
   * A survivor's DATA frame in a (pooled, direct) buffer of {@code alloc}, its payload written
   * by {@code payload} straight into the frame (no staging array, no copy into the frame) and
   * checksummed where it lies; byte for byte what {@link #frame} makes of the same packet.
   */
  public static ByteBuf dataFrame(int task, int slotArray, int sender, int slot, long seq,
      int len, PayloadWriter payload, ByteBufAllocator alloc) throws IOException {
    // the packet's fields checked as any packet's are (a header-only packet stands for them)
    NetecPacket header = new NetecPacket(NetecPacket.DATA, task, slotArray, sender, 0, slot, seq,
        0, NO_PAYLOAD);
    int frameLength = NetecPacket.HEADER_BYTES + len;
    if (len < 0 || len > NetecPacket.MAX_PAYLOAD) {
      throw new IllegalArgumentException("payload of " + len + " bytes");
    }
    ByteBuf out = alloc.directBuffer(frameLength);
    try {
      writeHeader(header, len, 0, out);
      ByteBuffer view = out.nioBuffer(NetecPacket.HEADER_BYTES, len);
      payload.write(view);
      if (view.hasRemaining()) {
        throw new IOException("payload writer left " + view.remaining() + " of " + len
            + " bytes unwritten");
      }
      out.writerIndex(frameLength);
      int sum = InternetChecksum.of(out.nioBuffer(0, frameLength), 0, frameLength);
      out.setShort(16, sum == 0 ? 0xffff : sum);
      return out;
    } catch (IOException | RuntimeException e) {
      out.release();
      throw e;
    }
  }

  private static final byte[] NO_PAYLOAD = new byte[0];

  private static void writeHeader(NetecPacket p, int payloadLength, int checksum, ByteBuf out) {
    out.writeByte(NetecPacket.VERSION).writeByte(p.type()).writeByte(p.task())
        .writeByte(p.slotArray()).writeByte(p.sender()).writeByte(p.flags())
        .writeShort(p.slot()).writeInt((int) p.seq()).writeShort(p.window())
        .writeShort(payloadLength).writeShort(checksum).writeShort(0);
  }

  private static void writeFrame(NetecPacket p, ByteBuf out) {
    out.ensureWritable(p.encodedLength());
    writeHeader(p, p.payloadLength(), p.checksum(), out);
    out.writeBytes(p.payloadBuffer());
  }
}
