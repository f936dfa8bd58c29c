package io.netec.hdfs;

/**
 * The name of every configuration key of NetEC-HDFS. Defaults, types and ranges are in
 * {@link NetecKeyTable}, read by {@link NetecSettings}, the one parse both the DataNode and the
 * client use; README.md documents them for operators.
 */
public final class NetecConfigKeys {
  private NetecConfigKeys() {
  }

  /** Routes tried for each reconstruction task, in order; native is always tried last. */
  public static final String ROUTE_ORDER = "netec.route.order";

  /** How many times a failed route is tried again before the next route takes the task. */
  public static final String ROUTE_RETRIES = "netec.route.retries";

  /**
   * A route that failed to reach its service (connection refused, unreachable) is not asked
   * again for this long; one log line marks each change of its state.
   */
  public static final String ROUTE_BACKOFF_MS = "netec.route.backoff.ms";

  /**
   * Prefix of the keys that once named route classes. Refused, naming what replaced them:
   * routes are found by ServiceLoader (io.netec.hdfs.route.RouteFactory).
   */
  public static final String ROUTE_CLASS_PREFIX = "netec.route.class.";

  /**
   * Whether the network between DataNodes, the switch and clients is trusted to carry block
   * data in cleartext. On a cluster that encrypts data transfer (dfs.encrypt.data.transfer,
   * or dfs.data.transfer.protection=privacy) the switch and INEC routes move block data and
   * tokens only when this is true; otherwise they decline and run no survivor service.
   */
  public static final String FABRIC_TRUSTED = "netec.fabric.trusted";

  /**
   * Port of every DataNode's proof service, which tells a verifier the fingerprint of a range of
   * a local internal block (0: any free port, for tests).
   */
  public static final String PROOF_PORT = "netec.proof.port";

  /**
   * How long a verifier waits for survivors' fingerprints once a route delivered its rows; an
   * attempt whose proof is missing then is not kept.
   */
  public static final String PROOF_TIMEOUT_MS = "netec.proof.timeout.ms";

  /**
   * How the plugin's client reads a range of a lost unit: "cost" (Hadoop's stream or a route,
   * whichever the cost model says moves the read faster), "routes" (always a route when one is
   * configured: for benchmarks and tests), "hadoop" (always Hadoop's stream).
   */
  public static final String CLIENT_READS = "netec.client.reads";

  /**
   * The client's link rate in Mbit/s for the cost model; 0: learned from this client's own
   * reads through Hadoop's stream.
   */
  public static final String CLIENT_LINK_MBPS = "netec.client.link.mbps";

  /** Control endpoint (host:port) of the NetEC switch; unset, the switch route declines. */
  public static final String SWITCH_ADDRESS = "netec.switch.address";

  /**
   * The switch of each rack, as "RACK=host:port" entries (RACK a network location as the
   * NameNode gives it, e.g. /rack2), comma-separated; unset, every task runs on {@link
   * #SWITCH_ADDRESS} alone. Set, a DataNode's rebuild of one unit (over TCP) runs on its own
   * rack's switch, and every other rack holding two or more of its survivors sums them on its
   * own switch first and sends one partial-sum stream across its uplink (docs/protocol.md,
   * "Partial sums").
   */
  public static final String SWITCH_RACKS = "netec.switch.racks";

  /** Payload bytes per NetEC packet asked of the switch (a P4 switch accepts only its own). */
  public static final String SWITCH_PAYLOAD = "netec.switch.payload.bytes";

  /**
   * Whether survivors multiply their own units by their coefficients and the switch only XORs
   * (docs/protocol.md, pre-multiplied mode): tasks of one row; tasks of more rows still ask
   * the switch to multiply.
   */
  public static final String SWITCH_PREMULTIPLY = "netec.switch.premultiply";

  /**
   * How packets travel between switch, survivors and reader: "tcp" (connections) or "udp"
   * (datagram mode: one packet per datagram, reliable through the protocol's ACK and RETX;
   * what a P4 switch's end hosts speak).
   */
  public static final String SWITCH_TRANSPORT = "netec.switch.transport";

  /** A switch task without progress for this long fails (and the router moves on). */
  public static final String SWITCH_TIMEOUT_MS = "netec.switch.timeout.ms";

  /** Whether the DataNode plugin runs a survivor agent (streams local blocks to switches). */
  public static final String AGENT_ENABLED = "netec.agent.enabled";

  /** Port of the survivor agent on every DataNode (0: any free port, for tests). */
  public static final String AGENT_PORT = "netec.agent.port";

  /** Most streams one agent serves at once; more are refused and the route moves on. */
  public static final String AGENT_MAX_STREAMS = "netec.agent.max.streams";

  /** An agent closes a stream whose switch has sent nothing for this long. */
  public static final String AGENT_IDLE_TIMEOUT_MS = "netec.agent.idle.timeout.ms";

  /** Whether the DataNode plugin runs an INEC participant (joins repair graphs). */
  public static final String INEC_ENABLED = "netec.inec.enabled";

  /** Port of the INEC participant's control server on every DataNode (0: any, for tests). */
  public static final String INEC_PORT = "netec.inec.port";

  /** Port of the INEC engine's data listener on every DataNode (0: any, for tests). */
  public static final String INEC_DATA_PORT = "netec.inec.data.port";

  /**
   * Networks (comma-separated ADDRESS/PREFIX) a participant streams a vertex's output into when
   * a join names a peer other than the requester; empty: this host's networks, link-local
   * excepted.
   */
  public static final String INEC_PEER_NETWORKS = "netec.inec.peer.networks";

  /** Most repair-graph vertices one participant runs at once; more are refused. */
  public static final String INEC_MAX_VERTICES = "netec.inec.max.vertices";

  /** Repair scheme of the INEC route: ecpipe (chain), ppr (tree) or rs (star). */
  public static final String INEC_SCHEME = "netec.inec.scheme";

  /**
   * Whether INEC repairs are planned by rack (the NameNode's network locations of the
   * survivors and the rebuilding node): the nearest survivors, a chain visiting each rack's
   * together and the rebuilding node's last. Without topology it changes nothing.
   */
  public static final String INEC_RACKS = "netec.inec.racks";

  /** Transport of INEC streams: auto (verbs where both ends have a device), tcp or verbs. */
  public static final String INEC_TRANSPORT = "netec.inec.transport";

  /** The verbs library the engine dlopen's (empty: libibverbs.so.1). */
  public static final String INEC_VERBS_LIBRARY = "netec.inec.verbs.library";

  /** Bytes per chunk of a primitive (the WAIT -> EC -> SEND unit); 64 KiB or less pipelines. */
  public static final String INEC_CHUNK = "netec.inec.chunk.bytes";

  /** Bytes of a block handled per primitive (the memory each node holds per stream). */
  public static final String INEC_SEGMENT = "netec.inec.segment.bytes";

  /** An INEC repair (or a participant) without progress for this long fails. */
  public static final String INEC_TIMEOUT_MS = "netec.inec.timeout.ms";
}
