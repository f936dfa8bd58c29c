package io.netec.hdfs.inecroute;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netec.hdfs.codec.CoderBackend;
import io.netec.hdfs.codec.NetecCoding;
import io.netec.hdfs.inecroute.RepairGraph.Calculator;
import io.netec.hdfs.inecroute.RepairGraph.Primitive;
import io.netec.hdfs.inecroute.RepairGraph.Scheme;
import io.netec.hdfs.inecroute.RepairGraph.Vertex;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Repair graphs: the INEC primitive rules, and real bytes rebuilt by every scheme. */
class RepairGraphTest {
  static Stream<Arguments> cases() {
    List<Arguments> out = new ArrayList<>();
    int[][] shapes = {{3, 2}, {6, 3}, {10, 4}};
    for (int[] s : shapes) {
      int k = s[0];
      int m = s[1];
      int[][] patterns = {{0}, {k}, {k - 1, k + m - 1}, range(m)};
      for (Scheme scheme : Scheme.values()) {
        for (int[] erased : patterns) {
          out.add(Arguments.of(scheme, k, m, erased));
        }
      }
    }
    return out.stream();
  }

  private static int[] range(int n) {
    int[] a = new int[n];
    for (int i = 0; i < n; i++) {
      a[i] = i;
    }
    return a;
  }

  private static int[] survivors(int k, int m, int[] erased) {
    return java.util.stream.IntStream.range(0, k + m)
        .filter(i -> Arrays.stream(erased).noneMatch(e -> e == i)).limit(k).toArray();
  }

  @ParameterizedTest(name = "{0} RS({1},{2}) erased {3}")
  @MethodSource("cases")
  void primitivesFollowTheDegreeRules(Scheme scheme, int k, int m, int[] erased) {
    RepairGraph g = RepairGraph.build(scheme, k, m, survivors(k, m, erased), erased);
    assertEquals(k + 1, g.vertices().size());
    assertEquals(k + 1, g.topological().size(), "acyclic");
    for (Vertex v : g.vertices()) {
      boolean root = v.unit() < 0;
      assertEquals(root, v.output() < 0, "every survivor sends somewhere, the rebuilder nowhere: "
          + v);
      if (v.inputs().isEmpty()) {
        assertEquals(scheme == Scheme.RS_STAR ? Primitive.SEND : Primitive.EC_SEND,
            v.primitive(), v.toString());
      } else if (root) {
        assertEquals(scheme == Scheme.RS_STAR ? Primitive.RECV_EC : Primitive.RECV_XOR,
            v.primitive());
        assertEquals(scheme == Scheme.RS_STAR ? Calculator.EC : Calculator.XOR,
            v.calculator());
      } else {
        assertEquals(Primitive.RECV_EC_SEND, v.primitive(), v.toString());
        assertEquals(Calculator.EC, v.calculator());
      }
    }
    Vertex root = g.rebuilder();
    assertEquals(scheme == Scheme.RS_STAR ? k : 1, root.inputs().size(), "rebuilder's inputs");
    if (scheme == Scheme.PPR_TREE) {
      assertTrue(depth(g) <= 32 - Integer.numberOfLeadingZeros(k) + 1, "tree depth " + depth(g));
    } else if (scheme == Scheme.ECPIPE_CHAIN) {
      assertEquals(k + 1, depth(g), "a chain through every survivor");
    }
  }

  private static int depth(RepairGraph g) {
    int best = 0;
    for (Vertex v : g.vertices()) {
      int d = 1;
      for (int at = v.id(); g.vertices().get(at).output() >= 0; at = g.vertices().get(at).output()) {
        d++;
      }
      best = Math.max(best, d);
    }
    return best;
  }

  @ParameterizedTest(name = "{0} RS({1},{2}) erased {3}")
  @MethodSource("cases")
  void everySchemeRebuildsTheErasedUnits(Scheme scheme, int k, int m, int[] erased) {
    int len = 10_000 + 17;
    Random rnd = new Random(k * 100 + m * 10 + erased.length);
    byte[][] units = new byte[k + m][len];
    for (int i = 0; i < k; i++) {
      rnd.nextBytes(units[i]);
    }
    byte[][] parity = new byte[m][len];
    new NetecCoding.Encoder(k, m, CoderBackend.JAVA, "graph").encode(len,
        Arrays.copyOf(units, k), new int[k], parity, new int[m]);
    System.arraycopy(parity, 0, units, k, m);
    RepairGraph g = RepairGraph.build(scheme, k, m, survivors(k, m, erased), erased);
    RepairGraph.Execution ex = g.execute(units, 4096);
    for (int r = 0; r < erased.length; r++) {
      assertArrayEquals(units[erased[r]], ex.rebuilt[r], "unit " + erased[r]);
    }
    // What the rebuilding node takes in: k units for the star, one per erased unit otherwise.
    long want = (scheme == Scheme.RS_STAR ? k : erased.length) * (long) len;
    assertEquals(want, ex.received[0]);
  }

  @Test
  void schemeNamesParseAndBadOnesAreNamed() {
    assertEquals(Scheme.PPR_TREE, Scheme.parse(" PPR "));
    assertEquals(Scheme.ECPIPE_CHAIN, Scheme.parse("ecpipe"));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> Scheme.parse("trieq"));
    assertTrue(e.getMessage().contains("trieq"));
  }
}
