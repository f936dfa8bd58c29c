package io.netec.hdfs;

/** Every configuration key of NetEC-HDFS; conf/README.md documents them for operators. */
public final class NetecConfigKeys {
  private NetecConfigKeys() {
  }

  /** Routes tried for each reconstruction task, in order; native is always tried last. */
  public static final String ROUTE_ORDER = "netec.route.order";
  public static final String ROUTE_ORDER_DEFAULT = "switch,inec,native";

  /** How many times a failed route is tried again before the next route takes the task. */
  public static final String ROUTE_RETRIES = "netec.route.retries";
  public static final int ROUTE_RETRIES_DEFAULT = 1;

  /**
   * Prefix of a key naming the class of a route that is not built in:
   * netec.route.class.NAME = a ReconstructionRoute with a (RouteContext) constructor.
   */
  public static final String ROUTE_CLASS_PREFIX = "netec.route.class.";

  /** Control endpoint (host:port) of the NetEC switch; unset, the switch route declines. */
  public static final String SWITCH_ADDRESS = "netec.switch.address";

  /** Payload bytes per NetEC packet asked of the switch (a P4 switch accepts only its own). */
  public static final String SWITCH_PAYLOAD = "netec.switch.payload.bytes";
  public static final int SWITCH_PAYLOAD_DEFAULT = 32 * 1024;

  /** A switch task without progress for this long fails (and the router moves on). */
  public static final String SWITCH_TIMEOUT_MS = "netec.switch.timeout.ms";
  public static final int SWITCH_TIMEOUT_MS_DEFAULT = 30_000;

  /** Whether the DataNode plugin runs a survivor agent (streams local blocks to switches). */
  public static final String AGENT_ENABLED = "netec.agent.enabled";
  public static final boolean AGENT_ENABLED_DEFAULT = true;

  /** Port of the survivor agent on every DataNode (0: any free port, for tests). */
  public static final String AGENT_PORT = "netec.agent.port";
  public static final int AGENT_PORT_DEFAULT = 50300;

  /** Most streams one agent serves at once; more are refused and the route moves on. */
  public static final String AGENT_MAX_STREAMS = "netec.agent.max.streams";
  public static final int AGENT_MAX_STREAMS_DEFAULT = 64;

  /** An agent closes a stream whose switch has sent nothing for this long. */
  public static final String AGENT_IDLE_TIMEOUT_MS = "netec.agent.idle.timeout.ms";
  public static final int AGENT_IDLE_TIMEOUT_MS_DEFAULT = 60_000;

  /** Whether the DataNode plugin runs an INEC participant (joins repair graphs). */
  public static final String INEC_ENABLED = "netec.inec.enabled";
  public static final boolean INEC_ENABLED_DEFAULT = true;

  /** Port of the INEC participant's control server on every DataNode (0: any, for tests). */
  public static final String INEC_PORT = "netec.inec.port";
  public static final int INEC_PORT_DEFAULT = 50320;

  /** Port of the INEC engine's data listener on every DataNode (0: any, for tests). */
  public static final String INEC_DATA_PORT = "netec.inec.data.port";
  public static final int INEC_DATA_PORT_DEFAULT = 50321;

  /** Most repair-graph vertices one participant runs at once; more are refused. */
  public static final String INEC_MAX_VERTICES = "netec.inec.max.vertices";
  public static final int INEC_MAX_VERTICES_DEFAULT = 64;

  /** Repair scheme of the INEC route: ecpipe (chain), ppr (tree) or rs (star). */
  public static final String INEC_SCHEME = "netec.inec.scheme";
  public static final String INEC_SCHEME_DEFAULT = "ecpipe";

  /** Transport of INEC streams: auto (verbs where both ends have a device), tcp or verbs. */
  public static final String INEC_TRANSPORT = "netec.inec.transport";
  public static final String INEC_TRANSPORT_DEFAULT = "auto";

  /** The verbs library the engine dlopen's (empty: libibverbs.so.1). */
  public static final String INEC_VERBS_LIBRARY = "netec.inec.verbs.library";

  /** Bytes per chunk of a primitive (the WAIT -> EC -> SEND unit); 64 KiB or less pipelines. */
  public static final String INEC_CHUNK = "netec.inec.chunk.bytes";
  public static final int INEC_CHUNK_DEFAULT = 64 * 1024;

  /** Bytes of a block handled per primitive (the memory each node holds per stream). */
  public static final String INEC_SEGMENT = "netec.inec.segment.bytes";
  public static final int INEC_SEGMENT_DEFAULT = 4 * 1024 * 1024;

  /** An INEC repair (or a participant) without progress for this long fails. */
  public static final String INEC_TIMEOUT_MS = "netec.inec.timeout.ms";
  public static final int INEC_TIMEOUT_MS_DEFAULT = 30_000;
}
