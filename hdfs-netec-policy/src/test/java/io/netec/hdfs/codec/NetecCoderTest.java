package io.netec.hdfs.codec;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.Function;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.io.erasurecode.CodecUtil;
import org.apache.hadoop.io.erasurecode.ErasureCoderOptions;
import org.apache.hadoop.io.erasurecode.rawcoder.NetecRawDecoder;
import org.apache.hadoop.io.erasurecode.rawcoder.NetecRawEncoder;
import org.apache.hadoop.io.erasurecode.rawcoder.RSRawDecoder;
import org.apache.hadoop.io.erasurecode.rawcoder.RSRawEncoder;
import org.apache.hadoop.io.erasurecode.rawcoder.RawErasureDecoder;
import org.apache.hadoop.io.erasurecode.rawcoder.RawErasureEncoder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Byte compatibility with Hadoop rs, and exhaustive decoding, for both of our coders. */
class NetecCoderTest {
  private static final int[][] SHAPES = {{3, 2}, {6, 3}, {10, 4}};

  static boolean nativeExpected() {
    return !Boolean.getBoolean(IsalNative.DISABLE_PROPERTY);
  }

  /** The coders under test: Java always, ISA-L unless the run forces the library off. */
  static Stream<CoderBackend> backends() {
    return nativeExpected() ? Stream.of(CoderBackend.JAVA, CoderBackend.ISAL)
        : Stream.of(CoderBackend.JAVA);
  }

  static Stream<Arguments> shapesAndBackends() {
    return backends().flatMap(b -> Arrays.stream(SHAPES).map(s -> Arguments.of(s[0], s[1], b)));
  }

  @Test
  void nativeLibraryLoadsUnlessForcedOff() {
    if (nativeExpected()) {
      assertTrue(IsalNative.isAvailable(), "native coder should load: "
          + IsalNative.unavailableReason());
      nativeCallsRejectBadArguments();
    } else {
      assertTrue(!IsalNative.isAvailable() && IsalNative.unavailableReason().contains("disabled"));
      assertThrows(UnsupportedOperationException.class,
          () -> new NetecCoderFactories.NetecNative().createEncoder(new ErasureCoderOptions(3, 2)));
    }
  }

  /** The JNI layer checks every argument itself: an error, never a read or write out of bounds. */
  private static void nativeCallsRejectBadArguments() {
    int k = 6;
    int m = 3;
    int len = 100;
    ByteBuffer tables = ByteBuffer.allocateDirect(32 * k * m);
    IsalNative.initTables0(k, m, RsMatrix.parityRows(k, m), tables);
    ByteBuffer[] in = toBuffers(new byte[k][len], true, 0);
    ByteBuffer[] out = toBuffers(new byte[m][len], true, 0);
    int[] inPos = new int[k];
    int[] outPos = new int[m];
    IsalNative.encodeBuffers0(len, k, m, tables, in, inPos, out, outPos); // well-formed call

    Class<IllegalArgumentException> iae = IllegalArgumentException.class;
    assertThrows(iae, () -> IsalNative.initTables0(k, m, new byte[5], tables));
    assertThrows(iae, () -> IsalNative.initTables0(k, m, RsMatrix.parityRows(k, m),
        ByteBuffer.allocateDirect(10)));
    // past the buffers' capacity (toBuffers leaves 3 bytes of slack)
    assertThrows(iae, () -> IsalNative.encodeBuffers0(len + 4, k, m, tables, in, inPos, out,
        outPos));
    // past their limit: refused by the coder before any native call
    assertThrows(iae, () -> new IsalMatrixCoder(k, m, RsMatrix.parityRows(k, m))
        .code(len + 1, in, out));
    assertThrows(iae, () -> new JavaMatrixCoder(k, m, RsMatrix.parityRows(k, m))
        .code(len + 1, in, out));
    assertThrows(iae, () -> IsalNative.encodeBuffers0(len, k, m, tables, in,
        new int[] {0, 0, 0, 0, 0, -1}, out, outPos));
    assertThrows(iae, () -> IsalNative.encodeBuffers0(len, k, m, tables,
        toBuffers(new byte[k][len], false, 0), inPos, out, outPos));
    assertThrows(iae, () -> IsalNative.encodeBuffers0(len, k, m, tables, Arrays.copyOf(in, k - 1),
        inPos, out, outPos));
    assertThrows(iae, () -> IsalNative.encodeBuffers0(-1, k, m, tables, in, inPos, out, outPos));
    byte[][] arrays = new byte[k][len];
    byte[][] parity = new byte[m][len];
    assertThrows(iae, () -> IsalNative.encodeArrays0(len, k, m, tables, arrays, new int[k],
        parity, new int[] {0, 0, 1}));
    arrays[2] = null;
    assertThrows(iae, () -> IsalNative.encodeArrays0(len, k, m, tables, arrays, new int[k],
        parity, new int[m]));
    byte[] src = new byte[len];
    assertThrows(iae, () -> IsalNative.updateArrays0(len, k, m, k, tables, src, 0, parity,
        new int[m]));
    assertThrows(iae, () -> IsalNative.updateArrays0(len + 1, k, m, 0, tables, src, 0, parity,
        new int[m]));
    assertThrows(iae, () -> IsalNative.updateArrays0(len, k, m, 0, tables, src, 0,
        new byte[][] {new byte[len], null, new byte[len]}, new int[m]));
  }

  @Test
  void matrixIsIsalCauchy1() {
    // Spot values of ISA-L gf_gen_cauchy1_matrix: a[i][j] = inv(i ^ j), poly 0x11d.
    byte[] a = RsMatrix.encodeMatrix(6, 3);
    assertEquals(1, a[0]);
    assertEquals(GaloisField.inverse(6), a[6 * 6] & 0xff);
    assertEquals(GaloisField.inverse(8 ^ 5), a[8 * 6 + 5] & 0xff);
    for (int x = 1; x < 256; x++) {
      assertEquals(1, GaloisField.mul(x, GaloisField.inverse(x)));
    }
  }

  @ParameterizedTest
  @MethodSource("shapesAndBackends")
  void parityEqualsHadoopRs(int k, int m, CoderBackend backend) throws Exception {
    Random rnd = new Random(k * 31 + m);
    for (int len : new int[] {1, 31, 64, 1000, 65536 + 17}) {
      byte[][] data = randomUnits(rnd, k, len);
      byte[][] expected = new byte[m][len];
      new RSRawEncoder(new ErasureCoderOptions(k, m)).encode(data, expected);

      byte[][] heapOut = garbage(rnd, m, len);
      new NetecRawEncoder(new ErasureCoderOptions(k, m), backend, "t").encode(data, heapOut);
      assertArrayEquals(expected, heapOut, "heap parity, len " + len);

      ByteBuffer[] in = toBuffers(data, true, 5);
      ByteBuffer[] out = toBuffers(garbage(rnd, m, len), true, 3);
      new NetecRawEncoder(new ErasureCoderOptions(k, m), backend, "t").encode(in, out);
      assertArrayEquals(expected, fromBuffers(out), "direct parity, len " + len);
    }
  }

  static Stream<Arguments> everyPattern() {
    return backends().flatMap(b -> Stream.of(true, false).flatMap(direct ->
        Arrays.stream(SHAPES).map(s -> Arguments.of(s[0], s[1], b, direct))));
  }

  /** Every erasure pattern of 1..m units: 15, 129 and 1,470 patterns. */
  @ParameterizedTest
  @MethodSource("everyPattern")
  void decodesEveryErasurePattern(int k, int m, CoderBackend backend, boolean direct)
      throws Exception {
    Random rnd = new Random(k * 131 + m + (direct ? 1 : 0));
    int len = 1021;
    byte[][] units = stripe(rnd, k, m, len);
    RawErasureDecoder decoder = new NetecRawDecoder(new ErasureCoderOptions(k, m), backend, "t");
    List<int[]> patterns = patterns(k + m, m);
    assertEquals(Map.of(3, 15, 6, 129, 10, 1470).get(k), patterns.size());
    for (int[] erased : patterns) {
      int[] order = shuffled(erased, rnd);
      ByteBuffer[] inputs = toBuffers(units, direct, 1 + rnd.nextInt(9));
      for (int e : erased) {
        inputs[e] = null;
      }
      nullSomeBeyondFirstK(inputs, k, rnd);
      ByteBuffer[] outputs = toBuffers(garbage(rnd, order.length, len), direct, rnd.nextInt(5));
      decoder.decode(inputs, order, outputs);
      for (int i = 0; i < order.length; i++) {
        assertArrayEquals(units[order[i]], bytes(outputs[i]),
            () -> "unit " + Arrays.toString(order) + " shape " + k + "+" + m);
      }
    }
  }

  @ParameterizedTest
  @MethodSource("shapesAndBackends")
  void decodesHeapArraysAtOffsets(int k, int m, CoderBackend backend) throws Exception {
    Random rnd = new Random(7);
    int len = 4099;
    byte[][] units = stripe(rnd, k, m, len);
    int[] erased = {k + m - 1, 0}; // parity before data: the HADOOP-19180 order
    byte[][] in = new byte[k + m][];
    int[] inOff = new int[k + m];
    for (int i = 0; i < k + m; i++) {
      if (i != erased[0] && i != erased[1]) {
        inOff[i] = 3 + i;
        in[i] = new byte[len + inOff[i] + 2];
        System.arraycopy(units[i], 0, in[i], inOff[i], len);
      }
    }
    byte[][] out = garbage(rnd, 2, len + 11);
    NetecCoding.Decoder d = new NetecCoding.Decoder(k, m, backend, "t");
    d.decode(len, in, inOff, erased, out, new int[] {11, 11});
    assertArrayEquals(units[erased[0]], Arrays.copyOfRange(out[0], 11, 11 + len));
    assertArrayEquals(units[erased[1]], Arrays.copyOfRange(out[1], 11, 11 + len));
  }

  /** Data written by Hadoop rs decodes with ours, and ours decodes with Hadoop's. */
  @ParameterizedTest
  @MethodSource("shapesAndBackends")
  void interoperatesWithHadoopRsBothWays(int k, int m, CoderBackend backend) throws Exception {
    Random rnd = new Random(99);
    int len = 8192;
    byte[][] units = stripe(rnd, k, m, len); // parity from Hadoop's encoder
    int[] erased = {1, k}; // ascending: Hadoop 3.4's decoder needs that
    byte[][] ours = new byte[2][len];
    new NetecRawDecoder(new ErasureCoderOptions(k, m), backend, "t")
        .decode(withNulls(units, erased), erased, ours);
    assertArrayEquals(units[1], ours[0]);
    assertArrayEquals(units[k], ours[1]);

    byte[][] mine = new byte[k + m][];
    for (int i = 0; i < k; i++) {
      mine[i] = units[i];
    }
    byte[][] parity = new byte[m][len];
    new NetecRawEncoder(new ErasureCoderOptions(k, m), backend, "t")
        .encode(Arrays.copyOf(mine, k), parity);
    System.arraycopy(parity, 0, mine, k, m);
    byte[][] theirs = new byte[2][len];
    new RSRawDecoder(new ErasureCoderOptions(k, m)).decode(withNulls(mine, erased), erased,
        theirs);
    assertArrayEquals(units[1], theirs[0]);
    assertArrayEquals(units[k], theirs[1]);
  }

  /** A native call that fails at run time is redone in Java: right bytes, counted. */
  @Test
  void failedNativeCallIsRedoneInJava() throws Exception {
    CoderBackend failing = (k, rows, matrix) -> new MatrixCoder() {
      public int k() {
        return k;
      }

      public int rows() {
        return rows;
      }

      public String name() {
        return "failing";
      }

      public void code(int len, byte[][] in, int[] io, byte[][] out, int[] oo) {
        throw new IllegalStateException("injected native failure");
      }

      public void code(int len, ByteBuffer[] in, ByteBuffer[] out) {
        throw new IllegalStateException("injected native failure");
      }
    };
    Random rnd = new Random(3);
    byte[][] units = stripe(rnd, 6, 3, 2048);
    String name = "fallback-test";
    long before = CoderCounters.of(name).javaFallbacks();
    RawErasureDecoder decoder = new NetecRawDecoder(new ErasureCoderOptions(6, 3), failing, name);
    int[] erased = {4, 2};
    byte[][] out = new byte[2][2048];
    decoder.decode(withNulls(units, erased), erased, out);
    assertArrayEquals(units[4], out[0]);
    assertArrayEquals(units[2], out[1]);
    ByteBuffer[] dout = toBuffers(new byte[2][2048], true, 0);
    ByteBuffer[] din = toBuffers(units, true, 0);
    din[4] = null;
    din[2] = null;
    decoder.decode(din, erased, dout);
    assertArrayEquals(units[2], bytes(dout[1]));
    assertEquals(before + 2, CoderCounters.of(name).javaFallbacks());

    byte[][] parity = new byte[3][2048];
    new NetecRawEncoder(new ErasureCoderOptions(6, 3), failing, name)
        .encode(Arrays.copyOf(units, 6), parity);
    assertArrayEquals(Arrays.copyOfRange(units, 6, 9), parity);
  }

  /** Accumulating units one at a time, in any order, equals coding them all at once. */
  @ParameterizedTest
  @MethodSource("accumulators")
  void accumulatorMatchesTheMatrixCoder(String which) {
    Random rnd = new Random(11);
    int k = 6;
    int rows = 3;
    int len = 5000;
    byte[] matrix = RsMatrix.decodeRows(k, 3, new int[] {1, 2, 4, 5, 6, 8}, new int[] {0, 3, 7});
    matrix[2] = 0; // a zero and a one coefficient too
    matrix[3] = 1;
    byte[][] in = randomUnits(rnd, k, len);
    byte[][] want = new byte[rows][len];
    new JavaMatrixCoder(k, rows, matrix).code(len, in, new int[k], want, new int[rows]);
    MatrixAccumulator acc = which.equals("isal") ? MatrixAccumulator.isal(k, rows, matrix)
        : MatrixAccumulator.java(k, rows, matrix);
    assertEquals(which, acc.name());
    int[] off = {0, 4, 9};
    // inputs from arrays, and between position and limit of direct, heap and read-only buffers
    // (a packet read where it lies), and all of these mixed in one sum
    for (String from : new String[] {"array", "direct", "heap", "read-only", "mixed"}) {
      byte[][] got = new byte[rows][len + 9];
      int n = 0;
      for (int j : new int[] {3, 0, 5, 1, 4, 2}) {
        String kind = from.equals("mixed")
            ? new String[] {"array", "direct", "heap", "read-only"}[n++ % 4] : from;
        if (kind.equals("array")) {
          acc.accumulate(j, in[j], 0, len, got, off);
          continue;
        }
        int pos = 7 + j;
        ByteBuffer b = kind.equals("direct") ? ByteBuffer.allocateDirect(pos + len + 3)
            : ByteBuffer.allocate(pos + len + 3);
        b.position(pos);
        b.put(in[j]);
        b.limit(pos + len).position(pos);
        ByteBuffer src = kind.equals("read-only") ? b.asReadOnlyBuffer() : b;
        acc.accumulate(j, src, got, off);
        assertEquals(pos, src.position(), "the input's position is not moved");
      }
      for (int r = 0; r < rows; r++) {
        assertArrayEquals(want[r], Arrays.copyOfRange(got[r], off[r], off[r] + len),
            from + ": row " + r);
      }
    }
    if (which.equals("isal")) { // a source outside its direct buffer is refused, nothing written
      byte[][] untouched = new byte[rows][len];
      assertThrows(IllegalArgumentException.class, () -> IsalNative.updateFromDirect0(len, k,
          rows, 0, null, ByteBuffer.allocateDirect(len), 1, untouched, new int[rows]));
      assertThrows(IllegalArgumentException.class, () -> IsalNative.updateFromDirect0(len, k,
          rows, 0, null, ByteBuffer.allocate(len), 0, untouched, new int[rows]));
      assertArrayEquals(new byte[len], untouched[0]);
    }
  }

  static Stream<String> accumulators() {
    return nativeExpected() ? Stream.of("java", "isal") : Stream.of("java");
  }

  @Test
  void badDecodeRequestsAreRefused() {
    RawErasureDecoder d = new NetecRawDecoder(new ErasureCoderOptions(3, 2), CoderBackend.JAVA,
        "t");
    byte[][] in = {new byte[8], null, null, null, new byte[8]};
    assertThrows(IllegalArgumentException.class,
        () -> d.decode(in, new int[] {1}, new byte[][] {new byte[8]}));
    assertThrows(IllegalArgumentException.class,
        () -> RsMatrix.decodeRows(3, 2, new int[] {0, 1, 5}, new int[] {2}));
    assertThrows(IllegalArgumentException.class,
        () -> RsMatrix.decodeRows(3, 2, new int[] {0, 1, 2}, new int[] {2}));
  }

  /** CodecUtil, as HDFS calls it, picks netec_native first and falls back to netec_java. */
  @Test
  void codecUtilPicksOurCoders() throws Exception {
    Configuration conf = new Configuration(false);
    ErasureCoderOptions opts = new ErasureCoderOptions(6, 3);
    String expected = nativeExpected() ? NetecCoderFactories.NETEC_NATIVE
        : NetecCoderFactories.NETEC_JAVA;
    RawErasureEncoder enc = CodecUtil.createRawEncoder(conf, "netec", opts);
    assertInstanceOf(NetecRawEncoder.class, enc);
    assertEquals(nativeExpected(), enc.preferDirectBuffer());
    long calls = CoderCounters.of(expected).encodeCalls();
    enc.encode(randomUnits(new Random(1), 6, 100), new byte[3][100]);
    assertEquals(calls + 1, CoderCounters.of(expected).encodeCalls());

    // Hadoop's own rs codec can be pointed at our ISA-L coder by one key of core-site.xml.
    Configuration.addDefaultResource("netec-rs-site.xml");
    conf.set("io.erasurecode.codec.rs.rawcoders", "rs_netec_native,rs_java");
    RawErasureEncoder rs = CodecUtil.createRawEncoder(conf, "rs", opts);
    assertEquals(nativeExpected() ? NetecRawEncoder.class : RSRawEncoder.class, rs.getClass());
  }

  // ---- helpers -------------------------------------------------------------------------------

  static byte[][] randomUnits(Random rnd, int n, int len) {
    byte[][] u = new byte[n][len];
    for (byte[] b : u) {
      rnd.nextBytes(b);
    }
    return u;
  }

  static byte[][] garbage(Random rnd, int n, int len) {
    return randomUnits(rnd, n, len);
  }

  /** k random data units and m parity units from Hadoop's own RS encoder. */
  static byte[][] stripe(Random rnd, int k, int m, int len) throws Exception {
    byte[][] data = randomUnits(rnd, k, len);
    byte[][] parity = new byte[m][len];
    new RSRawEncoder(new ErasureCoderOptions(k, m)).encode(data, parity);
    byte[][] all = Arrays.copyOf(data, k + m);
    System.arraycopy(parity, 0, all, k, m);
    return all;
  }

  static byte[][] withNulls(byte[][] units, int[] erased) {
    byte[][] in = units.clone();
    for (int e : erased) {
      in[e] = null;
    }
    return in;
  }

  /** Buffers holding the units at position {@code pad}, with slack after the limit. */
  static ByteBuffer[] toBuffers(byte[][] units, boolean direct, int pad) {
    ByteBuffer[] b = new ByteBuffer[units.length];
    for (int i = 0; i < units.length; i++) {
      int cap = units[i].length + pad + 3;
      ByteBuffer buf;
      if (direct) {
        buf = ByteBuffer.allocateDirect(cap);
      } else {
        // a slice, so arrayOffset() is non-zero too
        buf = ByteBuffer.wrap(new byte[cap + 2], 2, cap).slice();
      }
      buf.position(pad);
      buf.put(units[i]);
      buf.position(pad);
      buf.limit(pad + units[i].length);
      b[i] = buf;
    }
    return b;
  }

  static byte[] bytes(ByteBuffer b) {
    byte[] out = new byte[b.remaining()];
    b.duplicate().get(out);
    return out;
  }

  static byte[][] fromBuffers(ByteBuffer[] bufs) {
    return Arrays.stream(bufs).map(NetecCoderTest::bytes).toArray(byte[][]::new);
  }

  static void nullSomeBeyondFirstK(ByteBuffer[] inputs, int k, Random rnd) {
    int seen = 0;
    for (int i = 0; i < inputs.length; i++) {
      if (inputs[i] != null && ++seen > k && rnd.nextBoolean()) {
        inputs[i] = null;
      }
    }
  }

  static int[] shuffled(int[] a, Random rnd) {
    List<Integer> l = new ArrayList<>();
    for (int x : a) {
      l.add(x);
    }
    Collections.shuffle(l, rnd);
    return l.stream().mapToInt(Integer::intValue).toArray();
  }

  /** All subsets of {0..n-1} with 1..max elements. */
  static List<int[]> patterns(int n, int max) {
    List<int[]> out = new ArrayList<>();
    for (int mask = 1; mask < (1 << n); mask++) {
      if (Integer.bitCount(mask) <= max) {
        int[] p = new int[Integer.bitCount(mask)];
        int c = 0;
        for (int i = 0; i < n; i++) {
          if ((mask & (1 << i)) != 0) {
            p[c++] = i;
          }
        }
        out.add(p);
      }
    }
    return out;
  }

  @Test
  void multiplyByAConstantInPlaceOverHeapAndDirectBuffers() {
    byte[] x = new byte[1000];
    new Random(7).nextBytes(x);
    for (int c : new int[] {0, 1, 2, 3, 200, 255}) {
      for (ByteBuffer b : new ByteBuffer[] {ByteBuffer.wrap(x.clone()),
          ByteBuffer.allocateDirect(x.length).put(x.clone()).clear()}) {
        b.position(10).limit(990); // only between position and limit, which stay put
        GaloisField.multiply(c, b);
        assertEquals(10, b.position());
        assertEquals(990, b.limit());
        b.clear();
        for (int i = 0; i < x.length; i++) {
          int want = i < 10 || i >= 990 ? x[i] & 0xff : GaloisField.mul(c, x[i]);
          assertEquals(want, b.get(i) & 0xff, "c=" + c + " byte " + i);
        }
      }
    }
  }
}
