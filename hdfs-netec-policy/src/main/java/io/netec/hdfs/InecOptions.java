package io.netec.hdfs;

import io.netec.hdfs.route.PeerNetworks;
import java.util.List;
import java.util.Map;

/** The INEC route's settings ({@code netec.inec.*}), parsed once by {@link NetecSettings}. */
public final class InecOptions {
  /** How refusals name the networks of {@code netec.inec.peer.networks}. */
  static final String PEERS = "INEC peer networks";
  private final boolean enabled;
  private final int port;
  private final int dataPort;
  private final List<String> peerNetworks;
  private final int maxVertices;
  private final String scheme;
  private final boolean racks;
  private final String transport;
  private final String verbsLibrary;
  private final int chunk;
  private final int segment;
  private final int timeoutMs;

  @SuppressWarnings("unchecked")
  InecOptions(Map<String, Object> values) {
    this.enabled = (Boolean) values.get(NetecConfigKeys.INEC_ENABLED);
    this.port = (Integer) values.get(NetecConfigKeys.INEC_PORT);
    this.dataPort = (Integer) values.get(NetecConfigKeys.INEC_DATA_PORT);
    this.peerNetworks = (List<String>) values.get(NetecConfigKeys.INEC_PEER_NETWORKS);
    this.maxVertices = (Integer) values.get(NetecConfigKeys.INEC_MAX_VERTICES);
    this.scheme = (String) values.get(NetecConfigKeys.INEC_SCHEME);
    this.racks = (Boolean) values.get(NetecConfigKeys.INEC_RACKS);
    this.transport = (String) values.get(NetecConfigKeys.INEC_TRANSPORT);
    this.verbsLibrary = (String) values.get(NetecConfigKeys.INEC_VERBS_LIBRARY);
    this.chunk = (Integer) values.get(NetecConfigKeys.INEC_CHUNK);
    this.segment = (Integer) values.get(NetecConfigKeys.INEC_SEGMENT);
    this.timeoutMs = (Integer) values.get(NetecConfigKeys.INEC_TIMEOUT_MS);
  }

  public boolean enabled() {
    return enabled;
  }

  public int port() {
    return port;
  }

  public int dataPort() {
    return dataPort;
  }

  /**
   * Where a participant may stream a vertex's output besides the requester: the networks of
   * {@code netec.inec.peer.networks}, or this host's (link-local excepted), looked up now.
   */
  public PeerNetworks peerNetworks() {
    return PeerNetworks.of(peerNetworks, PEERS, NetecConfigKeys.INEC_PEER_NETWORKS);
  }

  public int maxVertices() {
    return maxVertices;
  }

  /** ecpipe, ppr or rs. */
  public String scheme() {
    return scheme;
  }

  /** Whether repairs are planned by rack ({@code netec.inec.racks}). */
  public boolean racks() {
    return racks;
  }

  /** auto, tcp or verbs. */
  public String transport() {
    return transport;
  }

  public String verbsLibrary() {
    return verbsLibrary;
  }

  public int chunk() {
    return chunk;
  }

  public int segment() {
    return segment;
  }

  public int timeoutMs() {
    return timeoutMs;
  }
}
