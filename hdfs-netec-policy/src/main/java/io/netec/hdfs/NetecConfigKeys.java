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
}
