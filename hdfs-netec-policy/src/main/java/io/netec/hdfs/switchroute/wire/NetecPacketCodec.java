package io.netec.hdfs.switchroute.wire;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.codec.CorruptedFrameException;
import io.netty.handler.codec.MessageToByteEncoder;
import java.nio.ByteBuffer;
import java.util.List;

/**
 * Netty framing of NetEC packets on a TCP stream: back to back, delimited by the header's
 * payload length. A packet that fails its checks cannot be trusted to delimit the next one, so
 * the decoder fails the connection (CorruptedFrameException) rather than guess.
 */
public final class NetecPacketCodec {
  private NetecPacketCodec() {
  }

  /** Bytes to packets. */
  public static final class Decoder extends ByteToMessageDecoder {
    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out)
        throws CorruptedFrameException {
      while (in.readableBytes() >= NetecPacket.HEADER_BYTES) {
        int len = NetecPacket.HEADER_BYTES + in.getUnsignedShort(in.readerIndex() + 14);
        if (in.readableBytes() < len) {
          return;
        }
        ByteBuffer frame = ByteBuffer.allocate(len);
        in.readBytes(frame);
        frame.flip();
        try {
          out.add(NetecPacket.decode(frame));
        } catch (ProtocolException e) {
          throw new CorruptedFrameException("malformed NetEC packet: " + e.getMessage());
        }
      }
    }
  }

  /** Packets to bytes. */
  public static final class Encoder extends MessageToByteEncoder<NetecPacket> {
    @Override
    protected void encode(ChannelHandlerContext ctx, NetecPacket p, ByteBuf out) {
      ByteBuffer b = ByteBuffer.allocate(p.encodedLength());
      p.encode(b);
      b.flip();
      out.writeBytes(b);
    }
  }
}
