package io.netec.hdfs.route;

import java.io.IOException;
import java.util.EnumSet;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.StorageType;
import org.apache.hadoop.hdfs.protocol.ExtendedBlock;
import org.apache.hadoop.hdfs.security.token.block.BlockTokenIdentifier;
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

  /**
   * A READ token for an internal block, as survivors check it (encodeToUrlString(); an empty
   * token's form when tokens are off). Needs the DataNode.
   */
  public String readToken(ExtendedBlock b) throws IOException {
    return dataNode.getBlockAccessToken(b, EnumSet.of(BlockTokenIdentifier.AccessMode.READ),
        new StorageType[0], new String[0]).encodeToUrlString();
  }
}
