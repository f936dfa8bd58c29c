package io.netec.hdfs.codec;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;
import java.util.Locale;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The JNI library {@code libnetec.so} and, through it, ISA-L (dlopen'ed, never linked).
 *
 * <p>Load order: {@code java.library.path}, else the copy inside our jar, else nothing, in which
 * case {@link #isAvailable()} is false, {@link #unavailableReason()} says why, one log line says
 * so, and callers use the Java coder. {@code -Dnetec.native.disable=true} forces it off.
 */
public final class IsalNative {
  public static final String DISABLE_PROPERTY = "netec.native.disable";
  static final String LIBRARY = "netec";

  private static final Logger LOG = LoggerFactory.getLogger(IsalNative.class);
  private static final String REASON;
  private static final String LIBRARY_REASON;
  private static final String ISAL_PATH;

  static {
    String reason;
    String library;
    String isal = null;
    if (Boolean.getBoolean(DISABLE_PROPERTY)) {
      reason = "disabled by -D" + DISABLE_PROPERTY + "=true";
      library = reason;
    } else {
      reason = loadLibrary();
      library = reason;
      if (reason == null) {
        try {
          String r = load0();
          if (r.startsWith("ok:")) {
            isal = r.substring(3);
          } else {
            reason = r;
          }
        } catch (LinkageError e) {
          reason = "libnetec.so does not match this jar: " + e;
        }
      }
    }
    REASON = reason;
    LIBRARY_REASON = library;
    ISAL_PATH = isal;
    if (reason == null) {
      LOG.info("NetEC native coder enabled (ISA-L: {})", isal);
    } else {
      LOG.warn("NetEC native coder unavailable, using the Java coder: {}", reason);
    }
  }

  private IsalNative() {
  }

  public static boolean isAvailable() {
    return REASON == null;
  }

  /** Why the native coder is off, or null when it is on. */
  public static String unavailableReason() {
    return REASON;
  }

  /**
   * Why libnetec.so itself is not loaded, or null when it is (the INEC engine needs the
   * library; without ISA-L it still forwards and XORs).
   */
  public static String libraryUnavailableReason() {
    return LIBRARY_REASON;
  }

  /** The ISA-L library in use, or null. */
  public static String isalLibrary() {
    return ISAL_PATH;
  }

  public static void checkAvailable() {
    if (REASON != null) {
      throw new UnsupportedOperationException("NetEC native coder unavailable: " + REASON);
    }
  }

  /** Returns null when loaded, else the reason. */
  private static String loadLibrary() {
    try {
      System.loadLibrary(LIBRARY);
      return null;
    } catch (UnsatisfiedLinkError e) {
      LOG.debug("lib{}.so not on java.library.path ({}), trying the jar", LIBRARY, e.getMessage());
    }
    String resource = "/native/" + platform() + "/lib" + LIBRARY + ".so";
    try (InputStream in = IsalNative.class.getResourceAsStream(resource)) {
      if (in == null) {
        return "lib" + LIBRARY + ".so is neither on java.library.path ("
            + System.getProperty("java.library.path") + ") nor in the jar at " + resource;
      }
      File tmp = File.createTempFile("lib" + LIBRARY + "-", ".so");
      tmp.deleteOnExit();
      Files.copy(in, tmp.toPath(), StandardCopyOption.REPLACE_EXISTING);
      System.load(tmp.getAbsolutePath());
      return null;
    } catch (IOException | UnsatisfiedLinkError e) {
      return "cannot load " + resource + " from the jar: " + e;
    }
  }

  static String platform() {
    String os = System.getProperty("os.name").toLowerCase(Locale.ROOT).replace(' ', '_');
    String arch = System.getProperty("os.arch").toLowerCase(Locale.ROOT);
    if (arch.equals("amd64")) {
      arch = "x86_64";
    }
    return os + "-" + arch;
  }

  /** dlopen's ISA-L; returns "ok:&lt;path&gt;" or the reason it failed. */
  private static native String load0();

  /** ISA-L ec_init_tables: gftbls (32*k*rows bytes, direct) from a rows x k matrix. */
  static native void initTables0(int k, int rows, byte[] matrix, ByteBuffer gftbls);

  /** ISA-L ec_encode_data over direct buffers at the given positions. */
  static native void encodeBuffers0(int len, int k, int rows, ByteBuffer gftbls,
      ByteBuffer[] in, int[] inPos, ByteBuffer[] out, int[] outPos);

  /** ISA-L ec_encode_data_update: out[r] ^= M[r][vecI] * src, heap arrays. */
  static native void updateArrays0(int len, int k, int rows, int vecI, ByteBuffer gftbls,
      byte[] src, int srcOff, byte[][] out, int[] outOff);

  /** As {@link #updateArrays0}, the source in a direct buffer at an absolute position. */
  static native void updateFromDirect0(int len, int k, int rows, int vecI, ByteBuffer gftbls,
      ByteBuffer src, int srcPos, byte[][] out, int[] outOff);

  /** ISA-L ec_encode_data over heap arrays at the given offsets. */
  static native void encodeArrays0(int len, int k, int rows, ByteBuffer gftbls,
      byte[][] in, int[] inOff, byte[][] out, int[] outOff);

  /**
   * The fingerprint's lanes: for c in 0..n-1, lane r (laneStride bytes each in the direct
   * buffer {@code lanes}, from laneOffset) ^= M[r][col0 + c] * the c-th len-byte piece of the
   * source, a heap array {@code src} or a direct buffer {@code srcDirect} (the other null),
   * from srcPos.
   */
  static native void lanesUpdate0(int len, int n, int k, int rows, int col0, ByteBuffer gftbls,
      byte[] src, ByteBuffer srcDirect, int srcPos, ByteBuffer lanes, int laneStride,
      int laneOffset);
}
