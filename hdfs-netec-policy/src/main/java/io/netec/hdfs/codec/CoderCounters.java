package io.netec.hdfs.codec;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * Per-JVM counters of work done by each of our raw coders, by coder name. They are the proof,
 * on a client or a DataNode, that our coder (and which one) did the encoding or decoding.
 */
public final class CoderCounters {
  private static final Map<String, CoderCounters> BY_CODER = new ConcurrentHashMap<>();

  private final LongAdder encodeCalls = new LongAdder();
  private final LongAdder encodeBytes = new LongAdder();
  private final LongAdder decodeCalls = new LongAdder();
  private final LongAdder decodeBytes = new LongAdder();
  private final LongAdder javaFallbacks = new LongAdder();

  private CoderCounters() {
  }

  public static CoderCounters of(String coderName) {
    return BY_CODER.computeIfAbsent(coderName, n -> new CoderCounters());
  }

  void encoded(long bytesIn) {
    encodeCalls.increment();
    encodeBytes.add(bytesIn);
  }

  void decoded(long bytesOut) {
    decodeCalls.increment();
    decodeBytes.add(bytesOut);
  }

  void fellBackToJava() {
    javaFallbacks.increment();
  }

  public long encodeCalls() {
    return encodeCalls.sum();
  }

  /** Data bytes taken in by encode calls. */
  public long encodeBytes() {
    return encodeBytes.sum();
  }

  public long decodeCalls() {
    return decodeCalls.sum();
  }

  /** Bytes rebuilt by decode calls. */
  public long decodeBytes() {
    return decodeBytes.sum();
  }

  /** Calls that failed in native code and were redone in Java. */
  public long javaFallbacks() {
    return javaFallbacks.sum();
  }

  @Override
  public String toString() {
    return "encodeCalls=" + encodeCalls() + " encodeBytes=" + encodeBytes() + " decodeCalls="
        + decodeCalls() + " decodeBytes=" + decodeBytes() + " javaFallbacks=" + javaFallbacks();
  }
}
