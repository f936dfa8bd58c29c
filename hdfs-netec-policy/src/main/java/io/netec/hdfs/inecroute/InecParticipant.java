package io.netec.hdfs.inecroute;

import io.netec.hdfs.route.BlockSource;
import io.netec.hdfs.route.LogLimiter;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.Closeable;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.apache.hadoop.io.IOUtils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A DataNode's part in INEC repairs: a control server that takes {@link JoinRequest}s and, for
 * each, checks the block token, connects the vertex's streams through the node's engine, and
 * posts its primitive segment by segment — ec-send for a leaf, recv-ec-send inside a tree or a
 * chain — reading the local internal block through the DataNode's dataset into direct buffers
 * (the next segment is read while the engine works on the current one). One thread per joined
 * vertex; more than maxJoins at once are refused.
 */
public final class InecParticipant implements Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(InecParticipant.class);
  /** Lines peers can cause: one per cause every 10 s, then a count. */
  private final LogLimiter logs = new LogLimiter(LOG, 10_000);
  private static final int REQUEST_TIMEOUT_MS = 30_000;
  private static final byte[] ZEROS = new byte[64 * 1024];

  private final InecEngine engine;
  private final BlockSource source;
  private final ServerSocket server;
  private final ExecutorService joins;
  private final Thread acceptor;
  private final LongAdder served = new LongAdder();
  private final LongAdder failed = new LongAdder();
  private final LongAdder bytesRead = new LongAdder();
  private final int maxSegment;
  private final int maxTimeoutMs;
  private volatile boolean closed;

  /** With this node's default limits: 4 MiB segments, 30 s without progress. */
  public InecParticipant(InecEngine engine, BlockSource source, String bindHost,
      int port, int maxJoins) throws IOException {
    this(engine, source, bindHost, port, maxJoins, 4 << 20, 30_000);
  }

  /**
   * @param maxSegment largest segment a join may ask for (the direct memory it takes is two
   *     segments); larger joins are refused
   * @param maxTimeoutMs a join's wait without progress is cut to this
   */
  public InecParticipant(InecEngine engine, BlockSource source, String bindHost,
      int port, int maxJoins, int maxSegment, int maxTimeoutMs) throws IOException {
    this.engine = engine;
    this.source = source;
    this.maxSegment = maxSegment;
    this.maxTimeoutMs = maxTimeoutMs;
    this.server = new ServerSocket();
    try {
      server.setReuseAddress(true);
      server.bind(new InetSocketAddress(bindHost, port));
    } catch (IOException e) {
      server.close();
      throw new IOException("INEC participant cannot listen on " + bindHost + ":" + port, e);
    }
    this.joins = new ThreadPoolExecutor(0, maxJoins, 60, TimeUnit.SECONDS,
        new SynchronousQueue<>(), r -> {
          Thread t = new Thread(r, "inec-join");
          t.setDaemon(true);
          return t;
        });
    this.acceptor = new Thread(this::acceptLoop, "inec-participant-" + server.getLocalPort());
    acceptor.setDaemon(true);
    acceptor.start();
  }

  public InetSocketAddress address() {
    return (InetSocketAddress) server.getLocalSocketAddress();
  }

  public InecEngine engine() {
    return engine;
  }

  /** Vertices this participant ran to the end. */
  public long served() {
    return served.sum();
  }

  public long failed() {
    return failed.sum();
  }

  /** Bytes of local blocks this participant read for repairs. */
  public long bytesRead() {
    return bytesRead.sum();
  }

  private void acceptLoop() {
    while (!closed) {
      Socket s;
      try {
        s = server.accept();
      } catch (IOException e) {
        if (!closed) {
          // e.g. out of file descriptors: say so once in a while, and let some close
          logs.warn("accept", "INEC participant on {}: accept failed: {}", address(),
              e.toString());
          try {
            Thread.sleep(50);
          } catch (InterruptedException ie) {
            Thread.currentThread().interrupt();
            return;
          }
        }
        continue;
      }
      try {
        joins.execute(() -> serve(s));
      } catch (RejectedExecutionException e) {
        reply(s, 1, "participant busy");
        IOUtils.closeSocket(s);
      }
    }
  }

  private void serve(Socket s) {
    String task = "?";
    try {
      s.setSoTimeout(REQUEST_TIMEOUT_MS);
      s.setTcpNoDelay(true);
      JoinRequest req = JoinRequest.read(new DataInputStream(
          new BufferedInputStream(s.getInputStream())));
      task = req.task;
      long bytes = run(req);
      served.increment();
      reply(s, 0, "streamed " + bytes + " bytes");
    } catch (IOException | RuntimeException e) {
      failed.increment();
      logs.warn("vertex-failed", "INEC vertex of task {} failed: {}", LogLimiter.oneLine(task),
          LogLimiter.oneLine(e));
      // 2: one of its streams was lost (another vertex failed); 1: it failed itself
      reply(s, e instanceof InecEngine.StreamLost ? 2 : 1, String.valueOf(e.getMessage()));
    } finally {
      IOUtils.closeSocket(s);
    }
  }

  private static void reply(Socket s, int status, String message) {
    try {
      DataOutputStream out = new DataOutputStream(new BufferedOutputStream(s.getOutputStream()));
      out.writeByte(status);
      out.writeUTF(message.length() > 1000 ? message.substring(0, 1000) : message);
      out.flush();
    } catch (IOException e) {
      LOG.debug("INEC participant: cannot answer {}: {}", s, e.toString());
    }
  }

  /** Runs one vertex; returns the bytes it streamed out. */
  private long run(JoinRequest req) throws IOException {
    long end = req.offset + req.length;
    long readable = Math.max(0, Math.min(req.unitLength, end) - req.offset);
    if (req.segment > maxSegment) {
      throw new IOException("join refused: segment of " + req.segment + " bytes is above this "
          + "participant's " + maxSegment + " (netec.inec.segment.bytes)");
    }
    // Always: a vertex that streams zeros proves its right to join the repair as well.
    source.check(req.block, req.token, Math.min(req.unitLength, end));
    int timeoutMs = Math.min(req.timeoutMs, maxTimeoutMs);
    List<InecEngine.Conn> conns = new ArrayList<>();
    InputStream in = null;
    InecEngine.Op op = null;
    try {
      InecEngine.Conn out = engine.dial(req.output, req.outputTag, req.transport, timeoutMs);
      conns.add(out);
      InecEngine.Conn[] inputs = new InecEngine.Conn[req.inputTags.length];
      for (int i = 0; i < inputs.length; i++) {
        inputs[i] = engine.take(req.inputTags[i], req.transport, timeoutMs, () -> closed);
        conns.add(inputs[i]);
      }
      if (readable > 0) {
        in = source.open(req.block, req.offset);
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
    } finally {
      for (InecEngine.Conn c : conns) {
        c.close(); // fails a running op, so its buffers can be let go below
      }
      if (op != null) {
        op.awaitEnd();
        op.close();
      }
      IOUtils.closeStream(in);
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
    while (left > 0) {
      int r = (int) Math.min(tmp.length, left);
      IOUtils.readFully(in, tmp, 0, r);
      buf.put(tmp, 0, r);
      left -= r;
    }
    bytesRead.add(have);
    while (buf.position() < n) { // zeros: a short unit, or a unit the group does not have
      buf.put(ZEROS, 0, (int) Math.min(ZEROS.length, n - buf.position()));
    }
    buf.clear();
  }

  @Override
  public void close() {
    closed = true;
    try {
      server.close();
    } catch (IOException e) {
      LOG.debug("closing {}: {}", server, e.toString());
    }
    joins.shutdownNow();
    try {
      acceptor.join(2000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
