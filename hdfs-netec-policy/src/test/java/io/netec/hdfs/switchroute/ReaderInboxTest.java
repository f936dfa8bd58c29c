package io.netec.hdfs.switchroute;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netec.hdfs.switchroute.wire.NetecPacket;
import io.netec.hdfs.switchroute.wire.ProtocolException;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.channel.socket.DatagramPacket;
import java.net.InetSocketAddress;
import org.junit.jupiter.api.Test;

/**
 * The reader's inbox on a channel without sockets: packets in order, a read's together when it
 * completes, reading stopped while it
 * holds {@value ReaderInbox#HIGH} and started again once the reader took it down to
 * {@value ReaderInbox#LOW} (back-pressure: a reader whose sink is slow holds the switch
 * back through TCP's window, it does not queue the stream in memory), the end after the
 * packets, a frame longer than the task's refused, datagrams that are no packet counted.
 */
class ReaderInboxTest {
  private static final int PAYLOAD = 1024;
  private static final int MAX_FRAME = NetecPacket.HEADER_BYTES + PAYLOAD;

  private static NetecPacket result(long seq, int payload) {
    return new NetecPacket(NetecPacket.RESULT, 1, 0, 0, 0, 0, seq, 0, new byte[payload]);
  }

  @Test
  void readingStopsAtTheHighMarkAndStartsAgainAtTheLowOne() throws Exception {
    ReaderInbox inbox = new ReaderInbox(MAX_FRAME);
    EmbeddedChannel ch = new EmbeddedChannel(inbox);
    for (int i = 0; i < ReaderInbox.HIGH - 1; i++) {
      ch.writeInbound(result(i, PAYLOAD));
    }
    assertTrue(ch.config().isAutoRead(), "below the high mark: reading");
    ch.writeInbound(result(ReaderInbox.HIGH - 1, PAYLOAD));
    assertFalse(ch.config().isAutoRead(), "at the high mark: reading stops");
    long seq = 0;
    for (; seq < ReaderInbox.HIGH - ReaderInbox.LOW - 1; seq++) {
      assertEquals(seq, ((NetecPacket) inbox.poll(0)).seq(), "in order");
    }
    ch.runPendingTasks();
    assertFalse(ch.config().isAutoRead(), "above the low mark: still stopped");
    assertEquals(seq++, ((NetecPacket) inbox.poll(0)).seq());
    ch.runPendingTasks(); // the event loop starts reading again: the reader asked it to
    assertTrue(ch.config().isAutoRead(), "at the low mark: reading again");
    for (; seq < ReaderInbox.HIGH; seq++) {
      assertEquals(seq, ((NetecPacket) inbox.poll(0)).seq());
    }
    assertNull(inbox.poll(10), "nothing more: null after the wait");
    assertEquals((long) ReaderInbox.HIGH * (NetecPacket.HEADER_BYTES + PAYLOAD),
        inbox.bytes.get(), "every packet's bytes counted");
    ch.close();
    assertSame(ReaderInbox.CLOSED, inbox.poll(0), "the end after the packets");
  }

  @Test
  void aReadsPacketsGoToTheReaderTogetherWhenTheReadCompletes() throws Exception {
    ReaderInbox inbox = new ReaderInbox(MAX_FRAME);
    EmbeddedChannel ch = new EmbeddedChannel(inbox);
    ch.pipeline().fireChannelRead(result(0, PAYLOAD));
    ch.pipeline().fireChannelRead(result(1, PAYLOAD));
    assertNull(inbox.poll(0), "mid-read: nothing handed over yet (one wake-up a read)");
    ch.pipeline().fireChannelReadComplete();
    assertEquals(0L, ((NetecPacket) inbox.poll(0)).seq());
    assertEquals(1L, ((NetecPacket) inbox.poll(0)).seq());
    ch.pipeline().fireChannelRead(result(2, PAYLOAD));
    ch.close(); // what a read brought before the end comes before the end
    assertEquals(2L, ((NetecPacket) inbox.poll(0)).seq());
    assertSame(ReaderInbox.CLOSED, inbox.poll(0));
  }

  @Test
  void aFrameLongerThanTheTasksIsAFailureInItsPlace() throws Exception {
    ReaderInbox inbox = new ReaderInbox(MAX_FRAME);
    EmbeddedChannel ch = new EmbeddedChannel(inbox);
    ch.writeInbound(result(0, PAYLOAD));
    ch.writeInbound(result(1, PAYLOAD + 4));
    assertEquals(0L, ((NetecPacket) inbox.poll(0)).seq());
    Object m = inbox.poll(0);
    assertTrue(m instanceof ProtocolException && ((Throwable) m).getMessage().contains(
        "more than the task's " + MAX_FRAME), String.valueOf(m));
    ch.finishAndReleaseAll();
  }

  @Test
  void theSwitchsErrorHelloPassesWhateverTheTasksPayload() throws Exception {
    int small = NetecPacket.HEADER_BYTES + 64; // a task of 64-byte packets
    ReaderInbox inbox = new ReaderInbox(small);
    EmbeddedChannel ch = new EmbeddedChannel(inbox);
    NetecPacket error = io.netec.hdfs.switchroute.wire.StreamRequest.errorHello(1, 0,
        NetecPacket.READER, "cannot reach survivor 0 at 127.0.0.1:1: " + "x".repeat(300),
        new int[] {0});
    assertTrue(error.encodedLength() > small);
    ch.writeInbound(error);
    InetSocketAddress vip = new InetSocketAddress("127.0.0.1", 9);
    ch.writeInbound(new DatagramPacket(Unpooled.wrappedBuffer(error.toBytes()), vip, vip));
    for (int i = 0; i < 2; i++) { // over TCP and in a datagram
      Object m = inbox.poll(0);
      assertTrue(m instanceof NetecPacket && ((NetecPacket) m).type() == NetecPacket.HELLO,
          String.valueOf(m));
    }
    assertEquals(0, inbox.undecodable.get());
    ch.finishAndReleaseAll();
  }

  @Test
  void datagramsThatAreNoPacketAreCountedAndDropped() throws Exception {
    ReaderInbox inbox = new ReaderInbox(MAX_FRAME);
    EmbeddedChannel ch = new EmbeddedChannel(inbox);
    InetSocketAddress vip = new InetSocketAddress("127.0.0.1", 9);
    byte[] good = result(7, PAYLOAD).toBytes();
    byte[] bad = good.clone();
    bad[NetecPacket.HEADER_BYTES + 3] ^= 1; // a payload bit flipped: its checksum fails
    ch.writeInbound(new DatagramPacket(Unpooled.wrappedBuffer(bad), vip, vip));
    ch.writeInbound(new DatagramPacket(Unpooled.wrappedBuffer(good), vip, vip));
    assertEquals(7L, ((NetecPacket) inbox.poll(0)).seq(), "the good one passed");
    assertNull(inbox.poll(0), "the bad one dropped");
    assertEquals(1, inbox.undecodable.get());
    assertEquals(2L * good.length, inbox.bytes.get(), "both datagrams' bytes counted");
    ch.finishAndReleaseAll();
  }
}
