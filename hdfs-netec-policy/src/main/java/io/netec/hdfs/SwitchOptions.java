package io.netec.hdfs;

import java.util.Map;

/** The switch route's settings ({@code netec.switch.*}), parsed once by {@link NetecSettings}. */
public final class SwitchOptions {
  private final String address;
  private final Map<String, String> rackSwitches;
  private final int payload;
  private final boolean premultiply;
  private final boolean datagrams;
  private final int timeoutMs;

  SwitchOptions(Map<String, Object> values) {
    this.address = (String) values.get(NetecConfigKeys.SWITCH_ADDRESS);
    @SuppressWarnings("unchecked")
    Map<String, String> racks = (Map<String, String>) values.get(NetecConfigKeys.SWITCH_RACKS);
    this.rackSwitches = racks == null ? Map.of() : racks;
    this.payload = (Integer) values.get(NetecConfigKeys.SWITCH_PAYLOAD);
    this.premultiply = (Boolean) values.get(NetecConfigKeys.SWITCH_PREMULTIPLY);
    this.datagrams = "udp".equals(values.get(NetecConfigKeys.SWITCH_TRANSPORT));
    this.timeoutMs = (Integer) values.get(NetecConfigKeys.SWITCH_TIMEOUT_MS);
  }

  /** "host:port" of the switch's control endpoint, or null when unset. */
  public String address() {
    return address;
  }

  /**
   * {rack: "host:port"} of each rack's switch ({@code netec.switch.racks}), empty when unset:
   * tasks then run on {@link #address} alone.
   */
  public Map<String, String> rackSwitches() {
    return rackSwitches;
  }

  public int payload() {
    return payload;
  }

  /** Whether one-row switch tasks are pre-multiplied by the survivors. */
  public boolean premultiply() {
    return premultiply;
  }

  /** Whether switch tasks travel in UDP datagrams (netec.switch.transport=udp). */
  public boolean datagrams() {
    return datagrams;
  }

  public int timeoutMs() {
    return timeoutMs;
  }
}
