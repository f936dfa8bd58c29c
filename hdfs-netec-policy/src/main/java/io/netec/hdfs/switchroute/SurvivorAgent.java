package io.netec.hdfs.switchroute;

import io.netec.hdfs.route.BlockSource;
import io.netec.hdfs.route.LogLimiter;
import io.netec.hdfs.route.Transport;
import io.netec.hdfs.switchroute.wire.NetecPacket;
import io.netec.hdfs.switchroute.wire.NetecPacketCodec;
import io.netec.hdfs.switchroute.wire.ProtocolException;
import io.netec.hdfs.switchroute.wire.StreamRequest;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.concurrent.DefaultEventExecutorGroup;
import io.netty.util.concurrent.EventExecutorGroup;
import java.io.Closeable;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Streams a range of a local internal block to a NetEC switch as DATA packets (the survivor
 * side of docs/protocol.md): at most the window the switch allowed beyond the reader's ACK,
 * from the ACK's stripe again on RETX, closed on FIN. Block reads run on their own executors,
 * never on the I/O threads; a channel that is not writable pauses the stream (back-pressure).
 *
 * <p>By job: this class binds the ports and admits streams; {@link AgentTcpStream} and {@link
 * AgentDatagramStreams} are the two transports' I/O, both driving a {@link SendWindow} (the
 * go-back-N window) and a {@link UnitReader} (the block read into DATA frames).
 */
public final class SurvivorAgent implements Closeable {
  static final Logger LOG = LoggerFactory.getLogger(SurvivorAgent.class);
  /** Lines peers can cause: one per cause every 10 s, then a count. */
  final LogLimiter logs = new LogLimiter(LOG, 10_000);

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
  final LongAdder idleClosed = new LongAdder();

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
                  .addLast(readers, new AgentTcpStream(SurvivorAgent.this));
            }
          }).bind(bindHost, port).sync().channel();
      datagrams = new Bootstrap().group(io).channel(Transport.datagramChannel())
          .option(ChannelOption.WRITE_BUFFER_WATER_MARK, Transport.WATER_MARK)
          .option(ChannelOption.SO_RCVBUF, 1 << 20).option(ChannelOption.SO_SNDBUF, 4 << 20)
          .handler(new AgentDatagramStreams(this, readers, idleTimeoutMs))
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

  /**
   * A HELLO's stream, admitted: its request parsed, counted against the agent's streams, its
   * block checked (token, length). Its {@link UnitReader#close} gives the count back. A refusal
   * is counted and logged here; the caller answers it with an error HELLO (the reason).
   */
  UnitReader admit(NetecPacket hello) throws IOException {
    try {
      StreamRequest req = StreamRequest.fromHello(hello);
      if (streams.incrementAndGet() > maxStreams) {
        streams.decrementAndGet();
        throw new IOException("agent busy: " + maxStreams + " streams");
      }
      UnitReader unit = new UnitReader(req, hello.task(), hello.slotArray(), hello.sender(),
          source, bytesSent, streams::decrementAndGet);
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
}
