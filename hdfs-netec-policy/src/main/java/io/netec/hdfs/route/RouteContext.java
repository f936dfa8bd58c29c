package io.netec.hdfs.route;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.server.datanode.DataNode;

/** What a route gets at construction: the configuration and the DataNode it runs in. */
public final class RouteContext {
  private final Configuration conf;
  private final DataNode dataNode;

  public RouteContext(Configuration conf, DataNode dataNode) {
    this.conf = conf;
    this.dataNode = dataNode;
  }

  public Configuration conf() {
    return conf;
  }

  /** The DataNode, or null where a route runs outside one. */
  public DataNode dataNode() {
    return dataNode;
  }
}
