package io.netec.hdfs.switchroute.wire;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The setup control message (docs/protocol.md, "setup"): what a reader asks a switch to
 * aggregate. {@link #fromJson} validates every field and names the one at fault.
 */
public final class SetupRequest {
  static final ObjectMapper JSON = new ObjectMapper();
  public static final int MAX_K = 16;
  public static final int MAX_ROWS = 4;

  private final String group;
  private final int k;
  private final int rows;
  private final int payload;
  private final long length;
  private final long offset;
  private final int timeoutMs;
  private final List<Survivor> survivors;
  private final byte[][] coefficients;
  private final boolean premultiplied;
  private final boolean datagram;
  /**
   * The requester keeps its control connection open until its reader claimed the task (or
   * the task ended): the switch frees the task at once if that connection closes first.
   */
  private final boolean hold;

  /**
   * A survivor that is another switch's task (docs/protocol.md, "Partial sums"): this switch
   * claims it on that switch's VIP (the survivor's agent) as its reader, with its secret, and
   * the child sends its one rebuilt stream (a partial sum of its rack's survivors, their
   * coefficients applied) as this survivor's DATA.
   */
  public static final class Child {
    private final int task;
    private final int slotArray;
    private final String secret;

    public Child(int task, int slotArray, String secret) {
      this.task = task;
      this.slotArray = slotArray;
      this.secret = secret;
    }

    public int task() {
      return task;
    }

    public int slotArray() {
      return slotArray;
    }

    public String secret() {
      return secret;
    }
  }

  /** One survivor: the agent that streams its unit as sender {@code sender}. */
  public static final class Survivor {
    private final int sender;
    private final String agent;
    private final String block;
    private final long unitLength;
    private final String token;
    private final Child child;

    public Survivor(int sender, String agent, String block, long unitLength, String token) {
      this(sender, agent, block, unitLength, token, null);
    }

    /**
     * @param child the other switch's task whose partial sum this sender is (agent: its VIP),
     *     or null for a survivor agent
     */
    public Survivor(int sender, String agent, String block, long unitLength, String token,
        Child child) {
      this.sender = sender;
      this.agent = agent;
      this.block = block;
      this.unitLength = unitLength;
      this.token = token;
      this.child = child;
    }

    /** The other switch's task this sender is, or null when it is a survivor agent. */
    public Child child() {
      return child;
    }

    /** This survivor as sender {@code s} (a child switch's task renumbers its senders). */
    public Survivor renumbered(int s) {
      return new Survivor(s, agent, block, unitLength, token, child);
    }

    public int sender() {
      return sender;
    }

    public String agent() {
      return agent;
    }

    public String block() {
      return block;
    }

    public long unitLength() {
      return unitLength;
    }

    public String token() {
      return token;
    }
  }

  public SetupRequest(String group, int payload, long length, int timeoutMs,
      List<Survivor> survivors, byte[][] coefficients) throws ProtocolException {
    this(group, payload, 0, length, timeoutMs, survivors, coefficients);
  }

  /**
   * @param offset where in each unit the streams start (a degraded read needs a range); the
   *     rebuilt streams are bytes [offset, offset + length) of the erased units
   */
  public SetupRequest(String group, int payload, long offset, long length, int timeoutMs,
      List<Survivor> survivors, byte[][] coefficients) throws ProtocolException {
    this(group, payload, offset, length, timeoutMs, survivors, coefficients, false);
  }

  /**
   * @param premultiplied each survivor multiplies its own unit by its coefficient and the switch
   *     only XORs (docs/protocol.md, "Pre-multiplied mode"); one row only
   */
  public SetupRequest(String group, int payload, long offset, long length, int timeoutMs,
      List<Survivor> survivors, byte[][] coefficients, boolean premultiplied)
      throws ProtocolException {
    this(group, payload, offset, length, timeoutMs, survivors, coefficients, premultiplied,
        false);
  }

  /**
   * @param datagram datagram mode: every packet in a UDP datagram of its own, reliability
   *     from the protocol's ACK and RETX alone (docs/protocol.md, "Datagram mode")
   */
  public SetupRequest(String group, int payload, long offset, long length, int timeoutMs,
      List<Survivor> survivors, byte[][] coefficients, boolean premultiplied, boolean datagram)
      throws ProtocolException {
    this(group, payload, offset, length, timeoutMs, survivors, coefficients, premultiplied,
        datagram, false);
  }

  private SetupRequest(String group, int payload, long offset, long length, int timeoutMs,
      List<Survivor> survivors, byte[][] coefficients, boolean premultiplied, boolean datagram,
      boolean hold) throws ProtocolException {
    this.hold = hold;
    this.premultiplied = premultiplied;
    this.datagram = datagram;
    this.group = group;
    this.offset = offset;
    this.k = survivors.size();
    this.rows = coefficients.length;
    this.payload = payload;
    this.length = length;
    this.timeoutMs = timeoutMs;
    this.survivors = sortedBySender(survivors);
    this.coefficients = coefficients;
    validate();
  }

  private static List<Survivor> sortedBySender(List<Survivor> in) {
    List<Survivor> l = new ArrayList<>(in);
    l.sort((a, b) -> Integer.compare(a.sender, b.sender));
    return Collections.unmodifiableList(l);
  }

  private void validate() throws ProtocolException {
    check(group != null && group.length() <= 256, "group: missing or longer than 256");
    check(k >= 1 && k <= MAX_K, "k: " + k + " outside 1.." + MAX_K);
    check(rows >= 1 && rows <= MAX_ROWS, "rows: " + rows + " outside 1.." + MAX_ROWS);
    check(payload >= 64 && payload <= NetecPacket.MAX_STREAM_PAYLOAD && payload % 64 == 0,
        "payload: " + payload + " not a multiple of 64 in 64.." + NetecPacket.MAX_STREAM_PAYLOAD);
    check(length >= 1 && length <= (1L << 40), "length: " + length + " outside 1..2^40");
    check(offset >= 0 && offset <= (1L << 40), "offset: " + offset + " outside 0..2^40");
    check(timeoutMs >= 100 && timeoutMs <= 600_000,
        "timeoutMs: " + timeoutMs + " outside 100..600000");
    for (int s = 0; s < k; s++) {
      Survivor v = survivors.get(s);
      check(v.sender == s, "survivors: senders must be 0.." + (k - 1) + " each once");
      check(v.agent != null && v.agent.matches("[^\\s:]+:\\d{1,5}"),
          "survivors[" + s + "].agent: '" + v.agent + "' is not host:port");
      check(v.block != null && !v.block.isEmpty(), "survivors[" + s + "].block: missing");
      check(v.unitLength >= 0 && v.unitLength <= (1L << 40),
          "survivors[" + s + "].unitLength: " + v.unitLength + " outside 0..2^40");
      check(v.token != null, "survivors[" + s + "].token: missing (use \"\" for none)");
    }
    for (int r = 0; r < rows; r++) {
      check(coefficients[r] != null && coefficients[r].length == k,
          "coefficients[" + r + "]: needs " + k + " entries");
    }
    for (int s = 0; s < k; s++) {
      Survivor v = survivors.get(s);
      if (v.child != null) {
        String at = "survivors[" + s + "].child: ";
        check(v.child.task >= 0 && v.child.task <= 255, at + "task outside 0..255");
        check(v.child.slotArray >= 0 && v.child.slotArray <= 255, at + "slotArray outside 0..255");
        check(v.child.secret != null && v.child.secret.matches("[0-9a-f]{32}"),
            at + "secret is not 32 hex digits");
        check(rows == 1, at + "needs rows 1 (a child sends one partial sum), not " + rows);
        check((coefficients[0][s] & 0xff) == 1,
            at + "coefficient must be 1 (the child's sum carries its survivors' coefficients)");
      }
    }
    check(!premultiplied || rows == 1,
        "premultiplied: needs rows 1 (a survivor sends one multiplied stream), not " + rows);
  }

  private static void check(boolean ok, String message) throws ProtocolException {
    if (!ok) {
      throw new ProtocolException(message);
    }
  }

  public String group() {
    return group;
  }

  public int k() {
    return k;
  }

  public int rows() {
    return rows;
  }

  /** Payload bytes per packet (P). */
  public int payload() {
    return payload;
  }

  /** Bytes of each rebuilt stream (L). */
  public long length() {
    return length;
  }

  /** Where in each unit the streams start. */
  public long offset() {
    return offset;
  }

  public int timeoutMs() {
    return timeoutMs;
  }

  public List<Survivor> survivors() {
    return survivors;
  }

  /** This request, its requester holding the control connection until the claim. */
  public SetupRequest held() {
    try {
      return new SetupRequest(group, payload, offset, length, timeoutMs, survivors,
          coefficients, premultiplied, datagram, true);
    } catch (ProtocolException e) {
      throw new IllegalStateException("a valid request became invalid", e);
    }
  }

  /** Whether the switch frees the task once its control connection closes unclaimed. */
  public boolean hold() {
    return hold;
  }

  /** Whether packets travel in UDP datagrams (else over TCP connections). */
  public boolean datagram() {
    return datagram;
  }

  /** Whether the survivors multiply and the switch only XORs (one row). */
  public boolean premultiplied() {
    return premultiplied;
  }

  /** The coefficient the switch multiplies sender s's row-r bytes by: 1 when premultiplied. */
  public int switchCoefficient(int r, int s) {
    return premultiplied ? 1 : coefficient(r, s);
  }

  /** The coefficient sender s multiplies its own unit by before sending: 1 unless premultiplied. */
  public int senderCoefficient(int s) {
    return premultiplied ? coefficient(0, s) : 1;
  }

  /** Coefficient of sender s in output row r. */
  public int coefficient(int r, int s) {
    return coefficients[r][s] & 0xff;
  }

  /** Number of packet-stripes: ceil(L / P). */
  public long stripes() {
    return PacketStripes.count(length, payload);
  }

  /** Payload length of every packet of stripe {@code seq} ({@link PacketStripes}). */
  public int payloadLength(long seq) {
    return PacketStripes.payloadLength(length, payload, seq);
  }

  public byte[] toJson() {
    ObjectNode o = JSON.createObjectNode();
    o.put("op", "setup").put("version", NetecPacket.VERSION).put("group", group).put("k", k)
        .put("rows", rows).put("payload", payload).put("offset", offset).put("length", length)
        .put("timeoutMs", timeoutMs);
    if (premultiplied) {
      o.put("premultiplied", true);
    }
    if (datagram) {
      o.put("transport", "udp");
    }
    if (hold) {
      o.put("hold", true);
    }
    ArrayNode sv = o.putArray("survivors");
    for (Survivor s : survivors) {
      ObjectNode e = sv.addObject().put("sender", s.sender).put("agent", s.agent)
          .put("block", s.block).put("unitLength", s.unitLength).put("token", s.token);
      if (s.child != null) {
        e.putObject("child").put("task", s.child.task).put("slotArray", s.child.slotArray)
            .put("secret", s.child.secret);
      }
    }
    ArrayNode co = o.putArray("coefficients");
    for (byte[] row : coefficients) {
      ArrayNode a = co.addArray();
      for (byte c : row) {
        a.add(c & 0xff);
      }
    }
    try {
      return JSON.writeValueAsBytes(o);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  public static SetupRequest fromJson(byte[] utf8) throws ProtocolException {
    JsonNode o = JsonLimits.parse(utf8, ControlFrames.MAX_FRAME);
    check(o != null && o.isObject(), "not a JSON object");
    check("setup".equals(text(o, "op")), "op: expected \"setup\"");
    check(integer(o, "version") == NetecPacket.VERSION,
        "version: " + o.get("version") + " not supported (this side speaks "
        + NetecPacket.VERSION + ")");
    JsonNode sv = o.get("survivors");
    check(sv != null && sv.isArray() && sv.size() <= MAX_K, "survivors: missing or too many");
    List<Survivor> survivors = new ArrayList<>();
    for (int i = 0; i < sv.size(); i++) {
      JsonNode s = sv.get(i);
      check(s.isObject(), "survivors[" + i + "]: not an object");
      JsonNode c = s.get("child");
      check(c == null || c.isObject(), "survivors[" + i + "].child: not an object");
      Child child = c == null ? null : new Child(JsonLimits.intIn(c, "task", 0, 255),
          JsonLimits.intIn(c, "slotArray", 0, 255), text(c, "secret"));
      survivors.add(new Survivor(JsonLimits.intIn(s, "sender", 0, 255), text(s, "agent"),
          text(s, "block"), integer(s, "unitLength"), text(s, "token"), child));
    }
    JsonNode co = o.get("coefficients");
    check(co != null && co.isArray() && co.size() <= MAX_ROWS,
        "coefficients: missing or more than " + MAX_ROWS + " rows");
    byte[][] coefficients = new byte[co.size()][];
    for (int r = 0; r < co.size(); r++) {
      JsonNode row = co.get(r);
      check(row.isArray() && row.size() <= MAX_K, "coefficients[" + r + "]: not an array");
      coefficients[r] = new byte[row.size()];
      for (int s = 0; s < row.size(); s++) {
        JsonNode c = row.get(s);
        check(c.isInt() && c.intValue() >= 0 && c.intValue() <= 255,
            "coefficients[" + r + "][" + s + "]: " + c + " is not 0..255");
        coefficients[r][s] = (byte) c.intValue();
      }
    }
    check(integer(o, "k") == survivors.size(),
        "k: " + o.get("k") + " but " + survivors.size() + " survivors");
    check(integer(o, "rows") == coefficients.length,
        "rows: " + o.get("rows") + " but " + coefficients.length + " coefficient rows");
    long offset = o.has("offset") ? integer(o, "offset") : 0;
    JsonNode pre = o.get("premultiplied");
    check(pre == null || pre.isBoolean(), "premultiplied: not true or false");
    JsonNode transport = o.get("transport");
    check(transport == null || "tcp".equals(transport.asText(null))
        || "udp".equals(transport.asText(null)), "transport: not \"tcp\" or \"udp\"");
    JsonNode hold = o.get("hold");
    check(hold == null || hold.isBoolean(), "hold: not true or false");
    return new SetupRequest(text(o, "group"),
        JsonLimits.intIn(o, "payload", 64, NetecPacket.MAX_STREAM_PAYLOAD), offset,
        integer(o, "length"), JsonLimits.intIn(o, "timeoutMs", 1, Integer.MAX_VALUE), survivors,
        coefficients, pre != null && pre.booleanValue(),
        transport != null && "udp".equals(transport.asText()), hold != null && hold.booleanValue());
  }

  private static String text(JsonNode o, String field) throws ProtocolException {
    JsonNode v = o.get(field);
    check(v != null && v.isTextual(), field + ": missing or not a string");
    return v.textValue();
  }

  private static long integer(JsonNode o, String field) throws ProtocolException {
    JsonNode v = o.get(field);
    check(v != null && v.canConvertToLong() && v.isIntegralNumber(),
        field + ": missing or not an integer");
    return v.longValue();
  }
}
