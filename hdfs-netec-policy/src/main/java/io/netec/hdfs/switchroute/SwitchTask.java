package io.netec.hdfs.switchroute;

import io.netec.hdfs.codec.MatrixAccumulator;
import io.netec.hdfs.switchroute.wire.NetecPacket;
import io.netec.hdfs.switchroute.wire.SetupRequest;
import java.util.Arrays;
import java.util.function.Consumer;

/**
 * One task's state in a NetEC switch and the per-packet rules of docs/protocol.md ("The
 * switch's rules for DATA", "ACK, retransmission and EBSN"): a ring of S slots, each holding a
 * progress tracker (one bit per sender) and one partial XOR sum per output row.
 *
 * <p>Memory: at most S x rows x P bytes of sums, a slot's taken when its first DATA packet
 * arrives (a task set up with no data flowing holds none). Not thread-safe: one event loop
 * owns a task, as one pipeline pass owns a packet on a switch ASIC.
 */
public final class SwitchTask {
  /** What the switch did with a DATA packet. */
  public enum Verdict {
    /** XOR-ed into its slot; the stripe is not complete yet. */
    AGGREGATED,
    /** Completed its stripe: RESULT packets were emitted and the slot cleared. */
    COMPLETED,
    /** The reader already has this stripe. */
    STALE,
    /** Beyond ackSeq + S: it could only collide in the ring. */
    TOO_FAR,
    /** Its slot holds another live stripe. */
    SLOT_BUSY,
    /** Its sender was already counted for this stripe. */
    DUPLICATE,
    /** Does not belong to this task (task, array, sender, slot, seq or length wrong). */
    MISMATCH;

    /** Refused, and not a copy of a packet counted: a resend must bring it again. */
    public boolean lost() {
      return this == TOO_FAR || this == SLOT_BUSY || this == MISMATCH;
    }

    /** A copy of a packet already counted: bytes a resend cost in vain. */
    public boolean resent() {
      return this == STALE || this == DUPLICATE;
    }
  }

  private final int taskId;
  private final int slotArray;
  private final int slots;
  private final SetupRequest setup;
  private final int k;
  private final int rows;
  private final int fullMask;
  private final MatrixAccumulator accumulator;
  private final byte[][][] sums; // [slot][row]: P bytes; a slot's rows from its first packet
  private final int payloadBytes;
  private int slotsHeld;
  private final int[] zeroOffsets;
  private final int[] tracker;
  private final long[] slotSeq;
  private int partialSlots;
  private long maxStarted = -1;
  private long ackSeq;
  private boolean finished;
  private final long[] verdicts = new long[Verdict.values().length];
  /** A DATA packet was refused, or missed, since the last resend (see takeResend). */
  private boolean lostSinceResend;
  /** A RETX was held, and no stripe has completed since: the next one goes on. */
  private boolean heldSinceProgress;
  /** Per sender, the stripe after the last one its stream brought (a gap: packets missed). */
  private final long[] nextOnStream;

  /** With ISA-L's multiply-accumulate when the native library is there, else Java tables. */
  public SwitchTask(int taskId, int slotArray, int slots, SetupRequest setup) {
    this(taskId, slotArray, slots, setup, MatrixAccumulator::create);
  }

  /** Chooses how to multiply-accumulate (MatrixAccumulator::java, ::isal or ::create). */
  public interface AccumulatorFactory {
    MatrixAccumulator create(int k, int rows, byte[] matrix);
  }

  public SwitchTask(int taskId, int slotArray, int slots, SetupRequest setup,
      AccumulatorFactory accumulators) {
    if (slots < 2 || slots > 0xffff) {
      throw new IllegalArgumentException("slots " + slots + " outside 2..65535");
    }
    this.taskId = taskId;
    this.slotArray = slotArray;
    this.slots = slots;
    this.setup = setup;
    this.k = setup.k();
    this.rows = setup.rows();
    this.fullMask = (int) ((1L << k) - 1);
    byte[] matrix = new byte[rows * k];
    for (int r = 0; r < rows; r++) {
      for (int s = 0; s < k; s++) {
        matrix[r * k + s] = (byte) setup.switchCoefficient(r, s);
      }
    }
    this.accumulator = accumulators.create(k, rows, matrix);
    this.sums = new byte[slots][][];
    this.payloadBytes = setup.payload();
    this.zeroOffsets = new int[rows];
    this.tracker = new int[slots];
    this.nextOnStream = new long[k];
    this.slotSeq = new long[slots];
  }

  /** "isal" or "java": how this task multiplies. */
  public String multiplier() {
    return accumulator.name();
  }

  /** Bytes of partial sums a task may hold: S x rows x P (what a switch reserves for it). */
  public static long memoryBytes(int slots, SetupRequest setup) {
    return (long) slots * setup.rows() * setup.payload();
  }

  /** Bytes of partial sums this task holds now: rows x P for every slot data has reached. */
  public long heldBytes() {
    return (long) slotsHeld * rows * payloadBytes;
  }

  public int taskId() {
    return taskId;
  }

  public int slotArray() {
    return slotArray;
  }

  public int slots() {
    return slots;
  }

  public SetupRequest setup() {
    return setup;
  }

  /** The first stripe the reader still needs. */
  public long ackSeq() {
    return ackSeq;
  }

  /** True once the reader acknowledged everything (ACK with FIN). */
  public boolean finished() {
    return finished;
  }

  /** Slots holding partial sums, garbage below ackSeq included (for metrics). */
  public int partialSlots() {
    return partialSlots;
  }

  /** How many DATA packets got this verdict. */
  public long count(Verdict v) {
    return verdicts[v.ordinal()];
  }

  /** C: the span of stripes this task may hold, maxStarted + 1 - ackSeq (at least 0). */
  public long span() {
    return Math.max(0, maxStarted + 1 - ackSeq);
  }

  /**
   * EBSN: R = I - C if C < I else 0, with I = S/2 exposed to senders and C the slots holding
   * partial sums, bounded by the span: min(partialSlots, span). Stripes completed but not yet
   * ACKed hold no memory, so they do not count (version 1 counted the span alone); partial
   * sums a late duplicate left below ackSeq do count until their slot is reused, and the span
   * bounds them.
   */
  public int ebsnWindow() {
    int exposed = slots / 2;
    long c = Math.min(partialSlots, span());
    return c < exposed ? (int) (exposed - c) : 0;
  }

  /** Applies the DATA rules; a completed stripe sends one RESULT per row to {@code reader}. */
  public Verdict onData(NetecPacket p, Consumer<NetecPacket> reader) {
    Verdict v = data(p, reader);
    verdicts[v.ordinal()]++;
    int sender = p.sender();
    if (v != Verdict.MISMATCH) {
      // a survivor sends its stripes in order, going back only on a RETX: a stripe past the
      // one after its last means packets went missing on the way (a middlebox dropped them;
      // a reordering looks the same, and costs a resend or two)
      if (p.seq() > nextOnStream[sender]) {
        lostSinceResend = true;
      }
      nextOnStream[sender] = p.seq() + 1;
    }
    if (v.lost()) {
      lostSinceResend = true;
    } else if (v == Verdict.COMPLETED) {
      heldSinceProgress = false;
    }
    return v;
  }

  /** A survivor's packet refused before the rules (its connection's sender or type wrong). */
  public void lost() {
    lostSinceResend = true;
  }

  /**
   * Over TCP, whether a reader's RETX must make the survivors resend (and, if so, the resend
   * counts as made). A reliable stream loses nothing (every packet sent is counted, a copy of
   * one counted, or still in flight), so a RETX the reader sent because no stripe completed for
   * a while (one survivor's stream slowed by its link) would only make every survivor send a
   * window again in vain, on the links that were already short: such a RETX goes on as a plain
   * ACK. It resends when a packet was refused here, or went missing on its stream (a stripe
   * skipped: a middlebox dropped it), since the last resend; and never holds two RETX in a row
   * without a stripe completing, since a packet lost at the end of a stream (or the last its
   * window allowed) leaves no gap to see: the reader's second RETX, 3 s into a stall, brings it.
   * Datagram mode, where packets are lost on the way, resends on every RETX.
   */
  public boolean takeResend() {
    boolean resend = lostSinceResend || heldSinceProgress;
    lostSinceResend = false;
    heldSinceProgress = !resend;
    return resend;
  }

  private Verdict data(NetecPacket p, Consumer<NetecPacket> reader) {
    long q = p.seq();
    int sender = p.sender();
    if (p.type() != NetecPacket.DATA || p.task() != taskId || p.slotArray() != slotArray
        || sender >= k || q >= setup.stripes() || p.slot() != (int) (q % slots)
        || p.payloadLength() != setup.payloadLength(q)) {
      return Verdict.MISMATCH;
    }
    if (q < ackSeq) {
      return Verdict.STALE;
    }
    if (q >= ackSeq + slots) {
      return Verdict.TOO_FAR;
    }
    int i = p.slot();
    if (tracker[i] != 0 && slotSeq[i] != q) {
      if (slotSeq[i] >= ackSeq) {
        return Verdict.SLOT_BUSY;
      }
      clear(i); // partial sums of a stripe the reader already has: a late duplicate began them
    }
    int bit = 1 << sender;
    if ((tracker[i] & bit) != 0) {
      return Verdict.DUPLICATE;
    }
    int len = p.payloadLength();
    if (sums[i] == null) { // memory is taken when data flows, not at setup
      sums[i] = new byte[rows][payloadBytes];
      slotsHeld++;
    }
    accumulator.accumulate(sender, p.payloadBuffer(), sums[i], zeroOffsets);
    if (tracker[i] == 0) {
      partialSlots++;
      slotSeq[i] = q;
      maxStarted = Math.max(maxStarted, q);
    }
    tracker[i] |= bit;
    if (tracker[i] != fullMask) {
      return Verdict.AGGREGATED;
    }
    // Each row's sum leaves as the RESULT's payload, not copied; the slot gets a zeroed row
    // in its place (the zeroing a cleared slot needs anyway).
    for (int r = 0; r < rows; r++) {
      byte[] sum = sums[i][r];
      sums[i][r] = new byte[payloadBytes];
      SwitchFaultInjector.get().beforeResult(taskId, r, q, sum, len);
      reader.accept(new NetecPacket(NetecPacket.RESULT, taskId, slotArray, r, 0, i, q, 0,
          sum, 0, len));
    }
    tracker[i] = 0;
    partialSlots--;
    return Verdict.COMPLETED;
  }

  private void clear(int i) {
    tracker[i] = 0;
    partialSlots--;
    if (sums[i] != null) {
      for (byte[] row : sums[i]) {
        Arrays.fill(row, (byte) 0);
      }
    }
  }

  /**
   * Applies an ACK from the reader: advances ackSeq and returns the ACK every survivor gets,
   * its window lowered to the EBSN window; null if the packet is not this task's ACK.
   */
  public NetecPacket onAck(NetecPacket ack) {
    if (ack.type() != NetecPacket.ACK || ack.task() != taskId || ack.slotArray() != slotArray
        || ack.sender() != NetecPacket.READER || ack.seq() > setup.stripes()) {
      return null;
    }
    ackSeq = Math.max(ackSeq, ack.seq());
    if (ack.hasFlag(NetecPacket.FLAG_FIN) && ackSeq == setup.stripes()) {
      finished = true;
    }
    return ack.withWindow(Math.min(ack.window(), ebsnWindow()));
  }
}
