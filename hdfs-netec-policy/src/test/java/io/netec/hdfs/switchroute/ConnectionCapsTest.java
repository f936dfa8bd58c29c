package io.netec.hdfs.switchroute;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import java.net.InetAddress;
import org.junit.jupiter.api.Test;

/** Who counts as one peer for the caps on connections and tasks. */
class ConnectionCapsTest {
  private static InetAddress ip(String s) throws Exception {
    return InetAddress.getByName(s);
  }

  @Test
  void anIpv4AddressIsItsOwnPeer() throws Exception {
    assertEquals(ip("198.18.100.11"), ConnectionCaps.peerOf(ip("198.18.100.11")));
    assertNotEquals(ConnectionCaps.peerOf(ip("198.18.100.11")),
        ConnectionCaps.peerOf(ip("198.18.100.12")));
    assertEquals("198.18.100.11", ConnectionCaps.describe(ip("198.18.100.11")));
  }

  @Test
  void anIpv6HostIsItsSlash64() throws Exception {
    // one host may take any address of its /64: all count as one peer
    InetAddress a = ConnectionCaps.peerOf(ip("2001:db8:1:2:aaaa:bbbb:cccc:dddd"));
    InetAddress b = ConnectionCaps.peerOf(ip("2001:db8:1:2::1"));
    assertEquals(a, b);
    assertEquals(ip("2001:db8:1:2::"), a);
    assertNotEquals(a, ConnectionCaps.peerOf(ip("2001:db8:1:3::1")), "another /64");
    assertEquals("2001:db8:1:2:0:0:0:0/64", ConnectionCaps.describe(a));
  }
}
