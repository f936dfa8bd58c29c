package io.netec.hdfs.switchroute;

import java.io.IOException;
import java.io.InputStream;
import org.apache.hadoop.hdfs.DFSConfigKeys;
import org.apache.hadoop.hdfs.protocol.ExtendedBlock;
import org.apache.hadoop.hdfs.security.token.block.BlockTokenIdentifier;
import org.apache.hadoop.hdfs.server.datanode.DataNode;
import org.apache.hadoop.security.token.Token;

/** The survivor agent's view of a DataNode: its dataset, and its block-token checks. */
public final class DataNodeBlockSource implements SurvivorAgent.BlockSource {
  private final DataNode dn;
  private final boolean tokens;

  public DataNodeBlockSource(DataNode dn) {
    this.dn = dn;
    this.tokens = dn.getConf().getBoolean(DFSConfigKeys.DFS_BLOCK_ACCESS_TOKEN_ENABLE_KEY,
        DFSConfigKeys.DFS_BLOCK_ACCESS_TOKEN_ENABLE_DEFAULT);
  }

  @Override
  public void check(ExtendedBlock block, String token, long minLength) throws IOException {
    if (tokens) {
      Token<BlockTokenIdentifier> t = new Token<>();
      try {
        t.decodeFromUrlString(token);
      } catch (IOException | IllegalArgumentException e) {
        throw new IOException("unreadable block token for " + block);
      }
      dn.getBlockPoolTokenSecretManager().checkAccess(t, null, block,
          BlockTokenIdentifier.AccessMode.READ);
    }
    long len = dn.getFSDataset().getLength(block);
    if (len < minLength) {
      throw new IOException(block + " has " + len + " bytes here, " + minLength + " asked");
    }
  }

  @Override
  public InputStream open(ExtendedBlock block, long offset) throws IOException {
    return dn.getFSDataset().getBlockInputStream(block, offset);
  }
}
