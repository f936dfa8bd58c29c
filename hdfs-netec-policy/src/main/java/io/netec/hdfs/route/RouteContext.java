package io.netec.hdfs.route;

import io.netec.hdfs.NetecSettings;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.server.datanode.DataNode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a route gets at construction: the checked settings, the configuration (for a
 * third-party route's own keys), and, on a DataNode, the DataNode and where its blocks are read.
 */
public final class RouteContext {
  private static final Logger LOG = LoggerFactory.getLogger(RouteContext.class);
  private final NetecSettings settings;
  private final Configuration conf;
  private final DataNode dataNode;
  private final BlockSource blocks;

  public RouteContext(NetecSettings settings, Configuration conf, DataNode dataNode,
      BlockSource blocks) {
    this.settings = settings;
    this.conf = conf;
    this.dataNode = dataNode;
    this.blocks = blocks;
  }

  public NetecSettings settings() {
    return settings;
  }

  public Configuration conf() {
    return conf;
  }

  /** The DataNode, or null on a client. */
  public DataNode dataNode() {
    return dataNode;
  }

  /** The DataNode's blocks (checksums verified, tokens checked), or null on a client. */
  public BlockSource blocks() {
    return blocks;
  }

  /** "DataNode host:port" or "client", for log lines. */
  public String side() {
    return dataNode == null ? "client" : "DataNode " + dataNode.getDisplayName();
  }

  /**
   * Whether this DataNode starts route {@code route}'s services ({@link
   * RouteFactory#startDataNodeServices}): not when {@code enabled} (the route's own key) is
   * false, nor where the cleartext policy refuses them (logged, naming why).
   */
  public boolean startsServices(String route, boolean enabled) {
    if (!enabled) {
      return false;
    }
    if (settings.cleartextRefusal() != null) {
      LOG.info("NetEC {} not started on {}: {}", route, side(), settings.cleartextRefusal());
      return false;
    }
    return true;
  }
}
