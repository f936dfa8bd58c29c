package io.netec.hdfs.switchroute;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netec.hdfs.switchroute.wire.NetecPacket;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The reader's receive window, without a socket: order, lengths, the window, when to ACK. */
class ReceiveWindowTest {
  private static final int TASK = 7;
  private static final int ARRAY = 1;
  private static final int P = 16;

  private final List<ByteArrayOutputStream> out = new ArrayList<>();

  /** A window over {@code rows} streams of {@code length} bytes, sinks into {@link #out}. */
  private ReceiveWindow window(int rows, long length, long[] rowLength, int slots) {
    SwitchClient.Sink[] sinks = new SwitchClient.Sink[rows];
    for (int r = 0; r < rows; r++) {
      ByteArrayOutputStream o = new ByteArrayOutputStream();
      out.add(o);
      sinks[r] = o::write;
    }
    return new ReceiveWindow(TASK, ARRAY, slots, rows, length, P, rowLength, sinks);
  }

  /** Row r's stream: byte i is (r * 31 + i) mod 251. */
  private static byte[] stream(int row, long length) {
    byte[] b = new byte[(int) length];
    for (int i = 0; i < b.length; i++) {
      b[i] = (byte) ((row * 31 + i) % 251);
    }
    return b;
  }

  /** Stripe seq of row r as the switch sends it: whole words, zero past the stream's end. */
  private static NetecPacket result(int row, long seq, long length) {
    byte[] s = stream(row, length);
    int n = (int) Math.min(P, length - seq * P);
    byte[] payload = new byte[(n + 3) & -4];
    System.arraycopy(s, (int) (seq * P), payload, 0, n);
    return new NetecPacket(NetecPacket.RESULT, TASK, ARRAY, row, 0, 0, seq, 0, payload);
  }

  @Test
  void packetsInAnyOrderReachEachSinkInOrderCutToTheRowsLength() throws IOException {
    long length = 10 * P + 5; // a last stripe of 5 bytes, sent as 8
    long[] rowLength = {length, length - 9, 3}; // a row may be shorter than the stream
    ReceiveWindow w = window(3, length, rowLength, 64);
    assertEquals(11, w.stripes());
    List<NetecPacket> packets = new ArrayList<>();
    for (int r = 0; r < 3; r++) {
      for (long s = 0; s < 11; s++) {
        packets.add(result(r, s, length));
        packets.add(result(r, s, length)); // each twice: duplicates change nothing
      }
    }
    Collections.shuffle(packets, new Random(3));
    java.util.Set<String> seen = new java.util.HashSet<>();
    for (NetecPacket p : packets) {
      w.accept(p);
      seen.add(p.sender() + "/" + p.seq());
      assertEquals(seen.size() == 33, w.done(), "done once every stripe of every row came");
    }
    assertTrue(w.done());
    for (int r = 0; r < 3; r++) {
      assertArrayEquals(Arrays.copyOf(stream(r, length), (int) rowLength[r]),
          out.get(r).toByteArray(), "row " + r);
    }
  }

  @Test
  void firstMissingIsTheSlowestRows() throws IOException {
    long length = 8 * P;
    ReceiveWindow w = window(2, length, new long[] {length, length}, 8);
    for (long s = 0; s < 5; s++) {
      w.accept(result(0, s, length));
    }
    assertEquals(0, w.firstMissing());
    w.accept(result(1, 1, length)); // early: held
    assertEquals(0, w.firstMissing());
    w.accept(result(1, 0, length)); // 0 and the held 1 delivered
    assertEquals(2, w.firstMissing());
    assertEquals(2 * P, out.get(1).size());
  }

  /** Feeds a one-row window its stripes in order, one a read; the seqs of the ACKs due. */
  private static List<Long> ackedInOrder(ReceiveWindow w, long length) throws IOException {
    List<Long> acked = new ArrayList<>();
    for (long s = 0; s < w.stripes(); s++) {
      long before = w.firstMissing();
      w.accept(result(0, s, length));
      assertTrue(w.moved(before));
      if (w.takeAckDue()) {
        acked.add(w.ack(0).seq());
      }
    }
    return acked;
  }

  @Test
  void acksEveryEighthOfTheWindowAndAtTheLast() throws IOException {
    long length = 20 * P;
    ReceiveWindow w = window(1, length, new long[] {length}, 16); // an ACK every 2 stripes
    assertEquals(List.of(2L, 4L, 6L, 8L, 10L, 12L, 14L, 16L, 18L, 20L), ackedInOrder(w, length));
    NetecPacket a = w.ack(0);
    assertEquals(NetecPacket.ACK, a.type());
    assertEquals(TASK, a.task());
    assertEquals(16, a.window());
    long before = w.firstMissing();
    w.accept(result(0, 3, length)); // a late duplicate: no progress, no ACK
    assertFalse(w.moved(before));
    assertFalse(w.takeAckDue());
  }

  @Test
  void theLastStripeIsAckedThoughFewerThanAnEighthCameSinceTheLastAck() throws IOException {
    long length = 21 * P;
    ReceiveWindow w = window(1, length, new long[] {length}, 16); // an ACK every 2 stripes
    List<Long> acked = ackedInOrder(w, length);
    assertEquals(21L, acked.get(acked.size() - 1), "the last ACK names the stream's end");
    assertEquals(11, acked.size());
  }

  @Test
  void stripesTakenInOneReadCountTogetherTowardTheNextAck() throws IOException {
    long length = 12 * P;
    ReceiveWindow w = window(1, length, new long[] {length}, 64); // an ACK every 8 stripes
    long before = w.firstMissing();
    for (long s = 0; s < 5; s++) {
      w.accept(result(0, s, length));
    }
    assertTrue(w.moved(before));
    assertFalse(w.takeAckDue(), "5 of 8");
    before = w.firstMissing();
    for (long s = 5; s < 9; s++) {
      w.accept(result(0, s, length));
    }
    assertTrue(w.moved(before));
    assertTrue(w.takeAckDue(), "9 since the last ACK");
    assertEquals(9, w.ack(0).seq());
  }

  @Test
  void anAckCarriesItsFlagsTheReadersMarkAndAWindowThatFitsSixteenBits() throws IOException {
    long length = 4 * P;
    ReceiveWindow w = window(1, length, new long[] {length}, 100_000);
    w.accept(result(0, 0, length));
    for (int flags : new int[] {0, NetecPacket.FLAG_RETX, NetecPacket.FLAG_FIN}) {
      NetecPacket a = w.ack(flags);
      assertEquals(flags, a.flags());
      assertEquals(NetecPacket.READER, a.sender());
      assertEquals(ARRAY, a.slotArray());
      assertEquals(1, a.seq());
      assertEquals(0xffff, a.window(), "100,000 slots: the window field's largest");
    }
  }

  @Test
  void anEarlyStripeIsCopiedOutOfTheReceiveBuffer() throws IOException {
    long length = 4 * P;
    ReceiveWindow w = window(1, length, new long[] {length}, 8);
    byte[] buffer = new byte[64]; // as a TCP read's buffer: reused for the next packets
    NetecPacket early = result(0, 1, length);
    System.arraycopy(early.payload(), 0, buffer, 8, P);
    w.accept(new NetecPacket(NetecPacket.RESULT, TASK, ARRAY, 0, 0, 0, 1, 0, buffer, 8, P));
    java.util.Arrays.fill(buffer, (byte) 0x5a); // the buffer reused before stripe 0 comes
    w.accept(result(0, 0, length));
    w.accept(result(0, 2, length));
    w.accept(result(0, 3, length));
    assertArrayEquals(stream(0, length), out.get(0).toByteArray());
  }

  @Test
  void aWindowWhoseRowsDoNotMatchItsSinksIsRefused() {
    SwitchClient.Sink[] one = {(b, off, len) -> { }};
    assertThrows(IllegalArgumentException.class,
        () -> new ReceiveWindow(TASK, ARRAY, 8, 2, P, P, new long[] {P, P}, one));
    assertThrows(IllegalArgumentException.class,
        () -> new ReceiveWindow(TASK, ARRAY, 8, 1, P, P, new long[] {P, P}, one));
  }

  @Test
  void aSmallWindowAcksEachStripe() throws IOException {
    long length = 3 * P;
    ReceiveWindow w = window(1, length, new long[] {length}, 4); // 4 / 8 = 0: every stripe
    assertEquals(List.of(1L, 2L, 3L), ackedInOrder(w, length));
  }

  @Test
  void earlyStripesBeyondTheWindowAreRefused() throws IOException {
    long length = 10 * P;
    ReceiveWindow w = window(1, length, new long[] {length}, 2);
    w.accept(result(0, 1, length));
    w.accept(result(0, 2, length));
    IOException e = assertThrows(IOException.class, () -> w.accept(result(0, 3, length)));
    assertTrue(e.getMessage().contains("beyond the window"), e.getMessage());
    assertEquals(0, out.get(0).size(), "nothing delivered out of order");
  }

  @Test
  void packetsNotOfTheTaskAreNotExpectedAndRefused() {
    long length = 4 * P + 4;
    ReceiveWindow w = window(2, length, new long[] {length, length}, 8);
    byte[] full = new byte[P];
    List<NetecPacket> wrong = List.of(
        new NetecPacket(NetecPacket.RESULT, TASK + 1, ARRAY, 0, 0, 0, 0, 0, full), // task
        new NetecPacket(NetecPacket.RESULT, TASK, ARRAY + 1, 0, 0, 0, 0, 0, full), // slot array
        new NetecPacket(NetecPacket.RESULT, TASK, ARRAY, 2, 0, 0, 0, 0, full), // no row 2
        new NetecPacket(NetecPacket.RESULT, TASK, ARRAY, 0, 0, 0, 5, 0, new byte[4]), // seq
        new NetecPacket(NetecPacket.RESULT, TASK, ARRAY, 0, 0, 0, 0, 0, new byte[P - 4]), // len
        new NetecPacket(NetecPacket.RESULT, TASK, ARRAY, 0, 0, 0, 4, 0, full), // last is 4
        new NetecPacket(NetecPacket.ACK, TASK, ARRAY, 0, 0, 0, 0, 0, full)); // type
    for (NetecPacket p : wrong) {
      assertFalse(w.expected(p), p.toString());
      assertThrows(IOException.class, () -> w.accept(p), p.toString());
    }
    assertTrue(w.expected(new NetecPacket(NetecPacket.RESULT, TASK, ARRAY, 1, 0, 0, 4, 0,
        new byte[4])));
    assertEquals(0, w.firstMissing());
  }
}
