package io.netec.hdfs.switchroute;

import io.netec.hdfs.switchroute.wire.NetecPacket;
import io.netec.hdfs.switchroute.wire.ProtocolException;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.socket.DatagramPacket;
import io.netty.util.ReferenceCountUtil;
import java.io.InterruptedIOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The event loop's side of one task's connection: packets decoded (datagrams here, one a
 * packet; a TCP stream by the decoder before it) into a queue the reader's thread takes
 * from, then the connection's end or failure. A read's packets go to the reader together,
 * when the read completes: one wake-up a socket read, not one a packet (which cost a 4 MiB
 * unit 10-80 ms at 1 Gbit/s in 1 KiB packets). Reading stops at {@value #HIGH}
 * packets held and starts again when the reader has taken the count down to {@value
 * #LOW} (the event loop does both, so neither can undo the other late).
 */
final class ReaderInbox extends ChannelInboundHandlerAdapter {
  /** Packets an inbox holds before its connection stops reading, and where it reads again. */
  static final int HIGH = 64;
  static final int LOW = 16;
  /**
   * The longest HELLO the switch sends a reader (a cookie, a task's failure): its JSON within
   * 4 KiB, whatever the task's payload (which may be as small as 64 bytes).
   */
  static final int MAX_HELLO_FRAME = NetecPacket.HEADER_BYTES + 4096;
  /** The connection ended (the switch closed it). */
  static final Object CLOSED = new Object();
  private final BlockingQueue<Object> queue = new LinkedBlockingQueue<>();
  /** The event loop's: this read's packets, queued as one item when the read completes. */
  private List<Object> batch = new ArrayList<>();
  /** The reader's: the packets of a batch it took and has not yet returned. */
  private final ArrayDeque<Object> taken = new ArrayDeque<>();
  private final AtomicInteger held = new AtomicInteger();
  private final int maxFrame;
  private volatile Channel channel;
  /** After the FIN: late duplicates are read and dropped while the switch closes. */
  private volatile boolean discard;
  /** Bytes of packets received, headers included: the reader's ingress. */
  final AtomicLong bytes = new AtomicLong();
  /** Datagram mode: datagrams that were no packet (each travels alone: RETX recovers it). */
  final AtomicLong undecodable = new AtomicLong();

  ReaderInbox(int maxFrame) {
    this.maxFrame = maxFrame;
  }

  @Override
  public void handlerAdded(ChannelHandlerContext ctx) {
    channel = ctx.channel();
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    Object item;
    if (msg instanceof DatagramPacket) {
      ByteBuf in = ((DatagramPacket) msg).content();
      bytes.addAndGet(in.readableBytes());
      byte[] frame = new byte[in.readableBytes()];
      in.readBytes(frame);
      ReferenceCountUtil.release(msg);
      try {
        item = NetecPacket.decodeFrame(frame, 0, frame.length);
      } catch (ProtocolException e) {
        undecodable.incrementAndGet();
        return;
      }
      if (tooLong((NetecPacket) item)) {
        undecodable.incrementAndGet();
        return;
      }
    } else {
      NetecPacket p = (NetecPacket) msg; // from the decoder: its own copy of the frame
      bytes.addAndGet(p.encodedLength());
      item = tooLong(p) ? new ProtocolException("a packet of " + p.encodedLength()
          + " bytes, more than the task's " + maxFrame) : p;
    }
    if (discard) {
      return;
    }
    batch.add(item);
    if (held.incrementAndGet() >= HIGH) {
      ctx.channel().config().setAutoRead(false);
    }
  }

  /** Longer than the task's packets (a HELLO: than {@link #MAX_HELLO_FRAME}). */
  private boolean tooLong(NetecPacket p) {
    return p.encodedLength() > (p.type() == NetecPacket.HELLO ? Math.max(maxFrame,
        MAX_HELLO_FRAME) : maxFrame);
  }

  @Override
  public void channelReadComplete(ChannelHandlerContext ctx) {
    handOver();
  }

  private void handOver() {
    if (!batch.isEmpty()) {
      queue.add(batch);
      batch = new ArrayList<>();
    }
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    handOver();
    queue.add(CLOSED);
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    handOver();
    queue.add(cause); // a corrupt frame, a reset; datagrams: an ICMP unreachable
    ctx.close();
  }

  /**
   * The next packet, the connection's end ({@link #CLOSED}) or its failure (a Throwable);
   * null when nothing came within {@code ms}.
   */
  Object poll(long ms) throws InterruptedIOException {
    Object m = taken.poll();
    if (m == null) {
      try {
        m = ms > 0 ? queue.poll(ms, TimeUnit.MILLISECONDS) : queue.poll();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new InterruptedIOException("interrupted while reading from the switch");
      }
      if (m instanceof List) {
        taken.addAll((List<?>) m);
        m = taken.poll();
      }
    }
    if (m instanceof NetecPacket || m instanceof ProtocolException) {
      if (held.decrementAndGet() == LOW) {
        Channel c = channel;
        c.eventLoop().execute(() -> c.config().setAutoRead(true));
      }
    }
    return m;
  }

  /** From the FIN on: whatever comes is dropped, and read, so the switch's close is seen. */
  void discard() {
    discard = true;
    queue.clear();
    taken.clear();
    Channel c = channel;
    c.eventLoop().execute(() -> c.config().setAutoRead(true));
  }
}
