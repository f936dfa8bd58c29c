package io.netec.hdfs.switchroute;

import io.netec.hdfs.NetecConfigKeys;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.protocol.DatanodeID;

/**
 * Where a DataNode's survivor agent listens: netec.agent.port on the DataNode's address; or,
 * for a DataNode of this JVM, where its agent registered, keyed by transfer port (several
 * DataNodes of one JVM, as in a MiniDFSCluster, each take a free port). The registry is only
 * consulted for addresses of this host, so a remote DataNode is never mistaken for a local one.
 */
public final class AgentDirectory {
  private static final Map<Integer, InetSocketAddress> LOCAL = new ConcurrentHashMap<>();

  private AgentDirectory() {
  }

  public static void register(int xferPort, InetSocketAddress agent) {
    LOCAL.put(xferPort, agent);
  }

  public static void unregister(int xferPort) {
    LOCAL.remove(xferPort);
  }

  public static InetSocketAddress resolve(DatanodeID dn, Configuration conf) {
    InetSocketAddress local = LOCAL.get(dn.getXferPort());
    if (local != null && isThisHost(dn.getIpAddr())) {
      return local;
    }
    return new InetSocketAddress(dn.getIpAddr(),
        conf.getInt(NetecConfigKeys.AGENT_PORT, NetecConfigKeys.AGENT_PORT_DEFAULT));
  }

  /** The agent of {@code dn} as "host:port", the form control messages carry. */
  public static String hostPort(DatanodeID dn, Configuration conf) {
    InetSocketAddress a = resolve(dn, conf);
    return a.getAddress().getHostAddress() + ":" + a.getPort();
  }

  private static boolean isThisHost(String ip) {
    try {
      InetAddress a = InetAddress.getByName(ip);
      return a.isLoopbackAddress() || a.isAnyLocalAddress()
          || NetworkInterface.getByInetAddress(a) != null;
    } catch (java.io.IOException e) {
      return false;
    }
  }
}
