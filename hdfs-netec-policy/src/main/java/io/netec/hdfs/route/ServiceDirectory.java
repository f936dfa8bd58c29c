package io.netec.hdfs.route;

import io.netec.hdfs.NetecSettings;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.hadoop.hdfs.protocol.DatanodeID;

/**
 * Where a DataNode's NetEC services listen: the configured port on the DataNode's address; or,
 * for a DataNode of this JVM, where the service registered, keyed by transfer port (several
 * DataNodes of one JVM, as in a MiniDFSCluster, each take free ports). The registry is only
 * consulted for addresses of this host, so a remote DataNode is never mistaken for a local one.
 */
public final class ServiceDirectory {
  /** A service of the DataNode plugin and the key of its port. */
  public enum Service {
    /** The survivor agent that streams local blocks to switches. */
    SWITCH_AGENT,
    /** The INEC participant's control server (join requests). */
    INEC_CONTROL,
    /** The INEC engine's data listener (streams of repair graphs). */
    INEC_DATA,
    /** The proof service (fingerprints of local internal blocks for verifiers). */
    PROOF;

    int port(NetecSettings s) {
      switch (this) {
        case SWITCH_AGENT:
          return s.agentOptions().port();
        case INEC_CONTROL:
          return s.inecOptions().port();
        case PROOF:
          return s.proofPort();
        default:
          return s.inecOptions().dataPort();
      }
    }
  }

  private static final Map<String, InetSocketAddress> LOCAL = new ConcurrentHashMap<>();

  private ServiceDirectory() {
  }

  private static String key(Service s, int xferPort) {
    return s + "@" + xferPort;
  }

  public static void register(Service s, int xferPort, InetSocketAddress address) {
    LOCAL.put(key(s, xferPort), address);
  }

  public static void unregister(Service s, int xferPort) {
    LOCAL.remove(key(s, xferPort));
  }

  public static InetSocketAddress resolve(Service s, DatanodeID dn, NetecSettings settings) {
    InetSocketAddress local = LOCAL.get(key(s, dn.getXferPort()));
    if (local != null && isThisHost(dn.getIpAddr())) {
      return local;
    }
    return new InetSocketAddress(dn.getIpAddr(), s.port(settings));
  }

  /** The service of {@code dn} as "host:port", the form control messages carry. */
  public static String hostPort(Service s, DatanodeID dn, NetecSettings settings) {
    InetSocketAddress a = resolve(s, dn, settings);
    return a.getAddress().getHostAddress() + ":" + a.getPort();
  }

  private static boolean isThisHost(String ip) {
    try {
      return isThisHost(InetAddress.getByName(ip));
    } catch (java.io.IOException e) {
      return false;
    }
  }

  /** Whether {@code a} is an address of this host (null, as an unresolved one: not known to be). */
  public static boolean isThisHost(InetAddress a) {
    if (a == null) {
      return false;
    }
    if (a.isLoopbackAddress() || a.isAnyLocalAddress()) {
      return true;
    }
    try {
      return NetworkInterface.getByInetAddress(a) != null;
    } catch (java.io.IOException e) {
      return false;
    }
  }
}
