package io.netec.hdfs.inecroute;

import io.netec.hdfs.NetecSettings;
import io.netec.hdfs.route.BlockSource;
import io.netec.hdfs.route.LogLimiter;
import io.netec.hdfs.route.PeerNetworks;
import io.netec.hdfs.route.Transport;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A DataNode's part in INEC repairs: a control server that takes {@link JoinRequest}s and, for
 * each, checks the block token, connects the vertex's streams through the node's engine, and
 * posts its primitive segment by segment — ec-send for a leaf, recv-ec-send inside a tree or a
 * chain — reading the local internal block through the DataNode's dataset into direct buffers
 * (the next segment is read while the engine works on the current one).
 *
 * <p>What a peer can hold: one Netty event loop reads every join, so a connection that sends
 * nothing costs a socket, not a thread; at most {@link Limits#maxPending} connections wait for
 * their join at once (a new one evicts the oldest), each for at most {@link
 * Limits#joinArrivalMs} in all (a deadline, not an idle timer: a join sent a byte at a time
 * does not outlast it). A thread is taken only for a whole, well-formed join, at most {@code
 * maxJoins} at once (more are answered "participant busy"). A vertex streams its output only to
 * the requester's own address or to a peer in {@link Limits#peers} on the cluster's INEC data
 * port, dials no names, and ends as soon as its requester leaves.
 *
 * <p>By job: this class is the join server, a pipeline of two small handlers per connection
 * ({@link JoinReader} takes the join within its deadline, {@link RequesterWatch} then ends the
 * vertex if its requester leaves) and the answer; {@link VertexRunner} runs each vertex.
 */
public final class InecParticipant implements Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(InecParticipant.class);
  /** Lines peers can cause: one per cause every 10 s, then a count. */
  private final LogLimiter logs = new LogLimiter(LOG, 10_000);
  /** A join's wire form is far smaller (four short strings and fixed fields). */
  static final int MAX_JOIN_BYTES = 16 * 1024;

  /**
   * What a participant accepts from peers: by default, the defaults of the netec.inec.* keys
   * and peers on any port (engines listening on ephemeral ports, as in tests).
   */
  public static final class Limits {
    private static final NetecSettings DEFAULTS = NetecSettings.defaults();
    /** Largest segment a join may ask for (a vertex holds two); larger joins are refused. */
    int maxSegment = DEFAULTS.inecOptions().segment();
    /** A join's wait without progress is cut to this. */
    int maxTimeoutMs = DEFAULTS.inecOptions().timeoutMs();
    /** Connections waiting for their join at once; a new one evicts the oldest. */
    int maxPending = 256;
    /** A connection whose join has not arrived whole within this is closed. */
    int joinArrivalMs = 10_000;
    /** Where a vertex may stream to besides its requester. */
    PeerNetworks peers = DEFAULTS.inecOptions().peerNetworks();
    /** The cluster's INEC data port, the only port a peer is dialled on; 0: any. */
    int peerDataPort;

    /** This node's limits from its settings. */
    public static Limits of(NetecSettings s) {
      Limits l = new Limits();
      l.maxSegment = s.inecOptions().segment();
      l.maxTimeoutMs = s.inecOptions().timeoutMs();
      l.peers = s.inecOptions().peerNetworks();
      l.peerDataPort = s.inecOptions().dataPort();
      return l;
    }
  }

  private final InecEngine engine;
  private final Limits limits;
  /** Runs the vertices the joins ask for. */
  private final VertexRunner runner;
  private final EventLoopGroup io;
  private final Channel server;
  private final InetSocketAddress address;
  private final ExecutorService joins;
  /** Connections whose join has not arrived whole, oldest first (event loop only). */
  private final LinkedHashSet<Channel> pending = new LinkedHashSet<>();
  private final LongAdder served = new LongAdder();
  private final LongAdder failed = new LongAdder();
  private final LongAdder evicted = new LongAdder();
  private volatile boolean closed;

  /** With the default {@link Limits}. */
  public InecParticipant(InecEngine engine, BlockSource source, String bindHost,
      int port, int maxJoins) throws IOException {
    this(engine, source, bindHost, port, maxJoins, new Limits());
  }

  public InecParticipant(InecEngine engine, BlockSource source, String bindHost,
      int port, int maxJoins, Limits limits) throws IOException {
    this.engine = engine;
    this.limits = limits;
    this.runner = new VertexRunner(engine, source, limits, () -> closed);
    this.joins = new ThreadPoolExecutor(0, maxJoins, 60, TimeUnit.SECONDS,
        new SynchronousQueue<>(), r -> {
          Thread t = new Thread(r, "inec-join");
          t.setDaemon(true);
          return t;
        });
    // one thread: the pending set and the eviction order need no lock
    this.io = Transport.group(1, r -> {
      Thread t = new Thread(r, "inec-participant");
      t.setDaemon(true);
      return t;
    });
    try {
      server = new ServerBootstrap().group(io).channel(Transport.serverChannel())
          .option(ChannelOption.SO_REUSEADDR, true)
          .handler(new AcceptFailures())
          .childOption(ChannelOption.TCP_NODELAY, true)
          .childHandler(new ChannelInitializer<SocketChannel>() {
            @Override
            protected void initChannel(SocketChannel ch) {
              ch.pipeline().addLast(new JoinReader());
            }
          }).bind(bindHost, port).sync().channel();
    } catch (Exception e) {
      io.shutdownGracefully(0, 0, TimeUnit.SECONDS);
      joins.shutdownNow();
      throw new IOException("INEC participant cannot listen on " + bindHost + ":" + port, e);
    }
    this.address = (InetSocketAddress) server.localAddress();
    io.execute(() -> Thread.currentThread().setName("inec-participant-" + address.getPort()));
  }

  public InetSocketAddress address() {
    return address;
  }

  public InecEngine engine() {
    return engine;
  }

  /** Vertices this participant ran to the end. */
  public long served() {
    return served.sum();
  }

  public long failed() {
    return failed.sum();
  }

  /** Bytes of local blocks this participant read for repairs. */
  public long bytesRead() {
    return runner.bytesRead();
  }

  /** Connections closed unread: their join did not arrive in time or newer ones needed room. */
  public long evicted() {
    return evicted.sum();
  }

  /**
   * Accept failures (e.g. out of file descriptors): said once in a while, and accepting pauses
   * 50 ms so that some connections can close.
   */
  private final class AcceptFailures extends ChannelInboundHandlerAdapter {
    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      logs.warn("accept", "INEC participant on {}: accept failed: {}", address,
          cause.toString());
      ctx.channel().config().setAutoRead(false);
      ctx.executor().schedule(() -> ctx.channel().config().setAutoRead(true), 50,
          TimeUnit.MILLISECONDS);
    }
  }

  /**
   * A connection's first handler: gathers its join (at most {@link #MAX_JOIN_BYTES}) within
   * {@link Limits#joinArrivalMs} of its accept, making room among the waiting connections by
   * closing the oldest; a whole join goes to a thread of its own, a bad one is answered and
   * closed.
   */
  private final class JoinReader extends ChannelInboundHandlerAdapter {
    private final ByteBuf got = Unpooled.buffer(256, MAX_JOIN_BYTES);
    private ScheduledFuture<?> deadline;
    /** Refused: the answer is on its way and the connection closes after it. */
    private boolean refused;

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
      if (pending.size() >= limits.maxPending) { // room for the newest: joins come at once
        Iterator<Channel> oldest = pending.iterator();
        Channel ch = oldest.next();
        oldest.remove();
        evicted.increment();
        ch.close();
        logs.warn("evicted", "INEC participant on {}: {} connections wait for their join; "
            + "closing the oldest", address, limits.maxPending);
      }
      pending.add(ctx.channel());
      deadline = ctx.executor().schedule(() -> {
        if (pending.remove(ctx.channel())) {
          evicted.increment();
          ctx.close();
        }
      }, limits.joinArrivalMs, TimeUnit.MILLISECONDS);
      ctx.fireChannelActive();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      ByteBuf in = (ByteBuf) msg;
      if (refused) {
        in.release();
        return;
      }
      JoinRequest req;
      try {
        if (in.readableBytes() > got.maxWritableBytes()) {
          throw new IOException("bad join request: larger than " + MAX_JOIN_BYTES + " bytes");
        }
        got.writeBytes(in);
        // an unpooled heap buffer, never read from: its array holds the bytes from 0
        req = JoinRequest.parse(got.array(), got.writerIndex());
        if (req == null) {
          if (got.maxWritableBytes() == 0) {
            throw new IOException("bad join request: larger than " + MAX_JOIN_BYTES
                + " bytes");
          }
          return; // the rest is on its way
        }
      } catch (IOException | RuntimeException e) {
        failed.increment();
        logs.warn("bad-join", "INEC participant on {}: {} from {}", address,
            LogLimiter.oneLine(e), peer(ctx.channel()));
        stopWaiting(ctx);
        refused = true;
        ctx.channel().config().setAutoRead(false);
        answer(ctx.channel(), VertexReport.FAILED, String.valueOf(e.getMessage()))
            .addListener(ChannelFutureListener.CLOSE);
        return;
      } finally {
        ReferenceCountUtil.release(in);
      }
      stopWaiting(ctx);
      ctx.pipeline().remove(this);
      VertexRunner.Vertex vertex = new VertexRunner.Vertex();
      ctx.pipeline().addLast(new RequesterWatch(vertex));
      Channel ch = ctx.channel();
      InetAddress requester = ((InetSocketAddress) ch.remoteAddress()).getAddress();
      try {
        joins.execute(() -> serve(ch, req, vertex, requester));
      } catch (RejectedExecutionException | OutOfMemoryError e) { // the pool full, or no thread
        answer(ch, VertexReport.SURVIVOR_FAULT, "participant busy")
            .addListener(ChannelFutureListener.CLOSE);
      }
    }

    /** The join is whole (or refused): no longer waiting, no deadline. */
    private void stopWaiting(ChannelHandlerContext ctx) {
      pending.remove(ctx.channel());
      if (deadline != null) {
        deadline.cancel(false);
      }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
      stopWaiting(ctx);
      ctx.fireChannelInactive();
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
      got.release();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      if (!refused) { // e.g. a reset before the join: nothing can be answered
        failed.increment();
        logs.warn("bad-join", "INEC participant on {}: {} from {}", address,
            LogLimiter.oneLine(cause), peer(ctx.channel()));
      }
      ctx.close();
    }
  }

  /** After the join: anything from the requester, or its leaving, ends the vertex. */
  private static final class RequesterWatch extends ChannelInboundHandlerAdapter {
    private final VertexRunner.Vertex vertex;

    RequesterWatch(VertexRunner.Vertex vertex) {
      this.vertex = vertex;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      ReferenceCountUtil.release(msg);
      ctx.channel().config().setAutoRead(false); // it left (or broke the protocol): once
      vertex.cancel();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
      vertex.cancel();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      vertex.cancel();
    }
  }

  private static String peer(Channel ch) {
    InetSocketAddress a = (InetSocketAddress) ch.remoteAddress();
    return a == null ? "?" : a.getAddress().getHostAddress();
  }

  private void serve(Channel ch, JoinRequest req, VertexRunner.Vertex vertex,
      InetAddress requester) {
    try {
      long bytes = runner.run(req, vertex, requester, e -> fail(ch, req, vertex, e));
      served.increment();
      answer(ch, VertexReport.DONE, "streamed " + bytes + " bytes");
    } catch (IOException | RuntimeException e) {
      // run reported it, before its teardown
    } finally {
      // after the answer written above or by fail: the connection's writes stay in order
      if (ch.isActive()) {
        ch.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
      }
    }
  }

  private void fail(Channel ch, JoinRequest req, VertexRunner.Vertex vertex, Exception e) {
    failed.increment();
    String why = vertex.cancelled() ? "its requester left" : LogLimiter.oneLine(e);
    logs.warn("vertex-failed", "INEC vertex of task {} failed: {}",
        LogLimiter.oneLine(req.task), why);
    answer(ch, e instanceof InecEngine.StreamLost ? VertexReport.STREAM_LOST
        : e instanceof VertexRunner.LocalBlockFault ? VertexReport.SURVIVOR_FAULT
        : e instanceof VertexRunner.OutputUnreachable ? VertexReport.OUTPUT_UNREACHABLE
        : VertexReport.FAILED, String.valueOf(e.getMessage()));
  }

  /**
   * The one-byte status and a message (any thread); nothing once the connection closed (the
   * requester left, or close() ended the event loop, which takes no more writes).
   */
  private static ChannelFuture answer(Channel ch, int status, String message) {
    if (!ch.isActive()) {
      return ch.newSucceededFuture();
    }
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    try (DataOutputStream out = new DataOutputStream(b)) {
      out.writeByte(status);
      out.writeUTF(message.length() > 1000 ? message.substring(0, 1000) : message);
    } catch (IOException e) {
      throw new AssertionError(e); // in memory
    }
    return ch.writeAndFlush(Unpooled.wrappedBuffer(b.toByteArray()));
  }

  @Override
  public void close() {
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
    }
    server.close().awaitUninterruptibly();
    // closes every connection: a running vertex sees its requester leave and ends
    io.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly();
    joins.shutdownNow();
    try {
      joins.awaitTermination(2, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
