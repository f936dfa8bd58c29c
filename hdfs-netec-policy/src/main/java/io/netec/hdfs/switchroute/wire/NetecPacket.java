package io.netec.hdfs.switchroute.wire;

import java.nio.ByteBuffer;

/**
 * One NetEC data-plane packet (docs/protocol.md, "Data packets"): a 20-byte header and its
 * payload. Immutable; {@link #decode} checks everything a receiver must check before acting.
 */
public final class NetecPacket {
  public static final int VERSION = 1;
  public static final int HEADER_BYTES = 20;
  public static final int MAX_PAYLOAD = 65536 - 1; // payloadLength is 16 bits
  /** Largest stream payload: a multiple of 64 that the 16-bit length field holds. */
  public static final int MAX_STREAM_PAYLOAD = 65472;

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
  private final byte[] payload;

  public NetecPacket(int type, int task, int slotArray, int sender, int flags, int slot, long seq,
      int window, byte[] payload) {
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
    if (payload.length > MAX_PAYLOAD) {
      throw new IllegalArgumentException("payload of " + payload.length + " bytes");
    }
    this.payload = payload;
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
    return payload.length;
  }

  /** The payload (shared, do not modify). */
  public byte[] payload() {
    return payload;
  }

  /** A copy with another window (the switch's EBSN rewrite of an ACK). */
  public NetecPacket withWindow(int newWindow) {
    return new NetecPacket(type, task, slotArray, sender, flags, slot, seq, newWindow, payload);
  }

  public int encodedLength() {
    return HEADER_BYTES + payload.length;
  }

  /** Writes header and payload at the buffer's position, checksum included. */
  public void encode(ByteBuffer out) {
    int start = out.position();
    out.put((byte) VERSION).put((byte) type).put((byte) task).put((byte) slotArray)
        .put((byte) sender).put((byte) flags).putShort((short) slot).putInt((int) seq)
        .putShort((short) window).putShort((short) payload.length).putShort((short) 0)
        .putShort((short) 0).put(payload);
    int sum = InternetChecksum.finish(InternetChecksum.add(0, out, start, out.position()));
    out.putShort(start + 16, (short) (sum == 0 ? 0xffff : sum));
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

  /** Reads one packet from the buffer's position; checks version, fields and checksum. */
  public static NetecPacket decode(ByteBuffer in) throws ProtocolException {
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
    int check = InternetChecksum.finish(InternetChecksum.add(0, in, start, start + len));
    if (check != 0) {
      throw new ProtocolException("checksum mismatch");
    }
    byte[] payload = new byte[len - HEADER_BYTES];
    in.position(start + HEADER_BYTES);
    in.get(payload);
    return new NetecPacket(type, in.get(start + 2) & 0xff, in.get(start + 3) & 0xff,
        in.get(start + 4) & 0xff, flags, in.getShort(start + 6) & 0xffff,
        in.getInt(start + 8) & 0xffffffffL, in.getShort(start + 12) & 0xffff, payload);
  }

  @Override
  public String toString() {
    String[] names = {"?", "DATA", "RESULT", "ACK", "HELLO"};
    return names[type] + "{task=" + task + " array=" + slotArray + " sender=" + sender
        + " flags=" + flags + " slot=" + slot + " seq=" + seq + " window=" + window + " len="
        + payload.length + "}";
  }
}
