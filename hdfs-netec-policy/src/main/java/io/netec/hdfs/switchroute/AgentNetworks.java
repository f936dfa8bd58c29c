package io.netec.hdfs.switchroute;

import java.net.InetAddress;
import java.net.InterfaceAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The networks a switch connects to survivor agents in: a setup naming an agent anywhere else
 * (another network, a link-local address such as a cloud metadata service, a host name that
 * would need a lookup on the event loop) is refused, so the switch's control port cannot be
 * used to reach arbitrary hosts. By default, the networks of this host's interfaces
 * (link-local ones excepted): DataNodes share a network with their switch.
 */
final class AgentNetworks {
  private final List<byte[]> nets = new ArrayList<>();
  private final List<Integer> prefixes = new ArrayList<>();
  private final List<String> names = new ArrayList<>();

  /** @param cidrs e.g. "198.18.100.0/24"; null or empty: this host's interfaces' networks */
  static AgentNetworks of(List<String> cidrs) {
    AgentNetworks n = new AgentNetworks();
    if (cidrs == null || cidrs.isEmpty()) {
      try {
        for (NetworkInterface i : Collections.list(NetworkInterface.getNetworkInterfaces())) {
          for (InterfaceAddress a : i.getInterfaceAddresses()) {
            if (!a.getAddress().isLinkLocalAddress()) {
              n.add(a.getAddress(), a.getNetworkPrefixLength());
            }
          }
        }
      } catch (SocketException e) {
        throw new IllegalStateException("cannot list this host's networks: " + e, e);
      }
      return n;
    }
    for (String c : cidrs) {
      int slash = c.indexOf('/');
      try {
        if (slash < 0 || !isLiteral(c.substring(0, slash))) {
          throw new IllegalArgumentException(c);
        }
        InetAddress a = InetAddress.getByName(c.substring(0, slash));
        int p = Integer.parseInt(c.substring(slash + 1));
        if (p < 0 || p > a.getAddress().length * 8) {
          throw new IllegalArgumentException(c);
        }
        n.add(a, p);
      } catch (UnknownHostException | IllegalArgumentException e) {
        throw new IllegalArgumentException("agent network '" + c + "' is not ADDRESS/PREFIX");
      }
    }
    return n;
  }

  private void add(InetAddress a, int prefix) {
    nets.add(a.getAddress());
    prefixes.add(prefix);
    names.add(a.getHostAddress() + "/" + prefix);
  }

  /** IPv4 dotted quad or an IPv6 literal: no name that would need a lookup. */
  static boolean isLiteral(String host) {
    return host.matches("\\d{1,3}(\\.\\d{1,3}){3}") || host.matches("\\[?[0-9a-fA-F:.]+\\]?")
        && host.contains(":");
  }

  /** Null when {@code host} may be dialled, else why not. */
  String refusal(String host) {
    if (!isLiteral(host)) {
      return "'" + host + "' is not an IP address (the switch resolves no names)";
    }
    byte[] a;
    try {
      a = InetAddress.getByName(host.replace("[", "").replace("]", "")).getAddress();
    } catch (UnknownHostException e) {
      return "'" + host + "' is not an IP address";
    }
    for (int i = 0; i < nets.size(); i++) {
      if (contains(nets.get(i), prefixes.get(i), a)) {
        return null;
      }
    }
    return host + " is outside the agent networks " + names + " (--agent-networks)";
  }

  private static boolean contains(byte[] net, int prefix, byte[] a) {
    if (net.length != a.length) {
      return false;
    }
    for (int bit = 0; bit < prefix; bit++) {
      int mask = 0x80 >>> (bit % 8);
      if ((net[bit / 8] & mask) != (a[bit / 8] & mask)) {
        return false;
      }
    }
    return true;
  }

  @Override
  public String toString() {
    return names.toString();
  }
}
