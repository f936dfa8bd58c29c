package io.netec.hdfs.switchroute.wire;

import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * One NetEC data-plane packet (docs/protocol.md, "Data packets"): a 20-byte header and its
 * payload. Immutable; {@link #decode} checks everything a receiver must check before acting.
 * The payload may be a view of a larger array or of a (direct) buffer, a received frame
 * ({@link #decodeFrame}): hot paths read it in place through {@link #payloadBuffer()}, or
 * {@link #payloadArray()} and {@link #payloadOffset()} when it is in an array.
 */
public final class NetecPacket {
  /** 3: payloads of whole 4-byte words (docs/protocol.md, Versioning). */
  public static final int VERSION = 3;
  public static final int HEADER_BYTES = 20;
  public static final int MAX_PAYLOAD = 65536 - 1; // payloadLength is 16 bits
  /** Largest stream payload: a multiple of 64 that the 16-bit length field holds. */
  public static final int MAX_STREAM_PAYLOAD = 65472;
  /** Every DATA and RESULT payload is a whole number of these (docs/protocol.md). */
  public static final int WORD_BYTES = 4;

  public static final int DATA = 1;
  public static final int RESULT = 2;
  public static final int ACK = 3;
  public static final int HELLO = 4;

  public static final int FLAG_FIN = 1;
  public static final int FLAG_RETX = 2;
  private static final int KNOWN_FLAGS = FLAG_FIN | FLAG_RETX;

  /** The sender field of packets from the reader. */
  public static final int READER = 0xff;

  private final int type;
  private final int task;
  private final int slotArray;
  private final int sender;
  private final int flags;
  private final int slot;
  private final long seq;
  private final int window;
  /** Where the payload is: one of the two, the other null. */
  private final byte[] payload;
  private final ByteBuffer buffer;
  private final int payloadOffset;
  private final int payloadLength;

  public NetecPacket(int type, int task, int slotArray, int sender, int flags, int slot, long seq,
      int window, byte[] payload) {
    this(type, task, slotArray, sender, flags, slot, seq, window, payload, 0, payload.length);
  }

  /** A packet whose payload is bytes [off, off + len) of {@code array} (not copied). */
  public NetecPacket(int type, int task, int slotArray, int sender, int flags, int slot, long seq,
      int window, byte[] array, int off, int len) {
    this(type, task, slotArray, sender, flags, slot, seq, window, array, null, off, len);
  }

  /** The payload at [off, off + len) of {@code array}, or else of {@code buffer} (absolute). */
  private NetecPacket(int type, int task, int slotArray, int sender, int flags, int slot,
      long seq, int window, byte[] array, ByteBuffer buffer, int off, int len) {
    this.type = checkRange("type", type, DATA, HELLO);
    this.task = checkRange("task", task, 0, 255);
    this.slotArray = checkRange("slotArray", slotArray, 0, 255);
    this.sender = checkRange("sender", sender, 0, 255);
    this.flags = checkRange("flags", flags, 0, KNOWN_FLAGS);
    this.slot = checkRange("slot", slot, 0, 0xffff);
    if (seq < 0 || seq > 0xffffffffL) {
      throw new IllegalArgumentException("seq " + seq + " outside 0..2^32-1");
    }
    this.seq = seq;
    this.window = checkRange("window", window, 0, 0xffff);
    if (len > MAX_PAYLOAD) {
      throw new IllegalArgumentException("payload of " + len + " bytes");
    }
    int room = array != null ? array.length : buffer.capacity();
    if (off < 0 || len < 0 || off > room - len) {
      throw new IllegalArgumentException("payload [" + off + ", +" + len + ") outside "
          + (array != null ? "an array" : "a buffer") + " of " + room);
    }
    this.payload = array;
    this.buffer = array != null ? null : buffer;
    this.payloadOffset = off;
    this.payloadLength = len;
  }

  private static int checkRange(String what, int v, int lo, int hi) {
    if (v < lo || v > hi) {
      throw new IllegalArgumentException(what + " " + v + " outside " + lo + ".." + hi);
    }
    return v;
  }

  public int type() {
    return type;
  }

  public int task() {
    return task;
  }

  public int slotArray() {
    return slotArray;
  }

  public int sender() {
    return sender;
  }

  public int flags() {
    return flags;
  }

  public boolean hasFlag(int flag) {
    return (flags & flag) != 0;
  }

  public int slot() {
    return slot;
  }

  public long seq() {
    return seq;
  }

  public int window() {
    return window;
  }

  public int payloadLength() {
    return payloadLength;
  }

  /** The payload (shared, do not modify); a copy when this packet is a view of a frame. */
  public byte[] payload() {
    if (buffer != null) {
      byte[] b = new byte[payloadLength];
      payloadBuffer().get(b);
      return b;
    }
    return payloadOffset == 0 && payloadLength == payload.length ? payload
        : Arrays.copyOfRange(payload, payloadOffset, payloadOffset + payloadLength);
  }

  /** The payload between a new view's position and limit, wherever it is (do not modify). */
  public ByteBuffer payloadBuffer() {
    if (buffer == null) {
      return ByteBuffer.wrap(payload, payloadOffset, payloadLength);
    }
    ByteBuffer b = buffer.duplicate();
    b.limit(payloadOffset + payloadLength).position(payloadOffset);
    return b;
  }

  /**
   * The array holding the payload at {@link #payloadOffset()} (shared, do not modify); for a
   * packet viewing a buffer, an IllegalStateException ({@link #payloadBuffer()} serves both).
   */
  public byte[] payloadArray() {
    if (buffer != null) {
      throw new IllegalStateException("the payload is in a buffer, not an array");
    }
    return payload;
  }

  public int payloadOffset() {
    return payloadOffset;
  }

  /** A copy with another window (the switch's EBSN rewrite of an ACK). */
  public NetecPacket withWindow(int newWindow) {
    return new NetecPacket(type, task, slotArray, sender, flags, slot, seq, newWindow, payload,
        buffer, payloadOffset, payloadLength);
  }

  /** A copy without {@code flag} (a RETX the switch passes on as a plain ACK). */
  public NetecPacket withoutFlag(int flag) {
    return new NetecPacket(type, task, slotArray, sender, flags & ~flag, slot, seq, window,
        payload, buffer, payloadOffset, payloadLength);
  }

  /**
   * A copy of this packet under another header (payload shared, not copied): a child switch's
   * RESULT becomes its parent's DATA, the parent's ACK the child's reader ACK.
   */
  public NetecPacket readdressed(int newType, int newTask, int newSlotArray, int newSender,
      int newSlot) {
    return new NetecPacket(newType, newTask, newSlotArray, newSender, flags, newSlot, seq, window,
        payload, buffer, payloadOffset, payloadLength);
  }

  public int encodedLength() {
    return HEADER_BYTES + payloadLength;
  }

  /** Writes the header, checksum field zero, at the buffer's position. */
  public void encodeHeader(ByteBuffer out) {
    out.put((byte) VERSION).put((byte) type).put((byte) task).put((byte) slotArray)
        .put((byte) sender).put((byte) flags).putShort((short) slot).putInt((int) seq)
        .putShort((short) window).putShort((short) payloadLength).putShort((short) 0)
        .putShort((short) 0);
  }

  /**
   * The value of this packet's checksum field, computed from the header fields and the payload
   * where they are (the payload is read once, on the heap, before any copy of it is made).
   */
  public int checksum() {
    byte[] header = new byte[HEADER_BYTES];
    encodeHeader(ByteBuffer.wrap(header));
    int end = payloadOffset + payloadLength;
    int sum = InternetChecksum.finish(InternetChecksum.sum(header, 0, HEADER_BYTES)
        + (buffer != null ? InternetChecksum.sum(buffer, payloadOffset, end)
            : InternetChecksum.sum(payload, payloadOffset, end)));
    return sum == 0 ? 0xffff : sum;
  }

  /** Writes header and payload at the buffer's position, checksum included. */
  public void encode(ByteBuffer out) {
    int start = out.position();
    encodeHeader(out);
    out.putShort(start + 16, (short) checksum());
    out.put(payloadBuffer());
  }

  public byte[] toBytes() {
    ByteBuffer b = ByteBuffer.allocate(encodedLength());
    encode(b);
    return b.array();
  }

  /**
   * The length of the packet starting at the buffer's position, or -1 if fewer than
   * {@value #HEADER_BYTES} bytes are there; for framing a byte stream.
   */
  public static int frameLength(ByteBuffer in) {
    if (in.remaining() < HEADER_BYTES) {
      return -1;
    }
    return HEADER_BYTES + (in.getShort(in.position() + 14) & 0xffff);
  }

  /**
   * Reads one packet from the buffer's position (the payload copied out); checks version,
   * fields and checksum.
   */
  public static NetecPacket decode(ByteBuffer in) throws ProtocolException {
    int start = in.position();
    int len = check(in);
    byte[] payload = new byte[len - HEADER_BYTES];
    in.position(start + HEADER_BYTES);
    in.get(payload);
    return new NetecPacket(in.get(start + 1) & 0xff, in.get(start + 2) & 0xff,
        in.get(start + 3) & 0xff, in.get(start + 4) & 0xff, in.get(start + 5) & 0xff,
        in.getShort(start + 6) & 0xffff, in.getInt(start + 8) & 0xffffffffL,
        in.getShort(start + 12) & 0xffff, payload);
  }

  /**
   * The packet at [off, off + len) of {@code frame}, checked as {@link #decode} checks it, its
   * payload a view of the frame (not copied). {@code len} must be the frame's length.
   */
  public static NetecPacket decodeFrame(byte[] frame, int off, int len)
      throws ProtocolException {
    ByteBuffer in = ByteBuffer.wrap(frame, off, len);
    if (check(in) != len) {
      throw new ProtocolException("frame of " + len + " bytes holds a packet of "
          + frameLength(in));
    }
    return new NetecPacket(frame[off + 1] & 0xff, frame[off + 2] & 0xff, frame[off + 3] & 0xff,
        frame[off + 4] & 0xff, frame[off + 5] & 0xff, in.getShort(off + 6) & 0xffff,
        in.getInt(off + 8) & 0xffffffffL, in.getShort(off + 12) & 0xffff, frame,
        off + HEADER_BYTES, len - HEADER_BYTES);
  }

  /**
   * The packet between the buffer's position and limit (exactly one frame), checked as
   * {@link #decode} checks it, its payload a view of the buffer (not copied): valid only while
   * the buffer's bytes are.
   */
  public static NetecPacket decodeFrame(ByteBuffer frame) throws ProtocolException {
    if (frame.hasArray()) {
      return decodeFrame(frame.array(), frame.arrayOffset() + frame.position(),
          frame.remaining());
    }
    int at = frame.position();
    int len = frame.remaining();
    if (check(frame) != len) {
      throw new ProtocolException("frame of " + len + " bytes holds a packet of "
          + frameLength(frame));
    }
    return new NetecPacket(frame.get(at + 1) & 0xff, frame.get(at + 2) & 0xff,
        frame.get(at + 3) & 0xff, frame.get(at + 4) & 0xff, frame.get(at + 5) & 0xff,
        frame.getShort(at + 6) & 0xffff, frame.getInt(at + 8) & 0xffffffffL,
        frame.getShort(at + 12) & 0xffff, null, frame, at + HEADER_BYTES, len - HEADER_BYTES);
  }

  /** Checks the packet at the buffer's position; its length. */
  private static int check(ByteBuffer in) throws ProtocolException {
    int start = in.position();
    int len = frameLength(in);
    if (len < 0 || in.remaining() < len) {
      throw new ProtocolException("truncated packet: " + in.remaining() + " bytes");
    }
    int version = in.get(start) & 0xff;
    if (version != VERSION) {
      throw new ProtocolException("version " + version + ", expected " + VERSION);
    }
    int type = in.get(start + 1) & 0xff;
    if (type < DATA || type > HELLO) {
      throw new ProtocolException("unknown type " + type);
    }
    int flags = in.get(start + 5) & 0xff;
    if ((flags & ~KNOWN_FLAGS) != 0) {
      throw new ProtocolException("unknown flags 0x" + Integer.toHexString(flags));
    }
    if (in.getShort(start + 18) != 0) {
      throw new ProtocolException("reserved bytes not zero");
    }
    if (InternetChecksum.of(in, start, start + len) != 0) {
      throw new ProtocolException("checksum mismatch");
    }
    return len;
  }

  @Override
  public String toString() {
    String[] names = {"?", "DATA", "RESULT", "ACK", "HELLO"};
    return names[type] + "{task=" + task + " array=" + slotArray + " sender=" + sender
        + " flags=" + flags + " slot=" + slot + " seq=" + seq + " window=" + window + " len="
        + payloadLength + "}";
  }
}
