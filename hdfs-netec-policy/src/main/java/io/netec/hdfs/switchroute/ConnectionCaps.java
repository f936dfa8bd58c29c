package io.netec.hdfs.switchroute;

import io.netty.channel.Channel;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.HashMap;
import java.util.Map;

/**
 * Caps on a port's open connections, per peer address and in all, so that one peer holding
 * connections open (idle, or sending a request a byte at a time) cannot take the port from
 * the others. A connection admitted is released when it closes.
 */
final class ConnectionCaps {
  private final int perPeer;
  private final int total;
  private final Map<InetAddress, Integer> byPeer = new HashMap<>();
  private int open;

  ConnectionCaps(int perPeer, int total) {
    this.perPeer = perPeer;
    this.total = total;
  }

  /**
   * Admits {@code ch} if its peer and the port are under their caps (released when it
   * closes); else returns why not, and the caller closes it.
   */
  synchronized String admit(Channel ch) {
    InetAddress peer = ((InetSocketAddress) ch.remoteAddress()).getAddress();
    int mine = byPeer.getOrDefault(peer, 0);
    if (mine >= perPeer || open >= total) {
      return mine + " open from " + peer.getHostAddress() + ", " + open + " in all (caps "
          + perPeer + " and " + total + ")";
    }
    byPeer.put(peer, mine + 1);
    open++;
    ch.closeFuture().addListener(f -> release(peer)); // a channel closes once
    return null;
  }

  private synchronized void release(InetAddress peer) {
    byPeer.computeIfPresent(peer, (p, n) -> n > 1 ? n - 1 : null);
    open--;
  }
}
