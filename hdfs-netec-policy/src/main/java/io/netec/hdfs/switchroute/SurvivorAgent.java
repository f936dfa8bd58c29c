package io.netec.hdfs.switchroute;

import io.netec.hdfs.codec.GaloisField;
import io.netec.hdfs.route.BlockSource;
import io.netec.hdfs.route.LogLimiter;
import io.netec.hdfs.switchroute.wire.NetecPacket;
import io.netec.hdfs.switchroute.wire.NetecPacketCodec;
import io.netec.hdfs.switchroute.wire.ProtocolException;
import io.netec.hdfs.switchroute.wire.StreamRequest;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.socket.DatagramPacket;
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
  /** Datagram mode: the same port number over UDP (docs/protocol.md, "Datagram mode"). */
  private final Channel datagrams;
  private final int idleTimeoutMs;
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
    this.idleTimeoutMs = idleTimeoutMs;
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
      datagrams = new Bootstrap().group(io).channel(Transport.datagramChannel())
          .option(ChannelOption.WRITE_BUFFER_WATER_MARK, Transport.WATER_MARK)
          .option(ChannelOption.SO_RCVBUF, 1 << 20).option(ChannelOption.SO_SNDBUF, 4 << 20)
          .handler(new DatagramStreams())
          .bind(bindHost, ((InetSocketAddress) server.localAddress()).getPort()).sync()
          .channel();
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
    if (datagrams != null) {
      datagrams.close().awaitUninterruptibly();
    }
    io.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    if (readers != null) {
      readers.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    }
  }

  /** One stream to one switch connection. */
  private final class Stream extends SimpleChannelInboundHandler<NetecPacket> {
    private StreamRequest req;
    private UnitReader unit;
    private int task;
    private int array;
    private int sender;
    private long next;
    private long limit;

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
        unit = admit(hello);
        req = unit.req;
      } catch (IOException e) {
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
          ByteBuf frame = unit.data(next++, ctx.alloc());
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
      if (unit != null) {
        unit.close();
      }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      logs.warn("failed", "Stream of task {} sender {} failed: {}", task, sender,
          LogLimiter.oneLine(cause));
      ctx.close();
    }
  }

  /**
   * Datagram mode: every stream of every switch on one UDP channel, one NetEC packet per
   * datagram. A switch's HELLO (repeated until DATA comes) starts a stream, sent to the
   * HELLO's source; its ACKs move the window, go back on RETX, end it on FIN; a stream that
   * hears nothing for the idle timeout ends. Nothing is reliable here but the protocol: a lost
   * DATA packet is recovered by the reader's RETX. Each stream's work runs on one reader
   * executor (block reads may block), its sends on the I/O loop.
   */
  private final class DatagramStreams extends SimpleChannelInboundHandler<DatagramPacket> {
    private final java.util.Map<String, DatagramStream> open = new java.util.HashMap<>();

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
        p = NetecPacket.decodeFrame(java.nio.ByteBuffer.wrap(ByteBufUtil.getBytes(d.content())));
      } catch (ProtocolException e) {
        logs.info("datagram-bad", "Dropped a datagram from {}: {}", d.sender(), e.getMessage());
        return;
      }
      String key = d.sender() + "/" + p.task() + "/" + p.slotArray() + "/" + p.sender();
      DatagramStream st = open.get(key);
      if (p.type() == NetecPacket.HELLO) {
        if (st == null) { // a repeated HELLO of a running stream changes nothing
          st = new DatagramStream(ctx.channel(), d.sender(), p, readers.next());
          open.put(key, st);
          DatagramStream started = st;
          // an ended stream (refused, failed) is forgotten: a HELLO repeated after a lost
          // refusal is judged, and refused, again
          st.forget = () -> ctx.executor().execute(() -> open.remove(key, started));
          started.executor.execute(() -> started.start(p));
        }
      } else if (p.type() == NetecPacket.ACK && st != null) {
        st.heard = System.nanoTime();
        DatagramStream s = st;
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
        idleClosed.increment();
        LOG.warn("Datagram stream of task {} sender {}: nothing from the switch for too long,"
            + " closing", st.task, st.sender);
        st.executor.execute(st::end);
        return true;
      });
    }
  }

  /** One datagram stream: a survivor's unit to one switch address. */
  private final class DatagramStream {
    final Channel channel;
    final InetSocketAddress to;
    final int task;
    final int array;
    final int sender;
    final io.netty.util.concurrent.EventExecutor executor;
    volatile long heard = System.nanoTime();
    private StreamRequest req;
    private UnitReader unit;
    private long next;
    private long limit;
    private boolean ended;
    /** Takes the stream out of its handler's map (set by the handler, run on its loop). */
    Runnable forget = () -> { };

    DatagramStream(Channel channel, InetSocketAddress to, NetecPacket hello,
        io.netty.util.concurrent.EventExecutor executor) {
      this.channel = channel;
      this.to = to;
      this.task = hello.task();
      this.array = hello.slotArray();
      this.sender = hello.sender();
      this.executor = executor;
    }

    void start(NetecPacket hello) {
      try {
        unit = admit(hello);
        req = unit.req;
      } catch (IOException e) {
        send(StreamRequest.errorHello(task, array, sender, e.getMessage()).toBytes());
        end();
        return;
      }
      limit = Math.max(req.window(), 1);
      pump();
    }

    void onAck(NetecPacket ack) {
      if (req == null || ended) {
        return;
      }
      if (ack.hasFlag(NetecPacket.FLAG_FIN)) {
        end();
        return;
      }
      limit = Math.max(limit, ack.seq() + Math.max(ack.window(), 1));
      if (ack.hasFlag(NetecPacket.FLAG_RETX) && ack.seq() < next) {
        next = ack.seq(); // go-back-N from the reader's first missing stripe
      }
      pump();
    }

    /** Sends what the window allows; the window (EBSN) is the only pacing. */
    private void pump() {
      long stripes = req.stripes();
      List<ByteBuf> batch = new ArrayList<>();
      try {
        while (next < Math.min(limit, stripes)) {
          batch.add(unit.data(next++, channel.alloc()));
        }
      } catch (IOException | RuntimeException e) {
        batch.forEach(ByteBuf::release);
        logs.warn("failed", "Datagram stream of task {} sender {} failed: {}", task, sender,
            LogLimiter.oneLine(e));
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

  /**
   * One survivor stream's unit: its request and the block read for it, stripe by stripe, into
   * DATA frames. The same for a TCP stream and a datagram stream.
   */
  /**
   * A HELLO's stream, admitted: its request parsed, counted against the agent's streams, its
   * block checked (token, length). Its {@link UnitReader#close} gives the count back. A refusal
   * is counted and logged here; the caller answers it with an error HELLO (the reason).
   */
  private UnitReader admit(NetecPacket hello) throws IOException {
    try {
      StreamRequest req = StreamRequest.fromHello(hello);
      if (streams.incrementAndGet() > maxStreams) {
        streams.decrementAndGet();
        throw new IOException("agent busy: " + maxStreams + " streams");
      }
      UnitReader unit = new UnitReader(req, hello.task(), hello.slotArray(), hello.sender());
      try {
        unit.transfer = source.transfer("switch stream of " + req.block());
        source.check(req.block(), req.token(), req.unitLength());
      } catch (IOException | RuntimeException e) { // the stream and transfer given back
        unit.close();
        throw e instanceof IOException ? (IOException) e
            : new IOException("refused: " + e, e);
      }
      return unit;
    } catch (IOException | ProtocolException e) {
      refused.increment();
      logs.warn("refused", "Refused stream of task {} sender {}: {}", hello.task(),
          hello.sender(), LogLimiter.oneLine(e.getMessage()));
      throw new IOException(e.getMessage(), e);
    }
  }

  private final class UnitReader {
    private final StreamRequest req;
    private final int task;
    private final int array;
    private final int sender;
    private InputStream in;
    private long inOffset;
    /** A source that is only an InputStream is read here, then copied into the frame. */
    private byte[] scratch;
    private boolean closed;
    /** One of the DataNode's transfers, held while the stream is open. */
    java.io.Closeable transfer;

    UnitReader(StreamRequest req, int task, int array, int sender) {
      this.req = req;
      this.task = task;
      this.array = array;
      this.sender = sender;
    }

    /**
     * Stripe {@code seq}'s DATA frame, built here (off the event loop) in a pooled direct buffer:
     * a source that reads into buffers ({@link ByteBufferReadable}, as the DataNode's does)
     * reads straight into the frame; any other is read through one scratch array.
     */
    ByteBuf data(long seq, ByteBufAllocator alloc) throws IOException {
      int len = req.payloadLength(seq);
      long offset = req.offset() + seq * req.payload();
      int have = (int) Math.max(0, Math.min(req.streamBytes(seq), req.unitLength() - offset));
      bytesSent.add(len);
      return NetecPacketCodec.dataFrame(task, array, sender, (int) (seq % req.slots()), seq, len,
          payload -> read(payload, offset, have), alloc);
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

    void close() {
      IOUtils.closeStream(in);
      in = null;
      if (!closed) {
        closed = true;
        streams.decrementAndGet();
        IOUtils.closeStream(transfer);
      }
    }
  }
}
