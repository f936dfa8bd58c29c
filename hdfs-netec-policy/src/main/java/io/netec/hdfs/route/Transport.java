package io.netec.hdfs.route;

import io.netty.channel.AdaptiveRecvByteBufAllocator;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollDatagramChannel;
import io.netty.channel.epoll.EpollEventLoopGroup;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.DatagramChannel;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioDatagramChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import java.util.concurrent.ThreadFactory;

/**
 * The Netty transport of every port the plugin opens (the software switch and its survivor
 * agents, the INEC join server, the proof service): Linux's native epoll where Netty's native
 * library loads (Hadoop ships it with Netty), else Java NIO. Epoll reads and writes straight
 * from direct buffers' addresses (writev of a whole batch of frames in one call) and needs no
 * selector wake-ups, which is per-packet CPU the data path spends otherwise.
 */
public final class Transport {
  /**
   * A channel turns unwritable above this many queued bytes: a batch of frames (the agents
   * build one per writability window) and a switch's backlog to a reader are a few dozen
   * frames, not Netty's default two (64 KiB), which paused and resumed every stream per pair
   * of packets.
   */
  public static final WriteBufferWaterMark WATER_MARK =
      new WriteBufferWaterMark(512 << 10, 1 << 20);

  /**
   * Reads of survivor streams: up to 1 MiB a read (Netty's default stops at 64 KiB, two
   * 32 KiB frames a system call), sized by what the last reads brought.
   */
  public static final AdaptiveRecvByteBufAllocator STREAM_READS =
      new AdaptiveRecvByteBufAllocator(4096, 64 << 10, 1 << 20);

  private static final boolean EPOLL = epollLoads();

  private static boolean epollLoads() {
    try {
      return Epoll.isAvailable();
    } catch (LinkageError e) { // a Hadoop without Netty's epoll classes
      return false;
    }
  }

  private Transport() {
  }

  /** "epoll" or "nio": what this JVM's data connections use (logged at start). */
  public static String name() {
    return EPOLL ? "epoll" : "nio";
  }

  public static EventLoopGroup group(int threads, ThreadFactory factory) {
    return EPOLL ? new EpollEventLoopGroup(threads, factory)
        : new NioEventLoopGroup(threads, factory);
  }

  public static Class<? extends ServerChannel> serverChannel() {
    return EPOLL ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
  }

  public static Class<? extends SocketChannel> socketChannel() {
    return EPOLL ? EpollSocketChannel.class : NioSocketChannel.class;
  }

  /** Datagram mode's channel: one NetEC packet per UDP datagram (docs/protocol.md). */
  public static Class<? extends DatagramChannel> datagramChannel() {
    return EPOLL ? EpollDatagramChannel.class : NioDatagramChannel.class;
  }
}
