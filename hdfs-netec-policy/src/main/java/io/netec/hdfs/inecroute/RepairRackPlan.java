package io.netec.hdfs.inecroute;

import io.netec.hdfs.route.RackAware;
import java.util.ArrayList;
import java.util.List;

/** A repair's plan by rack: its text for the log, and its edges between racks. */
final class RepairRackPlan {
  final String text;
  final int crossings;

  RepairRackPlan(String text, int crossings) {
    this.text = text;
    this.crossings = crossings;
  }

  /**
   * The racks of the graph's survivors (vertex v runs on {@code at[v]}) in the order of its
   * vertices, and its edges between racks: a vertex's output to another rack's vertex, or to
   * the reader (vertex 0) in another rack than its own; -1 when the reader's rack is unknown.
   */
  static RepairRackPlan of(RepairGraph g, InecRepair.Source[] at, String readerRack,
      boolean byRack) {
    List<InecRepair.Source> streamed = new ArrayList<>();
    for (int v = 1; v < at.length; v++) {
      streamed.add(at[v]);
    }
    String racks = "survivors in " + String.join(", ", RackAware.racks(streamed, a -> a.rack));
    String how = byRack ? "planned by rack" : "in the NameNode's order";
    if (readerRack == null) {
      return new RepairRackPlan(how + ": " + racks + " (reader's rack unknown)", -1);
    }
    int crossings = 0;
    for (int v = 1; v < at.length; v++) {
      int to = g.vertices().get(v).output();
      String there = to == 0 ? readerRack : at[to].rack;
      crossings += java.util.Objects.equals(at[v].rack, there) ? 0 : 1;
    }
    return new RepairRackPlan(how + ": " + racks + ", reader in " + readerRack + ": " + crossings
        + " edges between racks", crossings);
  }
}
