package io.netec.hdfs.switchroute;

import io.netty.channel.Channel;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.HashMap;
import java.util.Map;

/**
 * Caps on a port's open connections, per peer (an IPv4 address, an IPv6 /64) and in all, so
 * that one peer holding connections open (idle, or sending a request a byte at a time) cannot
 * take the port from the others. A connection admitted is released when it closes.
 */
final class ConnectionCaps {
  private final int perPeer;
  private final int total;
  private final Map<InetAddress, Integer> byPeer = new HashMap<>();
  /** Admitted channels that no longer count against their peer's cap ({@link #exempt}). */
  private final java.util.Set<Channel> exempted = new java.util.HashSet<>();
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
    InetAddress peer = peerOf(((InetSocketAddress) ch.remoteAddress()).getAddress());
    int mine = byPeer.getOrDefault(peer, 0);
    if (mine >= perPeer || open >= total) {
      return mine + " open from " + describe(peer) + ", " + open + " in all (caps "
          + perPeer + " and " + total + ")";
    }
    byPeer.put(peer, mine + 1);
    open++;
    ch.closeFuture().addListener(f -> release(ch, peer)); // a channel closes once
    return null;
  }

  /**
   * {@code ch} (admitted) no longer counts against its peer's cap, only against the total: a
   * VIP connection that claimed a task is bounded by the tasks there are, and a parent switch
   * claims its children from one address (docs/protocol.md, "Partial sums"), as many as its
   * racks' trees. The per-peer cap is for connections that have not proven anything.
   */
  synchronized void exempt(Channel ch) {
    if (ch.isOpen() && exempted.add(ch)) {
      InetAddress peer = peerOf(((InetSocketAddress) ch.remoteAddress()).getAddress());
      byPeer.computeIfPresent(peer, (p, n) -> n > 1 ? n - 1 : null);
    }
  }

  /**
   * The peer {@code a} counts as: itself for IPv4; its /64 for IPv6, since one host is
   * given a whole /64 (SLAAC, privacy addresses) and could else take a fresh address for
   * every connection or task.
   */
  static InetAddress peerOf(InetAddress a) {
    if (!(a instanceof Inet6Address)) {
      return a;
    }
    byte[] b = a.getAddress();
    java.util.Arrays.fill(b, 8, 16, (byte) 0);
    try {
      return InetAddress.getByAddress(b);
    } catch (java.net.UnknownHostException e) {
      throw new AssertionError(e); // 16 bytes are an IPv6 address
    }
  }

  /** A peer (from {@link #peerOf}) as logs and refusals name it. */
  static String describe(InetAddress peer) {
    return peer.getHostAddress() + (peer instanceof Inet6Address ? "/64" : "");
  }

  private synchronized void release(Channel ch, InetAddress peer) {
    if (!exempted.remove(ch)) {
      byPeer.computeIfPresent(peer, (p, n) -> n > 1 ? n - 1 : null);
    }
    open--;
  }
}
