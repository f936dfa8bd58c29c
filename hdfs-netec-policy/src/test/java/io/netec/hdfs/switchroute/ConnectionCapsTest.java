package io.netec.hdfs.switchroute;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.netty.channel.Channel;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.nio.NioSocketChannel;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
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

  @Test
  void aConnectionThatClaimedATaskCountsOnlyAgainstTheTotal() throws Exception {
    NioEventLoopGroup group = new NioEventLoopGroup(1);
    try (ServerSocketChannel server = ServerSocketChannel.open()) {
      server.bind(new InetSocketAddress("127.0.0.1", 0));
      ConnectionCaps caps = new ConnectionCaps(1, 3);
      Channel claimed = connect(group, server);
      assertNull(caps.admit(claimed));
      assertNotNull(caps.admit(connect(group, server)), "a second from the address: its cap");
      caps.exempt(claimed); // its HELLO claimed a task (a parent switch claiming a child)
      Channel second = connect(group, server);
      assertNull(caps.admit(second), "the address's cap has room again");
      assertNotNull(caps.admit(connect(group, server)), "... for one");
      claimed.close().sync(); // frees its share of the total only
      Channel third = connect(group, server);
      assertNotNull(caps.admit(third), "the address's cap is still the second's");
      second.close().sync();
      assertNull(caps.admit(third));
    } finally {
      group.shutdownGracefully(0, 1, java.util.concurrent.TimeUnit.SECONDS).sync();
    }
  }

  private static Channel connect(NioEventLoopGroup group, ServerSocketChannel server)
      throws Exception {
    NioSocketChannel ch = new NioSocketChannel(SocketChannel.open(server.getLocalAddress()));
    group.register(ch).sync();
    return ch;
  }
}
