package io.netec.hdfs.route;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * Survivors by rack, for routes whose traffic crosses racks: which survivors to prefer and in
 * which order a chain visits them. In a cluster the scarce links are the racks' uplinks, and
 * HDFS places a group's internal blocks rack-fault-tolerantly, so nearly every survivor of a
 * repair is in another rack than the rebuilding node. A rack is the NameNode's network
 * location of a DataNode ({@code DatanodeInfo#getNetworkLocation}, e.g. "/rack2"); with no
 * topology every DataNode is in "/default-rack" and nothing here changes an order. Plain,
 * no I/O.
 */
public final class RackAware {
  private RackAware() {
  }

  /**
   * {@code available} in order of preference by rack: the reader's rack first (its survivors
   * cross no uplink), then the racks holding more of them (k survivors from fewer racks cross
   * fewer uplinks), ties in the order given; within a rack, the order given. A null or empty
   * rack is a rack of its own ("unknown").
   */
  public static <T> List<T> preferNear(List<T> available, Function<T, String> rackOf,
      String readerRack) {
    Map<String, Integer> count = new HashMap<>();
    Map<String, Integer> first = new HashMap<>();
    for (int i = 0; i < available.size(); i++) {
      String r = rack(rackOf.apply(available.get(i)));
      count.merge(r, 1, Integer::sum);
      first.putIfAbsent(r, i);
    }
    String reader = readerRack == null ? null : rack(readerRack);
    List<T> out = new ArrayList<>(available);
    out.sort(Comparator.<T>comparingInt(t -> rack(rackOf.apply(t)).equals(reader) ? 0 : 1)
        .thenComparingInt(t -> -count.get(rack(rackOf.apply(t))))
        .thenComparingInt(t -> first.get(rack(rackOf.apply(t))))); // stable: given order within
    return out;
  }

  /**
   * {@code chosen} in the order a chain that ends at the reader visits them: each rack's
   * survivors one after another, so that its partial result leaves the rack once; the
   * reader's rack last (its last hop to the reader stays inside it); the other racks, and
   * the survivors within each, in the order given.
   */
  public static <T> List<T> chainOrder(List<T> chosen, Function<T, String> rackOf,
      String readerRack) {
    Map<String, List<T>> byRack = new LinkedHashMap<>();
    for (T t : chosen) {
      byRack.computeIfAbsent(rack(rackOf.apply(t)), r -> new ArrayList<>()).add(t);
    }
    String reader = readerRack == null ? null : rack(readerRack);
    List<T> out = new ArrayList<>(chosen.size());
    for (Map.Entry<String, List<T>> e : byRack.entrySet()) {
      if (!e.getKey().equals(reader)) {
        out.addAll(e.getValue());
      }
    }
    if (reader != null && byRack.containsKey(reader)) {
      out.addAll(byRack.get(reader));
    }
    return out;
  }

  /** Distinct racks of {@code items}, in order of first appearance. */
  public static <T> List<String> racks(List<T> items, Function<T, String> rackOf) {
    List<String> out = new ArrayList<>();
    for (T t : items) {
      String r = rack(rackOf.apply(t));
      if (!out.contains(r)) {
        out.add(r);
      }
    }
    return out;
  }

  /** A network location as racks are compared: null or empty is the rack "unknown". */
  public static String rack(String r) {
    return r == null || r.isEmpty() ? "unknown" : r;
  }
}
