package io.netec.hdfs.switchroute;

import io.netec.hdfs.route.LogLimiter;
import io.netec.hdfs.switchroute.wire.NetecPacket;
import io.netec.hdfs.switchroute.wire.ProtocolException;
import io.netec.hdfs.switchroute.wire.StreamRequest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.socket.DatagramPacket;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.EventExecutorGroup;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * Datagram mode: every stream of every switch on one UDP channel, one NetEC packet per
 * datagram. A switch's HELLO (repeated until DATA comes) starts a stream, sent to the
 * HELLO's source; its ACKs move the window, go back on RETX, end it on FIN; a stream that
 * hears nothing for the idle timeout ends. Nothing is reliable here but the protocol: a lost
 * DATA packet is recovered by the reader's RETX. Each stream's work runs on one reader
 * executor (block reads may block), its sends on the I/O loop.
 */
final class AgentDatagramStreams extends SimpleChannelInboundHandler<DatagramPacket> {
  private final SurvivorAgent agent;
  private final EventExecutorGroup readers;
  private final int idleTimeoutMs;
  /** Streams by switch address, task, slot array and sender (on the I/O loop only). */
  private final Map<String, Stream> open = new HashMap<>();

  AgentDatagramStreams(SurvivorAgent agent, EventExecutorGroup readers, int idleTimeoutMs) {
    this.agent = agent;
    this.readers = readers;
    this.idleTimeoutMs = idleTimeoutMs;
  }

  @Override
  public void channelActive(ChannelHandlerContext ctx) {
    long period = Math.max(50, idleTimeoutMs / 4);
    ctx.executor().scheduleAtFixedRate(() -> sweep(System.nanoTime()), period, period,
        TimeUnit.MILLISECONDS);
    ctx.fireChannelActive();
  }

  @Override
  protected void channelRead0(ChannelHandlerContext ctx, DatagramPacket d) {
    NetecPacket p;
    try {
      p = NetecPacket.decodeFrame(ByteBuffer.wrap(ByteBufUtil.getBytes(d.content())));
    } catch (ProtocolException e) {
      agent.logs.info("datagram-bad", "Dropped a datagram from {}: {}", d.sender(),
          e.getMessage());
      return;
    }
    String key = d.sender() + "/" + p.task() + "/" + p.slotArray() + "/" + p.sender();
    Stream st = open.get(key);
    if (p.type() == NetecPacket.HELLO) {
      if (st == null) { // a repeated HELLO of a running stream changes nothing
        st = new Stream(ctx.channel(), d.sender(), p, readers.next());
        open.put(key, st);
        Stream started = st;
        // an ended stream (refused, failed) is forgotten: a HELLO repeated after a lost
        // refusal is judged, and refused, again
        st.forget = () -> ctx.executor().execute(() -> open.remove(key, started));
        started.executor.execute(() -> started.start(p));
      }
    } else if (p.type() == NetecPacket.ACK && st != null) {
      st.heard = System.nanoTime();
      Stream s = st;
      if (p.hasFlag(NetecPacket.FLAG_FIN)) {
        open.remove(key);
      }
      s.executor.execute(() -> s.onAck(p));
    }
  }

  /** Ends the streams whose switch went silent (on the I/O loop). */
  private void sweep(long now) {
    open.values().removeIf(st -> {
      if (now - st.heard < TimeUnit.MILLISECONDS.toNanos(idleTimeoutMs)) {
        return false;
      }
      agent.idleClosed.increment();
      SurvivorAgent.LOG.warn("Datagram stream of task {} sender {}: nothing from the switch "
          + "for too long, closing", st.task, st.sender);
      st.executor.execute(st::end);
      return true;
    });
  }

  /** One datagram stream: a survivor's unit to one switch address. */
  private final class Stream {
    final Channel channel;
    final InetSocketAddress to;
    final int task;
    final int array;
    final int sender;
    final EventExecutor executor;
    volatile long heard = System.nanoTime();
    private UnitReader unit;
    private SendWindow window;
    private boolean ended;
    /** Takes the stream out of its handler's map (set by the handler, run on its loop). */
    Runnable forget = () -> { };

    Stream(Channel channel, InetSocketAddress to, NetecPacket hello, EventExecutor executor) {
      this.channel = channel;
      this.to = to;
      this.task = hello.task();
      this.array = hello.slotArray();
      this.sender = hello.sender();
      this.executor = executor;
    }

    void start(NetecPacket hello) {
      try {
        unit = agent.admit(hello);
      } catch (IOException e) {
        send(StreamRequest.errorHello(task, array, sender, e.getMessage()).toBytes());
        end();
        return;
      }
      window = new SendWindow(unit.req.stripes(), unit.req.window());
      pump();
    }

    void onAck(NetecPacket ack) {
      if (window == null || ended) {
        return;
      }
      if (ack.hasFlag(NetecPacket.FLAG_FIN)) {
        end();
        return;
      }
      window.onAck(ack.seq(), ack.window(), ack.hasFlag(NetecPacket.FLAG_RETX));
      pump();
    }

    /** Sends what the window allows; the window (EBSN) is the only pacing. */
    private void pump() {
      List<ByteBuf> batch;
      try {
        batch = unit.frames(window, channel.alloc(), Long.MAX_VALUE);
      } catch (IOException | RuntimeException e) {
        agent.logs.warn("failed", "Datagram stream of task {} sender {} failed: {}", task,
            sender, LogLimiter.oneLine(e));
        end();
        return;
      }
      if (!batch.isEmpty()) {
        try {
          channel.eventLoop().execute(() -> {
            for (ByteBuf f : batch) {
              channel.write(new DatagramPacket(f, to), channel.voidPromise());
            }
            channel.flush();
          });
        } catch (RejectedExecutionException e) { // the agent is closing
          batch.forEach(ByteBuf::release);
        }
      }
    }

    private void send(byte[] packet) {
      channel.writeAndFlush(new DatagramPacket(Unpooled.wrappedBuffer(packet), to),
          channel.voidPromise());
    }

    void end() {
      if (ended) {
        return;
      }
      ended = true;
      forget.run();
      if (unit != null) {
        unit.close();
      }
    }
  }
}
