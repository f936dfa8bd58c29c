package io.netec.hdfs.switchroute;

import io.netec.hdfs.codec.GaloisField;
import io.netec.hdfs.route.BlockSource;
import io.netec.hdfs.route.LogLimiter;
import io.netec.hdfs.switchroute.wire.NetecPacket;
import io.netec.hdfs.switchroute.wire.NetecPacketCodec;
import io.netec.hdfs.switchroute.wire.ProtocolException;
import io.netec.hdfs.switchroute.wire.StreamRequest;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.concurrent.DefaultEventExecutorGroup;
import io.netty.util.concurrent.EventExecutorGroup;
import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import org.apache.hadoop.fs.ByteBufferReadable;
import org.apache.hadoop.hdfs.protocol.ExtendedBlock;
import org.apache.hadoop.io.IOUtils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Streams a range of a local internal block to a NetEC switch as DATA packets (the survivor
 * side of docs/protocol.md): at most the window the switch allowed beyond the reader's ACK,
 * from the ACK's stripe again on RETX, closed on FIN. Block reads run on their own executors,
 * never on the I/O threads; a channel that is not writable pauses the stream (back-pressure).
 */
public final class SurvivorAgent implements Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(SurvivorAgent.class);
  /** Lines peers can cause: one per cause every 10 s, then a count. */
  private final LogLimiter logs = new LogLimiter(LOG, 10_000);

  private final BlockSource source;
  private final int maxStreams;
  /** Its I/O loop and block readers: what streaming costs a survivor (see {@link #cpuNanos}). */
  private final CpuAccountedThreads threads = new CpuAccountedThreads("netec-agent");
  private final EventLoopGroup io = Transport.group(1, threads);
  private final EventExecutorGroup readers;
  private final Channel server;
  private final AtomicInteger streams = new AtomicInteger();
  private final LongAdder bytesSent = new LongAdder();
  private final LongAdder refused = new LongAdder();
  private final LongAdder idleClosed = new LongAdder();

  /**
   * @param idleTimeoutMs a stream whose switch sends nothing (no ACK) for this long is closed,
   *     so a switch that vanished without closing its connection pins no block stream
   */
  public SurvivorAgent(BlockSource source, String bindHost, int port, int maxStreams,
      int idleTimeoutMs) throws IOException {
    this.source = source;
    this.maxStreams = maxStreams;
    this.readers = new DefaultEventExecutorGroup(Math.max(2,
        Runtime.getRuntime().availableProcessors()), threads);
    try {
      server = new ServerBootstrap().group(io).channel(Transport.serverChannel())
          .childOption(ChannelOption.TCP_NODELAY, true)
          .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK, Transport.WATER_MARK)
          .childHandler(new ChannelInitializer<SocketChannel>() {
            @Override
            protected void initChannel(SocketChannel ch) {
              ch.pipeline().addLast(
                  new IdleStateHandler(idleTimeoutMs, 0, 0, TimeUnit.MILLISECONDS),
                  new NetecPacketCodec.Decoder(), new NetecPacketCodec.Encoder())
                  .addLast(readers, new Stream());
            }
          }).bind(bindHost, port).sync().channel();
    } catch (Exception e) {
      close();
      throw new IOException("survivor agent cannot listen on " + bindHost + ":" + port, e);
    }
  }

  public InetSocketAddress address() {
    return (InetSocketAddress) server.localAddress();
  }

  /** CPU nanoseconds of this agent's threads so far (-1 if this JVM cannot measure it). */
  public long cpuNanos() {
    return threads.cpuNanos();
  }

  public long bytesSent() {
    return bytesSent.sum();
  }

  public long refusedStreams() {
    return refused.sum();
  }

  /** Streams closed because their switch went silent. */
  public long idleClosedStreams() {
    return idleClosed.sum();
  }

  @Override
  public void close() {
    if (server != null) {
      server.close().awaitUninterruptibly();
    }
    io.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    if (readers != null) {
      readers.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    }
  }

  /** One stream to one switch connection. */
  private final class Stream extends SimpleChannelInboundHandler<NetecPacket> {
    private StreamRequest req;
    private int task;
    private int array;
    private int sender;
    private InputStream in;
    private long inOffset;
    private long next;
    private long limit;
    private boolean counted;
    /** A source that is only an InputStream is read here, then copied into the frame. */
    private byte[] scratch;

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, NetecPacket p) throws Exception {
      if (req == null) {
        start(ctx, p);
      } else if (p.type() == NetecPacket.ACK) {
        if (p.hasFlag(NetecPacket.FLAG_FIN)) {
          ctx.close();
          return;
        }
        limit = Math.max(limit, p.seq() + Math.max(p.window(), 1));
        if (p.hasFlag(NetecPacket.FLAG_RETX) && p.seq() < next) {
          next = p.seq(); // go-back-N from the reader's first missing stripe
        }
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
        req = StreamRequest.fromHello(hello);
        if (streams.incrementAndGet() > maxStreams) {
          streams.decrementAndGet();
          throw new IOException("agent busy: " + maxStreams + " streams");
        }
        counted = true;
        source.check(req.block(), req.token(), req.unitLength());
      } catch (IOException | ProtocolException e) {
        refused.increment();
        logs.warn("refused", "Refused stream of task {} sender {}: {}", task, sender,
            LogLimiter.oneLine(e.getMessage()));
        ctx.writeAndFlush(StreamRequest.errorHello(task, array, sender, e.getMessage()))
            .addListener(f -> ctx.close());
        req = null;
        return;
      }
      limit = Math.max(req.window(), 1);
      pump(ctx);
    }

    /**
     * Sends what the window allows and the channel can take. Frames are built here (a reader
     * thread: block reads may block) and handed to the event loop as one batch, so the loop
     * wakes once per batch, not once per frame.
     */
    private void pump(ChannelHandlerContext ctx) throws IOException {
      long stripes = req.stripes();
      long room = ctx.channel().bytesBeforeUnwritable();
      List<ByteBuf> batch = new ArrayList<>();
      try {
        while (next < Math.min(limit, stripes) && room > 0) { // not writable: room is 0
          ByteBuf frame = data(ctx, next++);
          room -= frame.readableBytes();
          batch.add(frame);
        }
      } catch (IOException | RuntimeException e) {
        batch.forEach(ByteBuf::release);
        throw e;
      }
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

    /**
     * Stripe {@code seq}'s DATA frame, built here (off the event loop) in a pooled direct buffer:
     * a source that reads into buffers ({@link ByteBufferReadable}, as the DataNode's does)
     * reads straight into the frame; any other is read through one scratch array.
     */
    private ByteBuf data(ChannelHandlerContext ctx, long seq) throws IOException {
      int len = req.payloadLength(seq);
      long offset = req.offset() + seq * req.payload();
      int have = (int) Math.max(0, Math.min(req.streamBytes(seq), req.unitLength() - offset));
      bytesSent.add(len);
      return NetecPacketCodec.dataFrame(task, array, sender, (int) (seq % req.slots()), seq, len,
          payload -> read(payload, offset, have), ctx.alloc());
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
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
      if (evt instanceof IdleStateEvent) {
        idleClosed.increment();
        LOG.warn("Stream of task {} sender {}: nothing from the switch for too long, closing",
            task, sender);
        ctx.close();
        return;
      }
      super.userEventTriggered(ctx, evt);
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) throws Exception {
      if (req != null && ctx.channel().isWritable()) {
        pump(ctx);
      }
      ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
      IOUtils.closeStream(in);
      if (counted) {
        streams.decrementAndGet();
        counted = false;
      }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      logs.warn("failed", "Stream of task {} sender {} failed: {}", task, sender,
          LogLimiter.oneLine(cause));
      ctx.close();
    }
  }
}
