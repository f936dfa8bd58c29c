package io.netec.hdfs.switchroute.wire;

/**
 * How a stream of L bytes is cut into packet-stripes of P bytes (docs/protocol.md,
 * "Packet-stripes"): the one place the reader, the switch and the survivors take it from.
 * Stripe {@code seq} carries stream bytes [seq·P, min((seq+1)·P, L)); its packets' payload is
 * that many bytes rounded up to whole 4-byte words, the bytes past L zero, so that no packet
 * ends in a partial word (a P4 switch holds the payload in 32-bit words; a 1-3-byte tail does
 * not fit Tofino's PHV beside them).
 */
public final class PacketStripes {
  private PacketStripes() {}

  /** ceil(L / P). */
  public static long count(long length, int payload) {
    return (length + payload - 1) / payload;
  }

  /** Stream bytes in stripe {@code seq}: min(P, L − seq·P). */
  public static int streamBytes(long length, int payload, long seq) {
    return (int) Math.min(payload, length - seq * payload);
  }

  /** Payload length of every packet of stripe {@code seq}: its stream bytes in whole words. */
  public static int payloadLength(long length, int payload, long seq) {
    int n = streamBytes(length, payload, seq);
    return (n + NetecPacket.WORD_BYTES - 1) & -NetecPacket.WORD_BYTES;
  }
}
