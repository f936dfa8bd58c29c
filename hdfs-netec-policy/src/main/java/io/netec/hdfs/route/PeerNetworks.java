package io.netec.hdfs.route;

import java.net.InetAddress;
import java.net.InterfaceAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The networks a service of ours may dial peers in because a peer told it to: the switch's
 * survivor agents (named in a setup), an INEC participant's downstream vertex (named in a
 * join). Anywhere else (another network, a link-local address such as a cloud metadata
 * service, a host name that would need a lookup) is refused, so neither control port can be
 * used to reach arbitrary hosts. By default, the networks of this host's interfaces
 * (link-local ones excepted): DataNodes share a network with their switch and each other.
 */
public final class PeerNetworks {
  private static final String OCTET = "(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)";
  private static final java.util.regex.Pattern IPV4 =
      java.util.regex.Pattern.compile("(" + OCTET + "\\.){3}" + OCTET);
  private final List<byte[]> nets = new ArrayList<>();
  private final List<Integer> prefixes = new ArrayList<>();
  private final List<String> names = new ArrayList<>();
  private final String what;
  private final String setting;

  private PeerNetworks(String what, String setting) {
    this.what = what;
    this.setting = setting;
  }

  /**
   * @param cidrs e.g. "198.18.100.0/24"; null or empty: this host's interfaces' networks
   * @param what what the networks are for, e.g. "agent networks", named in refusals
   * @param setting the option or key that sets them, named in refusals
   * @throws IllegalArgumentException naming a CIDR that is not ADDRESS/PREFIX
   */
  public static PeerNetworks of(List<String> cidrs, String what, String setting) {
    PeerNetworks n = new PeerNetworks(what, setting);
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
        throw new IllegalArgumentException(setting + ": network '" + c
            + "' is not ADDRESS/PREFIX");
      }
    }
    return n;
  }

  private void add(InetAddress a, int prefix) {
    nets.add(a.getAddress());
    prefixes.add(prefix);
    names.add(a.getHostAddress() + "/" + prefix);
  }

  /** An IPv4 dotted quad or an IPv6 literal: no name that would need a lookup. */
  public static boolean isLiteral(String host) {
    // 0..255 without leading zeros: Java would look "999.1.1.1" up as a name, and "063" is 63
    // to Java but 51 to C's inet_aton
    if (IPV4.matcher(host).matches()) {
      return true;
    }
    // with a colon, InetAddress parses the text and never looks it up
    return host.matches("\\[?[0-9a-fA-F:.]+\\]?") && host.contains(":");
  }

  /** Null when {@code host} may be dialled, else why not. */
  public String refusal(String host) {
    if (!isLiteral(host)) {
      return "'" + host + "' is not an IP address (no names are resolved for a peer)";
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
    return host + " is outside the " + what + " " + names + " (" + setting + ")";
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
