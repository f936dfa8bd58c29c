package io.netec.hdfs.proof;

import io.netec.hdfs.codec.Fingerprint;
import io.netec.hdfs.route.BlockSource;
import io.netec.hdfs.route.LogLimiter;
import io.netec.hdfs.switchroute.CpuAccountedThreads;
import io.netec.hdfs.route.Transport;
import io.netec.hdfs.switchroute.wire.ControlFrames;
import io.netec.hdfs.switchroute.wire.ProtocolException;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.netty.handler.codec.LengthFieldPrepender;
import io.netty.handler.timeout.ReadTimeoutHandler;
import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import org.apache.hadoop.fs.ByteBufferReadable;
import org.apache.hadoop.fs.ChecksumException;
import org.apache.hadoop.io.IOUtils;
import org.apache.hadoop.util.DataChecksum;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A DataNode's proof service (docs/protocol.md, "Proofs"): for a verifier holding a READ token,
 * the {@link Fingerprint} of a range of a local internal block under the verifier's key,
 * computed over the bytes as read with their checksums verified. First it answers the
 * replica's checksum (what a rebuilt replica must carry), then the fingerprint; a corrupt
 * replica is answered as such (and handled as the DataNode handles a bad block, by the
 * {@link BlockSource}).
 *
 * <p>What a peer can hold: one request per connection, whole within {@code requestArrivalMs}
 * (64 KiB at most); at most {@code maxConnections} connections at once (more are closed at
 * accept); a read takes one of the DataNode's transfers ({@link BlockSource#transfer}), refused
 * beyond its limit. Each admitted request gets a thread of its own at once (as the DataNode's
 * transfer server gives each transfer one), so no request waits behind another's long read;
 * a read stops when its verifier goes away.
 */
public final class ProofService implements Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(ProofService.class);
  /** Lines peers can cause: one per cause every 10 s, then a count. */
  private final LogLimiter logs = new LogLimiter(LOG, 10_000);
  /** Bytes of a block read and fingerprinted at a time. */
  static final int READ_BYTES = 64 * 1024;
  /** A proof whose range no stream has read for this long reads the next part itself. */
  static final int TAP_IDLE_MS = 300;
  /** What a proof reads itself at a time when no stream reads its range. */
  static final long OWN_READ_BYTES = 4L << 20;

  private final BlockSource blocks;
  /** The DataNode's verified reads as they happen, or null (then every proof reads itself). */
  private final ReadTaps taps;
  private final int maxConnections;
  private final CpuAccountedThreads threads = new CpuAccountedThreads("netec-proof");
  private final EventLoopGroup io = Transport.group(1, threads);
  /** A thread per request being served, at most maxConnections; idle ones end after 60 s. */
  private final java.util.concurrent.ThreadPoolExecutor readers;
  private final Channel server;
  private final AtomicInteger connections = new AtomicInteger();
  private final LongAdder answered = new LongAdder();
  private final LongAdder refused = new LongAdder();
  private final LongAdder corrupt = new LongAdder();
  private final LongAdder bytesRead = new LongAdder();
  private final LongAdder bytesTapped = new LongAdder();

  public ProofService(BlockSource blocks, String bindHost, int port, int maxConnections,
      int requestArrivalMs) throws IOException {
    this(blocks, null, bindHost, port, maxConnections, requestArrivalMs);
  }

  /**
   * @param taps the DataNode's verified reads (its {@code DataNodeBlockSource}'s): a proof
   *     takes the bytes a route's stream reads from there, and reads itself only the rest
   */
  public ProofService(BlockSource blocks, ReadTaps taps, String bindHost, int port,
      int maxConnections, int requestArrivalMs) throws IOException {
    this.blocks = blocks;
    this.taps = taps;
    this.maxConnections = maxConnections;
    this.readers = new java.util.concurrent.ThreadPoolExecutor(0, maxConnections, 60,
        TimeUnit.SECONDS, new java.util.concurrent.SynchronousQueue<>(), threads);
    try {
      server = new ServerBootstrap().group(io).channel(Transport.serverChannel())
          .childHandler(new ChannelInitializer<SocketChannel>() {
            @Override
            protected void initChannel(SocketChannel ch) {
              if (connections.incrementAndGet() > maxConnections) {
                connections.decrementAndGet();
                refused.increment();
                logs.info("busy", "Proof service busy ({} connections): closed one from {}",
                    maxConnections, ch.remoteAddress());
                ch.close();
                return;
              }
              ch.closeFuture().addListener(f -> connections.decrementAndGet());
              ch.pipeline().addLast("arrival",
                  new ReadTimeoutHandler(requestArrivalMs, TimeUnit.MILLISECONDS))
                  .addLast(new LengthFieldBasedFrameDecoder(ControlFrames.MAX_FRAME + 4, 0, 4, 0,
                      4), new LengthFieldPrepender(4))
                  .addLast(new RequestHandler());
            }
          }).bind(bindHost, port).sync().channel();
    } catch (Exception e) {
      close();
      throw new IOException("proof service cannot listen on " + bindHost + ":" + port, e);
    }
  }

  public InetSocketAddress address() {
    return (InetSocketAddress) server.localAddress();
  }

  /** Fingerprints answered. */
  public long answered() {
    return answered.sum();
  }

  /** Requests refused (malformed, token, length, busy). */
  public long refused() {
    return refused.sum();
  }

  /** Requests whose replica failed its checksums. */
  public long corrupt() {
    return corrupt.sum();
  }

  /** Bytes of ranges fingerprinted (read by the proofs themselves or taken from streams). */
  public long bytesRead() {
    return bytesRead.sum();
  }

  /** Of {@link #bytesRead()}, the bytes taken from the streams' own reads (not read twice). */
  public long bytesTapped() {
    return bytesTapped.sum();
  }

  /** CPU nanoseconds of this service's threads so far (-1 if this JVM cannot measure it). */
  public long cpuNanos() {
    return threads.cpuNanos();
  }

  @Override
  public void close() {
    if (server != null) {
      server.close().awaitUninterruptibly();
    }
    io.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    if (readers != null) {
      readers.shutdownNow();
    }
  }

  /**
   * One request of one connection, on the I/O loop: taken whole (its arrival deadline ends
   * here), parsed, and handed to a thread of its own; the rest of the connection is ignored.
   */
  private final class RequestHandler extends SimpleChannelInboundHandler<ByteBuf> {
    private boolean taken;

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, ByteBuf frame) {
      if (taken) {
        return; // one request per connection; the answer closes it
      }
      taken = true;
      ctx.channel().config().setAutoRead(false);
      ctx.pipeline().remove("arrival"); // a long range may take longer to read
      ProofRequest req;
      try {
        req = ProofRequest.fromJson(ByteBufUtil.getBytes(frame));
      } catch (ProtocolException e) {
        refuse(ctx, null, "bad request: " + e.getMessage());
        return;
      }
      try {
        readers.execute(() -> serve(ctx, req));
      } catch (java.util.concurrent.RejectedExecutionException e) {
        refuse(ctx, req, "proof service busy (" + maxConnections + " requests)");
      }
    }

    /** Admits, answers the checksum, reads and fingerprints, answers (its own thread). */
    private void serve(ChannelHandlerContext ctx, ProofRequest req) {
      String what = "proof of " + req.block();
      Closeable transfer;
      DataChecksum sum;
      try {
        transfer = blocks.transfer(what);
      } catch (IOException e) {
        refuse(ctx, req, e.getMessage());
        return;
      }
      try {
        try {
          blocks.check(req.block(), req.token(), req.offset() + req.bytesToRead());
          sum = blocks.checksum(req.block());
        } catch (IOException e) {
          refuse(ctx, req, e.getMessage());
          return;
        }
        ctx.writeAndFlush(frame(ProofAnswer.checksum(sum)));
        ProofAnswer done;
        try {
          done = ProofAnswer.fingerprint(fingerprint(req, ctx.channel()), req.bytesToRead());
          answered.increment();
        } catch (ChecksumException e) {
          corrupt.increment();
          logs.warn("corrupt", "Proof of {}: the replica failed its checksum: {}", req.block(),
              LogLimiter.oneLine(e.getMessage()));
          done = ProofAnswer.failure(ProofAnswer.Fault.CORRUPT, req.block() + " here: "
              + e.getMessage());
        } catch (IOException | RuntimeException e) {
          logs.warn("io", "Proof of {} failed: {}", req.block(), LogLimiter.oneLine(e));
          done = ProofAnswer.failure(ProofAnswer.Fault.IO, req.block() + " here: " + e);
        }
        ctx.writeAndFlush(frame(done)).addListener(ChannelFutureListener.CLOSE);
      } finally {
        IOUtils.closeStream(transfer);
      }
    }

    private void refuse(ChannelHandlerContext ctx, ProofRequest req, String why) {
      refused.increment();
      logs.warn("refused", "Refused proof{} from {}: {}",
          req == null ? "" : " of " + req.block(), ctx.channel().remoteAddress(),
          LogLimiter.oneLine(why));
      ctx.writeAndFlush(frame(ProofAnswer.failure(ProofAnswer.Fault.REFUSED, why)))
          .addListener(ChannelFutureListener.CLOSE);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      logs.info("connection", "Proof connection from {} closed: {}",
          ctx.channel().remoteAddress(), LogLimiter.oneLine(cause));
      ctx.close();
    }
  }

  /**
   * The range's fingerprint over its bytes as read (checksums verified), zeros past them; the
   * read stops when the verifier's connection closes (its attempt is over). With the
   * DataNode's taps, the bytes a route's stream reads meanwhile are taken as they are read;
   * this reads only what no stream did.
   */
  private byte[] fingerprint(ProofRequest req, Channel verifier) throws IOException {
    Fingerprint f = new Fingerprint(req.key());
    long want = req.bytesToRead();
    if (want == 0) {
      return f.finish();
    }
    if (taps == null) {
      read(req, req.offset(), req.offset() + want, verifier, f);
      bytesRead.add(want);
      return f.finish();
    }
    ReadTaps.Want w = taps.want(req.block().getBlockId(), req.offset(), want, f);
    try {
      long own = 0;
      boolean alone = false; // no stream read the range for TAP_IDLE_MS: read the rest here
      while (!w.complete()) {
        if (!verifier.isActive()) {
          throw new IOException("the verifier left after " + w.bytes() + " bytes");
        }
        long[] gap = w.headGap(); // what a stream read before this proof came
        if (gap == null && (alone || !w.awaitProgress(TAP_IDLE_MS))) {
          alone = true;
          gap = w.firstGap(OWN_READ_BYTES);
        }
        if (gap != null) {
          read(req, gap[0], gap[1], verifier, null); // its verified read feeds the want
          own += gap[1] - gap[0];
        }
      }
      bytesRead.add(want);
      bytesTapped.add(Math.max(0, want - own));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted");
    } finally {
      w.close();
    }
    return f.finish();
  }

  /** Reads [from, to) of the block, verified, into {@code f} at its place (when f is given). */
  private void read(ProofRequest req, long from, long to, Channel verifier, Fingerprint f)
      throws IOException {
    ByteBuffer buf = ByteBuffer.allocate((int) Math.min(READ_BYTES, to - from));
    try (InputStream in = blocks.open(req.block(), from)) {
      long done = 0;
      while (from + done < to) {
        if (!verifier.isActive()) {
          throw new IOException("the verifier left after " + done + " bytes");
        }
        buf.clear();
        buf.limit((int) Math.min(buf.capacity(), to - from - done));
        while (buf.hasRemaining()) {
          int n = in instanceof ByteBufferReadable ? ((ByteBufferReadable) in).read(buf)
              : in.read(buf.array(), buf.position(), buf.remaining());
          if (n < 0) {
            throw new EOFException(req.block() + " ends at " + (from + done + buf.position())
                + ", before " + to);
          }
          if (!(in instanceof ByteBufferReadable)) {
            buf.position(buf.position() + n);
          }
        }
        buf.flip();
        if (f != null) {
          f.update(from + done - req.offset(), buf);
        }
        done += buf.remaining();
      }
    }
  }

  private static ByteBuf frame(ProofAnswer a) {
    return Unpooled.wrappedBuffer(a.toJson());
  }
}
