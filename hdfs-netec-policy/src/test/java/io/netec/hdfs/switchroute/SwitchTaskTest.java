package io.netec.hdfs.switchroute;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netec.hdfs.codec.CoderBackend;
import io.netec.hdfs.codec.NetecCoding;
import io.netec.hdfs.codec.RsMatrix;
import io.netec.hdfs.switchroute.SwitchTask.Verdict;
import io.netec.hdfs.switchroute.wire.NetecPacket;
import io.netec.hdfs.switchroute.wire.ProtocolException;
import io.netec.hdfs.switchroute.wire.SetupRequest;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The switch's per-packet rules on real RS stripes. A packet-level simulation runs whole tasks:
 * k survivors obeying EBSN and go-back-N, links that drop, duplicate, reorder and flip bits
 * (bit flips go through the real decoder, which must refuse them), lost RESULTs, a 10x slower
 * survivor; the reader's rebuilt streams must equal the erased units byte for byte.
 */
class SwitchTaskTest {
  private static final int P = 256;

  /** A block group cut to stream length L, its erased units, and the setup that rebuilds them. */
  static final class Group {
    final int k;
    final int m;
    final int[] erased;
    final int[] survivors;
    final byte[][] units; // k+m units of L bytes, zeros past each unit's length
    final long[] unitLength;
    final SetupRequest setup;

    Group(int k, int m, int[] erased, int length, long seed) throws ProtocolException {
      this.k = k;
      this.m = m;
      this.erased = erased;
      Random rnd = new Random(seed);
      units = new byte[k + m][length];
      unitLength = new long[k + m];
      for (int i = 0; i < k; i++) {
        // as in a last HDFS stripe: later data units shorter, parity as long as unit 0
        unitLength[i] = i == 0 ? length : length - rnd.nextInt(length / 2);
        byte[] b = new byte[(int) unitLength[i]];
        rnd.nextBytes(b);
        System.arraycopy(b, 0, units[i], 0, b.length);
      }
      byte[][] parity = new byte[m][length];
      new NetecCoding.Encoder(k, m, CoderBackend.JAVA, "sim").encode(length,
          Arrays.copyOf(units, k), new int[k], parity, new int[m]);
      for (int j = 0; j < m; j++) {
        units[k + j] = parity[j];
        unitLength[k + j] = length;
      }
      List<Integer> live = new ArrayList<>();
      for (int i = 0; i < k + m && live.size() < k; i++) {
        final int idx = i;
        if (Arrays.stream(erased).noneMatch(e -> e == idx)) {
          live.add(i);
        }
      }
      survivors = live.stream().mapToInt(Integer::intValue).toArray();
      byte[] rows = RsMatrix.decodeRows(k, m, survivors, erased);
      byte[][] coefficients = new byte[erased.length][];
      for (int r = 0; r < erased.length; r++) {
        coefficients[r] = Arrays.copyOfRange(rows, r * k, (r + 1) * k);
      }
      List<SetupRequest.Survivor> sv = new ArrayList<>();
      for (int s = 0; s < k; s++) {
        sv.add(new SetupRequest.Survivor(s, "dn" + survivors[s] + ":50200",
            "blk_" + survivors[s], unitLength[survivors[s]], ""));
      }
      setup = new SetupRequest("blk_g", P, length, 30_000, sv, coefficients);
    }

    /** Sender s's DATA packet for stripe seq, zero-padded as the protocol says. */
    NetecPacket data(SwitchTask t, int s, long seq) {
      int len = setup.payloadLength(seq);
      byte[] payload = Arrays.copyOfRange(units[survivors[s]], (int) (seq * P),
          (int) (seq * P) + len);
      return new NetecPacket(NetecPacket.DATA, t.taskId(), t.slotArray(), s, 0,
          (int) (seq % t.slots()), seq, 0, payload);
    }
  }

  /** Link and sender faults of one simulated run, as probabilities per packet. */
  static final class Faults {
    double drop;
    double duplicate;
    double bitFlip;
    double dropResult;
    int reorderWindow = 1;
    int slowSender = -1;
  }

  /** Outcome of a simulated run. */
  static final class Run {
    byte[][] rebuilt;
    long maxSpan;
    long maxPartialSlots;
    int corruptRefused;
  }

  static Run simulate(Group g, SwitchTask t, Faults f, long seed) throws Exception {
    Random rnd = new Random(seed);
    SetupRequest setup = t.setup();
    int k = setup.k();
    int rows = setup.rows();
    long stripes = setup.stripes();
    int exposed = t.slots() / 2;
    long[] next = new long[k];
    long[] limit = new long[k];
    Arrays.fill(limit, exposed);
    List<NetecPacket> inFlight = new ArrayList<>();
    Run run = new Run();
    run.rebuilt = new byte[rows][(int) setup.length()];
    boolean[][] got = new boolean[rows][(int) stripes];
    long[] firstMissing = {0};
    int[] sinceAck = {0};
    List<NetecPacket> toReader = new ArrayList<>();

    for (int step = 0; firstMissing[0] < stripes; step++) {
      assertTrue(step < 5_000_000, "simulation made no progress");
      List<Integer> ready = new ArrayList<>();
      for (int s = 0; s < k; s++) {
        if (next[s] < Math.min(limit[s], stripes)) {
          ready.add(s);
        }
      }
      boolean send = !ready.isEmpty() && (inFlight.isEmpty() || rnd.nextBoolean());
      if (send) {
        int s = ready.get(rnd.nextInt(ready.size()));
        if (s == f.slowSender && rnd.nextInt(10) != 0 && inFlight.size() + ready.size() > 1) {
          continue; // the slow survivor sends one time in ten
        }
        NetecPacket p = g.data(t, s, next[s]++);
        if (rnd.nextDouble() < f.drop) {
          continue;
        }
        if (rnd.nextDouble() < f.bitFlip) {
          byte[] wire = p.toBytes();
          int bit = rnd.nextInt(wire.length * 8);
          wire[bit / 8] ^= (byte) (1 << (bit % 8));
          try {
            NetecPacket.decode(ByteBuffer.wrap(wire));
            throw new AssertionError("a flipped bit was not detected");
          } catch (ProtocolException expected) {
            run.corruptRefused++;
            continue; // the switch drops it; go-back-N resends
          }
        }
        inFlight.add(p);
        if (rnd.nextDouble() < f.duplicate) {
          inFlight.add(p);
        }
      } else if (!inFlight.isEmpty()) {
        int pick = rnd.nextInt(Math.min(f.reorderWindow, inFlight.size()));
        NetecPacket p = inFlight.remove(pick);
        toReader.clear();
        t.onData(p, toReader::add);
        run.maxSpan = Math.max(run.maxSpan, t.span());
        run.maxPartialSlots = Math.max(run.maxPartialSlots, t.partialSlots());
        for (NetecPacket r : toReader) {
          if (rnd.nextDouble() < f.dropResult) {
            continue;
          }
          int row = r.sender();
          if (!got[row][(int) r.seq()]) {
            got[row][(int) r.seq()] = true;
            // the last stripe's words past the stream's end are padding
            int n = Math.min(r.payloadLength(), run.rebuilt[row].length - (int) (r.seq() * P));
            System.arraycopy(r.payload(), 0, run.rebuilt[row], (int) (r.seq() * P), n);
          }
        }
        long before = firstMissing[0];
        while (firstMissing[0] < stripes && allRows(got, firstMissing[0])) {
          firstMissing[0]++;
        }
        sinceAck[0] += (int) (firstMissing[0] - before);
        if (sinceAck[0] >= Math.max(1, t.slots() / 4) || firstMissing[0] == stripes) {
          sinceAck[0] = 0;
          ack(t, firstMissing[0], 0, next, limit, exposed);
        }
      } else {
        // nothing can move: the reader's 200 ms timer fires, survivors go back to its ack
        ack(t, firstMissing[0], NetecPacket.FLAG_RETX, next, limit, exposed);
      }
    }
    NetecPacket fin = t.onAck(new NetecPacket(NetecPacket.ACK, t.taskId(), t.slotArray(),
        NetecPacket.READER, NetecPacket.FLAG_FIN, 0, stripes, 0xffff, new byte[0]));
    assertTrue(fin.hasFlag(NetecPacket.FLAG_FIN) && t.finished());
    return run;
  }

  private static void ack(SwitchTask t, long seq, int flags, long[] next, long[] limit,
      int exposed) {
    NetecPacket toSurvivors = t.onAck(new NetecPacket(NetecPacket.ACK, t.taskId(),
        t.slotArray(), NetecPacket.READER, flags, 0, seq, 0xffff, new byte[0]));
    assertTrue(toSurvivors.window() <= exposed, "EBSN window above I");
    for (int s = 0; s < next.length; s++) {
      limit[s] = seq + Math.max(toSurvivors.window(), 1);
      if ((flags & NetecPacket.FLAG_RETX) != 0) {
        next[s] = seq;
      }
    }
  }

  private static boolean allRows(boolean[][] got, long seq) {
    for (boolean[] row : got) {
      if (!row[(int) seq]) {
        return false;
      }
    }
    return true;
  }

  static void assertRebuilt(Group g, Run run) {
    for (int r = 0; r < g.erased.length; r++) {
      assertArrayEquals(g.units[g.erased[r]], run.rebuilt[r], "rebuilt unit " + g.erased[r]);
    }
  }

  static Stream<Arguments> shapes() {
    return Stream.of(Arguments.of(3, 2, new int[] {1}), Arguments.of(3, 2, new int[] {4, 0}),
        Arguments.of(6, 3, new int[] {7}), Arguments.of(6, 3, new int[] {8, 2, 5}));
  }

  /** Each shape with each multiplier the run has: Java tables, and ISA-L unless forced off. */
  static Stream<Arguments> shapesAndMultipliers() {
    List<String> m = io.netec.hdfs.codec.IsalNative.isAvailable() ? List.of("java", "isal")
        : List.of("java");
    return shapes().flatMap(a -> m.stream().map(x -> Arguments.of(a.get()[0], a.get()[1],
        a.get()[2], x)));
  }

  static SwitchTask task(int id, int array, int slots, SetupRequest setup, String multiplier) {
    SwitchTask t = new SwitchTask(id, array, slots, setup, multiplier.equals("isal")
        ? io.netec.hdfs.codec.MatrixAccumulator::isal
        : io.netec.hdfs.codec.MatrixAccumulator::java);
    assertEquals(multiplier, t.multiplier());
    return t;
  }

  @ParameterizedTest
  @MethodSource("shapesAndMultipliers")
  void cleanLinksRebuildWithinTheEbsnBound(int k, int m, int[] erased, String multiplier)
      throws Exception {
    Group g = new Group(k, m, erased, 40 * P + 77, k * 7 + erased.length);
    SwitchTask t = task(3, 1, 16, g.setup, multiplier);
    Run run = simulate(g, t, new Faults(), 1);
    assertRebuilt(g, run);
    assertTrue(run.maxSpan <= 16 / 2 + 1, "span " + run.maxSpan + " above I+1");
    for (Verdict v : new Verdict[] {Verdict.TOO_FAR, Verdict.SLOT_BUSY, Verdict.DUPLICATE,
        Verdict.MISMATCH}) {
      assertEquals(0, t.count(v), v.name());
    }
    assertEquals(g.setup.stripes(), t.count(Verdict.COMPLETED));
  }

  @ParameterizedTest
  @MethodSource("shapesAndMultipliers")
  void faultyLinksStillRebuildEveryByte(int k, int m, int[] erased, String multiplier)
      throws Exception {
    Group g = new Group(k, m, erased, 60 * P + 5, k * 11 + erased.length);
    Faults f = new Faults();
    f.drop = 0.03;
    f.duplicate = 0.05;
    f.bitFlip = 0.02;
    f.dropResult = 0.03;
    f.reorderWindow = 6;
    SwitchTask t = task(9, 0, 16, g.setup, multiplier);
    Run run = simulate(g, t, f, 42);
    assertRebuilt(g, run);
    assertTrue(run.corruptRefused > 0, "bit flips were injected");
    assertTrue(t.count(Verdict.DUPLICATE) + t.count(Verdict.STALE) > 0, "duplicates seen");
    assertTrue(run.maxSpan <= 16, "ring never overrun");
  }

  @Test
  void slowSurvivorPacesTheOthersWithinTheBound() throws Exception {
    Group g = new Group(6, 3, new int[] {0}, 200 * P, 5);
    Faults f = new Faults();
    f.slowSender = 2;
    SwitchTask t = new SwitchTask(1, 1, 32, g.setup);
    Run run = simulate(g, t, f, 7);
    assertRebuilt(g, run);
    assertTrue(run.maxSpan <= 32 / 2 + 1, "span " + run.maxSpan);
    assertTrue(run.maxPartialSlots <= 32 / 2 + 1, "partial slots " + run.maxPartialSlots);
    assertEquals(0, t.count(Verdict.TOO_FAR));
  }

  @Test
  void eachRuleGivesItsVerdict() throws Exception {
    Group g = new Group(3, 2, new int[] {0}, 20 * P, 3);
    SwitchTask t = new SwitchTask(4, 2, 8, g.setup);
    List<NetecPacket> out = new ArrayList<>();
    assertEquals(Verdict.AGGREGATED, t.onData(g.data(t, 0, 0), out::add));
    assertEquals(Verdict.DUPLICATE, t.onData(g.data(t, 0, 0), out::add));
    assertEquals(Verdict.AGGREGATED, t.onData(g.data(t, 1, 0), out::add));
    assertEquals(Verdict.COMPLETED, t.onData(g.data(t, 2, 0), out::add));
    assertEquals(1, out.size());
    assertArrayEquals(Arrays.copyOf(g.units[0], P), out.get(0).payload());
    assertEquals(0, t.partialSlots());

    assertEquals(Verdict.TOO_FAR, t.onData(g.data(t, 0, 8), out::add));
    assertEquals(Verdict.AGGREGATED, t.onData(g.data(t, 0, 1), out::add));
    // stripe 9 maps to slot 1, which holds live stripe 1: refused until the reader has 1
    NetecPacket nine = new NetecPacket(NetecPacket.DATA, 4, 2, 0, 0, 1, 9, 0,
        g.data(t, 0, 9).payload());
    t.onAck(new NetecPacket(NetecPacket.ACK, 4, 2, NetecPacket.READER, 0, 0, 2, 100,
        new byte[0]));
    assertEquals(Verdict.STALE, t.onData(g.data(t, 1, 1), out::add));
    // the stale partial sums of stripe 1 are cleared when stripe 9 reuses the slot
    assertEquals(Verdict.AGGREGATED, t.onData(nine, out::add));

    NetecPacket wrongTask = new NetecPacket(NetecPacket.DATA, 5, 2, 0, 0, 3, 3, 0,
        g.data(t, 0, 3).payload());
    NetecPacket wrongSlot = new NetecPacket(NetecPacket.DATA, 4, 2, 0, 0, 4, 3, 0,
        g.data(t, 0, 3).payload());
    NetecPacket wrongLength = new NetecPacket(NetecPacket.DATA, 4, 2, 0, 0, 3, 3, 0,
        new byte[10]);
    NetecPacket badSender = new NetecPacket(NetecPacket.DATA, 4, 2, 3, 0, 3, 3, 0,
        g.data(t, 0, 3).payload());
    for (NetecPacket p : List.of(wrongTask, wrongSlot, wrongLength, badSender)) {
      assertEquals(Verdict.MISMATCH, t.onData(p, out::add), p.toString());
    }
    assertNull(t.onAck(wrongTask));
  }

  @Test
  void aResendIsOwedForAPacketRefusedOrMissedOrASecondRetxWithoutProgress() throws Exception {
    Group g = new Group(3, 2, new int[] {0}, 20 * P, 6);
    SwitchTask t = new SwitchTask(4, 2, 8, g.setup);
    List<NetecPacket> out = new ArrayList<>();
    assertFalse(t.takeResend(), "nothing lost yet: a slow stream's RETX is held");
    assertTrue(t.takeResend(), "a second RETX without a stripe completing goes on (a packet "
        + "lost at a stream's end leaves no gap to see)");
    assertFalse(t.takeResend(), "after a resend, the next is held again");
    t.onData(g.data(t, 0, 0), out::add);
    assertEquals(Verdict.DUPLICATE, t.onData(g.data(t, 0, 0), out::add));
    t.onData(g.data(t, 1, 0), out::add);
    assertEquals(Verdict.COMPLETED, t.onData(g.data(t, 2, 0), out::add));
    assertFalse(t.takeResend(), "a duplicate is a copy of what was counted; a stripe completed "
        + "since the held RETX: held again");
    assertEquals(Verdict.AGGREGATED, t.onData(g.data(t, 0, 2), out::add));
    assertTrue(t.takeResend(), "stripe 1 went missing on sender 0's stream (it sent 0, then 2)");
    // a resend from stripe 1: 1 is new, 2 a copy; the stream went back, and missed nothing
    assertEquals(Verdict.AGGREGATED, t.onData(g.data(t, 0, 1), out::add));
    assertEquals(Verdict.DUPLICATE, t.onData(g.data(t, 0, 2), out::add));
    assertFalse(t.takeResend(), "a stream going back (a resend) misses nothing");
    // sender 1 sends in order up to the ring's end (stripe 0 came before): 8 is too far ahead,
    // with no gap on its stream; only the refusal owes the resend
    for (long q = 1; q < 8; q++) {
      t.onData(g.data(t, 1, q), out::add);
    }
    // each case below comes after a stripe completed, so no held RETX owes the resend
    assertEquals(Verdict.COMPLETED, t.onData(g.data(t, 2, 1), out::add));
    assertEquals(Verdict.TOO_FAR, t.onData(g.data(t, 1, 8), out::add));
    assertTrue(t.takeResend(), "a packet too far ahead must come again");
    assertFalse(t.takeResend(), "one resend brings back what was refused before it");
    assertEquals(Verdict.COMPLETED, t.onData(g.data(t, 2, 2), out::add));
    NetecPacket wrongSlot = new NetecPacket(NetecPacket.DATA, 4, 2, 2, 0, 4, 3, 0,
        g.data(t, 2, 3).payload());
    assertEquals(Verdict.MISMATCH, t.onData(wrongSlot, out::add));
    assertTrue(t.takeResend(), "a mismatched packet must come again");
    t.onData(g.data(t, 0, 3), out::add);
    assertEquals(Verdict.COMPLETED, t.onData(g.data(t, 2, 3), out::add));
    t.lost(); // refused before the rules (a survivor connection's wrong sender)
    assertTrue(t.takeResend());
    for (Verdict v : Verdict.values()) {
      assertFalse(v.lost() && v.resent(), v + ": refused and a copy at once");
      assertEquals(v == Verdict.TOO_FAR || v == Verdict.SLOT_BUSY || v == Verdict.MISMATCH,
          v.lost(), v.toString());
    }
  }

  @Test
  void ebsnWindowShrinksWithThePartialSlotsAndFloorsAtZero() throws Exception {
    Group g = new Group(3, 2, new int[] {0}, 40 * P, 4);
    SwitchTask t = new SwitchTask(0, 0, 16, g.setup);
    assertEquals(8, t.ebsnWindow());
    t.onData(g.data(t, 0, 2), p -> { });
    assertEquals(3, t.span());
    assertEquals(1, t.partialSlots());
    assertEquals(7, t.ebsnWindow(), "one slot holds partial sums");
    for (int q = 3; q < 10; q++) {
      t.onData(g.data(t, 0, q), p -> { });
    }
    assertEquals(8, t.partialSlots());
    assertEquals(0, t.ebsnWindow(), "I slots hold partial sums");
    NetecPacket rewritten = t.onAck(new NetecPacket(NetecPacket.ACK, 0, 0, NetecPacket.READER,
        0, 0, 0, 0xffff, new byte[0]));
    assertEquals(0, rewritten.window());
  }

  /**
   * Version 2: stripes completed but not yet ACKed hold no memory and leave the window whole;
   * partial sums a late duplicate left below ackSeq count only as far as the span reaches.
   */
  @Test
  void completedStripesDoNotShrinkTheWindowAndTheSpanBoundsStalePartials() throws Exception {
    Group g = new Group(3, 2, new int[] {0}, 40 * P, 4);
    SwitchTask t = new SwitchTask(0, 0, 16, g.setup);
    for (int q = 0; q < 6; q++) {
      for (int s = 0; s < 3; s++) {
        assertNotEquals(Verdict.MISMATCH, t.onData(g.data(t, s, q), p -> { }));
      }
    }
    assertEquals(6, t.span());
    assertEquals(8, t.ebsnWindow(), "six stripes complete, none ACKed: nothing held");
    // the reader missed stripe 4: go-back-N resends 4 and 5, which start partial sums again
    t.onData(g.data(t, 0, 4), p -> { });
    t.onData(g.data(t, 0, 5), p -> { });
    assertEquals(2, t.partialSlots());
    assertEquals(6, t.onAck(new NetecPacket(NetecPacket.ACK, 0, 0, NetecPacket.READER, 0, 0, 4,
        0xffff, new byte[0])).window());
    t.onData(g.data(t, 1, 4), p -> { });
    assertEquals(Verdict.COMPLETED, t.onData(g.data(t, 2, 4), p -> { }));
    // the reader has 4 and 5 now: stripe 5's partial sums lie below ackSeq, the span is 0
    NetecPacket ack6 = t.onAck(new NetecPacket(NetecPacket.ACK, 0, 0, NetecPacket.READER, 0, 0,
        6, 0xffff, new byte[0]));
    assertEquals(1, t.partialSlots());
    assertEquals(0, t.span());
    assertEquals(8, ack6.window());
    // stripe 21 reuses slot 5 and clears the stale partial sums: one slot held, not two
    t.onAck(new NetecPacket(NetecPacket.ACK, 0, 0, NetecPacket.READER, 0, 0, 20, 0xffff,
        new byte[0]));
    assertEquals(Verdict.AGGREGATED, t.onData(g.data(t, 0, 21), p -> { }));
    assertEquals(1, t.partialSlots());
  }
}
