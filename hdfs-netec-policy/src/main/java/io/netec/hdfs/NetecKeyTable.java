package io.netec.hdfs;

import io.netec.hdfs.route.LogLimiter;
import io.netec.hdfs.route.PeerNetworks;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The one table of every {@code netec.*} key: its default as a site file spells it, what it
 * accepts, and the parser that checks a value and gives its typed form. {@link NetecSettings}
 * reads a configuration through it; README's configuration table is held to {@link #KEYS} by a
 * test. A bad value is an {@link IllegalArgumentException} naming the key, the value and what
 * the key accepts.
 */
public final class NetecKeyTable {
  private NetecKeyTable() {
  }

  /** How a key's value is checked and turned into its typed form. */
  private interface Parser {
    Object parse(String key, String value);
  }

  /** One key: its name, its default as written in a site file, and what it accepts. */
  public static final class Key {
    public final String name;
    /** The default, as a site file would spell it; "" when the key has no default. */
    public final String defaultValue;
    /** What the key accepts, for errors and documentation. */
    public final String accepts;
    private final Parser parser;

    /** The typed value of {@code raw} (this key's value, not empty), or a clear error. */
    Object parse(String raw) {
      return parser.parse(name, raw);
    }

    private Key(String name, String defaultValue, String accepts, Parser parser) {
      this.name = name;
      this.defaultValue = defaultValue;
      this.accepts = accepts;
      this.parser = parser;
    }
  }

  /** Every key, in README's order. */
  public static final Map<String, Key> KEYS;
  /** Names no route may take: they are keys' namespaces of the built-in routes and the router. */
  static final Set<String> RESERVED_PREFIXES = Set.of("route", "switch", "agent", "inec",
      "proof", "client");
  private static final int MAX_MS = 3_600_000;

  static {
    Map<String, Key> k = new LinkedHashMap<>();
    add(k, NetecConfigKeys.ROUTE_ORDER, "switch,inec,native",
        "comma-separated route names, each once", NetecKeyTable::parseNames);
    add(k, NetecConfigKeys.ROUTE_RETRIES, "1", "0..100", intIn(0, 100));
    add(k, NetecConfigKeys.ROUTE_BACKOFF_MS, "10000", "0..3600000 (0: no back-off)",
        intIn(0, MAX_MS));
    add(k, NetecConfigKeys.FABRIC_TRUSTED, "false", "true or false",
        NetecKeyTable::parseBoolean);
    add(k, NetecConfigKeys.PROOF_PORT, "50330", "0..65535 (0: any free port)",
        intIn(0, 65535));
    add(k, NetecConfigKeys.PROOF_TIMEOUT_MS, "30000", "100..3600000", intIn(100, MAX_MS));
    add(k, NetecConfigKeys.CLIENT_READS, "cost", "cost, routes or hadoop",
        oneOf("cost", "routes", "hadoop"));
    add(k, NetecConfigKeys.CLIENT_LINK_MBPS, "0", "0..1000000 (0: learned from reads)",
        intIn(0, 1_000_000));
    add(k, NetecConfigKeys.SWITCH_ADDRESS, "", "host:port", NetecKeyTable::parseHostPort);
    add(k, NetecConfigKeys.SWITCH_RACKS, "", "comma-separated RACK=host:port",
        NetecKeyTable::parseRackSwitches);
    add(k, NetecConfigKeys.SWITCH_PAYLOAD, "32768", "64..65472, a multiple of 64",
        (key, v) -> {
          int p = (Integer) intIn(64, 65472).parse(key, v);
          if (p % 64 != 0) {
            throw bad(key, v, "not a multiple of 64");
          }
          return p;
        });
    add(k, NetecConfigKeys.SWITCH_PREMULTIPLY, "false", "true or false",
        NetecKeyTable::parseBoolean);
    add(k, NetecConfigKeys.SWITCH_TRANSPORT, "tcp", "tcp or udp", (key, v) -> {
      String t = v.trim().toLowerCase(Locale.ROOT);
      if (!t.equals("tcp") && !t.equals("udp")) {
        throw bad(key, v, "not tcp or udp");
      }
      return t;
    });
    add(k, NetecConfigKeys.SWITCH_TIMEOUT_MS, "30000", "100..3600000", intIn(100, MAX_MS));
    add(k, NetecConfigKeys.AGENT_ENABLED, "true", "true or false", NetecKeyTable::parseBoolean);
    add(k, NetecConfigKeys.AGENT_PORT, "50300", "0..65535 (0: any free port)",
        intIn(0, 65535));
    add(k, NetecConfigKeys.AGENT_MAX_STREAMS, "64", "1..65536", intIn(1, 65536));
    add(k, NetecConfigKeys.AGENT_IDLE_TIMEOUT_MS, "60000", "100..3600000",
        intIn(100, MAX_MS));
    add(k, NetecConfigKeys.INEC_ENABLED, "true", "true or false", NetecKeyTable::parseBoolean);
    add(k, NetecConfigKeys.INEC_PORT, "50320", "0..65535 (0: any free port)", intIn(0, 65535));
    add(k, NetecConfigKeys.INEC_DATA_PORT, "50321", "0..65535 (0: any free port)",
        intIn(0, 65535));
    add(k, NetecConfigKeys.INEC_PEER_NETWORKS, "", "comma-separated ADDRESS/PREFIX",
        (key, v) -> {
          List<String> cidrs = new ArrayList<>();
          for (String c : v.split(",", -1)) {
            cidrs.add(c.trim());
          }
          try {
            PeerNetworks.of(cidrs, InecOptions.PEERS, key);
          } catch (IllegalArgumentException e) {
            throw bad(key, v, "not a list of ADDRESS/PREFIX");
          }
          return Collections.unmodifiableList(cidrs);
        });
    add(k, NetecConfigKeys.INEC_MAX_VERTICES, "64", "1..4096", intIn(1, 4096));
    add(k, NetecConfigKeys.INEC_SCHEME, "ecpipe", "ecpipe, ppr or rs",
        oneOf("ecpipe", "ppr", "rs"));
    add(k, NetecConfigKeys.INEC_RACKS, "true", "true or false", NetecKeyTable::parseBoolean);
    add(k, NetecConfigKeys.INEC_TRANSPORT, "auto", "auto, tcp or verbs",
        oneOf("auto", "tcp", "verbs"));
    add(k, NetecConfigKeys.INEC_VERBS_LIBRARY, "libibverbs.so.1", "a library name or path",
        (key, v) -> {
          if (v.isEmpty()) {
            throw bad(key, v, "empty");
          }
          return v;
        });
    add(k, NetecConfigKeys.INEC_CHUNK, "65536", "1..16777216", intIn(1, 16 << 20));
    add(k, NetecConfigKeys.INEC_SEGMENT, "4194304", "chunk..268435456",
        intIn(1, 256 << 20));
    add(k, NetecConfigKeys.INEC_TIMEOUT_MS, "30000", "100..3600000", intIn(100, MAX_MS));
    KEYS = Collections.unmodifiableMap(k);
  }

  private static void add(Map<String, Key> keys, String name, String def, String accepts,
      Parser p) {
    keys.put(name, new Key(name, def, accepts, p));
  }

  private static Parser intIn(int min, int max) {
    return (key, v) -> {
      long x;
      try {
        x = Long.parseLong(v);
      } catch (NumberFormatException e) {
        throw bad(key, v, "not an integer");
      }
      if (x < min || x > max) {
        throw bad(key, v, "out of range " + min + ".." + max);
      }
      return (int) x;
    };
  }

  private static Parser oneOf(String... allowed) {
    return (key, v) -> {
      String s = v.toLowerCase(Locale.ROOT);
      for (String a : allowed) {
        if (a.equals(s)) {
          return a;
        }
      }
      throw bad(key, v, "not one of " + String.join(", ", allowed));
    };
  }

  private static Object parseBoolean(String key, String v) {
    if (v.equalsIgnoreCase("true")) {
      return Boolean.TRUE;
    }
    if (v.equalsIgnoreCase("false")) {
      return Boolean.FALSE;
    }
    throw bad(key, v, "not true or false");
  }

  /** "/rack1=h:p, /rack2=h:p" -> {rack: "h:p"}, in the order given, each rack once. */
  private static Object parseRackSwitches(String key, String v) {
    Map<String, String> racks = new LinkedHashMap<>();
    for (String entry : v.split(",", -1)) {
      String e = entry.trim();
      int eq = e.indexOf('=');
      String rack = eq < 0 ? "" : e.substring(0, eq).trim();
      if (!rack.startsWith("/") || rack.chars().anyMatch(c -> c <= ' ' || c == '=')) {
        throw bad(key, v, "not RACK=host:port in entry '" + e + "' (RACK: a network location "
            + "such as /rack1)");
      }
      String hostPort = e.substring(eq + 1).trim();
      parseHostPort(key, hostPort);
      if (racks.put(rack, hostPort) != null) {
        throw bad(key, v, "naming rack " + rack + " twice");
      }
    }
    return Collections.unmodifiableMap(racks);
  }

  private static Object parseHostPort(String key, String v) {
    int colon = v.lastIndexOf(':');
    String host = colon < 0 ? "" : v.substring(0, colon);
    if (host.startsWith("[") && host.endsWith("]")) {
      host = host.substring(1, host.length() - 1);
    }
    if (host.isEmpty() || host.chars().anyMatch(c -> c <= ' ' || c == '/')) {
      throw bad(key, v, "not host:port");
    }
    try {
      intIn(1, 65535).parse(key, v.substring(colon + 1));
    } catch (IllegalArgumentException e) {
      throw bad(key, v, "not host:port with a port in 1..65535");
    }
    return v;
  }

  private static Object parseNames(String key, String v) {
    Set<String> names = new LinkedHashSet<>();
    for (String n : v.split(",", -1)) {
      n = n.trim();
      if (n.isEmpty()) {
        throw bad(key, v, "has an empty route name");
      }
      if (!names.add(n)) {
        throw bad(key, v, "names route '" + LogLimiter.quote(n) + "' twice");
      }
    }
    return new ArrayList<>(names);
  }

  private static IllegalArgumentException bad(String key, String value, String why) {
    return new IllegalArgumentException(key + "=" + LogLimiter.quote(value) + " is " + why
        + " (accepts " + (KEYS == null || !KEYS.containsKey(key) ? "see README"
            : KEYS.get(key).accepts) + ")");
  }

  /** "; did you mean K?" for the known key closest to a misspelt one, or "". */
  static String nearest(String key) {
    String best = null;
    int bestDistance = 4;
    for (String k : KEYS.keySet()) {
      int d = distance(key, k);
      if (d < bestDistance) {
        best = k;
        bestDistance = d;
      }
    }
    return best == null ? "" : "; did you mean " + best + "?";
  }

  private static int distance(String a, String b) {
    int[] prev = new int[b.length() + 1];
    int[] cur = new int[b.length() + 1];
    for (int j = 0; j <= b.length(); j++) {
      prev[j] = j;
    }
    for (int i = 1; i <= a.length(); i++) {
      cur[0] = i;
      for (int j = 1; j <= b.length(); j++) {
        cur[j] = Math.min(Math.min(cur[j - 1], prev[j]) + 1,
            prev[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1));
      }
      int[] t = prev;
      prev = cur;
      cur = t;
    }
    return prev[b.length()];
  }
}
