package io.netec.hdfs.switchroute;

import io.netec.hdfs.switchroute.wire.NetecPacket;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import java.nio.charset.StandardCharsets;

/** One survivor's stream: DATA is aggregated, completed stripes go to the reader. */
final class SurvivorStreamHandler extends SimpleChannelInboundHandler<NetecPacket> {
  private final SwitchSession live;
  private final int sender;
  private final SwitchCounters counters;

  SurvivorStreamHandler(SwitchSession live, int sender, SwitchCounters counters) {
    this.live = live;
    this.sender = sender;
    this.counters = counters;
  }

  @Override
  public void channelActive(ChannelHandlerContext ctx) throws Exception {
    ctx.writeAndFlush(live.survivorHello(sender));
  }

  @Override
  protected void channelRead0(ChannelHandlerContext ctx, NetecPacket p) {
    if (live.done()) {
      return;
    }
    if (p.type() == NetecPacket.HELLO) {
      live.fail("survivor " + sender + " refused: "
          + new String(p.payload(), StandardCharsets.UTF_8));
      return;
    }
    counters.bytesIn.add(p.payloadLength());
    if (p.type() != NetecPacket.DATA && live.isChild(sender)) {
      // a child switch that sends its RESULTs as they are does not speak partial sums (a
      // switch from before them ignored the claim's "parent"): fail now, not at the timeout
      live.fail("child switch of survivor " + sender + " sent " + p
          + ", not its partial sum as DATA: does it speak partial sums (docs/protocol.md)?");
      return;
    }
    if (p.type() != NetecPacket.DATA || p.sender() != sender) {
      counters.dropped.increment();
      counters.lost.increment();
      live.task.lost(); // a RETX is to bring it again
      return;
    }
    live.data(p, live::toReader);
  }

  @Override
  public void channelReadComplete(ChannelHandlerContext ctx) {
    if (live.reader != null) {
      live.reader.flush();
      if (!live.reader.isWritable()) {
        counters.stalls.increment();
        live.setSurvivorReads(false);
      }
    }
    ctx.fireChannelReadComplete();
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    if (!live.done()) {
      live.fail("survivor " + sender + " closed its connection");
    }
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    live.fail("survivor " + sender + ": " + cause);
    ctx.close();
  }
}
