package io.netec.hdfs.route;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Arrays;
import java.util.List;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

class RackAwareTest {
  /** "u3@/r2": unit 3 in rack /r2; "u3": rack unknown. */
  private static final Function<String, String> RACK =
      s -> s.contains("@") ? s.substring(s.indexOf('@') + 1) : null;

  private static List<String> l(String... a) {
    return Arrays.asList(a);
  }

  @Test
  void theReadersRackFirstThenTheFullestRacksInTheOrderGiven() {
    List<String> given = l("u0@/r2", "u1@/r3", "u2@/r1", "u3@/r3", "u4@/r2", "u5@/r3");
    assertEquals(l("u2@/r1", "u1@/r3", "u3@/r3", "u5@/r3", "u0@/r2", "u4@/r2"),
        RackAware.preferNear(given, RACK, "/r1"));
    // no reader's rack: the fullest first, ties in the order given
    assertEquals(l("u1@/r3", "u3@/r3", "u5@/r3", "u0@/r2", "u4@/r2", "u2@/r1"),
        RackAware.preferNear(given, RACK, null));
  }

  @Test
  void withoutTopologyNothingMoves() {
    List<String> flat = l("u4@/default-rack", "u0@/default-rack", "u7@/default-rack");
    assertEquals(flat, RackAware.preferNear(flat, RACK, "/default-rack"));
    assertEquals(flat, RackAware.chainOrder(flat, RACK, "/default-rack"));
    List<String> unknown = l("u4", "u0", "u7");
    assertEquals(unknown, RackAware.preferNear(unknown, RACK, null));
    assertEquals(unknown, RackAware.chainOrder(unknown, RACK, null));
  }

  @Test
  void aChainVisitsEachRackOnceAndEndsInTheReadersRack() {
    List<String> chosen = l("u2@/r1", "u0@/r2", "u1@/r3", "u4@/r2", "u3@/r1", "u5@/r3");
    List<String> chain = RackAware.chainOrder(chosen, RACK, "/r1");
    assertEquals(l("u0@/r2", "u4@/r2", "u1@/r3", "u5@/r3", "u2@/r1", "u3@/r1"), chain);
    // the reader's rack holds none: every rack once, and the last hop into the reader's
    List<String> remote = RackAware.chainOrder(l("u0@/r2", "u1@/r3", "u4@/r2"), RACK, "/r9");
    assertEquals(l("u0@/r2", "u4@/r2", "u1@/r3"), remote);
    assertEquals(l("/r2", "/r3"), RackAware.racks(remote, RACK));
  }
}
