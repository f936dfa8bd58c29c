package io.netec.hdfs.inecroute;

import io.netec.hdfs.NetecConfigKeys;
import io.netec.hdfs.route.BlockSource;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.apache.hadoop.io.IOUtils;

/**
 * Runs one INEC vertex a join asked for (docs/protocol.md, INEC): checks the join against this
 * participant's limits and the requester's right to the block, dials its output, takes its
 * inputs, and streams its segments through the engine (ec-send or recv-ec-send), its local
 * block read a segment ahead. Apart from the join server ({@link InecParticipant}), which
 * accepts joins and watches requesters; one runner serves every vertex of a participant.
 */
final class VertexRunner {
  private static final byte[] ZEROS = new byte[64 * 1024];
  private final InecEngine engine;
  private final BlockSource source;
  private final InecParticipant.Limits limits;
  /** The participant is closing: a vertex waiting for an input gives up. */
  private final BooleanSupplier closed;
  private final LongAdder bytesRead = new LongAdder();

  VertexRunner(InecEngine engine, BlockSource source, InecParticipant.Limits limits,
      BooleanSupplier closed) {
    this.engine = engine;
    this.source = source;
    this.limits = limits;
    this.closed = closed;
  }

  /** Bytes of local blocks read for vertices. */
  long bytesRead() {
    return bytesRead.sum();
  }

  /**
   * One running vertex, watched by the selector: its requester closing the control connection
   * (or sending anything after the join) cancels it, closing its streams.
   */
  static final class Vertex {
    private final List<InecEngine.Conn> conns = new ArrayList<>();
    private volatile boolean cancelled;

    synchronized void add(InecEngine.Conn c) {
      conns.add(c);
      if (cancelled) {
        c.close();
      }
    }

    /** Its requester left: every stream closed, and none taken from now on. */
    boolean cancelled() {
      return cancelled;
    }

    synchronized void cancel() {
      cancelled = true;
      closeAll();
    }

    synchronized void closeAll() {
      for (InecEngine.Conn c : conns) {
        c.close();
      }
    }
  }

  /**
   * Null when a vertex may stream to {@code out}, else why not: the requester's own address
   * (any port: a client's engine listens where it likes), or a peer inside the peer networks
   * on the cluster's INEC data port.
   */
  String dialRefusal(InetSocketAddress out, InetAddress requester) {
    if (out.getAddress() == null) {
      return "output " + out.getHostString() + " is not an address";
    }
    if (out.getAddress().equals(requester)) {
      return null;
    }
    String why = limits.peers.refusal(out.getAddress().getHostAddress());
    if (why != null) {
      return "output " + why;
    }
    if (limits.peerDataPort != 0 && out.getPort() != limits.peerDataPort) {
      return "output port " + out.getPort() + " of peer " + out.getAddress().getHostAddress()
          + " is not the INEC data port " + limits.peerDataPort + " ("
          + NetecConfigKeys.INEC_DATA_PORT + ")";
    }
    return null;
  }

  /**
   * Runs one vertex; returns the bytes it streamed out. {@code failing} hears every failure
   * first, before the vertex's streams and source are torn down: the requester then has this
   * vertex's report before its neighbours' "closed by the peer", which the teardown causes.
   */
  long run(JoinRequest req, Vertex vertex, InetAddress requester,
      Consumer<Exception> failing) throws IOException {
    long end = req.offset + req.length;
    long readable = Math.max(0, Math.min(req.unitLength, end) - req.offset);
    int timeoutMs = Math.min(req.timeoutMs, limits.maxTimeoutMs);
    InputStream in = null;
    InecEngine.Op op = null;
    java.io.Closeable transfer = null;
    try {
      if (req.segment > limits.maxSegment) {
        throw new IOException("join refused: segment of " + req.segment + " bytes is above "
            + "this participant's " + limits.maxSegment + " (" + NetecConfigKeys.INEC_SEGMENT
            + ")");
      }
      String refusal = dialRefusal(req.output, requester);
      if (refusal != null) {
        throw new IOException("join refused: " + refusal);
      }
      try {
        transfer = source.transfer("INEC vertex of " + req.block);
      } catch (IOException e) {
        throw new LocalBlockFault(e);
      }
      // Always: a vertex that streams zeros proves its right to join the repair as well. A
      // refusal here is the requester's (a token) as often as the replica's: not reported as
      // the survivor's fault (a replica that is gone fails its proof too, which tells).
      source.check(req.block, req.token, Math.min(req.unitLength, end));
      InecEngine.Conn out;
      long dialed = System.nanoTime();
      try {
        out = engine.dial(req.output, req.outputTag, req.transport, timeoutMs);
      } catch (IOException e) {
        // Refused, or no route, at once: nothing listens there, that participant's fault. A
        // dial that timed out tells nothing: the next vertex finishes our handshake only once
        // its own output is dialled, so a stuck vertex further down times out every dial
        // before it (blaming the next would swap out healthy units).
        if (System.nanoTime() - dialed < TimeUnit.MILLISECONDS.toNanos(timeoutMs) / 2) {
          throw new OutputUnreachable(req.output, e);
        }
        throw new IOException("output " + req.output.getAddress().getHostAddress() + ":"
            + req.output.getPort() + ": " + e.getMessage(), e);
      }
      vertex.add(out);
      InecEngine.Conn[] inputs = new InecEngine.Conn[req.inputTags.length];
      for (int i = 0; i < inputs.length; i++) {
        inputs[i] = engine.take(req.inputTags[i], req.transport, timeoutMs,
            () -> closed.getAsBoolean() || vertex.cancelled);
        vertex.add(inputs[i]);
      }
      if (readable > 0) {
        try {
          in = source.open(req.block, req.offset);
        } catch (IOException e) {
          throw new LocalBlockFault(e);
        }
      }
      int segs = (int) ((req.length + req.segment - 1) / req.segment);
      ByteBuffer[] bufs = new ByteBuffer[Math.min(2, segs)];
      for (int i = 0; i < bufs.length; i++) {
        bufs[i] = ByteBuffer.allocateDirect(req.segment);
      }
      long sent = 0;
      fill(in, bufs[0], 0, readable, req);
      for (int s = 0; s < segs; s++) {
        long base = (long) s * req.segment;
        long n = Math.min(req.segment, req.length - base);
        ByteBuffer local = bufs[s % bufs.length];
        boolean hasLocal = base < readable;
        if (inputs.length == 0) {
          op = engine.ecSend(req.coefficients, local, n, req.chunk, out);
        } else {
          op = engine.recvEcSend(inputs, req.coefficients, hasLocal ? local : null, n, req.chunk,
              out);
        }
        if (s + 1 < segs) {
          fill(in, bufs[(s + 1) % bufs.length], base + req.segment, readable, req);
        }
        if (!op.await(timeoutMs)) {
          throw new IOException("no progress for " + timeoutMs + " ms");
        }
        op.close();
        op = null;
        sent += n * req.coefficients.length;
      }
      return sent;
    } catch (IOException | RuntimeException e) {
      failing.accept(e);
      throw e;
    } finally {
      vertex.closeAll(); // fails a running op, so its buffers can be let go below
      if (op != null) {
        op.awaitEnd();
        op.close();
      }
      IOUtils.closeStream(in);
      IOUtils.closeStream(transfer);
    }
  }

  /**
   * A vertex failed on its own block (unreadable, corrupt, no transfer free): the survivor's
   * fault, reported with {@link VertexReport#SURVIVOR_FAULT} so the rebuilding node replaces
   * this unit.
   */
  static final class LocalBlockFault extends IOException {
    private static final long serialVersionUID = 1L;

    LocalBlockFault(IOException cause) {
      super(cause.getMessage(), cause);
    }
  }

  /**
   * The vertex could not dial its output, and was told so at once (refused, no route): the
   * fault of the participant there, reported with {@link VertexReport#OUTPUT_UNREACHABLE} so
   * the requester replaces its unit (unless the output is the requester itself).
   */
  static final class OutputUnreachable extends IOException {
    private static final long serialVersionUID = 1L;

    OutputUnreachable(InetSocketAddress output, IOException cause) {
      super("output " + output.getAddress().getHostAddress() + ":" + output.getPort()
          + " unreachable: " + cause.getMessage(), cause);
    }
  }

  /** Segment at {@code base} of the range: local bytes, zeros past the unit's end. */
  private void fill(InputStream in, ByteBuffer buf, long base, long readable, JoinRequest req)
      throws IOException {
    buf.clear();
    long n = Math.min(req.segment, req.length - base);
    long have = Math.max(0, Math.min(n, readable - base));
    byte[] tmp = new byte[(int) Math.min(have, 64 * 1024)];
    long left = have;
    try {
      while (left > 0) {
        int r = (int) Math.min(tmp.length, left);
        IOUtils.readFully(in, tmp, 0, r);
        buf.put(tmp, 0, r);
        left -= r;
      }
    } catch (IOException e) {
      throw new LocalBlockFault(e);
    }
    bytesRead.add(have);
    while (buf.position() < n) { // zeros: a short unit, or a unit the group does not have
      buf.put(ZEROS, 0, (int) Math.min(ZEROS.length, n - buf.position()));
    }
    buf.clear();
  }
}
