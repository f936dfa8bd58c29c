package io.netec.hdfs.switchroute.wire;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;

/**
 * Where a child switch's task sends its rebuilt stream (docs/protocol.md, "Partial sums"): the
 * parent switch's task, slot array and the sender number the partial sum is there, and the
 * parent's slot count and first window. The parent claims the child's task with a reader's
 * HELLO that carries this as {@code "parent"}; the child then sends each RESULT as the
 * parent's DATA ({@link #asData}) and takes the parent's ACKs as its reader's ({@link
 * #asChildAck}). A plain value; no I/O.
 */
public final class ParentLink {
  private final int task;
  private final int slotArray;
  private final int sender;
  private final int slots;
  private final int window;
  private final int payload;
  private final long offset;
  private final long length;

  /**
   * @param payload, offset, length the parent's packet-stripes: the child's must be the same
   *     ({@link #matches}), or its RESULTs would not be the parent's stripes
   */
  public ParentLink(int task, int slotArray, int sender, int slots, int window, int payload,
      long offset, long length) {
    this.task = task;
    this.slotArray = slotArray;
    this.sender = sender;
    this.slots = slots;
    this.window = window;
    this.payload = payload;
    this.offset = offset;
    this.length = length;
  }

  /**
   * Null when a child task of {@code setup} may feed this parent (the same payload, offset and
   * length: the same packet-stripes, and one row); else what differs.
   */
  public String mismatch(SetupRequest setup) {
    if (setup.rows() != 1) {
      return "a child sends one partial sum, this task has " + setup.rows() + " rows";
    }
    if (setup.payload() != payload || setup.offset() != offset || setup.length() != length) {
      return "the parent's stripes (payload " + payload + ", offset " + offset + ", length "
          + length + ") are not this task's (" + setup.payload() + ", " + setup.offset() + ", "
          + setup.length() + ")";
    }
    return null;
  }

  /** The parent's task. */
  public int task() {
    return task;
  }

  public int slotArray() {
    return slotArray;
  }

  /** The partial sum's sender number in the parent's task. */
  public int sender() {
    return sender;
  }

  /** The parent's S: its DATA's slot is seq mod S. */
  public int slots() {
    return slots;
  }

  /** The parent's first window for this sender (its limit before any ACK). */
  public int window() {
    return window;
  }

  /** The child's RESULT of stripe q as the parent's DATA of sender {@link #sender}. */
  public NetecPacket asData(NetecPacket result) {
    return result.readdressed(NetecPacket.DATA, task, slotArray, sender,
        (int) (result.seq() % slots));
  }

  /**
   * The parent's ACK to this sender as the child task's reader ACK, or null when it is not
   * an ACK of this parent task to this sender (it is then dropped and counted). Over TCP the
   * parent copies its reader's ACK as it is (sender 0xFF): the connection names the sender.
   */
  public NetecPacket asChildAck(NetecPacket ack, int childTask, int childSlotArray) {
    if (ack.type() != NetecPacket.ACK || ack.task() != task || ack.slotArray() != slotArray
        || (ack.sender() != sender && ack.sender() != NetecPacket.READER)) {
      return null;
    }
    return ack.readdressed(NetecPacket.ACK, childTask, childSlotArray, NetecPacket.READER, 0);
  }

  /**
   * The parent's HELLO on the child's VIP: a reader's HELLO for the child's task (its secret)
   * naming this link as {@code "parent"}.
   */
  public NetecPacket toHello(int childTask, int childSlotArray, String childSecret) {
    ObjectNode o = SetupRequest.JSON.createObjectNode();
    o.put("role", "reader").put("secret", childSecret);
    o.putObject("parent").put("task", task).put("slotArray", slotArray).put("sender", sender)
        .put("slots", slots).put("window", window).put("payload", payload).put("offset", offset)
        .put("length", length);
    try {
      return new NetecPacket(NetecPacket.HELLO, childTask, childSlotArray, NetecPacket.READER, 0,
          0, 0, 0, SetupRequest.JSON.writeValueAsBytes(o));
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * The link a reader's HELLO names, or null when it names none (a reader that wants the
   * RESULTs itself).
   *
   * @throws ProtocolException when its {@code "parent"} is there but out of range
   */
  public static ParentLink fromHello(NetecPacket hello) throws ProtocolException {
    if (hello.type() != NetecPacket.HELLO || hello.payloadLength() > 4096) {
      return null;
    }
    JsonNode o = JsonLimits.parse(hello.payload(), 4096);
    JsonNode p = o == null ? null : o.get("parent");
    if (p == null) {
      return null;
    }
    if (!p.isObject()) {
      throw new ProtocolException("parent: not an object");
    }
    return new ParentLink(JsonLimits.intIn(p, "task", 0, 255),
        JsonLimits.intIn(p, "slotArray", 0, 255), JsonLimits.intIn(p, "sender", 0,
        SetupRequest.MAX_K - 1), JsonLimits.intIn(p, "slots", 2, 0xffff),
        JsonLimits.intIn(p, "window", 0, 0xffff),
        JsonLimits.intIn(p, "payload", 64, NetecPacket.MAX_STREAM_PAYLOAD),
        JsonLimits.longIn(p, "offset", 0, 1L << 40), JsonLimits.longIn(p, "length", 1, 1L << 40));
  }
}
