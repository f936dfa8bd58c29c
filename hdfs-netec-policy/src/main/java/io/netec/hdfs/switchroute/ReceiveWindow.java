package io.netec.hdfs.switchroute;

import io.netec.hdfs.switchroute.wire.NetecPacket;
import io.netec.hdfs.switchroute.wire.PacketStripes;
import java.io.IOException;
import java.util.TreeMap;

/**
 * The reader's side of a task's windows (docs/protocol.md "Windows"), the peer of
 * {@link SendWindow}: takes the switch's RESULT packets in any order, hands each row's stripes
 * to its sink in order and only up to the row's length, holds early stripes (never more than
 * the window of slots the switch was granted), and says when an ACK is due: every S/8 stripes
 * completed in all rows (the protocol asks for at least every S/4; EBSN's window counts stripes
 * up to the last ACK, so ACKing twice as often keeps survivors sending) and at the last. The
 * same for a TCP stream and a datagram stream. Plain; one thread at a time.
 */
final class ReceiveWindow {
  private final int task;
  private final int slotArray;
  private final int slots;
  private final long streamLength;
  private final int payload;
  private final long stripes;
  private final long[] rowLength;
  private final SwitchClient.Sink[] sinks;
  private final long[] nextSeq;
  private final long[] written;
  private final TreeMap<Long, byte[]>[] early;
  private long firstMissing;
  private long sinceAck;

  /**
   * The window of task {@code task} (its slot array and {@code slots} slots) whose {@code rows}
   * rows are streams of {@code streamLength} bytes cut into packets of {@code payload}; row r's
   * sink gets its first {@code rowLength[r]} bytes.
   */
  @SuppressWarnings("unchecked")
  ReceiveWindow(int task, int slotArray, int slots, int rows, long streamLength, int payload,
      long[] rowLength, SwitchClient.Sink[] sinks) {
    if (rowLength.length != rows || sinks.length != rows) {
      throw new IllegalArgumentException("a task of " + rows + " rows, " + rowLength.length
          + " row lengths and " + sinks.length + " sinks");
    }
    this.task = task;
    this.slotArray = slotArray;
    this.slots = slots;
    this.streamLength = streamLength;
    this.payload = payload;
    this.stripes = PacketStripes.count(streamLength, payload);
    this.rowLength = rowLength;
    this.sinks = sinks;
    this.nextSeq = new long[sinks.length];
    this.written = new long[sinks.length];
    this.early = new TreeMap[sinks.length];
    for (int r = 0; r < early.length; r++) {
      early[r] = new TreeMap<>();
    }
  }

  long stripes() {
    return stripes;
  }

  /** The first stripe not yet delivered in every row: all below it are in every sink. */
  long firstMissing() {
    return firstMissing;
  }

  boolean done() {
    return firstMissing >= stripes;
  }

  /** A RESULT of this task, with a row, stripe and length the task has. */
  boolean expected(NetecPacket p) {
    return p.type() == NetecPacket.RESULT && p.task() == task && p.slotArray() == slotArray
        && p.sender() < nextSeq.length && p.seq() < stripes
        && p.payloadLength() == PacketStripes.payloadLength(streamLength, payload, p.seq());
  }

  /**
   * Takes a packet: a duplicate is ignored, an early stripe kept (copied: the packet may be a
   * view of a receive buffer), the next one delivered with every kept one that follows it.
   *
   * @throws IOException a packet that is not {@link #expected}, an early stripe past the window,
   *     or the sink's
   */
  void accept(NetecPacket p) throws IOException {
    if (!expected(p)) {
      throw new IOException("unexpected packet from the switch: " + p);
    }
    int row = p.sender();
    long seq = p.seq();
    if (seq < nextSeq[row]) {
      return;
    }
    if (seq > nextSeq[row]) {
      early[row].put(seq, p.payload());
      if (early[row].size() > slots) {
        throw new IOException("switch sent stripes beyond the window: " + p);
      }
      return;
    }
    deliver(row, p.payloadArray(), p.payloadOffset(), p.payloadLength());
    while (!early[row].isEmpty() && early[row].firstKey() == nextSeq[row]) {
      byte[] b = early[row].pollFirstEntry().getValue();
      deliver(row, b, 0, b.length);
    }
    long min = Long.MAX_VALUE;
    for (long q : nextSeq) {
      min = Math.min(min, q);
    }
    firstMissing = min;
  }

  /** Stripe nextSeq[row] of the row, to its sink up to the row's length. */
  private void deliver(int row, byte[] b, int off, int len) throws IOException {
    int take = (int) Math.max(0, Math.min(len, rowLength[row] - written[row]));
    if (take > 0) {
      sinks[row].write(b, off, take);
      written[row] += take;
    }
    nextSeq[row]++;
  }

  /**
   * Whether the first missing stripe moved past {@code before} (what {@link #firstMissing} was
   * before the packets just taken): progress, which the caller's retransmission timer hears.
   * The stripes it moved by count toward the next ACK.
   */
  boolean moved(long before) {
    if (firstMissing <= before) {
      return false;
    }
    sinceAck += firstMissing - before;
    return true;
  }

  /** Whether an ACK is due now; if so the count toward the next one starts again. */
  boolean takeAckDue() {
    if (sinceAck > 0 && (sinceAck >= Math.max(1, slots / 8) || done())) {
      sinceAck = 0;
      return true;
    }
    return false;
  }

  /** The ACK of every stripe below the first missing one, with {@code flags} (RETX, FIN). */
  NetecPacket ack(int flags) {
    return new NetecPacket(NetecPacket.ACK, task, slotArray, NetecPacket.READER, flags, 0,
        firstMissing, Math.min(slots, 0xffff), new byte[0]);
  }
}
