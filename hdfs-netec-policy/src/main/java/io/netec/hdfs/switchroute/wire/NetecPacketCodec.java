package io.netec.hdfs.switchroute.wire;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.codec.CorruptedFrameException;
import io.netty.handler.codec.MessageToByteEncoder;
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
   * copied once out of the cumulation, then checked in place; the packet's payload is a view of
   * that copy.
   */
  public static final class Decoder extends ByteToMessageDecoder {
    /** Non-null: every frame lands here (see {@link #reusingOneBuffer}). */
    private final byte[] shared;

    /** Each packet has a payload of its own: handlers may keep packets or pass them on. */
    public Decoder() {
      this(null);
    }

    private Decoder(byte[] shared) {
      this.shared = shared;
      // Frames straddle socket reads; a composite cumulation appends the next read without
      // copying it (the merging default copies every read that follows a partial frame).
      setCumulator(COMPOSITE_CUMULATOR);
    }

    /**
     * A decoder that reads every frame into one buffer of its own: no allocation per packet,
     * for a pipeline whose handlers are done with each packet when their channelRead returns
     * (on the channel's event loop) and keep nothing of it without copying.
     */
    public static Decoder reusingOneBuffer() {
      return new Decoder(new byte[NetecPacket.HEADER_BYTES + 0xffff]);
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out)
        throws CorruptedFrameException {
      if (in.readableBytes() < NetecPacket.HEADER_BYTES) {
        return;
      }
      int len = NetecPacket.HEADER_BYTES + in.getUnsignedShort(in.readerIndex() + 14);
      if (in.readableBytes() < len) {
        return;
      }
      byte[] frame = shared != null ? shared : new byte[len];
      in.readBytes(frame, 0, len);
      try {
        out.add(NetecPacket.decodeFrame(frame, 0, len));
      } catch (ProtocolException e) {
        throw new CorruptedFrameException("malformed NetEC packet: " + e.getMessage());
      }
    }
  }

  /**
   * Packets to bytes, straight into the channel's (direct) buffer: the header with its
   * checksum (computed over the payload on the heap, where it is several times faster than
   * over direct memory), then the payload in one copy. Frames already built ({@link ByteBuf},
   * see {@link #frame}) pass through.
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

  private static void writeFrame(NetecPacket p, ByteBuf out) {
    out.ensureWritable(p.encodedLength());
    out.writeByte(NetecPacket.VERSION).writeByte(p.type()).writeByte(p.task())
        .writeByte(p.slotArray()).writeByte(p.sender()).writeByte(p.flags())
        .writeShort(p.slot()).writeInt((int) p.seq()).writeShort(p.window())
        .writeShort(p.payloadLength()).writeShort(p.checksum()).writeShort(0)
        .writeBytes(p.payloadArray(), p.payloadOffset(), p.payloadLength());
  }
}
