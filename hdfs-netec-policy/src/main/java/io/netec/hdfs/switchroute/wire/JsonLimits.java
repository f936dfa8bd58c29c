package io.netec.hdfs.switchroute.wire;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;

/**
 * Peer JSON is bounded before it is parsed (size and nesting, so a deep document cannot
 * overflow a stack on an event loop) and its numbers are checked in the type they are used in
 * (a long range-checked and then cast to int would let 4294967360 through as 64).
 */
public final class JsonLimits {
  /** Deepest nesting any of our documents needs is 3 (setup: object, array, array). */
  public static final int MAX_DEPTH = 8;

  private JsonLimits() {
  }

  /** Parses a JSON document of at most {@code maxBytes} bytes and {@link #MAX_DEPTH} levels. */
  public static JsonNode parse(byte[] utf8, int maxBytes) throws ProtocolException {
    if (utf8.length > maxBytes) {
      throw new ProtocolException("JSON of " + utf8.length + " bytes, more than " + maxBytes);
    }
    int depth = 0;
    boolean inString = false;
    for (int i = 0; i < utf8.length; i++) {
      byte b = utf8[i];
      if (inString) {
        if (b == '\\') {
          i++;
        } else if (b == '"') {
          inString = false;
        }
      } else if (b == '"') {
        inString = true;
      } else if (b == '{' || b == '[') {
        if (++depth > MAX_DEPTH) {
          throw new ProtocolException("JSON nested deeper than " + MAX_DEPTH + " levels");
        }
      } else if (b == '}' || b == ']') {
        depth--;
      }
    }
    try {
      return SetupRequest.JSON.readTree(utf8);
    } catch (IOException e) {
      throw new ProtocolException("not JSON: " + e.getMessage());
    }
  }

  /** An integer field in [min, max], checked as a long before it becomes an int. */
  public static int intIn(JsonNode o, String field, int min, int max) throws ProtocolException {
    return (int) longIn(o, field, min, max);
  }

  /** The one JSON mapper of the wire classes. */
  public static ObjectMapper mapper() {
    return SetupRequest.JSON;
  }

  /** A string field. */
  public static String text(JsonNode o, String field) throws ProtocolException {
    JsonNode v = o == null ? null : o.get(field);
    if (v == null || !v.isTextual()) {
      throw new ProtocolException(field + ": missing or not a string");
    }
    return v.textValue();
  }

  /** An integer field in [min, max], as a long. */
  public static long longIn(JsonNode o, String field, long min, long max)
      throws ProtocolException {
    JsonNode v = o == null ? null : o.get(field);
    if (v == null || !v.isIntegralNumber() || !v.canConvertToLong()) {
      throw new ProtocolException(field + ": missing or not an integer");
    }
    long x = v.longValue();
    if (x < min || x > max) {
      throw new ProtocolException(field + ": " + x + " not in " + min + ".." + max);
    }
    return x;
  }
}
