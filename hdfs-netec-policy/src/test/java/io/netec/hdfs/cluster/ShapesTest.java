package io.netec.hdfs.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * A suite skips every shape {@code -Dnetec.test.shapes} does not name, and cannot tell a
 * shape of another suite from a typo: so every id scripts/test.sh names must be a shape some
 * cluster suite declares (a mistyped id would silently drop its shape from a pass).
 */
class ShapesTest {
  private static final Path ROOT = Paths.get(System.getProperty("netec.repo.root", ".."));
  private static final Path SUITES = ROOT.resolve(
      "hdfs-netec-policy/src/test/java/io/netec/hdfs/cluster");

  /** Ids the cluster suites declare: {@code .add("id", ...)} in their sources. */
  static Set<String> declared() throws IOException {
    Set<String> ids = new TreeSet<>();
    Pattern add = Pattern.compile("\\.add\\(\"([a-z0-9-]+)\"");
    try (Stream<Path> files = Files.list(SUITES)) {
      for (Path f : (Iterable<Path>) files.filter(p -> p.toString().endsWith(".java"))::iterator) {
        Matcher m = add.matcher(Files.readString(f));
        while (m.find()) {
          ids.add(m.group(1));
        }
      }
    }
    return ids;
  }

  /** Ids each -Dnetec.test.shapes=... in {@code text} lists. */
  static Set<String> named(String text) {
    Set<String> ids = new TreeSet<>();
    Matcher m = Pattern.compile("-D" + Pattern.quote(Shapes.PROPERTY) + "=([A-Za-z0-9,_-]+)")
        .matcher(text);
    while (m.find()) {
      for (String id : m.group(1).split(",")) {
        ids.add(id.trim());
      }
    }
    return ids;
  }

  @Test
  void everyShapeTheSuiteScriptNamesIsDeclared() throws IOException {
    Set<String> declared = declared();
    assertTrue(declared.containsAll(Set.of("rs32", "rs63", "rs63-datagrams", "rs32-chain")),
        "the suites' shapes as read from their sources: " + declared);
    Set<String> named = named(Files.readString(ROOT.resolve("scripts/test.sh")));
    assertFalse(named.isEmpty(), "scripts/test.sh names shapes");
    named.removeAll(declared);
    assertEquals(Set.of(), named, "shapes scripts/test.sh names that no cluster suite declares "
        + "(declared: " + declared + ")");
  }

  @Test
  void aMistypedShapeIsCaught() throws IOException {
    Set<String> named = named("mvn verify -Dnetec.test.shapes=rs63,rs63-datagrms");
    named.removeAll(declared());
    assertEquals(Set.of("rs63-datagrms"), named);
  }
}
