package io.netec.hdfs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.Test;

/**
 * Every netec.* key is checked once, the same for DataNode and client: bad values are refused
 * naming the key and the value, unknown keys and duplicate route names are refused, the
 * defaults are the README's.
 */
class NetecSettingsTest {
  private static final Set<String> ROUTES = Set.of("switch", "inec");

  private static NetecSettings parse(String... keyValues) {
    Configuration conf = new Configuration(false);
    for (int i = 0; i < keyValues.length; i += 2) {
      conf.set(keyValues[i], keyValues[i + 1]);
    }
    return NetecSettings.parse(conf, ROUTES);
  }

  @Test
  void defaults() {
    NetecSettings s = parse();
    assertEquals(List.of("switch", "inec", "native"), s.routeOrder());
    assertEquals(1, s.routeRetries());
    assertEquals(10_000, s.routeBackoffMs());
    assertNull(s.switchOptions().address());
    assertEquals(32 * 1024, s.switchOptions().payload());
    assertEquals(30_000, s.switchOptions().timeoutMs());
    assertTrue(s.agentOptions().enabled());
    assertEquals(50300, s.agentOptions().port());
    assertEquals(64, s.agentOptions().maxStreams());
    assertEquals(60_000, s.agentOptions().idleTimeoutMs());
    assertTrue(s.inecOptions().enabled());
    assertEquals(50320, s.inecOptions().port());
    assertEquals(50321, s.inecOptions().dataPort());
    assertEquals(64, s.inecOptions().maxVertices());
    assertEquals("ecpipe", s.inecOptions().scheme());
    assertEquals("auto", s.inecOptions().transport());
    assertEquals("libibverbs.so.1", s.inecOptions().verbsLibrary());
    assertEquals(64 * 1024, s.inecOptions().chunk());
    assertEquals(4 << 20, s.inecOptions().segment());
    assertEquals(30_000, s.inecOptions().timeoutMs());
  }

  @Test
  void goodValuesAreRead() {
    NetecSettings s = parse(NetecConfigKeys.ROUTE_ORDER, " inec , switch ",
        NetecConfigKeys.AGENT_ENABLED, "FALSE", NetecConfigKeys.INEC_SCHEME, "PPR",
        NetecConfigKeys.SWITCH_ADDRESS, "[::1]:50310", NetecConfigKeys.SWITCH_PAYLOAD, "65472",
        NetecConfigKeys.INEC_VERBS_LIBRARY, "");
    assertEquals(List.of("inec", "switch", "native"), s.routeOrder());
    assertFalse(s.agentOptions().enabled());
    assertEquals("ppr", s.inecOptions().scheme());
    assertEquals("[::1]:50310", s.switchOptions().address());
    assertEquals(65472, s.switchOptions().payload());
    assertEquals("libibverbs.so.1", s.inecOptions().verbsLibrary(), "set to nothing: the default");
  }

  /** Each bad value is refused with a message naming the key and the value. */
  @Test
  void badValuesAreRefusedNamingKeyAndValue() {
    String[][] bad = {
        {NetecConfigKeys.ROUTE_RETRIES, "2147483647"},
        {NetecConfigKeys.ROUTE_RETRIES, "-1"},
        {NetecConfigKeys.ROUTE_RETRIES, "one"},
        {NetecConfigKeys.ROUTE_RETRIES, "99999999999999999999"},
        {NetecConfigKeys.ROUTE_BACKOFF_MS, "-5"},
        {NetecConfigKeys.ROUTE_ORDER, "switch,,inec"},
        {NetecConfigKeys.ROUTE_ORDER, "inec,switch,inec"},
        {NetecConfigKeys.ROUTE_ORDER, "switch,teleport"},
        {NetecConfigKeys.ROUTE_ORDER, "Switch"},
        {NetecConfigKeys.AGENT_ENABLED, "no"},
        {NetecConfigKeys.AGENT_ENABLED, "off"},
        {NetecConfigKeys.AGENT_ENABLED, "0"},
        {NetecConfigKeys.INEC_ENABLED, "yes"},
        {NetecConfigKeys.AGENT_PORT, "http"},
        {NetecConfigKeys.INEC_PORT, "65536"},
        {NetecConfigKeys.INEC_DATA_PORT, "70000"},
        {NetecConfigKeys.INEC_MAX_VERTICES, "0"},
        {NetecConfigKeys.AGENT_MAX_STREAMS, "0"},
        {NetecConfigKeys.AGENT_IDLE_TIMEOUT_MS, "0"},
        {NetecConfigKeys.SWITCH_PAYLOAD, "65536"},
        {NetecConfigKeys.SWITCH_PAYLOAD, "100"},
        {NetecConfigKeys.SWITCH_PAYLOAD, "4294967360"},
        {NetecConfigKeys.SWITCH_TIMEOUT_MS, "0"},
        {NetecConfigKeys.SWITCH_TIMEOUT_MS, "1e3"},
        {NetecConfigKeys.SWITCH_ADDRESS, "switch-without-port"},
        {NetecConfigKeys.SWITCH_ADDRESS, "sw:0"},
        {NetecConfigKeys.SWITCH_ADDRESS, "sw:99999"},
        {NetecConfigKeys.SWITCH_ADDRESS, ":50310"},
        {NetecConfigKeys.INEC_SCHEME, "star"},
        {NetecConfigKeys.INEC_TRANSPORT, "rdma"},
        {NetecConfigKeys.INEC_CHUNK, "0"},
        {NetecConfigKeys.INEC_SEGMENT, "536870912"},
        {NetecConfigKeys.INEC_TIMEOUT_MS, "forever"},
    };
    for (String[] kv : bad) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> parse(kv[0], kv[1]), kv[0] + "=" + kv[1] + " accepted");
      assertTrue(e.getMessage().contains(kv[0]) && e.getMessage().contains(kv[1]),
          kv[0] + "=" + kv[1] + ": " + e.getMessage());
    }
  }

  @Test
  void segmentSmallerThanChunkIsRefused() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> parse(NetecConfigKeys.INEC_CHUNK, "65536", NetecConfigKeys.INEC_SEGMENT, "4096"));
    assertTrue(e.getMessage().contains(NetecConfigKeys.INEC_SEGMENT + "=4096"), e.getMessage());
  }

  @Test
  void unknownKeysAreRefusedAndAMisspellingNamed() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> parse("netec.switch.adress", "sw:50310"));
    assertTrue(e.getMessage().contains("unknown key netec.switch.adress='sw:50310'")
        && e.getMessage().contains("did you mean netec.switch.address?"), e.getMessage());
    e = assertThrows(IllegalArgumentException.class, () -> parse("netec.route.class.mine",
        "com.example.Mine"));
    assertTrue(e.getMessage().contains("no longer read")
        && e.getMessage().contains("META-INF/services/io.netec.hdfs.route.RouteFactory"),
        e.getMessage());
    // a route's own keys pass only when that route is there; built-in namespaces stay checked
    Configuration conf = new Configuration(false);
    conf.set("netec.mine.depth", "3");
    assertThrows(IllegalArgumentException.class, () -> NetecSettings.parse(conf, ROUTES));
    NetecSettings.parse(conf, Set.of("switch", "inec", "mine"));
    conf.set("netec.inec.depth", "3");
    assertThrows(IllegalArgumentException.class,
        () -> NetecSettings.parse(conf, Set.of("switch", "inec", "mine")));
  }

  @Test
  void peerOrOperatorTextCannotBreakAMessageLine() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> parse(NetecConfigKeys.INEC_SCHEME, "rs\nERROR forged"));
    assertFalse(e.getMessage().contains("\n"), e.getMessage());
    assertTrue(e.getMessage().contains("rs\\x0aERROR forged"), e.getMessage());
  }

  /** README's configuration table lists exactly these keys, with these defaults. */
  @Test
  void readmeTableMatchesTheKeys() throws Exception {
    Path readme = Paths.get(System.getProperty("netec.repo.root", ".."), "README.md");
    Map<String, String> documented = new LinkedHashMap<>();
    for (String line : Files.readAllLines(readme, StandardCharsets.UTF_8)) {
      if (!line.startsWith("| `netec.") || line.startsWith("| `netec.route.class.")) {
        continue;
      }
      String[] cells = line.split("\\|");
      String key = cells[1].trim().replace("`", "");
      String def = cells[3].trim();
      documented.put(key, def.equals("—") ? "" : def.replace("`", ""));
    }
    Map<String, String> actual = new LinkedHashMap<>();
    NetecKeyTable.KEYS.values().forEach(k -> actual.put(k.name, k.defaultValue));
    assertEquals(actual, documented, "README.md's configuration table vs NetecKeyTable.KEYS");
  }
}
