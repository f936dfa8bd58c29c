package io.netec.hdfs.cluster;

import java.io.InputStream;
import java.security.MessageDigest;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileChecksum;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hdfs.DFSConfigKeys;
import org.apache.hadoop.hdfs.HdfsConfiguration;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.apache.hadoop.hdfs.protocol.ErasureCodingPolicyInfo;
import org.apache.hadoop.io.erasurecode.CodecUtil;

/**
 * A cluster without the plugin, in a JVM of its own whose classpath lacks our jar (run by
 * {@link RemovingThePluginTest}): the MiniDFSCluster of a base directory is started again,
 * unformatted, and each file is read by Hadoop's stock client. Prints, one line each, whether
 * the netec codec exists here, every EC policy and its state, and each file's SHA-256 and
 * COMPOSITE_CRC checksum. Imports nothing of the plugin.
 *
 * <p>Usage: StockClusterCheck BASE_DIR DATANODES PATH...
 */
public final class StockClusterCheck {
  private StockClusterCheck() {
  }

  public static void main(String[] args) throws Exception {
    Configuration conf = new HdfsConfiguration();
    conf.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, args[0]);
    conf.setLong(DFSConfigKeys.DFS_NAMENODE_MIN_BLOCK_SIZE_KEY, 0);
    conf.set("dfs.checksum.combine.mode", "COMPOSITE_CRC");
    MiniDFSCluster cluster = new MiniDFSCluster.Builder(conf)
        .numDataNodes(Integer.parseInt(args[1])).format(false).build();
    try {
      cluster.waitActive();
      System.out.println("netec codec: " + CodecUtil.hasCodec("netec"));
      FileSystem fs = cluster.getFileSystem();
      for (ErasureCodingPolicyInfo p : cluster.getFileSystem().getAllErasureCodingPolicies()) {
        System.out.println("policy: " + p.getPolicy().getName() + " " + p.getState());
      }
      for (int i = 2; i < args.length; i++) {
        MessageDigest sha = MessageDigest.getInstance("SHA-256");
        try (InputStream in = fs.open(new Path(args[i]))) {
          byte[] buf = new byte[64 * 1024];
          for (int n; (n = in.read(buf)) > 0; ) {
            sha.update(buf, 0, n);
          }
        }
        FileChecksum crc = fs.getFileChecksum(new Path(args[i]));
        System.out.println("file: " + args[i] + " " + hex(sha.digest()) + " "
            + hex(crc.getBytes()));
      }
    } finally {
      cluster.shutdown(false);
    }
  }

  static String hex(byte[] b) {
    StringBuilder s = new StringBuilder();
    for (byte x : b) {
      s.append(String.format("%02x", x & 0xff));
    }
    return s.toString();
  }
}
