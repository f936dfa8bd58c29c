package io.netec.hdfs.switchroute;

import io.netec.hdfs.route.LogLimiter;
import io.netec.hdfs.switchroute.wire.NetecPacket;
import io.netec.hdfs.switchroute.wire.ProtocolException;
import io.netec.hdfs.switchroute.wire.StreamRequest;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.socket.DatagramPacket;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;

/**
 * Datagram mode: every task's packets on one UDP channel. The reader's HELLO (with the
 * task's secret) binds the task to its address; then its ACKs go, rewritten, to every
 * survivor, and survivors' DATA, from the agent addresses of the setup only, is aggregated
 * into RESULTs to the reader. A packet that fails its checks is dropped and counted: with no
 * connection to lose, retransmission recovers it.
 */
final class DatagramHandler extends SimpleChannelInboundHandler<DatagramPacket> {
  /**
   * ACK copies an agent gets before it has sent DATA: enough for the RETX that recovers a
   * first window lost whole, few enough that a setup naming some host as agents makes the
   * switch send it a bounded number of packets (with the HELLOs, at most 22 per agent).
   */
  static final int DATAGRAM_UNHEARD_ACKS = 16;
  private final SoftwareSwitch sw;

  DatagramHandler(SoftwareSwitch sw) {
    this.sw = sw;
  }

  @Override
  protected void channelRead0(ChannelHandlerContext ctx, DatagramPacket d) {
    NetecPacket p;
    try {
      p = NetecPacket.decodeFrame(d.content().nioBuffer()); // a view: done with it here
    } catch (ProtocolException e) {
      sw.counters.dropped.increment();
      sw.logs.info("datagram-bad", "Dropped a datagram from {}: {}", d.sender(), e.getMessage());
      return;
    }
    InetSocketAddress from = d.sender();
    SwitchSession child = sw.children.of(from, p);
    if (child != null) {
      // an attached child's parent (docs/protocol.md, "Partial sums over datagrams"): its
      // copy of its reader's ACK is this task's reader ACK; anything else from it (the
      // HELLOs it sends its survivors) is dropped, and so is all before the child is bound
      // on this loop
      NetecPacket ack = null;
      if (child.datagramChannel != null && !child.done()) {
        child.startSurvivors(); // the parent is bound: it sent this
        ack = child.fromReader(p);
      }
      if (ack == null) {
        sw.counters.dropped.increment();
      } else {
        toSurvivors(child, ack);
      }
      return;
    }
    SwitchSession l = sw.table.lookup(p.task(), p.slotArray());
    if (l == null || !l.task.setup().datagram()) {
      sw.counters.dropped.increment();
      return;
    }
    if (p.type() == NetecPacket.HELLO && p.sender() == NetecPacket.READER) {
      // the first HELLO with the secret and the cookie of its source address takes the
      // task; repeats (a HELLO may be lost, so the reader sends it until data comes) and
      // forgeries change nothing
      if (l.readerAddress != null) {
        return; // bound: nothing to parse
      }
      String[] secretAndCookie = StreamRequest.readerFields(p);
      if (!l.secretMatches(secretAndCookie[0])) {
        return;
      }
      String cookie = sw.returnCookies.cookie(l.task.taskId(), l.task.slotArray(), l.secret,
          from);
      if (!ReturnCookies.same(cookie, secretAndCookie[1])) {
        // the source address is not proven yet: one answer there, never larger than the
        // HELLO that came from it (a forged source gets no more than the forger sent)
        NetecPacket answer = StreamRequest.cookieHello(p.task(), p.slotArray(), cookie);
        if (answer.toBytes().length <= d.content().readableBytes()) {
          sw.counters.cookies.increment();
          ctx.write(new DatagramPacket(Unpooled.wrappedBuffer(answer.toBytes()), from),
              ctx.voidPromise());
        }
        return;
      }
      if (sw.table.claim(l)) {
        l.bindDatagram(ctx.channel(), from);
      }
      return;
    }
    if (l.readerAddress == null || l.done()) {
      sw.counters.dropped.increment();
      return;
    }
    if (from.equals(l.readerAddress) && l.parent == null) {
      toSurvivors(l, p);
      return;
    }
    int sender = p.sender();
    if (sender >= l.agents.length || !from.equals(l.agents[sender])) {
      sw.counters.dropped.increment();
      return;
    }
    if (p.type() == NetecPacket.HELLO) {
      l.fail("survivor " + sender + " refused: "
          + new String(p.payload(), StandardCharsets.UTF_8));
      return;
    }
    l.heard[sender] = true;
    sw.counters.bytesIn.add(p.payloadLength());
    l.data(p, l::toReader);
  }

  /** The reader's ACK {@code p}, checked and rewritten by the task (EBSN), to every survivor. */
  private static void toSurvivors(SwitchSession l, NetecPacket p) {
    NetecPacket ack = l.readerAck(p);
    if (ack == null) {
      return;
    }
    for (int i = 0; i < l.agents.length; i++) {
      if (!l.heard[i] && ++l.unheardAcks[i] > DATAGRAM_UNHEARD_ACKS) {
        continue; // the ACKs are no reflector: a silent agent gets only a few
      }
      // each copy names its survivor, as a P4 switch's replicas do: one agent may serve
      // several senders of a task from one address (a FIN too: the streams end)
      l.sendDatagram(new NetecPacket(ack.type(), ack.task(), ack.slotArray(), i,
          ack.flags(), ack.slot(), ack.seq(), ack.window(), ack.payload()), l.agents[i]);
    }
    if (l.task.finished()) {
      l.complete();
    }
  }

  @Override
  public void channelReadComplete(ChannelHandlerContext ctx) {
    ctx.flush();
    ctx.fireChannelReadComplete();
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    sw.logs.warn("datagram-error", "Datagram channel: {}", LogLimiter.oneLine(cause));
  }
}
