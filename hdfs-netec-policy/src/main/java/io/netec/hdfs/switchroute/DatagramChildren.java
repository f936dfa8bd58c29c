package io.netec.hdfs.switchroute;

import io.netec.hdfs.switchroute.wire.AttachRequest;
import io.netec.hdfs.switchroute.wire.NetecPacket;
import io.netec.hdfs.switchroute.wire.ParentLink;
import io.netec.hdfs.switchroute.wire.SetupAnswer;
import io.netec.hdfs.switchroute.wire.SetupRequest;
import io.netty.channel.Channel;
import java.net.InetSocketAddress;

/**
 * A software switch's datagram tasks attached to a parent task on another switch
 * (docs/protocol.md, "Partial sums over datagrams"): the reader's attach binds one, and the
 * parent's packets find it here by what they name and where they come from.
 */
final class DatagramChildren {
  /**
   * Attached datagram children, by their parent's VIP, task, slot array and the child's sender
   * there: one child a key (every task of this switch streams from its one VIP, so a parent
   * tells its children apart by sender alone).
   */
  private final java.util.Map<ParentKey, SwitchSession> children =
      new java.util.concurrent.ConcurrentHashMap<>();
  private final SoftwareSwitch sw;

  DatagramChildren(SoftwareSwitch sw) {
    this.sw = sw;
  }

  /** What a parent's packet to one of its children names, and where it comes from. */
  static final class ParentKey {
    private final InetSocketAddress vip;
    private final int task;
    private final int slotArray;
    private final int sender;

    ParentKey(InetSocketAddress vip, int task, int slotArray, int sender) {
      this.vip = vip;
      this.task = task;
      this.slotArray = slotArray;
      this.sender = sender;
    }

    @Override
    public boolean equals(Object o) {
      if (!(o instanceof ParentKey)) {
        return false;
      }
      ParentKey k = (ParentKey) o;
      return task == k.task && slotArray == k.slotArray && sender == k.sender
          && vip.equals(k.vip);
    }

    @Override
    public int hashCode() {
      return ((task * 256 + slotArray) * 256 + sender) * 31 + vip.hashCode();
    }
  }

  /** The attached child whose parent sent {@code p} from {@code from}, or null. */
  SwitchSession of(InetSocketAddress from, NetecPacket p) {
    return children.isEmpty() ? null
        : children.get(new ParentKey(from, p.task(), p.slotArray(), p.sender()));
  }

  /**
   * Binds a datagram task's stream to its parent's VIP ({@code a}, on the reader's control
   * connection, which proves itself with the task's secret): the task is claimed, its
   * survivors are asked for their streams, and its RESULTs leave as the parent's DATA. The
   * answer: {@code {"ok": true}} or a refusal naming what is wrong.
   */
  byte[] attach(AttachRequest a) {
    SwitchSession l = sw.table.byId(a.task());
    if (l == null || !l.secretMatches(a.secret())) {
      return SetupAnswer.refuse("no task " + a.task()).toJson(); // as a teardown's
    }
    SetupRequest s = l.task.setup();
    if (!s.datagram()) {
      return sw.refuse("attach: task " + a.task() + " is not a datagram task (over TCP a parent "
          + "claims its child with its HELLO)").toJson();
    }
    if (s.rows() != 1) {
      return sw.refuse("attach: task " + a.task() + " has " + s.rows() + " rows (a child sends "
          + "one partial sum)").toJson();
    }
    String elsewhere = sw.sendsFromElsewhere();
    if (elsewhere != null) {
      return sw.refuse("attach: not supported (" + elsewhere + ")").toJson();
    }
    String outside = sw.agentNetworks().refusal(a.parentVip().substring(0,
        a.parentVip().lastIndexOf(':')));
    if (outside != null) {
      return sw.refuse("parent.vip: " + outside).toJson();
    }
    ParentLink link = a.link(s);
    InetSocketAddress vip = HostPort.parse(a.parentVip());
    ParentKey key = new ParentKey(vip, link.task(), link.slotArray(), link.sender());
    if (children.putIfAbsent(key, l) != null) {
      return sw.refuse("attach: another task is sender " + link.sender() + " of parent task "
          + link.task() + " at " + a.parentVip()).toJson();
    }
    l.parentKey = key; // forgotten with the task however it ends
    if (!sw.table.claim(l)) {
      children.remove(key, l);
      return sw.refuse("attach: task " + a.task() + " is attached already").toJson();
    }
    // its parent's packets find it at once, and are dropped until this runs on the loop
    Channel udp = sw.datagramChannel();
    udp.eventLoop().execute(() -> l.bindDatagramChild(udp, vip, link));
    return "{\"ok\":true}".getBytes(java.nio.charset.StandardCharsets.UTF_8);
  }

  /** Forgets an ended child's parent (its packets are then any stranger's). */
  void forget(SwitchSession l) {
    if (l.parentKey != null) {
      children.remove(l.parentKey, l);
    }
  }
}
