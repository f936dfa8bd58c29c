package io.netec.hdfs.route;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;

/**
 * Log lines that a peer can cause, limited per cause: the first line of a cause in each period
 * is written, the rest are counted and reported in one line when the next one is written
 * after the period ("... and 30999 more like it in the last 10 s"). Causes are fixed strings
 * chosen by our code, never peer text; peer text in a message goes through {@link #oneLine}.
 */
public final class LogLimiter {
  private final Logger log;
  private final long periodNanos;
  private final Map<String, Window> windows = new ConcurrentHashMap<>();

  private static final class Window {
    long start;
    long suppressed;
  }

  public LogLimiter(Logger log, long periodMs) {
    this.log = log;
    this.periodNanos = periodMs * 1_000_000L;
  }

  public void info(String cause, String format, Object... args) {
    String line = admit(cause, format);
    if (line != null) {
      log.info(line, args);
    }
  }

  public void warn(String cause, String format, Object... args) {
    String line = admit(cause, format);
    if (line != null) {
      log.warn(line, args);
    }
  }

  /** The format to log now (with the count of lines held back), or null to hold it back. */
  private String admit(String cause, String format) {
    Window w = windows.computeIfAbsent(cause, c -> {
      Window n = new Window();
      n.start = System.nanoTime() - periodNanos - 1;
      return n;
    });
    long suppressed;
    synchronized (w) {
      long now = System.nanoTime();
      if (now - w.start <= periodNanos) {
        w.suppressed++;
        return null;
      }
      suppressed = w.suppressed;
      w.suppressed = 0;
      w.start = now;
    }
    return suppressed == 0 ? format : format + " (and " + suppressed + " more like it held back"
        + " in the last " + Math.max(1, periodNanos / 1_000_000_000L) + " s)";
  }

  /** Peer-supplied text for a log line: control characters escaped, at most 200 chars. */
  public static String oneLine(Object text) {
    return escape(String.valueOf(text), 200);
  }

  /** A value as it may appear in a message or log line: quoted, on one line, cut. */
  public static String quote(String v) {
    return v == null ? "null" : "'" + escape(v, 120) + "'";
  }

  /**
   * Text for one line of a message or log: control characters escaped as \\xNN, at most
   * {@code max} characters (then "...").
   */
  public static String escape(String v, int max) {
    StringBuilder b = new StringBuilder(Math.min(v.length(), max) + 3);
    for (int i = 0; i < v.length() && i < max; i++) {
      char c = v.charAt(i);
      if (isControl(c)) {
        b.append(String.format("\\x%02x", (int) c));
      } else {
        b.append(c);
      }
    }
    return v.length() > max ? b.append("...").toString() : b.toString();
  }

  /** A control character: escaped in messages and logs, refused in peers' text fields. */
  public static boolean isControl(char c) {
    return c < ' ' || c == 0x7f;
  }
}
