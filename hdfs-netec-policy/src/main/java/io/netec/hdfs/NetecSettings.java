package io.netec.hdfs;

import io.netec.hdfs.route.LogLimiter;
import io.netec.hdfs.route.PeerNetworks;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.apache.hadoop.conf.Configuration;

/**
 * Every {@code netec.*} key, parsed and checked once: type, range, allowed values, unknown key
 * names and duplicate route names. The DataNode plugin and the client build their routing from
 * the same object, so both sides read every key the same way and with the same defaults (the
 * defaults live here and nowhere else; README's configuration table is held to {@link #KEYS}
 * by a test). A bad value is an {@link IllegalArgumentException} whose message names the key
 * and the value: the DataNode plugin then stays inactive (Hadoop does all EC work) and a
 * client's FileSystem fails to initialize. Each concern reads its own immutable options
 * ({@link SwitchOptions}, {@link AgentOptions}, {@link InecOptions}, {@link ClientOptions});
 * the router's own (route order, retries, back-off, proofs, cleartext) are here.
 */
public final class NetecSettings {
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
  private static final Set<String> RESERVED_PREFIXES = Set.of("route", "switch", "agent", "inec",
      "proof", "client");
  private static final int MAX_MS = 3_600_000;

  static {
    Map<String, Key> k = new LinkedHashMap<>();
    add(k, NetecConfigKeys.ROUTE_ORDER, "switch,inec,native",
        "comma-separated route names, each once", NetecSettings::parseNames);
    add(k, NetecConfigKeys.ROUTE_RETRIES, "1", "0..100", intIn(0, 100));
    add(k, NetecConfigKeys.ROUTE_BACKOFF_MS, "10000", "0..3600000 (0: no back-off)",
        intIn(0, MAX_MS));
    add(k, NetecConfigKeys.FABRIC_TRUSTED, "false", "true or false",
        NetecSettings::parseBoolean);
    add(k, NetecConfigKeys.PROOF_PORT, "50330", "0..65535 (0: any free port)",
        intIn(0, 65535));
    add(k, NetecConfigKeys.PROOF_TIMEOUT_MS, "30000", "100..3600000", intIn(100, MAX_MS));
    add(k, NetecConfigKeys.CLIENT_READS, "cost", "cost, routes or hadoop",
        oneOf("cost", "routes", "hadoop"));
    add(k, NetecConfigKeys.CLIENT_LINK_MBPS, "0", "0..1000000 (0: learned from reads)",
        intIn(0, 1_000_000));
    add(k, NetecConfigKeys.SWITCH_ADDRESS, "", "host:port", NetecSettings::parseHostPort);
    add(k, NetecConfigKeys.SWITCH_RACKS, "", "comma-separated RACK=host:port",
        NetecSettings::parseRackSwitches);
    add(k, NetecConfigKeys.SWITCH_PAYLOAD, "32768", "64..65472, a multiple of 64",
        (key, v) -> {
          int p = (Integer) intIn(64, 65472).parse(key, v);
          if (p % 64 != 0) {
            throw bad(key, v, "not a multiple of 64");
          }
          return p;
        });
    add(k, NetecConfigKeys.SWITCH_PREMULTIPLY, "false", "true or false",
        NetecSettings::parseBoolean);
    add(k, NetecConfigKeys.SWITCH_TRANSPORT, "tcp", "tcp or udp", (key, v) -> {
      String t = v.trim().toLowerCase(java.util.Locale.ROOT);
      if (!t.equals("tcp") && !t.equals("udp")) {
        throw bad(key, v, "not tcp or udp");
      }
      return t;
    });
    add(k, NetecConfigKeys.SWITCH_TIMEOUT_MS, "30000", "100..3600000", intIn(100, MAX_MS));
    add(k, NetecConfigKeys.AGENT_ENABLED, "true", "true or false", NetecSettings::parseBoolean);
    add(k, NetecConfigKeys.AGENT_PORT, "50300", "0..65535 (0: any free port)",
        intIn(0, 65535));
    add(k, NetecConfigKeys.AGENT_MAX_STREAMS, "64", "1..65536", intIn(1, 65536));
    add(k, NetecConfigKeys.AGENT_IDLE_TIMEOUT_MS, "60000", "100..3600000",
        intIn(100, MAX_MS));
    add(k, NetecConfigKeys.INEC_ENABLED, "true", "true or false", NetecSettings::parseBoolean);
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
    add(k, NetecConfigKeys.INEC_RACKS, "true", "true or false", NetecSettings::parseBoolean);
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

  /** Every key's typed value, for {@link #toString} (the options hold their own). */
  private final Map<String, Object> values;
  private final List<String> routeOrder;
  private final int routeRetries;
  private final int routeBackoffMs;
  private final boolean fabricTrusted;
  private final int proofPort;
  private final int proofTimeoutMs;
  private final String cleartextRefusal;
  private final int stallTimeoutMs;
  private final SwitchOptions switchOptions;
  private final AgentOptions agentOptions;
  private final InecOptions inecOptions;
  private final ClientOptions clientOptions;

  private NetecSettings(Map<String, Object> values, List<String> routeOrder,
      String cleartextRefusal, int stallTimeoutMs) {
    this.values = Collections.unmodifiableMap(values);
    this.routeOrder = routeOrder;
    this.routeRetries = (Integer) values.get(NetecConfigKeys.ROUTE_RETRIES);
    this.routeBackoffMs = (Integer) values.get(NetecConfigKeys.ROUTE_BACKOFF_MS);
    this.fabricTrusted = (Boolean) values.get(NetecConfigKeys.FABRIC_TRUSTED);
    this.proofPort = (Integer) values.get(NetecConfigKeys.PROOF_PORT);
    this.proofTimeoutMs = (Integer) values.get(NetecConfigKeys.PROOF_TIMEOUT_MS);
    this.cleartextRefusal = cleartextRefusal;
    this.stallTimeoutMs = stallTimeoutMs;
    this.switchOptions = new SwitchOptions(values);
    this.agentOptions = new AgentOptions(values);
    this.inecOptions = new InecOptions(values);
    this.clientOptions = new ClientOptions(values);
  }

  /** The settings of a configuration with no netec.* key set and only the built-in routes. */
  public static NetecSettings defaults() {
    return parse(new Configuration(false), List.of("switch", "inec"));
  }

  /**
   * Parses and checks every netec.* key of {@code conf}.
   *
   * @param routes names of the routes this process has (built-in and found by ServiceLoader);
   *     "native" is always there. Keys under {@code netec.NAME.} of a route not built in are
   *     that route's to read and check.
   * @throws IllegalArgumentException naming the first bad key and its value
   */
  public static NetecSettings parse(Configuration conf, Collection<String> routes) {
    Set<String> known = new TreeSet<>(routes);
    known.add("native");
    for (String name : conf.getPropsWithPrefix("netec.").keySet()) {
      String key = "netec." + name;
      if (KEYS.containsKey(key)) {
        continue;
      }
      if (key.startsWith(NetecConfigKeys.ROUTE_CLASS_PREFIX)) {
        throw new IllegalArgumentException(key + " is no longer read: routes are found by "
            + "ServiceLoader. A route's jar lists its io.netec.hdfs.route.RouteFactory in "
            + "META-INF/services/io.netec.hdfs.route.RouteFactory; remove " + key
            + " and put the route's name in " + NetecConfigKeys.ROUTE_ORDER);
      }
      String ns = name.contains(".") ? name.substring(0, name.indexOf('.')) : name;
      if (!RESERVED_PREFIXES.contains(ns) && known.contains(ns)) {
        continue; // a third-party route's own key
      }
      throw new IllegalArgumentException("unknown key " + key + "="
          + LogLimiter.quote(conf.get(key)) + nearest(key) + " (NetEC keys: "
          + String.join(", ", KEYS.keySet())
          + "; a route not built in reads keys under netec.<its name>.)");
    }
    Map<String, Object> values = new LinkedHashMap<>();
    for (Key key : KEYS.values()) {
      String raw = conf.getTrimmed(key.name);
      if (raw == null || raw.isEmpty()) { // set to nothing: as if unset
        raw = key.defaultValue;
      }
      values.put(key.name, raw.isEmpty() ? null : key.parser.parse(key.name, raw));
    }
    int chunk = (Integer) values.get(NetecConfigKeys.INEC_CHUNK);
    int segment = (Integer) values.get(NetecConfigKeys.INEC_SEGMENT);
    if (segment < chunk) {
      throw new IllegalArgumentException(NetecConfigKeys.INEC_SEGMENT + "=" + segment
          + " is smaller than " + NetecConfigKeys.INEC_CHUNK + "=" + chunk);
    }
    List<String> order = new ArrayList<>();
    @SuppressWarnings("unchecked")
    List<String> names = (List<String>) values.get(NetecConfigKeys.ROUTE_ORDER);
    for (String n : names) {
      if (!known.contains(n)) {
        throw new IllegalArgumentException(NetecConfigKeys.ROUTE_ORDER + "="
            + LogLimiter.quote(String.join(",", names)) + " names unknown route '"
            + LogLimiter.quote(n) + "'; this process has " + known + " (a route not built in "
            + "needs its jar, with its META-INF/services entry, on the classpath)");
      }
      if (!n.equals("native")) {
        order.add(n);
      }
    }
    order.add("native"); // always last, listed or not
    String why = null;
    String protection = conf.getTrimmed("dfs.data.transfer.protection", "");
    if (conf.getBoolean("dfs.encrypt.data.transfer", false)) {
      why = "dfs.encrypt.data.transfer=true";
    } else if (protection.toLowerCase(Locale.ROOT).contains("privacy")) {
      why = "dfs.data.transfer.protection=" + protection;
    }
    if (why != null && !(Boolean) values.get(NetecConfigKeys.FABRIC_TRUSTED)) {
      why = "this cluster encrypts block data (" + why + ") and the route would move it "
          + "in cleartext; " + NetecConfigKeys.FABRIC_TRUSTED + "=true says the "
          + "network between DataNodes, switch and clients is trusted";
    } else {
      why = null;
    }
    // A rebuilt block waits at its target, unfinished, while its proof is awaited, and the
    // target gives up after its socket timeout: the wait is cut to half of it.
    int socketMs = conf.getInt(SOCKET_TIMEOUT_KEY, SOCKET_TIMEOUT_DEFAULT);
    int proofMs = (Integer) values.get(NetecConfigKeys.PROOF_TIMEOUT_MS);
    if (socketMs > 0 && proofMs > socketMs / 2) {
      values.put(NetecConfigKeys.PROOF_TIMEOUT_MS, Math.max(100, socketMs / 2));
    }
    int stall = conf.getInt(STRIPED_READ_TIMEOUT_KEY, STRIPED_READ_TIMEOUT_DEFAULT);
    if (stall <= 0) {
      throw new IllegalArgumentException(STRIPED_READ_TIMEOUT_KEY + "=" + stall
          + " is not a positive number of milliseconds");
    }
    return new NetecSettings(values, Collections.unmodifiableList(order), why, stall);
  }

  /** The socket timeout a target DataNode reads a rebuilt block's packets with. */
  static final String SOCKET_TIMEOUT_KEY = "dfs.client.socket-timeout";
  static final int SOCKET_TIMEOUT_DEFAULT = 60_000;

  /** Hadoop's striped-read timeout, which the routes' stall limit follows. */
  static final String STRIPED_READ_TIMEOUT_KEY =
      "dfs.datanode.ec.reconstruction.stripedread.timeout.millis";
  static final int STRIPED_READ_TIMEOUT_DEFAULT = 5000;

  /**
   * How long a route may go without progress while a spare survivor exists: Hadoop's
   * striped-read timeout ({@value #STRIPED_READ_TIMEOUT_KEY}, default 5 s), after which its
   * reconstruction reads from a spare source and so do ours.
   */
  public int stallTimeoutMs() {
    return stallTimeoutMs;
  }

  /** Port of every DataNode's proof service. */
  public int proofPort() {
    return proofPort;
  }

  /**
   * How long a verifier waits for the survivors' fingerprints once a route delivered its rows:
   * {@code netec.proof.timeout.ms}, at most half of {@code dfs.client.socket-timeout}.
   */
  public int proofTimeoutMs() {
    return proofTimeoutMs;
  }

  /**
   * Why a route that moves block data in cleartext (switch, INEC) must not run here: the
   * cluster asks for encrypted data transfer and {@code netec.fabric.trusted} is false; or
   * null when it may.
   */
  public String cleartextRefusal() {
    return cleartextRefusal;
  }

  /** Whether the operator said the fabric may carry block data in cleartext. */
  public boolean fabricTrusted() {
    return fabricTrusted;
  }


  /** Routes to try, in order; native last. */
  public List<String> routeOrder() {
    return routeOrder;
  }

  public int routeRetries() {
    return routeRetries;
  }

  public int routeBackoffMs() {
    return routeBackoffMs;
  }

  // ---- each route's and side's own --------------------------------------------------------

  public SwitchOptions switchOptions() {
    return switchOptions;
  }

  public AgentOptions agentOptions() {
    return agentOptions;
  }

  public InecOptions inecOptions() {
    return inecOptions;
  }

  public ClientOptions clientOptions() {
    return clientOptions;
  }

  @Override
  public String toString() {
    return "NetecSettings" + values;
  }

  // ---- parsers ---------------------------------------------------------------------------

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
  private static String nearest(String key) {
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
