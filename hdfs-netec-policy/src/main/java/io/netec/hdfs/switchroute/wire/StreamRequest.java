package io.netec.hdfs.switchroute.wire;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
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
  private final int coefficient;

  public StreamRequest(ExtendedBlock block, long unitLength, long offset, long length,
      int payload, String token, int window, int slots) {
    this(block, unitLength, offset, length, payload, token, window, slots, 1);
  }

  /** @param coefficient what the agent multiplies its unit by (1: sends it as it is) */
  public StreamRequest(ExtendedBlock block, long unitLength, long offset, long length,
      int payload, String token, int window, int slots, int coefficient) {
    this.coefficient = coefficient;
    this.offset = offset;
    this.block = block;
    this.unitLength = unitLength;
    this.length = length;
    this.payload = payload;
    this.token = token;
    this.window = window;
    this.slots = slots;
  }

  /**
   * The GF(2^8) coefficient the agent multiplies every payload byte by before sending: 1 but in
   * a pre-multiplied task, where the switch only XORs.
   */
  public int coefficient() {
    return coefficient;
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
    return PacketStripes.count(length, payload);
  }

  /** Payload length of every packet of stripe {@code seq} ({@link PacketStripes}). */
  public int payloadLength(long seq) {
    return PacketStripes.payloadLength(length, payload, seq);
  }

  /** Stream bytes in stripe {@code seq}; the payload's words past them are zero. */
  public int streamBytes(long seq) {
    return PacketStripes.streamBytes(length, payload, seq);
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

  /** Survivor {@code sender}'s stream of a task: the one place a setup becomes a request. */
  public static StreamRequest forSender(SetupRequest setup, int slots, int sender)
      throws ProtocolException {
    return forSender(setup, slots, sender, slots / 2);
  }

  /** ... with {@code window} its first window (its limit before any ACK). */
  public static StreamRequest forSender(SetupRequest setup, int slots, int sender, int window)
      throws ProtocolException {
    SetupRequest.Survivor sv = setup.survivors().get(sender);
    return new StreamRequest(parseBlock(sv.block()), sv.unitLength(), setup.offset(),
        setup.length(), setup.payload(), sv.token(), window, slots,
        setup.senderCoefficient(sender));
  }

  /**
   * The reader's HELLO on the VIP. It carries every survivor's stream request, so that a P4
   * switch, which multicasts it to the survivors and sets each copy's sender number, needs
   * no JSON of its own (docs/protocol.md, HELLO); the software switch reads only the role.
   */
  public static NetecPacket readerHello(SetupRequest setup, int task, int slotArray, int slots,
      String secret) {
    return readerHello(setup, task, slotArray, slots, secret, null);
  }

  /**
   * The reader's HELLO echoing {@code cookie} (datagram mode: the switch binds the task to
   * the reader's address only on a HELLO that echoes the cookie it sent there).
   */
  public static NetecPacket readerHello(SetupRequest setup, int task, int slotArray, int slots,
      String secret, String cookie) {
    return readerHello(setup, task, slotArray, slots, slots / 2, secret, cookie);
  }

  /**
   * ... the survivors' first window {@code window} (a child's: no more than its parent's,
   * docs/protocol.md, "Partial sums over datagrams").
   */
  public static NetecPacket readerHello(SetupRequest setup, int task, int slotArray, int slots,
      int window, String secret, String cookie) {
    ObjectNode o = SetupRequest.JSON.createObjectNode();
    o.put("role", "reader").put("secret", secret);
    if (cookie != null) {
      o.put("cookie", cookie);
    }
    o.put("length", setup.length()).put("payload", setup.payload())
        .put("window", window).put("slots", slots).put("offset", setup.offset());
    com.fasterxml.jackson.databind.node.ArrayNode streams = o.putArray("streams");
    for (SetupRequest.Survivor sv : setup.survivors()) {
      ObjectNode st = streams.addObject().put("block", sv.block())
          .put("unitLength", sv.unitLength()).put("token", sv.token());
      if (setup.premultiplied()) {
        st.put("coefficient", setup.senderCoefficient(sv.sender()));
      }
    }
    try {
      byte[] b = SetupRequest.JSON.writeValueAsBytes(o);
      if (b.length > 4096) { // the survivors' part is what a P4 switch would need: drop it
        ObjectNode small = SetupRequest.JSON.createObjectNode();
        small.put("role", "reader").put("secret", secret);
        if (cookie != null) {
          small.put("cookie", cookie);
        }
        b = SetupRequest.JSON.writeValueAsBytes(small);
      }
      return new NetecPacket(NetecPacket.HELLO, task, slotArray, NetecPacket.READER, 0, 0, 0, 0,
          b);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  /** The secret in a reader's HELLO, "" when it carries none or is not a reader's HELLO. */
  public static String readerSecret(NetecPacket hello) {
    return readerFields(hello)[0];
  }

  /**
   * A reader's HELLO's secret and cookie, each "" when absent (or when the packet is not a
   * reader's HELLO, or not JSON within the limits).
   */
  public static String[] readerFields(NetecPacket hello) {
    JsonNode o = hello.sender() == NetecPacket.READER ? jsonOf(hello) : null;
    return o == null ? new String[] {"", ""}
        : new String[] {o.path("secret").asText(""), o.path("cookie").asText("")};
  }

  /**
   * A HELLO's JSON, read leniently: null when the packet is no HELLO, or its payload is not
   * JSON within the limits (4096 bytes, {@link JsonLimits}' depth). For the fields a peer may
   * leave out; a HELLO that must be well formed is read by {@link #fromHello}.
   */
  private static JsonNode jsonOf(NetecPacket hello) {
    if (hello.type() != NetecPacket.HELLO || hello.payloadLength() > 4096) {
      return null;
    }
    try {
      return JsonLimits.parse(hello.payload(), 4096);
    } catch (ProtocolException e) {
      return null;
    }
  }

  /**
   * The switch's answer to a reader's datagram HELLO from an address not yet proven: a HELLO
   * from the VIP whose payload is {"cookie": cookie}, which the reader echoes in its next
   * HELLO from the same address (docs/protocol.md, "Datagram mode").
   */
  public static NetecPacket cookieHello(int task, int slotArray, String cookie) {
    byte[] b = SetupRequest.JSON.createObjectNode().put("cookie", cookie).toString()
        .getBytes(StandardCharsets.UTF_8);
    return new NetecPacket(NetecPacket.HELLO, task, slotArray, NetecPacket.READER, 0, 0, 0, 0,
        b);
  }

  /** The cookie of a switch's {@link #cookieHello}, or null when the HELLO is not one. */
  public static String cookieOf(NetecPacket hello) {
    JsonNode o = jsonOf(hello);
    JsonNode c = o == null ? null : o.get("cookie");
    return c != null && c.isTextual() ? c.asText() : null;
  }

  public NetecPacket toHello(int task, int slotArray, int sender) {
    ObjectNode o = SetupRequest.JSON.createObjectNode();
    o.put("role", "switch").put("block", block.toString()).put("unitLength", unitLength)
        .put("length", length).put("payload", payload).put("token", token)
        .put("window", window).put("slots", slots).put("offset", offset);
    if (coefficient != 1) {
      o.put("coefficient", coefficient);
    }
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
    JsonNode o = JsonLimits.parse(hello.payload(), 4096);
    JsonNode mine = o;
    if (o != null && "reader".equals(o.path("role").asText())) {
      // through a P4 switch: the reader's HELLO, this copy's sender number picks the stream
      JsonNode streams = o.path("streams");
      if (!streams.isArray() || hello.sender() >= streams.size()) {
        throw new ProtocolException("streams: no entry for sender " + hello.sender());
      }
      mine = streams.get(hello.sender());
    } else if (o == null || !"switch".equals(o.path("role").asText())) {
      throw new ProtocolException("role: expected \"switch\" or \"reader\"");
    }
    ExtendedBlock block = parseBlock(mine.path("block").asText(null));
    long unitLength = mine.path("unitLength").asLong(-1);
    long length = o.path("length").asLong(-1);
    int payload = JsonLimits.intIn(o, "payload", 64, NetecPacket.MAX_STREAM_PAYLOAD);
    int window = JsonLimits.intIn(o, "window", 0, 0xffff);
    int slots = JsonLimits.intIn(o, "slots", 2, 0xffff);
    long offset = o.path("offset").asLong(0);
    String token = mine.path("token").asText(null);
    int coefficient = mine.has("coefficient") ? JsonLimits.intIn(mine, "coefficient", 0, 255) : 1;
    if (length < 1 || offset < 0 || unitLength < 0 || payload % 64 != 0 || token == null) {
      throw new ProtocolException("HELLO fields out of range: " + o);
    }
    return new StreamRequest(block, unitLength, offset, length, payload, token, window, slots,
        coefficient);
  }

  /** The agent's refusal: a HELLO whose payload is {"error": reason}. */
  public static NetecPacket errorHello(int task, int slotArray, int sender, String reason) {
    return errorHello(task, slotArray, sender, reason, new int[0]);
  }

  /**
   * A refusal or a task's failure: a HELLO whose payload is {"error": reason}, with
   * "survivors": the senders at fault (a switch telling its reader which survivors it could not
   * reach or never heard from), when any. The reason is cut to {@value #MAX_REASON} characters,
   * so the payload is whole JSON within 4 KiB however it is escaped.
   */
  public static NetecPacket errorHello(int task, int slotArray, int sender, String reason,
      int[] survivors) {
    String cut = reason.length() > MAX_REASON ? reason.substring(0, MAX_REASON) + "..." : reason;
    ObjectNode o = SetupRequest.JSON.createObjectNode().put("error", cut);
    if (survivors.length > 0) {
      ArrayNode a = o.putArray("survivors");
      for (int i = 0; i < Math.min(survivors.length, MAX_FAULTY); i++) {
        a.add(survivors[i]);
      }
    }
    return new NetecPacket(NetecPacket.HELLO, task, slotArray, sender, 0, 0, 0, 0,
        o.toString().getBytes(StandardCharsets.UTF_8));
  }

  private static final int MAX_REASON = 500;
  private static final int MAX_FAULTY = 64;

  /** What an error HELLO says. */
  public static final class Failure {
    /** Why, as its sender wrote it (peer text: escape it before logging). */
    public final String reason;
    /** The senders at fault, as named (the reader checks them against its task). */
    public final int[] survivors;

    Failure(String reason, int[] survivors) {
      this.reason = reason;
      this.survivors = survivors;
    }
  }

  /**
   * The failure an {@link #errorHello} carries; null when the HELLO is not one. A payload that
   * is no JSON object with a textual "error" is not one; survivors that are not numbers in
   * 0..255 are left out.
   */
  public static Failure errorOf(NetecPacket hello) {
    JsonNode o = jsonOf(hello);
    JsonNode error = o == null ? null : o.get("error");
    if (error == null || !error.isTextual()) {
      return null;
    }
    java.util.List<Integer> named = new java.util.ArrayList<>();
    JsonNode list = o.path("survivors");
    for (JsonNode n : list.isArray() ? list : SetupRequest.JSON.createArrayNode()) {
      if (n.isInt() && n.asInt() >= 0 && n.asInt() <= 255 && named.size() < MAX_FAULTY) {
        named.add(n.asInt());
      }
    }
    return new Failure(error.asText(), named.stream().mapToInt(Integer::intValue).toArray());
  }
}
