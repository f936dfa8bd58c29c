package io.netec.hdfs.client;

import java.util.concurrent.atomic.LongAdder;

/**
 * Per-JVM counters of NETEC reads by {@link NetecStripedInputStream}: how each positional read
 * of lost units was chosen and which route rebuilt each group's range. The proof, in tests and
 * operations, of which way a degraded read took.
 */
public final class ClientReadCounters {
  static final LongAdder HADOOP_CHOSEN = new LongAdder();
  static final LongAdder ROUTES_CHOSEN = new LongAdder();
  static final LongAdder PROBES = new LongAdder();
  static final LongAdder ROUTES_FAILED = new LongAdder();
  static final LongAdder ROUTES_ABANDONED = new LongAdder();
  static final LongAdder HEDGED = new LongAdder();
  static final LongAdder HEDGES_REFUSED = new LongAdder();
  static final LongAdder SWITCH = new LongAdder();
  static final LongAdder SWITCH_BYTES_IN = new LongAdder();
  static final LongAdder INEC = new LongAdder();
  static final LongAdder INEC_BYTES_IN = new LongAdder();
  static final LongAdder OTHER = new LongAdder();

  private ClientReadCounters() {
  }

  /** A group range whose lost units {@code route} rebuilt, taking in bytesIn (-1: unknown). */
  static void served(String route, long bytesIn) {
    switch (route) {
      case "switch":
        SWITCH.increment();
        SWITCH_BYTES_IN.add(Math.max(0, bytesIn));
        break;
      case "inec":
        INEC.increment();
        INEC_BYTES_IN.add(Math.max(0, bytesIn));
        break;
      default:
        OTHER.increment();
    }
  }

  /** Group ranges rebuilt by a route not built in. */
  public static long otherRanges() {
    return OTHER.sum();
  }

  /** Positional reads of lost units the cost model gave to Hadoop's stream. */
  public static long hadoopChosen() {
    return HADOOP_CHOSEN.sum();
  }

  /** Positional reads of lost units sent through the routes. */
  public static long routesChosen() {
    return ROUTES_CHOSEN.sum();
  }

  /**
   * Of the reads sent through the routes, those that probed a route at a size it was not
   * measured near (ReadChooser.NEAR_FACTOR).
   */
  public static long probes() {
    return PROBES.sum();
  }

  /** Reads sent through the routes that failed there and were read through Hadoop's stream. */
  public static long routesFailed() {
    return ROUTES_FAILED.sum();
  }

  /**
   * Reads sent through the routes that ran past their budget (Hadoop's stream's expected time,
   * at least twice the route's) and were served by Hadoop's stream, hedging, first.
   */
  public static long routesAbandoned() {
    return ROUTES_ABANDONED.sum();
  }

  /** Routed reads past their budget, for which Hadoop's stream was started too (a hedge). */
  public static long hedged() {
    return HEDGED.sum();
  }

  /**
   * Routed reads past their budget that found every hedge of their file system running
   * ({@code NetecDistributedFileSystem.MAX_HEDGES}) and waited on their route alone.
   */
  public static long hedgesRefused() {
    return HEDGES_REFUSED.sum();
  }

  /** Group ranges whose missing units were rebuilt by the switch. */
  public static long switchRanges() {
    return SWITCH.sum();
  }

  /** Group ranges whose missing units were rebuilt through an INEC repair graph. */
  public static long inecRanges() {
    return INEC.sum();
  }

  /** Bytes received from INEC participants (the client's ingress for rebuilt units). */
  public static long inecBytesIn() {
    return INEC_BYTES_IN.sum();
  }

  /** Bytes received from switches (the client's ingress for rebuilt units). */
  public static long switchBytesIn() {
    return SWITCH_BYTES_IN.sum();
  }
}
