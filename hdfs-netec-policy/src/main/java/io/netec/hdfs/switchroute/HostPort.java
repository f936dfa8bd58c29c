package io.netec.hdfs.switchroute;

import java.net.InetSocketAddress;

/** "host:port" as the protocol carries it (agents, VIPs, control endpoints), as an address. */
final class HostPort {
  private HostPort() {
  }

  /**
   * The address of {@code hostPort} (validated where it came in: a setup's agents, an
   * answer's VIP, a checked key). Hosts are IP addresses there, so nothing is looked up.
   */
  static InetSocketAddress parse(String hostPort) {
    int colon = hostPort.lastIndexOf(':');
    return new InetSocketAddress(hostPort.substring(0, colon),
        Integer.parseInt(hostPort.substring(colon + 1)));
  }
}
