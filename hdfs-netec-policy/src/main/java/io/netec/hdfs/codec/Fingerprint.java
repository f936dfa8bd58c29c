package io.netec.hdfs.codec;

import java.nio.ByteBuffer;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import javax.crypto.Cipher;
import javax.crypto.spec.SecretKeySpec;

/**
 * A keyed fingerprint of a range of bytes that is linear over GF(2^8), the field of the RS code:
 * for bytes x and y of one range and a coefficient c, {@code F(c·x ⊕ y) = c·F(x) ⊕ F(y)}. So
 * the fingerprint of a rebuilt unit must equal the decode coefficients' combination of the
 * survivors' fingerprints ({@link #combine}), and a verifier that holds the survivors'
 * fingerprints checks a rebuilt range without reading the survivors' bytes.
 *
 * <p>The function, for a secret 16-byte key K and a range of n bytes (zero past its end):
 * <ol>
 * <li>The range is cut into chunks of {@value #CHUNK} bytes, x_0, x_1, ... For each of
 * {@value #LANES} lanes r, Y_r = Σ_j g(r, j) · x_j, a {@value #CHUNK}-byte vector, where the
 * coefficients g are bytes of AES-128 under K in counter mode (domain 1).</li>
 * <li>For each of {@value #BYTES} output bytes s, Z_s = Σ_{r,p} h(s, r, p) · Y_r[p], with h
 * from AES-128 under K in counter mode (domain 2). The fingerprint is Z.</li>
 * </ol>
 * Both steps are GF(2^8)-linear, so the whole is. For any non-zero change e of the range chosen
 * without knowing K (by a switch, a relay, a buggy route), F(e) = 0 only if every lane misses
 * (each Y_r(e) is a non-zero linear form in independent uniform coefficients: 2^-8 a lane, so
 * 2^-40 for five) or, with some Y(e) non-zero, every output byte misses (2^-64): a change goes
 * unnoticed with probability at most 2^-40 + 2^-64, below 2^-39 (AES taken as a pseudo-random
 * function). Step 1 costs five GF multiply-adds a byte (ISA-L's vectorized
 * {@code ec_encode_data_update} where the native library is loaded); step 2 a fixed cost a
 * fingerprint: 160 KiB of AES for h and, grouping the lanes' bytes by value, one XOR a lane
 * byte and at most 255 multiplications an output byte (about 0.35 ms warm, where one
 * multiplication a coefficient of h took 0.8 ms: a small range's proof pays it in full).
 *
 * <p>Bytes may be fed in any order and pieces ({@link #update}); each byte of the range exactly
 * once (zeros need not be fed). Not thread-safe.
 */
public final class Fingerprint {
  /** Bytes of a chunk: every chunk of the range has its own coefficient per lane. */
  public static final int CHUNK = 4096;
  /** Lanes of step 1. */
  public static final int LANES = 5;
  /** Bytes of a fingerprint. */
  public static final int BYTES = 8;
  public static final int KEY_BYTES = 16;
  /** Chunks that share one coefficient matrix (and one ISA-L table setup). */
  private static final int BATCH = 16;
  private static final int BLOCK = 16;

  private final Cipher aes;
  private final boolean isal;
  /** Y: LANES accumulators of a chunk each (Java), or the same in one direct buffer (ISA-L). */
  private final byte[][] lanes;
  private final ByteBuffer directLanes;
  /** The batch whose coefficients are loaded, its LANES x BATCH matrix and ISA-L tables. */
  private long batch = -1;
  private final byte[] matrix = new byte[LANES * BATCH];
  private final ByteBuffer tables;
  private byte[] scratch;
  private boolean finished;

  /** A fingerprint under {@code key} ({@value #KEY_BYTES} bytes), ISA-L where it is loaded. */
  public Fingerprint(byte[] key) {
    this(key, IsalNative.isAvailable());
  }

  /** @param isal ISA-L for step 1 (must be available), else the Java table method */
  public Fingerprint(byte[] key, boolean isal) {
    if (key == null || key.length != KEY_BYTES) {
      throw new IllegalArgumentException("a fingerprint key has " + KEY_BYTES + " bytes");
    }
    if (isal) {
      IsalNative.checkAvailable();
    }
    this.isal = isal;
    this.tables = isal ? ByteBuffer.allocateDirect(32 * LANES * BATCH) : null;
    this.lanes = isal ? null : new byte[LANES][CHUNK];
    this.directLanes = isal ? ByteBuffer.allocateDirect(LANES * CHUNK) : null;
    try {
      aes = Cipher.getInstance("AES/ECB/NoPadding");
      aes.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(key, "AES"));
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("this JVM has no AES: " + e, e);
    }
  }

  /** "isal" or "java": how step 1 runs. */
  public String coder() {
    return isal ? "isal" : "java";
  }

  /**
   * Adds the buffer's remaining bytes, which are the range's bytes from {@code position} on
   * (0 is the range's first byte); the buffer's position is not moved.
   */
  public void update(long position, ByteBuffer data) {
    if (finished) {
      throw new IllegalStateException("fingerprint already finished");
    }
    if (position < 0) {
      throw new IllegalArgumentException("position " + position);
    }
    ByteBuffer in = data.duplicate();
    while (in.hasRemaining()) {
      long chunk = position / CHUNK;
      int at = (int) (position % CHUNK);
      int n;
      if (isal && at == 0 && in.remaining() >= CHUNK) {
        // whole chunks of one batch in one native call
        int col = (int) (chunk % BATCH);
        int chunks = Math.min(in.remaining() / CHUNK, BATCH - col);
        n = chunks * CHUNK;
        addChunks(chunk, chunks, in);
      } else {
        n = Math.min(in.remaining(), CHUNK - at);
        ByteBuffer piece = in.slice();
        piece.limit(n);
        addToLanes(chunk, at, piece);
      }
      in.position(in.position() + n);
      position += n;
    }
  }

  /** As {@link #update(long, ByteBuffer)} for {@code b[off, off + len)}. */
  public void update(long position, byte[] b, int off, int len) {
    update(position, ByteBuffer.wrap(b, off, len));
  }

  /** Y_r ^= g(r, chunk + c) · chunk c of {@code in} (from its position), for c < chunks. */
  private void addChunks(long chunk, int chunks, ByteBuffer in) {
    long b = chunk / BATCH;
    if (b != batch) {
      loadBatch(b);
    }
    int col = (int) (chunk % BATCH);
    if (in.isDirect()) {
      IsalNative.lanesUpdate0(CHUNK, chunks, BATCH, LANES, col, tables, null, in,
          in.position(), directLanes, CHUNK, 0);
    } else if (in.hasArray()) {
      IsalNative.lanesUpdate0(CHUNK, chunks, BATCH, LANES, col, tables, in.array(), null,
          in.arrayOffset() + in.position(), directLanes, CHUNK, 0);
    } else {
      for (int c = 0; c < chunks; c++) {
        ByteBuffer piece = in.duplicate();
        piece.position(in.position() + c * CHUNK).limit(in.position() + (c + 1) * CHUNK);
        addToLanes(chunk + c, 0, piece);
      }
    }
  }

  /** Y_r[at ..] ^= g(r, chunk) · piece for every lane. */
  private void addToLanes(long chunk, int at, ByteBuffer piece) {
    long b = chunk / BATCH;
    int col = (int) (chunk % BATCH);
    if (b != batch) {
      loadBatch(b);
    }
    if (isal) {
      if (piece.isDirect()) {
        IsalNative.lanesUpdate0(piece.remaining(), 1, BATCH, LANES, col, tables, null, piece,
            piece.position(), directLanes, CHUNK, at);
      } else {
        byte[] src = piece.hasArray() ? piece.array() : copy(piece);
        int off = piece.hasArray() ? piece.arrayOffset() + piece.position() : 0;
        IsalNative.lanesUpdate0(piece.remaining(), 1, BATCH, LANES, col, tables, src, null, off,
            directLanes, CHUNK, at);
      }
      return;
    }
    byte[] src;
    int off;
    if (piece.hasArray()) {
      src = piece.array();
      off = piece.arrayOffset() + piece.position();
    } else {
      src = copy(piece);
      off = 0;
    }
    int len = piece.remaining();
    for (int r = 0; r < LANES; r++) {
      int g = matrix[r * BATCH + col];
      if (g == 0) {
        continue;
      }
      byte[] t = GaloisField.mulTable(g);
      byte[] y = lanes[r];
      for (int x = 0; x < len; x++) {
        y[at + x] ^= t[src[off + x] & 0xff];
      }
    }
  }

  private byte[] copy(ByteBuffer piece) {
    if (scratch == null) {
      scratch = new byte[CHUNK];
    }
    byte[] b = piece.remaining() == CHUNK ? scratch : new byte[piece.remaining()];
    piece.duplicate().get(b);
    return b;
  }

  /** The step-1 coefficients of chunks [b * BATCH, (b + 1) * BATCH): LANES x BATCH bytes. */
  private void loadBatch(long b) {
    byte[] g = stream(1, b * (LANES * BATCH / BLOCK), LANES * BATCH);
    System.arraycopy(g, 0, matrix, 0, matrix.length);
    if (isal) {
      IsalNative.initTables0(BATCH, LANES, matrix, tables);
    }
    batch = b;
  }

  /** {@code n} bytes (a multiple of 16) of AES-128-CTR under the key, in a domain. */
  private byte[] stream(int domain, long firstBlock, int n) {
    byte[] counters = new byte[n];
    for (int i = 0; i < n / BLOCK; i++) {
      counters[i * BLOCK] = (byte) domain;
      long c = firstBlock + i;
      for (int x = 0; x < 8; x++) {
        counters[i * BLOCK + 8 + x] = (byte) (c >>> (56 - 8 * x));
      }
    }
    try {
      return aes.doFinal(counters);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("AES failed: " + e, e);
    }
  }

  /** Step 2: the {@value #BYTES}-byte fingerprint of everything added. Ends this object. */
  public byte[] finish() {
    if (finished) {
      throw new IllegalStateException("fingerprint already finished");
    }
    finished = true;
    int n = LANES * CHUNK;
    byte[] h = stream(2, 0, BYTES * n);
    // Z_s = Σ_q h(s, q) · Y[q] over the lanes' n bytes q, grouped by the value v = Y[q]:
    // Z_s = Σ_v v · (⊕ of h(s, q) over the q where Y[q] = v). The eight h(s, q) of a position
    // travel in one long, so the n positions cost one XOR each and the multiplications are
    // at most 255 a byte of Z, where multiplying each h by its Y cost 8 n table look-ups (a
    // fingerprint's fixed cost, which a small range's proof pays in full).
    long[] hq = new long[n];
    for (int s = 0; s < BYTES; s++) {
      int off = s * n;
      int shift = 8 * s;
      for (int q = 0; q < n; q++) {
        hq[q] |= (h[off + q] & 0xffL) << shift;
      }
    }
    long[] byValue = new long[256];
    byte[] y = new byte[CHUNK];
    for (int r = 0; r < LANES; r++) {
      if (lanes != null) {
        y = lanes[r];
      } else {
        directLanes.duplicate().position(r * CHUNK).limit((r + 1) * CHUNK).slice().get(y);
      }
      int base = r * CHUNK;
      for (int p = 0; p < CHUNK; p++) {
        byValue[y[p] & 0xff] ^= hq[base + p];
      }
    }
    byte[] z = new byte[BYTES];
    for (int v = 1; v < 256; v++) {
      long sum = byValue[v];
      if (sum == 0) {
        continue;
      }
      byte[] t = GaloisField.mulTable(v);
      for (int s = 0; s < BYTES; s++) {
        z[s] ^= t[(int) (sum >>> (8 * s)) & 0xff];
      }
    }
    return z;
  }

  /** The fingerprint of {@code b[off, off + len)} as a range of its own. */
  public static byte[] of(byte[] key, byte[] b, int off, int len) {
    Fingerprint f = new Fingerprint(key);
    f.update(0, b, off, len);
    return f.finish();
  }

  /**
   * Σ_i c_i · fingerprints_i: by linearity, the fingerprint of the range Σ_i c_i · x_i (the
   * rebuilt unit, for a decode row c over the survivors x_i).
   */
  public static byte[] combine(byte[] coefficients, byte[][] fingerprints) {
    if (coefficients.length != fingerprints.length) {
      throw new IllegalArgumentException(coefficients.length + " coefficients for "
          + fingerprints.length + " fingerprints");
    }
    byte[] z = new byte[BYTES];
    for (int i = 0; i < coefficients.length; i++) {
      if (fingerprints[i].length != BYTES) {
        throw new IllegalArgumentException("a fingerprint has " + BYTES + " bytes, not "
            + fingerprints[i].length);
      }
      byte[] t = GaloisField.mulTable(coefficients[i]);
      for (int s = 0; s < BYTES; s++) {
        z[s] ^= t[fingerprints[i][s] & 0xff];
      }
    }
    return z;
  }

  /** Constant-time equality of two fingerprints. */
  public static boolean matches(byte[] a, byte[] b) {
    return MessageDigest.isEqual(a, b);
  }
}
