package io.netec.hdfs.switchroute.wire;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;

/**
 * A child task's stream bound to its parent over datagrams (docs/protocol.md, "Partial sums
 * over datagrams"): the reader, which holds the child's control connection and knows its
 * secret, tells the child's switch where the parent's VIP is and which sender of which parent
 * task the child's partial sum is. A P4 switch cannot read a claim's JSON, so the reader ties
 * the levels together, not a HELLO. A plain value; no I/O.
 */
public final class AttachRequest {
  private final int task;
  private final String secret;
  private final String parentVip;
  private final int parentTask;
  private final int parentSlotArray;
  private final int sender;
  private final int slots;
  private final int window;

  /**
   * @param task, secret the child's, from its setup answer
   * @param parentVip host:port of the parent's VIP (the child's stream goes there)
   * @param sender the child's sender number in the parent's task
   * @param slots, window the parent's S and first window
   */
  public AttachRequest(int task, String secret, String parentVip, int parentTask,
      int parentSlotArray, int sender, int slots, int window) {
    this.task = task;
    this.secret = secret;
    this.parentVip = parentVip;
    this.parentTask = parentTask;
    this.parentSlotArray = parentSlotArray;
    this.sender = sender;
    this.slots = slots;
    this.window = window;
  }

  public int task() {
    return task;
  }

  public String secret() {
    return secret;
  }

  /** host:port of the parent's VIP. */
  public String parentVip() {
    return parentVip;
  }

  /** The link the child's stream takes, in the child's own packet-stripes ({@code child}). */
  public ParentLink link(SetupRequest child) {
    return new ParentLink(parentTask, parentSlotArray, sender, slots, window, child.payload(),
        child.offset(), child.length());
  }

  public byte[] toJson() {
    ObjectNode o = SetupRequest.JSON.createObjectNode();
    o.put("op", "attach").put("task", task).put("secret", secret);
    o.putObject("parent").put("vip", parentVip).put("task", parentTask)
        .put("slotArray", parentSlotArray).put("sender", sender).put("slots", slots)
        .put("window", window);
    try {
      return SetupRequest.JSON.writeValueAsBytes(o);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  /** An attach request ({@code "op": "attach"}), each field checked as the protocol says. */
  public static AttachRequest fromJson(JsonNode o) throws ProtocolException {
    JsonNode p = o.get("parent");
    if (p == null || !p.isObject()) {
      throw new ProtocolException("parent: must be an object");
    }
    String vip = JsonLimits.text(p, "vip");
    if (!vip.matches("((25[0-5]|2[0-4]\\d|1?\\d?\\d)\\.){3}(25[0-5]|2[0-4]\\d|1?\\d?\\d)"
        + ":\\d{1,5}") || Integer.parseInt(vip.substring(vip.lastIndexOf(':') + 1)) < 1
        || Integer.parseInt(vip.substring(vip.lastIndexOf(':') + 1)) > 0xffff) {
      throw new ProtocolException("parent.vip: '" + vip + "' is not IPv4:port");
    }
    JsonNode secret = o.get("secret");
    return new AttachRequest(JsonLimits.intIn(o, "task", 0, 255),
        secret == null || !secret.isTextual() ? "" : secret.asText(), vip,
        JsonLimits.intIn(p, "task", 0, 255), JsonLimits.intIn(p, "slotArray", 0, 255),
        JsonLimits.intIn(p, "sender", 0, SetupRequest.MAX_K - 1),
        JsonLimits.intIn(p, "slots", 2, 0xffff),
        p.has("window") ? JsonLimits.intIn(p, "window", 0, 0xffff) : 0xffff);
  }
}
