package io.netec.hdfs.client;

import java.util.concurrent.atomic.LongAdder;

/**
 * Per-JVM counters of NETEC reads by {@link NetecStripedInputStream}: how each group range was
 * served. The proof, in tests and operations, of which route a degraded read took.
 */
public final class ClientReadCounters {
  static final LongAdder HEALTHY = new LongAdder();
  static final LongAdder SWITCH = new LongAdder();
  static final LongAdder NATIVE = new LongAdder();
  static final LongAdder SWITCH_BYTES_IN = new LongAdder();
  static final LongAdder INEC = new LongAdder();
  static final LongAdder INEC_BYTES_IN = new LongAdder();

  private ClientReadCounters() {
  }

  /** Group ranges read from their data units alone. */
  public static long healthyRanges() {
    return HEALTHY.sum();
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

  /** Group ranges read through Hadoop's own stream after every route declined or failed. */
  public static long nativeRanges() {
    return NATIVE.sum();
  }

  /** Bytes received from switches (the client's ingress for rebuilt units). */
  public static long switchBytesIn() {
    return SWITCH_BYTES_IN.sum();
  }
}
