package io.netec.hdfs.switchroute;

import io.netec.hdfs.switchroute.wire.Hex;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Arrays;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Datagram mode's return-routability cookies (docs/protocol.md "Datagram mode"): a reader's
 * HELLO binds its task to its source address only if it echoes the cookie the switch sent to
 * that address, so a forged source address binds nothing and draws one answer no larger than
 * the forgery. A cookie is an HMAC under this switch's own random key (never sent) of the task,
 * its secret and the address: the switch keeps no state per address. Plain and thread-safe.
 */
final class ReturnCookies {
  private static final SecureRandom RANDOM = new SecureRandom();
  private final SecretKeySpec key;

  ReturnCookies() {
    byte[] k = new byte[32];
    RANDOM.nextBytes(k);
    key = new SecretKeySpec(k, "HmacSHA256");
  }

  /** The cookie of task {@code taskId} in slot array {@code array} for source {@code from}. */
  String cookie(int taskId, int array, String secret, InetSocketAddress from) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(key);
      mac.update(ByteBuffer.allocate(8).putInt(taskId).putInt(array).array());
      mac.update(secret.getBytes(StandardCharsets.US_ASCII));
      mac.update(from.getAddress().getAddress());
      mac.update(new byte[] {(byte) (from.getPort() >> 8), (byte) from.getPort()});
      return Hex.encode(Arrays.copyOf(mac.doFinal(), 16));
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HmacSHA256 is part of every JDK", e);
    }
  }

  /** Whether {@code echoed} is {@code cookie} (compared in constant time). */
  static boolean same(String cookie, String echoed) {
    return MessageDigest.isEqual(cookie.getBytes(StandardCharsets.US_ASCII),
        echoed.getBytes(StandardCharsets.US_ASCII));
  }
}
