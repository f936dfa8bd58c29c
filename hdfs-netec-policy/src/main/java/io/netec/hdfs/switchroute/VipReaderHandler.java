package io.netec.hdfs.switchroute;

import io.netec.hdfs.route.LogLimiter;
import io.netec.hdfs.switchroute.wire.NetecPacket;
import io.netec.hdfs.switchroute.wire.ParentLink;
import io.netec.hdfs.switchroute.wire.ProtocolException;
import io.netec.hdfs.switchroute.wire.StreamRequest;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import java.util.concurrent.TimeUnit;

/** The reader's connection to the VIP: HELLO binds it to its task, then ACKs flow. */
final class VipReaderHandler extends SimpleChannelInboundHandler<NetecPacket> {
  /** A VIP connection must say HELLO within this long, or it is closed. */
  static final int HELLO_TIMEOUT_MS = 10_000;
  private final SoftwareSwitch sw;
  private SwitchSession live;

  VipReaderHandler(SoftwareSwitch sw) {
    this.sw = sw;
  }

  @Override
  public void channelActive(ChannelHandlerContext ctx) {
    // A connection that never says HELLO (or sends a frame that never completes) is closed.
    ctx.executor().schedule(() -> {
      if (live == null) {
        ctx.close();
      }
    }, HELLO_TIMEOUT_MS, TimeUnit.MILLISECONDS);
    ctx.fireChannelActive();
  }

  @Override
  protected void channelRead0(ChannelHandlerContext ctx, NetecPacket p) {
    if (live == null) {
      SwitchSession l = p.type() == NetecPacket.HELLO && p.sender() == NetecPacket.READER
          ? sw.table.lookup(p.task(), p.slotArray()) : null;
      // Only the reader that set the task up knows its secret: a forged HELLO claims nothing
      // and leaves the task to its reader.
      if (l != null && !l.secretMatches(StreamRequest.readerSecret(p))) {
        l = null;
      }
      ParentLink parent = null;
      if (l != null) {
        try {
          parent = ParentLink.fromHello(p);
          String differs = parent == null ? null : parent.mismatch(l.task.setup());
          if (differs != null) {
            throw new ProtocolException("parent: " + differs);
          }
        } catch (ProtocolException e) {
          sw.logs.info("vip-bad-parent", "Closing VIP connection {}: {}", ctx.channel(),
              LogLimiter.oneLine(e.getMessage()));
          l = null;
        }
      }
      if (l == null || !sw.table.claim(l)) {
        sw.logs.info("vip-no-task", "Closing VIP connection {}: no such task for {}",
            ctx.channel(), p);
        ctx.close();
        return;
      }
      live = l;
      sw.dataCaps.exempt(ctx.channel()); // a claim: bounded by the tasks, not the peer's cap
      l.bind(ctx.channel(), parent);
      return;
    }
    if (live.done()) {
      return;
    }
    NetecPacket fromReader = live.fromReader(p);
    if (fromReader == null) {
      sw.counters.dropped.increment();
      return;
    }
    NetecPacket ack = live.readerAck(fromReader);
    if (ack == null) {
      return;
    }
    if (live.task.finished()) {
      for (int i = 0; i < live.survivors.length; i++) {
        Channel c = live.survivors[i];
        // FIN to survivors: an agent's connection closed with it, a child's half-closed (it
        // closes on the FIN, see SwitchSession#complete)
        c.writeAndFlush(ack).addListener(live.isChild(i)
            ? f -> ((io.netty.channel.socket.SocketChannel) c).shutdownOutput()
            : ChannelFutureListener.CLOSE);
      }
      live.complete();
      return;
    }
    NetecPacket toAgents = ack;
    if (ack.hasFlag(NetecPacket.FLAG_RETX) && live.parent == null && !live.task.takeResend()) {
      // nothing was lost here that a resend could bring (SwitchTask#takeResend): it would
      // repeat what the task counted. A child switch still gets the RETX: it may have lost a
      // packet of its own survivors. (A task that is a partial sum passes its parent's RETX on
      // whole: the parent may have lost a partial sum, which only a resend below makes again.)
      toAgents = ack.withoutFlag(NetecPacket.FLAG_RETX);
      if (live.hasAgents()) {
        sw.counters.retransmitRequestsHeld.increment();
      }
    }
    for (int i = 0; i < live.survivors.length; i++) {
      Channel c = live.survivors[i];
      if (c.isActive()) {
        c.writeAndFlush(live.isChild(i) ? ack : toAgents);
      }
    }
  }

  @Override
  public void channelWritabilityChanged(ChannelHandlerContext ctx) {
    if (live != null && ctx.channel().isWritable()) {
      live.setSurvivorReads(true);
    }
    ctx.fireChannelWritabilityChanged();
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    if (live != null && !live.done()) {
      live.fail("reader closed its connection");
    }
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    if (live != null) {
      live.fail("reader connection: " + cause);
    }
    ctx.close();
  }
}

