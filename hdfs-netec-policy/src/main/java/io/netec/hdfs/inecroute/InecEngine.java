package io.netec.hdfs.inecroute;

import java.io.Closeable;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.Locale;
import java.util.function.BooleanSupplier;

/**
 * One native INEC engine (its progress thread) and the listener where senders of this
 * node's input streams connect. A node — a DataNode's participant and rebuilder, or a client —
 * has one; primitives posted on it run to completion without the posting thread.
 */
public final class InecEngine implements Closeable {
  /** The transport asked for a connection; both ends must agree (auto: verbs if both can). */
  public enum Transport {
    AUTO, TCP, VERBS;

    /** Parses auto, tcp or verbs (netec.inec.transport). */
    public static Transport parse(String s) {
      try {
        return valueOf(s.trim().toUpperCase(Locale.ROOT));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("unknown INEC transport '" + s
            + "' (auto, tcp, verbs)");
      }
    }
  }

  /**
   * A stream of the graph broke or never came: at a vertex, the sign that another vertex
   * failed (its streams close), not a failure of its own.
   */
  public static final class StreamLost extends IOException {
    StreamLost(String message) {
      super(message);
    }
  }

  private final long engine;
  private final long listener;
  private final InetSocketAddress address;
  private final String describe;

  private InecEngine(long engine, long listener, InetSocketAddress address) {
    this.engine = engine;
    this.listener = listener;
    this.address = address;
    this.describe = InecNative.engineDescribe(engine);
  }

  /** Whether engines can start in this JVM; null when they can, else why not. */
  public static String unavailableReason() {
    return InecNative.unavailableReason();
  }

  /**
   * @param bindHost where the data listener binds
   * @param port its port (0: any free port)
   * @param verbsLibrary the verbs provider to dlopen, null for libibverbs.so.1
   * @param disableVerbs true: TCP only
   */
  public static InecEngine start(String bindHost, int port, String verbsLibrary,
      boolean disableVerbs) throws IOException {
    String why = unavailableReason();
    if (why != null) {
      throw new IOException("INEC engine unavailable: " + why);
    }
    long e = InecNative.engineCreate(verbsLibrary, disableVerbs);
    long l;
    try {
      l = InecNative.listen(bindHost, port);
    } catch (IOException ex) {
      InecNative.engineDestroy(e);
      throw ex;
    }
    return new InecEngine(e, l, new InetSocketAddress(bindHost, InecNative.listenerPort(l)));
  }

  /** Where senders connect for this node's input streams. */
  public InetSocketAddress dataAddress() {
    return address;
  }

  /** Transports this engine can use, e.g. "tcp, verbs (mlx5_0 port 1, RoCE); ISA-L loaded". */
  public String describe() {
    return describe;
  }

  /**
   * The connection of the sender that dialed with {@code tag}, waiting at most timeoutMs, or
   * less when {@code cancelled} turns true (it is asked every 100 ms).
   */
  public Conn take(byte[] tag, Transport t, int timeoutMs, BooleanSupplier cancelled)
      throws IOException {
    long deadline = System.nanoTime() + timeoutMs * 1_000_000L;
    while (!cancelled.getAsBoolean()) {
      long left = (deadline - System.nanoTime()) / 1_000_000L;
      if (left <= 0) {
        throw new StreamLost("no sender connected within " + timeoutMs + " ms");
      }
      long c = InecNative.take(engine, listener, tag, t.ordinal(), (int) Math.min(left, 100));
      if (c != 0) {
        return new Conn(c);
      }
    }
    throw new StreamLost("cancelled while waiting for a sender");
  }

  /** A connection to the receiver listening at {@code to}, for the stream {@code tag}. */
  public Conn dial(InetSocketAddress to, byte[] tag, Transport t, int timeoutMs)
      throws IOException {
    return new Conn(InecNative.dial(engine, to.getAddress().getHostAddress(), to.getPort(), tag,
        t.ordinal(), timeoutMs));
  }

  /** ec-send: {@code rows x 1} coefficients times {@code local}, sent on dst. */
  public Op ecSend(byte[] coefficients, ByteBuffer local, long len, int chunk, Conn dst)
      throws IOException {
    return post(InecNative.EC_SEND, InecNative.CALC_EC, coefficients, coefficients.length, 1,
        null, new ByteBuffer[] {local}, null, len, chunk, dst);
  }

  /**
   * recv-ec-send: XOR of the inputs' rows plus {@code rows x 1} coefficients times local
   * (local null: forward the XOR), sent on dst.
   */
  public Op recvEcSend(Conn[] src, byte[] coefficients, ByteBuffer local, long len, int chunk,
      Conn dst) throws IOException {
    return post(InecNative.RECV_EC_SEND, InecNative.CALC_EC, coefficients, coefficients.length,
        1, src, local == null ? new ByteBuffer[0] : new ByteBuffer[] {local}, null, len, chunk,
        dst);
  }

  /** recv-ec, EC: out = matrix (rows x src.length, row-major) times the inputs' units. */
  public Op recvEc(Conn[] src, byte[] matrix, ByteBuffer[] out, long len, int chunk)
      throws IOException {
    return post(InecNative.RECV_EC, InecNative.CALC_EC, matrix, out.length, src.length, src,
        null, out, len, chunk, null);
  }

  /** recv-ec, XOR: out[r] = XOR of every input's row r. */
  public Op recvXor(Conn[] src, ByteBuffer[] out, long len, int chunk) throws IOException {
    return post(InecNative.RECV_EC, InecNative.CALC_XOR, null, out.length, 0, src, null, out,
        len, chunk, null);
  }

  private Op post(int type, int kind, byte[] matrix, int rows, int cols, Conn[] src,
      ByteBuffer[] local, ByteBuffer[] out, long len, int chunk, Conn dst) throws IOException {
    long[] s = new long[src == null ? 0 : src.length];
    for (int i = 0; i < s.length; i++) {
      s[i] = src[i].handle;
    }
    return new Op(InecNative.post(engine, type, kind, matrix, rows, cols, s, local, out, len,
        chunk, dst == null ? 0 : dst.handle), local, out);
  }

  @Override
  public void close() {
    InecNative.listenerClose(listener);
    InecNative.engineDestroy(engine);
  }

  /** A stream between two engines. */
  public final class Conn implements Closeable {
    private final long handle;
    private boolean closed;

    private Conn(long handle) {
      this.handle = handle;
    }

    public Transport transport() {
      return Transport.values()[InecNative.connTransport(handle)];
    }

    /** Stream bytes received on this connection so far. */
    public long bytesIn() {
      return closed ? 0 : InecNative.connBytesIn(handle);
    }

    /** Closes it; an op still using it ends with a cancellation. */
    @Override
    public synchronized void close() {
      if (!closed) {
        closed = true;
        InecNative.connClose(engine, handle);
      }
    }
  }

  /** A posted primitive; it keeps its buffers reachable until it ended. */
  public static final class Op implements Closeable {
    private final long handle;
    @SuppressWarnings("unused") // reachable for the native engine while it runs
    private final ByteBuffer[] local;
    @SuppressWarnings("unused")
    private final ByteBuffer[] out;
    private boolean ended;
    private boolean released;

    private Op(long handle, ByteBuffer[] local, ByteBuffer[] out) {
      this.handle = handle;
      this.local = local;
      this.out = out;
    }

    /**
     * Waits for the op to end.
     *
     * @return true when it ended well, false if it still runs after timeoutMs
     * @throws IOException when it ended with an error
     */
    public boolean await(long timeoutMs) throws IOException {
      int status = InecNative.await(handle, timeoutMs);
      if (status == 1) {
        return false;
      }
      ended = true;
      if (status == -32 || status == -125 || status == -104) { // EPIPE, ECANCELED, ECONNRESET
        throw new StreamLost("INEC primitive failed: " + errno(-status));
      }
      if (status != 0) {
        throw new IOException("INEC primitive failed: " + errno(-status));
      }
      return true;
    }

    /** Waits until it ended, however it ended (after its connections were closed). */
    public void awaitEnd() throws InterruptedIOException {
      while (!ended) {
        if (InecNative.await(handle, 1000) != 1) {
          ended = true;
        } else if (Thread.currentThread().isInterrupted()) {
          throw new InterruptedIOException("interrupted waiting for an INEC primitive");
        }
      }
    }

    /** Releases the completion; the buffers must not be reused before the op ended. */
    @Override
    public synchronized void close() {
      if (!released) {
        released = true;
        InecNative.opRelease(handle);
      }
    }
  }

  static String errno(int e) {
    switch (e) {
      case 32:
        return "connection closed by the peer (EPIPE)";
      case 71:
        return "malformed stream (EPROTO)";
      case 104:
        return "connection reset (ECONNRESET)";
      case 125:
        return "cancelled (ECANCELED)";
      case 5:
        return "RDMA completion error (EIO)";
      case 16:
        return "connection already in use (EBUSY)";
      default:
        return "errno " + e;
    }
  }
}
