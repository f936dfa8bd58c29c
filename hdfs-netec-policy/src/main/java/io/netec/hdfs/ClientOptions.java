package io.netec.hdfs;

import java.util.Map;

/** The plugin's client's settings ({@code netec.client.*}), parsed once. */
public final class ClientOptions {
  private final String reads;
  private final double linkBytesPerMs;

  ClientOptions(Map<String, Object> values) {
    this.reads = (String) values.get(NetecConfigKeys.CLIENT_READS);
    this.linkBytesPerMs = (Integer) values.get(NetecConfigKeys.CLIENT_LINK_MBPS) * 1e6 / 8 / 1000;
  }

  /** {@code netec.client.reads}: cost, routes or hadoop. */
  public String reads() {
    return reads;
  }

  /** {@code netec.client.link.mbps}: the client's link in bytes per millisecond, 0 if unset. */
  public double linkBytesPerMs() {
    return linkBytesPerMs;
  }
}
