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
  /** Made at the setup, before the bind ({@link SwitchSession#startEarly}). */
  private final boolean early;

  SurvivorStreamHandler(SwitchSession live, int sender, boolean early,
      SwitchCounters counters) {
    this.live = live;
    this.sender = sender;
    this.early = early;
    this.counters = counters;
  }

  @Override
  public void channelActive(ChannelHandlerContext ctx) throws Exception {
    ctx.writeAndFlush(live.survivorHello(sender));
  }

  @Override
  protected void channelRead0(ChannelHandlerContext ctx, NetecPacket p) {
    if (live.done() || setAside()) {
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
    if (setAside()) {
      live.spoilEarly();
    } else if (!live.done()) {
      live.fail("survivor " + sender + " closed its connection");
    }
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    if (setAside()) {
      live.spoilEarly(); // before the bind the task connects again; after, it is done with it
    } else {
      live.fail("survivor " + sender + ": " + cause);
    }
    ctx.close();
  }

  /**
   * Whether this connection's events are not its task's: an early one before the bind (a
   * failure then only makes the bind connect again), or one the bind set aside.
   */
  private boolean setAside() {
    return early && (!live.bound() || live.earlyDiscarded());
  }
}
