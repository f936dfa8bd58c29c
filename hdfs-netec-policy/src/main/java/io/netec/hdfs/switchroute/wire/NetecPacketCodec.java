package io.netec.hdfs.switchroute.wire;

import io.netty.buffer.ByteBuf;
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
   * Bytes to packets: each frame copied once out of the cumulation, then checked in place; the
   * packet's payload is a view of that copy.
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
      while (in.readableBytes() >= NetecPacket.HEADER_BYTES) {
        int len = NetecPacket.HEADER_BYTES + in.getUnsignedShort(in.readerIndex() + 14);
        if (in.readableBytes() < len) {
          return;
        }
        byte[] frame = new byte[len];
        in.readBytes(frame);
        try {
          out.add(NetecPacket.decodeFrame(frame, 0, len));
        } catch (ProtocolException e) {
          throw new CorruptedFrameException("malformed NetEC packet: " + e.getMessage());
        }
      }
    }
  }

  /**
   * Packets to bytes, straight into the channel's (direct) buffer: the header, the payload in
   * one copy, then the checksum over the buffer itself.
   */
  public static final class Encoder extends MessageToByteEncoder<NetecPacket> {
    @Override
    protected void encode(ChannelHandlerContext ctx, NetecPacket p, ByteBuf out) {
      int start = out.writerIndex();
      int len = p.encodedLength();
      out.ensureWritable(len);
      out.writeByte(NetecPacket.VERSION).writeByte(p.type()).writeByte(p.task())
          .writeByte(p.slotArray()).writeByte(p.sender()).writeByte(p.flags())
          .writeShort(p.slot()).writeInt((int) p.seq()).writeShort(p.window())
          .writeShort(p.payloadLength()).writeShort(0).writeShort(0)
          .writeBytes(p.payloadArray(), p.payloadOffset(), p.payloadLength());
      int sum = InternetChecksum.of(out.nioBuffer(start, len), 0, len);
      out.setShort(start + 16, sum == 0 ? 0xffff : sum);
    }
  }
}
