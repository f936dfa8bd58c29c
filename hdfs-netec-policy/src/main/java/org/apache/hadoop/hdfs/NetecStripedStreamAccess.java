package org.apache.hadoop.hdfs;

import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import org.apache.hadoop.hdfs.protocol.DatanodeInfo;
import org.apache.hadoop.hdfs.protocol.LocatedBlocks;
import org.apache.hadoop.hdfs.protocol.LocatedStripedBlock;
import org.apache.hadoop.hdfs.security.token.block.BlockTokenIdentifier;
import org.apache.hadoop.security.token.Token;
import org.apache.hadoop.util.Time;

/**
 * Hadoop's striped input stream, opened to the plugin's client. It lives in Hadoop's package
 * for one reason: {@link DFSStripedInputStream}'s constructor is package-private. By extending
 * it, the plugin's stream is Hadoop's stream (its statistics, corrupt-replica reports, token
 * refetch, dead-node handling, concurrent preads, capabilities and {@code HdfsDataInputStream}
 * wrapping), and the plugin overrides only positional reads of lost units that a route serves
 * faster. Only what the client needs is opened here; nothing of Hadoop's is changed.
 */
public abstract class NetecStripedStreamAccess extends DFSStripedInputStream {
  /** Distance counted for bytes a route delivered: from beyond this host, as a remote read. */
  private static final int ROUTED_DISTANCE = 2;

  /**
   * A stream like {@code opened}, which Hadoop opened for a striped file: the same client,
   * path, checksum setting and located blocks (no NameNode call). The caller closes
   * {@code opened}, which has read nothing yet.
   */
  protected NetecStripedStreamAccess(DFSStripedInputStream opened) throws IOException {
    super(opened.getDFSClient(), opened.src, opened.verifyChecksum,
        opened.getLocatedBlocks().getErasureCodingPolicy(), opened.getLocatedBlocks());
  }

  /** The located blocks Hadoop's stream {@code in} was opened with. */
  public static LocatedBlocks locatedBlocksOf(DFSInputStream in) {
    return in.getLocatedBlocks();
  }

  /** The block group holding {@code offset}, as this stream knows it (fetched when absent). */
  protected final LocatedStripedBlock groupAt(long offset) throws IOException {
    return (LocatedStripedBlock) getBlockAt(offset);
  }

  /**
   * Whether a block token of the group at {@code offset}, as this stream knows it, expires
   * before {@code marginMs} from now; if so the group is fetched again from the NameNode (as
   * Hadoop's readers refetch a token a DataNode refused: a route's survivors would refuse it
   * too) and true is returned.
   */
  protected final boolean refreshIfTokensExpire(long offset, long marginMs) throws IOException {
    if (!tokensExpireBefore(groupAt(offset), Time.now() + marginMs)) {
      return false;
    }
    fetchBlockAt(offset);
    return true;
  }

  private static boolean tokensExpireBefore(LocatedStripedBlock g, long when) {
    for (Token<BlockTokenIdentifier> t : g.getBlockTokens()) {
      if (t == null || t.getIdentifier().length == 0) {
        continue; // a cluster without block tokens
      }
      BlockTokenIdentifier id = new BlockTokenIdentifier();
      try {
        id.readFields(new DataInputStream(new ByteArrayInputStream(t.getIdentifier())));
      } catch (IOException e) {
        return true; // unreadable: fetch anew rather than hand survivors a bad token
      }
      if (id.getExpiryDate() < when) {
        return true;
      }
    }
    return false;
  }

  /**
   * Hadoop's stream gives up on {@code dn} (a connection to it failed): also told to
   * {@link #foundDead}.
   */
  @Override
  protected void addToLocalDeadNodes(DatanodeInfo dn) {
    boolean known = getLocalDeadNodes().containsKey(dn);
    super.addToLocalDeadNodes(dn);
    if (!known) {
      foundDead(dn);
    }
  }

  /** A DataNode this stream has just given up on. */
  protected abstract void foundDead(DatanodeInfo dn);

  /** Whether the stream or its client is closed (reads then go to Hadoop's, which throws). */
  protected final boolean isClosed() {
    return closed.get() || !dfsClient.isClientRunning();
  }

  /** Whether this stream gave up on {@code dn} (a read from it failed). */
  protected final boolean deadHere(DatanodeInfo dn) {
    return getLocalDeadNodes().containsKey(dn);
  }

  /**
   * Counts bytes a route delivered as Hadoop counts a remote read's: the stream's
   * ReadStatistics and the FileSystem's statistics.
   */
  protected final void countRouted(int bytes, long millis) {
    readStatistics.addRemoteBytes(bytes);
    dfsClient.updateFileSystemReadStats(ROUTED_DISTANCE, bytes, millis);
    dfsClient.updateFileSystemECReadStats(bytes);
  }

  /** How many DataNodes this stream gave up on. */
  protected final int localDeadCount() {
    return getLocalDeadNodes().size();
  }

  protected final DFSClient client() {
    return dfsClient;
  }
}
