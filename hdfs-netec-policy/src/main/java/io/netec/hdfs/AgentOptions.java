package io.netec.hdfs;

import java.util.Map;

/** A DataNode's survivor agent's settings ({@code netec.agent.*}), parsed once. */
public final class AgentOptions {
  private final boolean enabled;
  private final int port;
  private final int maxStreams;
  private final int idleTimeoutMs;

  AgentOptions(Map<String, Object> values) {
    this.enabled = (Boolean) values.get(NetecConfigKeys.AGENT_ENABLED);
    this.port = (Integer) values.get(NetecConfigKeys.AGENT_PORT);
    this.maxStreams = (Integer) values.get(NetecConfigKeys.AGENT_MAX_STREAMS);
    this.idleTimeoutMs = (Integer) values.get(NetecConfigKeys.AGENT_IDLE_TIMEOUT_MS);
  }

  public boolean enabled() {
    return enabled;
  }

  public int port() {
    return port;
  }

  public int maxStreams() {
    return maxStreams;
  }

  public int idleTimeoutMs() {
    return idleTimeoutMs;
  }
}
