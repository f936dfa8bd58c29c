package io.netec.hdfs.switchroute.wire;

/** Lower-case hex on the wire: proof keys and fingerprints, return cookies, task secrets. */
public final class Hex {
  private static final char[] DIGITS = "0123456789abcdef".toCharArray();

  private Hex() {
  }

  public static String encode(byte[] b) {
    char[] c = new char[2 * b.length];
    for (int i = 0; i < b.length; i++) {
      c[2 * i] = DIGITS[(b[i] >> 4) & 0xf];
      c[2 * i + 1] = DIGITS[b[i] & 0xf];
    }
    return new String(c);
  }

  /** Exactly {@code bytes} bytes as 2 * bytes lower-case hex digits. */
  public static byte[] decode(String s, int bytes, String field) throws ProtocolException {
    if (s.length() != 2 * bytes || !s.matches("[0-9a-f]*")) {
      throw new ProtocolException(field + ": not " + 2 * bytes + " lower-case hex digits");
    }
    byte[] b = new byte[bytes];
    for (int i = 0; i < bytes; i++) {
      b[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
    }
    return b;
  }
}
