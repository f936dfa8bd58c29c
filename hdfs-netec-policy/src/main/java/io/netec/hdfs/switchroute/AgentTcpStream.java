package io.netec.hdfs.switchroute;

import io.netec.hdfs.route.LogLimiter;
import io.netec.hdfs.switchroute.wire.NetecPacket;
import io.netec.hdfs.switchroute.wire.ProtocolException;
import io.netec.hdfs.switchroute.wire.StreamRequest;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.timeout.IdleStateEvent;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;

/**
 * A survivor agent's stream to one switch connection: the switch's HELLO is admitted (or
 * answered with an error HELLO), then its ACKs move the {@link SendWindow}, a RETX goes back,
 * a FIN closes. It runs on a reader executor (block reads may block); its frames go to the
 * I/O loop in batches, only as many as the channel can take (back-pressure).
 */
final class AgentTcpStream extends SimpleChannelInboundHandler<NetecPacket> {
  private final SurvivorAgent agent;
  private UnitReader unit;
  private SendWindow window;
  private int task;
  private int array;
  private int sender;

  AgentTcpStream(SurvivorAgent agent) {
    this.agent = agent;
  }

  @Override
  protected void channelRead0(ChannelHandlerContext ctx, NetecPacket p) throws Exception {
    if (window == null) {
      start(ctx, p);
    } else if (p.type() == NetecPacket.ACK) {
      if (p.hasFlag(NetecPacket.FLAG_FIN)) {
        ctx.close();
        return;
      }
      window.onAck(p.seq(), p.window(), p.hasFlag(NetecPacket.FLAG_RETX));
      pump(ctx);
    } else {
      throw new ProtocolException("unexpected " + p);
    }
  }

  private void start(ChannelHandlerContext ctx, NetecPacket hello) throws IOException {
    task = hello.task();
    array = hello.slotArray();
    sender = hello.sender();
    try {
      unit = agent.admit(hello);
    } catch (IOException e) {
      ctx.writeAndFlush(StreamRequest.errorHello(task, array, sender, e.getMessage()))
          .addListener(f -> ctx.close());
      return;
    }
    window = new SendWindow(unit.req.stripes(), unit.req.window());
    pump(ctx);
  }

  /**
   * Sends what the window allows and the channel can take. Frames are built here (a reader
   * thread: block reads may block) and handed to the event loop as one batch, so the loop
   * wakes once per batch, not once per frame.
   */
  private void pump(ChannelHandlerContext ctx) throws IOException {
    // not writable: no room, nothing built
    List<ByteBuf> batch = unit.frames(window, ctx.alloc(),
        ctx.channel().bytesBeforeUnwritable());
    if (!batch.isEmpty()) {
      try {
        ctx.channel().eventLoop().execute(() -> {
          for (ByteBuf f : batch) {
            ctx.write(f, ctx.voidPromise()); // a failed write releases f and closes (below)
          }
          ctx.flush();
        });
      } catch (RejectedExecutionException e) { // the agent is closing
        batch.forEach(ByteBuf::release);
      }
    }
  }

  @Override
  public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
    if (evt instanceof IdleStateEvent) {
      agent.idleClosed.increment();
      SurvivorAgent.LOG.warn("Stream of task {} sender {}: nothing from the switch for too "
          + "long, closing", task, sender);
      ctx.close();
      return;
    }
    super.userEventTriggered(ctx, evt);
  }

  @Override
  public void channelWritabilityChanged(ChannelHandlerContext ctx) throws Exception {
    if (window != null && ctx.channel().isWritable()) {
      pump(ctx);
    }
    ctx.fireChannelWritabilityChanged();
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    if (unit != null) {
      unit.close();
    }
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    agent.logs.warn("failed", "Stream of task {} sender {} failed: {}", task, sender,
        LogLimiter.oneLine(cause));
    ctx.close();
  }
}
