package io.netec.hdfs.switchroute.wire;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.apache.hadoop.hdfs.protocol.ExtendedBlock;

/**
 * What the switch asks a survivor agent to stream (the HELLO switch → agent of
 * docs/protocol.md): block, its length here, stream length, payload size, token, first window,
 * slot count.
 */
public final class StreamRequest {
  private final ExtendedBlock block;
  private final long unitLength;
  private final long length;
  private final int payload;
  private final String token;
  private final int window;
  private final int slots;
  private final long offset;

  public StreamRequest(ExtendedBlock block, long unitLength, long offset, long length,
      int payload, String token, int window, int slots) {
    this.offset = offset;
    this.block = block;
    this.unitLength = unitLength;
    this.length = length;
    this.payload = payload;
    this.token = token;
    this.window = window;
    this.slots = slots;
  }

  /** Where in the unit stripe 0 starts. */
  public long offset() {
    return offset;
  }

  /** S, the task's slot count: a DATA packet's slot is seq mod S. */
  public int slots() {
    return slots;
  }

  public ExtendedBlock block() {
    return block;
  }

  public long unitLength() {
    return unitLength;
  }

  public long length() {
    return length;
  }

  public int payload() {
    return payload;
  }

  public String token() {
    return token;
  }

  public int window() {
    return window;
  }

  public long stripes() {
    return (length + payload - 1) / payload;
  }

  public int payloadLength(long seq) {
    return (int) Math.min(payload, length - seq * payload);
  }

  /** Parses "bpid:blk_ID_GENSTAMP" (ExtendedBlock.toString()). */
  public static ExtendedBlock parseBlock(String s) throws ProtocolException {
    int at = s == null ? -1 : s.lastIndexOf(":blk_");
    String[] p = at < 0 ? new String[0] : s.substring(at + 1).split("_");
    if (at <= 0 || p.length != 3) {
      throw new ProtocolException("block: '" + s + "' is not bpid:blk_id_genstamp");
    }
    try {
      return new ExtendedBlock(s.substring(0, at), Long.parseLong(p[1]), 0,
          Long.parseLong(p[2]));
    } catch (NumberFormatException e) {
      throw new ProtocolException("block: '" + s + "' is not bpid:blk_id_genstamp");
    }
  }

  public NetecPacket toHello(int task, int slotArray, int sender) {
    ObjectNode o = SetupRequest.JSON.createObjectNode();
    o.put("role", "switch").put("block", block.toString()).put("unitLength", unitLength)
        .put("length", length).put("payload", payload).put("token", token)
        .put("window", window).put("slots", slots).put("offset", offset);
    try {
      return new NetecPacket(NetecPacket.HELLO, task, slotArray, sender, 0, 0, 0, 0,
          SetupRequest.JSON.writeValueAsBytes(o));
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  public static StreamRequest fromHello(NetecPacket hello) throws ProtocolException {
    if (hello.type() != NetecPacket.HELLO || hello.payloadLength() > 4096) {
      throw new ProtocolException("expected a HELLO of at most 4096 bytes, got " + hello);
    }
    JsonNode o;
    try {
      o = SetupRequest.JSON.readTree(hello.payload());
    } catch (IOException e) {
      throw new ProtocolException("HELLO is not JSON: " + e.getMessage());
    }
    if (o == null || !"switch".equals(o.path("role").asText())) {
      throw new ProtocolException("role: expected \"switch\"");
    }
    ExtendedBlock block = parseBlock(o.path("block").asText(null));
    long unitLength = o.path("unitLength").asLong(-1);
    long length = o.path("length").asLong(-1);
    int payload = o.path("payload").asInt(-1);
    int window = o.path("window").asInt(-1);
    int slots = o.path("slots").asInt(-1);
    long offset = o.path("offset").asLong(0);
    String token = o.path("token").asText(null);
    if (length < 1 || offset < 0 || unitLength < 0 || payload < 64
        || payload > 65536 || payload % 64 != 0 || window < 0 || window > 0xffff
        || slots < 2 || slots > 0xffff || token == null) {
      throw new ProtocolException("HELLO fields out of range: " + o);
    }
    return new StreamRequest(block, unitLength, offset, length, payload, token, window, slots);
  }

  /** The agent's refusal: a HELLO whose payload is {"error": reason}. */
  public static NetecPacket errorHello(int task, int slotArray, int sender, String reason) {
    ObjectNode o = SetupRequest.JSON.createObjectNode().put("error", reason);
    byte[] b = o.toString().getBytes(StandardCharsets.UTF_8);
    return new NetecPacket(NetecPacket.HELLO, task, slotArray, sender, 0, 0, 0, 0,
        b.length > 4096 ? java.util.Arrays.copyOf(b, 4096) : b);
  }
}
