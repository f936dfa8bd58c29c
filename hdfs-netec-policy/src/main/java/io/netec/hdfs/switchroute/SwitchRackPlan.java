package io.netec.hdfs.switchroute;

import io.netec.hdfs.route.RackAware;
import io.netec.hdfs.switchroute.wire.ProtocolException;
import io.netec.hdfs.switchroute.wire.SetupAnswer;
import io.netec.hdfs.switchroute.wire.SetupRequest;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A switch task split by rack ({@code netec.switch.racks}; docs/protocol.md, "Partial sums"):
 * the parent task runs on the reader's rack's switch and takes that rack's survivors (and
 * any lone survivor of another rack) directly; every other rack holding two or more of the
 * task's survivors gets a child task on its own switch, which sums them, their coefficients
 * applied, into one stream that crosses the rack's uplink once, as one sender of the parent.
 * The sum of the partial sums is the flat task's sum, since XOR is associative. Plain, no I/O:
 * the caller sets the children up, then {@link #parent} with their answers.
 */
public final class SwitchRackPlan {
  /** One rack's child task: the switch it runs on and what it sums. */
  public static final class Child {
    public final String rack;
    /** host:port of the rack's switch's control endpoint. */
    public final String control;
    /** The rack's survivors of the flat task, numbered 0.., their coefficients, one row. */
    public final SetupRequest setup;

    Child(String rack, String control, SetupRequest setup) {
      this.rack = rack;
      this.control = control;
      this.setup = setup;
    }
  }

  private final SetupRequest flat;
  private final String parentControl;
  private final List<Integer> direct;
  private final List<Child> children;
  private final String text;

  private SwitchRackPlan(SetupRequest flat, String parentControl, List<Integer> direct,
      List<Child> children, String text) {
    this.flat = flat;
    this.parentControl = parentControl;
    this.direct = direct;
    this.children = children;
    this.text = text;
  }

  /**
   * Splits {@code flat} by rack, or returns null when it cannot be: more than one row (a
   * child sends one partial sum), the reader's rack unknown, or no rack but the reader's
   * holding two or more survivors with a switch of its own (nothing to sum: the flat task is
   * as good).
   *
   * @param senderRack the rack of each sender of {@code flat}
   * @param rackSwitches {rack: host:port} of each rack's switch (those in use: a switch the
   *     caller found unreachable of late left out)
   * @param defaultControl the switch for the parent when the reader's rack has none (the
   *     spine's, {@code netec.switch.address}), or null
   */
  public static SwitchRackPlan plan(SetupRequest flat, List<String> senderRack,
      String readerRack, Map<String, String> rackSwitches, String defaultControl)
      throws ProtocolException {
    if (!splittable(flat.rows(), readerRack, rackSwitches)) {
      return null;
    }
    String parentControl = rackSwitches.getOrDefault(readerRack, defaultControl);
    if (parentControl == null) {
      return null;
    }
    Map<String, List<Integer>> byRack = new LinkedHashMap<>();
    for (int s = 0; s < flat.k(); s++) {
      byRack.computeIfAbsent(RackAware.rack(senderRack.get(s)), x -> new ArrayList<>()).add(s);
    }
    List<Integer> direct = new ArrayList<>();
    List<Child> children = new ArrayList<>();
    StringBuilder text = new StringBuilder();
    for (Map.Entry<String, List<Integer>> e : byRack.entrySet()) {
      String rack = e.getKey();
      List<Integer> senders = e.getValue();
      String control = rackSwitches.get(rack);
      text.append(text.length() == 0 ? "" : ", ").append(rack).append(": ")
          .append(senders.size());
      if (rack.equals(readerRack) || senders.size() < 2 || control == null
          || control.equals(parentControl)) {
        direct.addAll(senders);
        text.append(rack.equals(readerRack) ? " local" : senders.size() < 2 ? " direct"
            : control == null ? " direct (no switch of its own in use)"
            : " direct (its switch is the parent's)");
      } else {
        children.add(new Child(rack, control, childSetup(flat, senders)));
        text.append(" summed at ").append(control);
      }
    }
    if (children.isEmpty()) {
      return null;
    }
    text.insert(0, "parent at " + parentControl + " (reader in " + readerRack
        + "), survivors by rack: ");
    return new SwitchRackPlan(flat, parentControl, Collections.unmodifiableList(direct),
        Collections.unmodifiableList(children), text.toString());
  }

  /**
   * Whether a task of {@code rows} rows may be split by rack at all: one row (a child sends
   * one partial sum), the reader's rack known and rack switches named. The route asks before
   * it chooses survivors by rack. Over TCP a parent claims its children; over datagrams the
   * reader attaches them ({@link SwitchClient}).
   */
  public static boolean splittable(int rows, String readerRack,
      Map<String, String> rackSwitches) {
    return rows == 1 && readerRack != null && !rackSwitches.isEmpty();
  }

  /**
   * What may be wrong when rack switches are named and none is for any rack of this task (the
   * reader's, the survivors'): the names may differ from the topology's (a topology script's
   * "/dc1/rack1" against a key's "/rack1"), so that no rack switch is ever used; or the task's
   * racks simply have no switch (a partial deployment: the route warns only while no name has
   * matched any task). Null when a rack matches, or none is named, or the racks are not known.
   */
  public static String unmatched(Map<String, String> rackSwitches, String readerRack,
      java.util.Collection<String> survivorRacks) {
    if (rackSwitches.isEmpty() || readerRack == null) {
      return null;
    }
    java.util.SortedSet<String> racks = new java.util.TreeSet<>();
    for (String r : survivorRacks) {
      if (r != null) {
        racks.add(r);
      }
    }
    racks.add(readerRack);
    for (String r : racks) {
      if (rackSwitches.containsKey(r)) {
        return null;
      }
    }
    return io.netec.hdfs.NetecConfigKeys.SWITCH_RACKS + " names racks "
        + new java.util.TreeSet<>(rackSwitches.keySet()) + " and none is a rack of this task "
        + racks + ": no rack switch is used. Name them as the topology does (hdfs dfsadmin "
        + "-printTopology)";
  }

  private static SetupRequest childSetup(SetupRequest flat, List<Integer> senders)
      throws ProtocolException {
    List<SetupRequest.Survivor> sv = new ArrayList<>();
    byte[][] coefficients = new byte[1][senders.size()];
    for (int i = 0; i < senders.size(); i++) {
      int s = senders.get(i);
      sv.add(flat.survivors().get(s).renumbered(i));
      coefficients[0][i] = (byte) flat.coefficient(0, s);
    }
    return new SetupRequest(flat.group(), flat.payload(), flat.offset(), flat.length(),
        flat.timeoutMs(), sv, coefficients, flat.premultiplied(), flat.datagram());
  }

  /** The task as one flat task (what the tree sums). */
  public SetupRequest flat() {
    return flat;
  }

  /** host:port of the parent's switch. */
  public String parentControl() {
    return parentControl;
  }

  public List<Child> children() {
    return children;
  }

  /** The plan for the task's log line: where the parent runs, each rack's survivors. */
  public String text() {
    return text;
  }

  /**
   * The parent's task: the direct survivors, then one sender per child that was set up
   * (answers in {@link #children} order; a null answer, a child its switch refused, puts
   * that rack's survivors back among the direct ones).
   */
  public SetupRequest parent(List<SetupAnswer> answers) throws ProtocolException {
    if (answers.size() != children.size()) {
      throw new IllegalArgumentException(answers.size() + " answers for " + children.size()
          + " children");
    }
    List<SetupRequest.Survivor> sv = new ArrayList<>();
    List<Integer> coefficients = new ArrayList<>();
    for (int s : direct) {
      sv.add(flat.survivors().get(s).renumbered(sv.size()));
      coefficients.add(flat.coefficient(0, s));
    }
    for (int c = 0; c < children.size(); c++) {
      SetupAnswer a = answers.get(c);
      SetupRequest child = children.get(c).setup;
      if (a == null) {
        for (SetupRequest.Survivor v : child.survivors()) {
          sv.add(v.renumbered(sv.size()));
          coefficients.add(child.coefficient(0, v.sender()));
        }
        continue;
      }
      // over TCP the parent claims the child; over datagrams the reader attaches it (a P4
      // child reads no JSON) and the parent only says, by a HELLO, that it is bound
      sv.add(new SetupRequest.Survivor(sv.size(), a.vip(), "partial sum of "
          + children.get(c).rack, flat.offset() + flat.length(), "",
          new SetupRequest.Child(a.task(), a.slotArray(), a.secret())));
      coefficients.add(1); // the child's sum carries its survivors' coefficients
    }
    byte[][] row = new byte[1][sv.size()];
    for (int s = 0; s < sv.size(); s++) {
      row[0][s] = (byte) (int) coefficients.get(s);
    }
    return new SetupRequest(flat.group(), flat.payload(), flat.offset(), flat.length(),
        flat.timeoutMs(), sv, row, flat.premultiplied(), flat.datagram());
  }
}
