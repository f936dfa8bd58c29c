package io.netec.hdfs.client;

import io.netec.hdfs.codec.NetecCoderFactories;
import java.io.IOException;
import java.net.URI;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hdfs.DistributedFileSystem;
import org.apache.hadoop.hdfs.protocol.LocatedBlocks;

/**
 * HDFS, with degraded reads of NETEC files rebuilt through the routes of
 * {@code netec.route.order}: a NetEC switch ({@code netec.switch.address}) and/or INEC repair
 * graphs over the DataNodes' participants; "native" is Hadoop's own stream. Set
 * {@code fs.hdfs.impl=io.netec.hdfs.client.NetecDistributedFileSystem}. Everything else is
 * Hadoop's DistributedFileSystem unchanged, and so are reads of other files, of files still
 * being written, of encrypted files, and all reads when no route is usable. Not covered:
 * FileContext, WebHDFS/HttpFS and direct DFSClient users (they read through Hadoop's own
 * stream, decoding with our coder).
 */
public class NetecDistributedFileSystem extends DistributedFileSystem {
  private NetecStripedInputStream.Routes routes;

  @Override
  public void initialize(URI uri, Configuration conf) throws IOException {
    super.initialize(uri, conf);
    routes = NetecStripedInputStream.Routes.fromConf(conf);
  }

  @Override
  public FSDataInputStream open(Path f, int bufferSize) throws IOException {
    FSDataInputStream hadoop = super.open(f, bufferSize);
    if (routes.isEmpty()) {
      return hadoop;
    }
    String src = fixRelativePart(f).toUri().getPath();
    // One more NameNode call, only with a route configured: policy, state and all locations.
    LocatedBlocks blocks = getClient().getLocatedBlocks(src, 0, Long.MAX_VALUE);
    if (blocks.getErasureCodingPolicy() == null
        || !NetecCoderFactories.CODEC.equals(blocks.getErasureCodingPolicy().getCodecName())
        || blocks.isUnderConstruction() || !blocks.isLastBlockComplete()
        || blocks.getFileEncryptionInfo() != null) {
      return hadoop;
    }
    return new FSDataInputStream(new NetecStripedInputStream(getClient(), src, blocks, hadoop,
        routes, getConf()));
  }
}
