package io.netec.hdfs.switchroute.wire;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;

/**
 * The switch's answer to setup: a task (id, slot array, slots, VIP, and the task's secret,
 * which only the reader that set it up learns and which claims the VIP and tears the task
 * down) or a refusal's reason.
 */
public final class SetupAnswer {
  private final int task;
  private final int slotArray;
  private final int slots;
  private final String vip;
  private final String secret;
  private final String reason;

  private SetupAnswer(int task, int slotArray, int slots, String vip, String secret,
      String reason) {
    this.task = task;
    this.slotArray = slotArray;
    this.slots = slots;
    this.vip = vip;
    this.secret = secret;
    this.reason = reason;
  }

  /** @param secret the task's secret (32 hex digits), or "" from a switch that has none */
  public static SetupAnswer accept(int task, int slotArray, int slots, String vip,
      String secret) {
    return new SetupAnswer(task, slotArray, slots, vip, secret, null);
  }

  public static SetupAnswer refuse(String reason) {
    return new SetupAnswer(-1, -1, 0, null, "", reason);
  }

  /** The task's secret, "" when the switch issued none. */
  public String secret() {
    return secret;
  }

  public boolean ok() {
    return reason == null;
  }

  public int task() {
    return task;
  }

  public int slotArray() {
    return slotArray;
  }

  public int slots() {
    return slots;
  }

  public String vip() {
    return vip;
  }

  /** Why the switch refused, or null. */
  public String reason() {
    return reason;
  }

  public byte[] toJson() {
    ObjectNode o = SetupRequest.JSON.createObjectNode();
    o.put("ok", ok());
    if (ok()) {
      o.put("task", task).put("slotArray", slotArray).put("slots", slots).put("vip", vip);
      if (!secret.isEmpty()) {
        o.put("secret", secret);
      }
    } else {
      o.put("reason", reason);
    }
    try {
      return SetupRequest.JSON.writeValueAsBytes(o);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  public static SetupAnswer fromJson(byte[] utf8) throws ProtocolException {
    JsonNode o = JsonLimits.parse(utf8, ControlFrames.MAX_FRAME);
    if (o == null || !o.path("ok").isBoolean()) {
      throw new ProtocolException("ok: missing or not a boolean");
    }
    if (!o.get("ok").booleanValue()) {
      return refuse(o.path("reason").asText("no reason given"));
    }
    int task = JsonLimits.intIn(o, "task", 0, 255);
    int array = JsonLimits.intIn(o, "slotArray", 0, 255);
    int slots = JsonLimits.intIn(o, "slots", 2, 0xffff);
    String vip = o.path("vip").asText("");
    if (!vip.matches("[^\\s:]+:\\d{1,5}")) {
      throw new ProtocolException("accept with an invalid vip: " + o);
    }
    String secret = o.path("secret").asText("");
    if (!secret.matches("([0-9a-f]{32})?")) {
      throw new ProtocolException("accept with an invalid secret");
    }
    return accept(task, array, slots, vip, secret);
  }
}
