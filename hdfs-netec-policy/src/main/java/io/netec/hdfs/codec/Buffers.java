package io.netec.hdfs.codec;

import java.nio.ByteBuffer;

/** Small helpers for the buffer arrays coders receive. */
final class Buffers {
  private Buffers() {
  }

  static boolean allHeap(ByteBuffer[] a, ByteBuffer[] b) {
    return kind(a, b) == Boolean.FALSE;
  }

  static boolean allDirect(ByteBuffer[] a, ByteBuffer[] b) {
    return kind(a, b) == Boolean.TRUE;
  }

  /** TRUE if all direct, FALSE if all heap with arrays, null if mixed. */
  private static Boolean kind(ByteBuffer[] a, ByteBuffer[] b) {
    Boolean direct = null;
    for (ByteBuffer[] arr : new ByteBuffer[][] {a, b}) {
      for (ByteBuffer buf : arr) {
        boolean d = buf.isDirect();
        if (!d && !buf.hasArray()) {
          return null; // read-only heap buffer: no array to code in place
        }
        if (direct == null) {
          direct = d;
        } else if (direct != d) {
          return null;
        }
      }
    }
    return direct;
  }

  /** Each of the k inputs and rows outputs must hold len bytes from its position. */
  static void checkRemaining(int len, int k, ByteBuffer[] in, int rows, ByteBuffer[] out) {
    if (len < 0 || in.length < k || out.length < rows) {
      throw new IllegalArgumentException("need " + k + " inputs and " + rows
          + " outputs of " + len + " bytes");
    }
    for (int i = 0; i < k; i++) {
      checkRemaining(len, in[i], "input " + i);
    }
    for (int i = 0; i < rows; i++) {
      checkRemaining(len, out[i], "output " + i);
    }
  }

  private static void checkRemaining(int len, ByteBuffer b, String what) {
    if (b == null || b.remaining() < len) {
      throw new IllegalArgumentException(what + (b == null ? " is null"
          : " has " + b.remaining() + " bytes, need " + len));
    }
  }

  static byte[][] arrays(ByteBuffer[] bufs) {
    byte[][] a = new byte[bufs.length][];
    for (int i = 0; i < bufs.length; i++) {
      a[i] = bufs[i].array();
    }
    return a;
  }

  static int[] arrayOffsets(ByteBuffer[] bufs) {
    int[] o = new int[bufs.length];
    for (int i = 0; i < bufs.length; i++) {
      o[i] = bufs[i].arrayOffset() + bufs[i].position();
    }
    return o;
  }

  static int[] positions(ByteBuffer[] bufs) {
    int[] o = new int[bufs.length];
    for (int i = 0; i < bufs.length; i++) {
      o[i] = bufs[i].position();
    }
    return o;
  }
}
