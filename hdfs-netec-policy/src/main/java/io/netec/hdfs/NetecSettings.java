package io.netec.hdfs;

import io.netec.hdfs.route.LogLimiter;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
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
 * defaults and checks live in {@link NetecKeyTable} and nowhere else). A bad value is an
 * {@link IllegalArgumentException} whose message names the key and the value: the DataNode
 * plugin then stays inactive (Hadoop does all EC work) and a client's FileSystem fails to
 * initialize. Each concern reads its own immutable options
 * ({@link SwitchOptions}, {@link AgentOptions}, {@link InecOptions}, {@link ClientOptions});
 * the router's own (route order, retries, back-off, proofs, cleartext) are here.
 */
public final class NetecSettings {
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
      if (NetecKeyTable.KEYS.containsKey(key)) {
        continue;
      }
      if (key.startsWith(NetecConfigKeys.ROUTE_CLASS_PREFIX)) {
        throw new IllegalArgumentException(key + " is no longer read: routes are found by "
            + "ServiceLoader. A route's jar lists its io.netec.hdfs.route.RouteFactory in "
            + "META-INF/services/io.netec.hdfs.route.RouteFactory; remove " + key
            + " and put the route's name in " + NetecConfigKeys.ROUTE_ORDER);
      }
      String ns = name.contains(".") ? name.substring(0, name.indexOf('.')) : name;
      if (!NetecKeyTable.RESERVED_PREFIXES.contains(ns) && known.contains(ns)) {
        continue; // a third-party route's own key
      }
      throw new IllegalArgumentException("unknown key " + key + "="
          + LogLimiter.quote(conf.get(key)) + NetecKeyTable.nearest(key) + " (NetEC keys: "
          + String.join(", ", NetecKeyTable.KEYS.keySet())
          + "; a route not built in reads keys under netec.<its name>.)");
    }
    Map<String, Object> values = new LinkedHashMap<>();
    for (NetecKeyTable.Key key : NetecKeyTable.KEYS.values()) {
      String raw = conf.getTrimmed(key.name);
      if (raw == null || raw.isEmpty()) { // set to nothing: as if unset
        raw = key.defaultValue;
      }
      values.put(key.name, raw.isEmpty() ? null : key.parse(raw));
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
}
