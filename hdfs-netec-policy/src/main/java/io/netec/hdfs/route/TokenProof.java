package io.netec.hdfs.route;

import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.Map;
import java.util.function.LongSupplier;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.apache.hadoop.hdfs.protocol.ExtendedBlock;
import org.apache.hadoop.hdfs.security.token.block.BlockTokenIdentifier;
import org.apache.hadoop.security.token.Token;

/**
 * What travels instead of a block token: proof that the sender holds the token's password,
 * never the password itself. A READ token is the NameNode's identifier plus a password that
 * only the NameNode and the DataNodes can derive from it (an HMAC under their shared block
 * key). Hadoop's own SASL handshake proves the password without sending it; our routes used
 * to send the whole token, in cleartext, to the switch, its agents and the INEC participants.
 *
 * <p>A proof is {@code netec-proof-1.<identifier>.<issued ms>.<nonce>.<mac>} (base64url parts):
 * HMAC-SHA256 under the token's password over the block, the issue time, a fresh random nonce
 * and the identifier. A DataNode derives the password from the identifier with its block keys
 * ({@link Verifier}) and checks that the proof was issued within {@value
 * Verifier#MAX_SKEW_MS} ms of its clock, the MAC, the identifier as Hadoop checks a token
 * (block, expiry, modes), and only then that its nonce was never seen: a proof is good once,
 * for one block, for a few minutes, and reveals nothing that forges another.
 *
 * <p>Each place that puts a token on the wire makes a proof of its own (a switch setup, an
 * INEC join, a proof request), so no proof is used twice. Flat functions and one small class
 * with its replay memory; no I/O.
 */
public final class TokenProof {
  static final String PREFIX = "netec-proof-1.";
  private static final SecureRandom RANDOM = new SecureRandom();
  private static final Base64.Encoder B64 = Base64.getUrlEncoder().withoutPadding();
  private static final Base64.Decoder UNB64 = Base64.getUrlDecoder();

  private TokenProof() {}

  /**
   * A proof of {@code token} (encodeToUrlString of a READ token of {@code block}) made now,
   * or "" for "" (tokens off).
   */
  public static String prove(String token, ExtendedBlock block) throws IOException {
    return prove(token, block, System.currentTimeMillis(), nonce());
  }

  static String prove(String token, ExtendedBlock block, long issuedMs, byte[] nonce)
      throws IOException {
    if (token == null || token.isEmpty()) {
      return "";
    }
    Token<BlockTokenIdentifier> t = new Token<>();
    try {
      t.decodeFromUrlString(token);
    } catch (IOException | RuntimeException e) { // Hadoop's decoding throws what it meets
      throw new IOException("unreadable block token for " + block);
    }
    String id = B64.encodeToString(t.getIdentifier());
    String n = B64.encodeToString(nonce);
    return PREFIX + id + "." + issuedMs + "." + n + "."
        + B64.encodeToString(mac(t.getPassword(), block, Long.toString(issuedMs), n, id));
  }

  private static byte[] nonce() {
    byte[] n = new byte[16];
    RANDOM.nextBytes(n);
    return n;
  }

  /** The MAC over the proof's texts as sent (so that no other text of a part passes). */
  private static byte[] mac(byte[] password, ExtendedBlock block, String issuedMs, String nonce,
      String identifier) {
    String message = "netec block token proof 1\n" + block.getBlockPoolId() + "\n"
        + block.getBlockId() + "\n" + issuedMs + "\n" + nonce + "\n" + identifier;
    try {
      Mac m = Mac.getInstance("HmacSHA256");
      m.init(new SecretKeySpec(password.length == 0 ? new byte[1] : password, "HmacSHA256"));
      return m.doFinal(message.getBytes(StandardCharsets.UTF_8));
    } catch (GeneralSecurityException e) { // HmacSHA256 is in every JRE
      throw new IllegalStateException(e);
    }
  }

  /** An identifier's bytes at most (Hadoop's are about 100-300). */
  static final int MAX_IDENTIFIER = 2048;

  /**
   * Whether Hadoop's reading of a legacy (Writable) block-token identifier, which allocates
   * each string, array and handshake by the length the bytes claim before reading them, would
   * allocate no more than the bytes hold: five bytes claiming a 2 GiB string would else take a
   * DataNode's heap (found by fuzzing). The layout is BlockTokenIdentifier.readFieldsLegacy's
   * (Hadoop 3.4 and 3.5): expiry, key id, user, pool, block id, access modes; then, each
   * optional to the end, storage types, storage ids, handshake secret. Protobuf identifiers
   * (first byte positive) are bounded by protobuf's own reader.
   */
  static final class LegacyIdentifier {
    private final byte[] b;
    private int at;

    /** The bytes ended where Hadoop's reading would meet an EOF. */
    private static final class End extends Exception {
      End() {
        super(null, null, false, false);
      }
    }

    private LegacyIdentifier(byte[] b) {
      this.b = b;
    }

    static boolean boundsHold(byte[] b) {
      if (b.length == 0 || b[0] > 0) {
        return true; // empty: refused by Hadoop's reading; positive: protobuf
      }
      LegacyIdentifier r = new LegacyIdentifier(b);
      try {
        r.vlong(); // expiry
        r.vlong(); // key id
        r.string(); // user
        r.string(); // block pool
        r.vlong(); // block id
        long modes = r.vlong();
        if (modes < 0 || modes > BlockTokenIdentifier.AccessMode.values().length) {
          return false;
        }
        for (long i = 0; i < modes; i++) {
          r.text();
        }
      } catch (End | IllegalArgumentException e) {
        return false; // Hadoop's reading fails here too, or would allocate past the bytes
      }
      try { // the optional tail, which may end anywhere (Hadoop stops at the EOF)
        long types = r.count();
        for (long i = 0; i < types; i++) {
          r.text();
        }
        long ids = r.count();
        for (long i = 0; i < ids; i++) {
          r.string();
        }
        r.count(); // the handshake secret's length: its bytes are not read here
        return true;
      } catch (End e) {
        return true;
      } catch (IllegalArgumentException e) {
        return false;
      }
    }

    /** WritableUtils.readVLong, bounds-checked. */
    private long vlong() throws End {
      if (at >= b.length) {
        throw new End();
      }
      byte first = b[at++];
      if (first >= -112) {
        return first;
      }
      int size = first < -120 ? -119 - first : -111 - first;
      long v = 0;
      for (int i = 0; i < size - 1; i++) {
        if (at >= b.length) {
          throw new End();
        }
        v = (v << 8) | (b[at++] & 0xff);
      }
      return first < -120 ? ~v : v;
    }

    /** A count of things each at least a byte long (or bytes), that the bytes can hold. */
    private long count() throws End {
      long n = vlong();
      if (n < 0 || n > b.length - at) {
        throw new IllegalArgumentException("count");
      }
      return n;
    }

    /** Text.readString (an enum's name): a vint length, that the bytes hold. */
    private void text() throws End {
      skip(vlong());
    }

    /** WritableUtils.readString: a 4-byte length (-1: null), that the bytes hold. */
    private void string() throws End {
      long n = 0;
      for (int i = 0; i < 4; i++) {
        if (at >= b.length) {
          throw new End();
        }
        n = (n << 8) | (b[at++] & 0xff);
      }
      n = (int) n;
      if (n != -1) {
        skip(n);
      }
    }

    private void skip(long n) throws End {
      if (n < 0 || n > b.length - at) {
        throw new IllegalArgumentException("length");
      }
      at += (int) n;
    }
  }

  /** A DataNode's block keys: the password of an identifier, and Hadoop's check of it. */
  public interface Keys {
    /** The password the identifier's token carries (its key known and unexpired). */
    byte[] password(BlockTokenIdentifier id) throws IOException;

    /** Hadoop's check of a token: READ access to {@code block}, unexpired, this pool. */
    void checkRead(BlockTokenIdentifier id, ExtendedBlock block) throws IOException;
  }

  /**
   * Checks proofs on a DataNode, remembering the nonces of those accepted until their proofs
   * are too old to pass again ({@value #MAX_SKEW_MS} ms past their issue time). Thread-safe.
   */
  public static final class Verifier {
    /** How far a proof's issue time may be from this clock, either way (clocks drift). */
    public static final long MAX_SKEW_MS = 300_000;
    /** Nonces remembered at most (about 100 bytes each): 437 proofs a second for 5 minutes. */
    static final int MAX_REMEMBERED = 1 << 17;
    /** Of which one token user may hold at most this many (one user cannot lock out others). */
    static final int MAX_PER_USER = MAX_REMEMBERED / 2;
    private final LongSupplier clockMs;
    /** Nonce -> the accepted proof's user and when it can no longer pass. */
    private final Map<String, Remembered> seen = new java.util.HashMap<>();
    private final java.util.PriorityQueue<Remembered> byExpiry =
        new java.util.PriorityQueue<>(java.util.Comparator.comparingLong(r -> r.forgetAt));
    private final Map<String, Integer> perUser = new java.util.HashMap<>();

    private static final class Remembered {
      final String nonce;
      final String user;
      final long forgetAt;

      Remembered(String nonce, String user, long forgetAt) {
        this.nonce = nonce;
        this.user = user;
        this.forgetAt = forgetAt;
      }
    }

    public Verifier() {
      this(System::currentTimeMillis);
    }

    Verifier(LongSupplier clockMs) {
      this.clockMs = clockMs;
    }

    /**
     * The identifier of a good proof of a token allowing to read {@code block} (checked with
     * {@code keys} as Hadoop checks a token), or an IOException saying why it is refused.
     */
    public BlockTokenIdentifier verify(String proof, ExtendedBlock block, Keys keys)
        throws IOException {
      if (proof == null || proof.isEmpty()) {
        throw new IOException("no block token proof for " + block);
      }
      if (!proof.startsWith(PREFIX)) {
        throw new IOException("a block token for " + block + " came with its password, not "
            + "a proof of it (a peer of an older NetEC-HDFS?): refused, passwords stay home");
      }
      String[] p = proof.substring(PREFIX.length()).split("\\.", -1);
      if (p.length != 4) {
        throw new IOException("malformed block token proof for " + block);
      }
      BlockTokenIdentifier id = new BlockTokenIdentifier();
      long issued;
      try {
        byte[] idBytes = UNB64.decode(p[0]);
        if (idBytes.length > MAX_IDENTIFIER || !LegacyIdentifier.boundsHold(idBytes)) {
          throw new IllegalArgumentException("identifier");
        }
        id.readFields(new DataInputStream(new ByteArrayInputStream(idBytes)));
        if (!p[1].matches("[0-9]{1,18}")) { // one text per time: no sign, no more digits
          throw new IllegalArgumentException("time");
        }
        issued = Long.parseLong(p[1]);
        if (UNB64.decode(p[2]).length != 16) {
          throw new IllegalArgumentException("nonce");
        }
      } catch (IOException | RuntimeException e) {
        throw new IOException("malformed block token proof for " + block);
      }
      long now = clockMs.getAsLong();
      if (Math.abs(now - issued) > MAX_SKEW_MS) {
        throw new IOException("block token proof for " + block + " issued " + (now - issued)
            + " ms from this DataNode's clock (at most " + MAX_SKEW_MS + " either way)");
      }
      byte[] password;
      try {
        password = keys.password(id);
      } catch (RuntimeException e) { // Hadoop's managers throw these for unknown pools
        throw new IOException("block token proof for " + block + ": no key for its identifier");
      }
      // compared as text: base64's unused low bits would else let two texts pass for one MAC
      byte[] expected = B64.encodeToString(TokenProof.mac(password, block, p[1], p[2], p[0]))
          .getBytes(StandardCharsets.US_ASCII);
      if (!MessageDigest.isEqual(p[3].getBytes(StandardCharsets.US_ASCII), expected)) {
        throw new IOException("block token proof for " + block + " does not match its token");
      }
      try { // the token's own terms before its nonce is remembered: no other token fills it
        keys.checkRead(id, block);
      } catch (RuntimeException e) {
        throw new IOException("block token proof for " + block + ": its token does not allow "
            + "reading it");
      }
      remember(p[2], String.valueOf(id.getUserId()), issued + MAX_SKEW_MS, now, block);
      return id;
    }

    /** Remembers an accepted proof's nonce, or refuses it: seen before, or no room. */
    private synchronized void remember(String nonce, String user, long forgetAt, long now,
        ExtendedBlock block) throws IOException {
      while (!byExpiry.isEmpty() && byExpiry.peek().forgetAt < now) {
        Remembered r = byExpiry.poll();
        seen.remove(r.nonce);
        perUser.computeIfPresent(r.user, (u, n) -> n > 1 ? n - 1 : null);
      }
      if (seen.containsKey(nonce)) {
        throw new IOException("block token proof for " + block + " used before: a replay");
      }
      if (seen.size() >= MAX_REMEMBERED || perUser.getOrDefault(user, 0) >= MAX_PER_USER) {
        throw new IOException("block token proof for " + block + " refused: too many proofs "
            + "accepted in the last " + MAX_SKEW_MS / 1000 + " s (" + seen.size() + ", of "
            + "which " + perUser.getOrDefault(user, 0) + " of " + user + ")");
      }
      Remembered r = new Remembered(nonce, user, forgetAt);
      seen.put(nonce, r);
      byExpiry.add(r);
      perUser.merge(user, 1, Integer::sum);
    }
  }
}
