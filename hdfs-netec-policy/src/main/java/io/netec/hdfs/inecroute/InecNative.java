package io.netec.hdfs.inecroute;

import io.netec.hdfs.codec.IsalNative;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * JNI entry points of the INEC engine in libnetec.so (native/src/jni_inec.c); {@link InecEngine}
 * is the Java face. Handles are native pointers.
 */
final class InecNative {
  static final int EC_SEND = 0;
  static final int RECV_EC_SEND = 1;
  static final int RECV_EC = 2;
  static final int CALC_EC = 0;
  static final int CALC_XOR = 1;

  private InecNative() {
  }

  /** Why the engine cannot run in this JVM, or null when it can. */
  static String unavailableReason() {
    return IsalNative.libraryUnavailableReason();
  }

  static native long engineCreate(String verbsLibrary, boolean disableVerbs) throws IOException;

  static native String engineDescribe(long engine);

  static native void engineDestroy(long engine);

  static native long listen(String host, int port) throws IOException;

  static native int listenerPort(long listener);

  static native void listenerClose(long listener);

  /** Waits for the sender of tag, then the transport hello: a connection, or 0 if no sender
   * connected within timeoutMs. */
  static native long take(long engine, long listener, byte[] tag, int transport, int timeoutMs)
      throws IOException;

  /** Connects to a receiver's listener with tag, then the transport hello: a connection. */
  static native long dial(long engine, String host, int port, byte[] tag, int transport,
      int timeoutMs) throws IOException;

  static native int connTransport(long conn);

  static native long connBytesIn(long conn);

  static native void connClose(long engine, long conn);

  /** Posts a primitive; returns its completion handle (release it with opRelease). */
  static native long post(long engine, int type, int calcKind, byte[] matrix, int rows, int cols,
      long[] src, ByteBuffer[] local, ByteBuffer[] out, long len, int chunk, long dst)
      throws IOException;

  /** 0 or -errno once the op ended, 1 while it still runs after timeoutMs. */
  static native int await(long op, long timeoutMs);

  static native void opRelease(long op);
}
