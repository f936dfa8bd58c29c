package io.netec.hdfs.switchroute.wire;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;

/** The switch's answer to setup: a task (id, slot array, slots, VIP) or a refusal's reason. */
public final class SetupAnswer {
  private final int task;
  private final int slotArray;
  private final int slots;
  private final String vip;
  private final String reason;

  private SetupAnswer(int task, int slotArray, int slots, String vip, String reason) {
    this.task = task;
    this.slotArray = slotArray;
    this.slots = slots;
    this.vip = vip;
    this.reason = reason;
  }

  public static SetupAnswer accept(int task, int slotArray, int slots, String vip) {
    return new SetupAnswer(task, slotArray, slots, vip, null);
  }

  public static SetupAnswer refuse(String reason) {
    return new SetupAnswer(-1, -1, 0, null, reason);
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
    return accept(task, array, slots, vip);
  }
}
