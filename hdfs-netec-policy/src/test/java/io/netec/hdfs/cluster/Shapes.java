package io.netec.hdfs.cluster;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.params.provider.Arguments;

/**
 * The shapes (code, scheme, transport...) a parameterized cluster suite runs, each under a short
 * id: all of them, or only those whose ids {@code -Dnetec.test.shapes} lists (comma-separated),
 * so a pass of scripts/test.sh reruns one shape of a suite, not all. A suite left with no shape
 * fails (JUnit wants at least one): a pass naming a suite but none of its shapes is a mistake.
 * An id no suite declares is a typo that {@link ShapesTest} catches in scripts/test.sh.
 */
final class Shapes {
  static final String PROPERTY = "netec.test.shapes";
  private final Map<String, Arguments> all = new LinkedHashMap<>();

  /** The codes a suite runs in, with no other variable: rs32 (3, 2) and rs63 (6, 3). */
  static Shapes codes() {
    return new Shapes().add("rs32", 3, 2).add("rs63", 6, 3);
  }

  /** Shape {@code id}, the test method's arguments {@code args}. */
  Shapes add(String id, Object... args) {
    if (all.put(id, Arguments.of(args)) != null) {
      throw new IllegalArgumentException("shape " + id + " twice");
    }
    return this;
  }

  Stream<Arguments> selected() {
    String listed = System.getProperty(PROPERTY, "").trim();
    if (listed.isEmpty()) {
      return all.values().stream();
    }
    Set<String> ids = Arrays.stream(listed.split(",")).map(String::trim)
        .collect(Collectors.toSet());
    return all.entrySet().stream().filter(e -> ids.contains(e.getKey()))
        .map(Map.Entry::getValue);
  }
}
