package io.netec.hdfs.codec;

import java.nio.ByteBuffer;
import java.util.Arrays;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The RS coding behind our Hadoop raw coders, free of Hadoop types so routes can use it too.
 * A decode redone in Java after a native failure is counted and logged, never surfaced.
 */
public final class NetecCoding {
  private static final Logger LOG = LoggerFactory.getLogger(NetecCoding.class);

  private NetecCoding() {
  }

  /** Encodes parity; keeps one prepared parity coder. */
  public static final class Encoder {
    private final int k;
    private final int m;
    private final CoderBackend backend;
    private final CoderCounters counters;
    private final MatrixCoder parity;
    private MatrixCoder javaParity;

    public Encoder(int k, int m, CoderBackend backend, String coderName) {
      this.k = k;
      this.m = m;
      this.backend = backend;
      this.counters = CoderCounters.of(coderName);
      this.parity = backend.create(k, m, RsMatrix.parityRows(k, m));
    }

    public void encode(int len, ByteBuffer[] data, ByteBuffer[] parityOut) {
      try {
        parity.code(len, data, parityOut);
      } catch (RuntimeException | LinkageError e) {
        javaParity(e).code(len, data, parityOut);
      }
      counters.encoded((long) len * k);
    }

    public void encode(int len, byte[][] data, int[] dataOff, byte[][] parityOut, int[] outOff) {
      try {
        parity.code(len, data, dataOff, parityOut, outOff);
      } catch (RuntimeException | LinkageError e) {
        javaParity(e).code(len, data, dataOff, parityOut, outOff);
      }
      counters.encoded((long) len * k);
    }

    private MatrixCoder javaParity(Throwable cause) {
      if (backend == CoderBackend.JAVA) {
        throw asUnchecked(cause);
      }
      fellBack(counters, cause);
      if (javaParity == null) {
        javaParity = CoderBackend.JAVA.create(k, m, RsMatrix.parityRows(k, m));
      }
      return javaParity;
    }
  }

  /**
   * Decodes any erasure pattern, erased indices in any order. Keeps the coder of the last
   * (survivors, erased) pattern, since HDFS decodes a whole block with one pattern.
   */
  public static final class Decoder {
    private final int k;
    private final int m;
    private final CoderBackend backend;
    private final CoderCounters counters;
    private int[] survivors = new int[0];
    private int[] erased = new int[0];
    private MatrixCoder coder;
    private MatrixCoder javaCoder;

    public Decoder(int k, int m, CoderBackend backend, String coderName) {
      this.k = k;
      this.m = m;
      this.backend = backend;
      this.counters = CoderCounters.of(coderName);
    }

    /**
     * @param inputs k+m slots, null where a unit is absent; the first k present units that are
     *     not in {@code erasedIdx} are used
     * @param outputs one per erased index, same order
     */
    public void decode(int len, ByteBuffer[] inputs, int[] erasedIdx, ByteBuffer[] outputs) {
      int[] surv = pickSurvivors(inputs, erasedIdx);
      ByteBuffer[] in = new ByteBuffer[k];
      for (int i = 0; i < k; i++) {
        in[i] = inputs[surv[i]];
      }
      MatrixCoder c = prepare(surv, erasedIdx);
      try {
        c.code(len, in, outputs);
      } catch (RuntimeException | LinkageError e) {
        javaCoder(e).code(len, in, outputs);
      }
      counters.decoded((long) len * erasedIdx.length);
    }

    public void decode(int len, byte[][] inputs, int[] inOff, int[] erasedIdx, byte[][] outputs,
        int[] outOff) {
      int[] surv = pickSurvivors(inputs, erasedIdx);
      byte[][] in = new byte[k][];
      int[] off = new int[k];
      for (int i = 0; i < k; i++) {
        in[i] = inputs[surv[i]];
        off[i] = inOff[surv[i]];
      }
      MatrixCoder c = prepare(surv, erasedIdx);
      try {
        c.code(len, in, off, outputs, outOff);
      } catch (RuntimeException | LinkageError e) {
        javaCoder(e).code(len, in, off, outputs, outOff);
      }
      counters.decoded((long) len * erasedIdx.length);
    }

    private int[] pickSurvivors(Object[] inputs, int[] erasedIdx) {
      if (inputs.length != k + m) {
        throw new IllegalArgumentException("expected " + (k + m) + " inputs, got "
            + inputs.length);
      }
      int[] surv = new int[k];
      int n = 0;
      for (int i = 0; i < inputs.length && n < k; i++) {
        if (inputs[i] != null && !contains(erasedIdx, i)) {
          surv[n++] = i;
        }
      }
      if (n < k) {
        throw new IllegalArgumentException("need " + k + " surviving units to decode, have " + n
            + " (erased " + Arrays.toString(erasedIdx) + ")");
      }
      return surv;
    }

    private MatrixCoder prepare(int[] surv, int[] erasedIdx) {
      if (coder == null || !Arrays.equals(surv, survivors) || !Arrays.equals(erasedIdx, erased)) {
        survivors = surv;
        erased = erasedIdx.clone();
        coder = backend.create(k, erased.length, RsMatrix.decodeRows(k, m, survivors, erased));
        javaCoder = null;
      }
      return coder;
    }

    private MatrixCoder javaCoder(Throwable cause) {
      if (backend == CoderBackend.JAVA) {
        throw asUnchecked(cause);
      }
      fellBack(counters, cause);
      if (javaCoder == null) {
        javaCoder = CoderBackend.JAVA.create(k, erased.length,
            RsMatrix.decodeRows(k, m, survivors, erased));
      }
      return javaCoder;
    }
  }

  private static void fellBack(CoderCounters counters, Throwable cause) {
    counters.fellBackToJava();
    LOG.warn("Native coding call failed, redone in Java: {}", cause.toString());
  }

  private static RuntimeException asUnchecked(Throwable t) {
    if (t instanceof RuntimeException) {
      return (RuntimeException) t;
    }
    throw (Error) t;
  }

  private static boolean contains(int[] a, int v) {
    for (int x : a) {
      if (x == v) {
        return true;
      }
    }
    return false;
  }
}
