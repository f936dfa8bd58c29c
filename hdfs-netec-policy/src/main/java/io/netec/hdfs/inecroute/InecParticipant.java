package io.netec.hdfs.inecroute;

import io.netec.hdfs.NetecConfigKeys;
import io.netec.hdfs.NetecSettings;
import io.netec.hdfs.route.BlockSource;
import io.netec.hdfs.route.LogLimiter;
import io.netec.hdfs.route.PeerNetworks;
import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import org.apache.hadoop.io.IOUtils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A DataNode's part in INEC repairs: a control server that takes {@link JoinRequest}s and, for
 * each, checks the block token, connects the vertex's streams through the node's engine, and
 * posts its primitive segment by segment — ec-send for a leaf, recv-ec-send inside a tree or a
 * chain — reading the local internal block through the DataNode's dataset into direct buffers
 * (the next segment is read while the engine works on the current one).
 *
 * <p>What a peer can hold: one selector thread reads every join, so a connection that sends
 * nothing costs a socket, not a thread; at most {@link Limits#maxPending} connections wait for
 * their join at once (a new one evicts the oldest), each for at most {@link
 * Limits#joinArrivalMs}. A thread is taken only for a whole, well-formed join, at most {@code
 * maxJoins} at once (more are answered "participant busy"). A vertex streams its output only to
 * the requester's own address or to a peer in {@link Limits#peers} on the cluster's INEC data
 * port, dials no names, and ends as soon as its requester leaves.
 */
public final class InecParticipant implements Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(InecParticipant.class);
  /** Lines peers can cause: one per cause every 10 s, then a count. */
  private final LogLimiter logs = new LogLimiter(LOG, 10_000);
  private static final byte[] ZEROS = new byte[64 * 1024];
  /** A join's wire form is far smaller (four short strings and fixed fields). */
  static final int MAX_JOIN_BYTES = 16 * 1024;

  /**
   * What a participant accepts from peers: by default, the defaults of the netec.inec.* keys
   * and peers on any port (engines listening on ephemeral ports, as in tests).
   */
  public static final class Limits {
    private static final NetecSettings DEFAULTS = NetecSettings.defaults();
    /** Largest segment a join may ask for (a vertex holds two); larger joins are refused. */
    int maxSegment = DEFAULTS.inecOptions().segment();
    /** A join's wait without progress is cut to this. */
    int maxTimeoutMs = DEFAULTS.inecOptions().timeoutMs();
    /** Connections waiting for their join at once; a new one evicts the oldest. */
    int maxPending = 256;
    /** A connection whose join has not arrived whole within this is closed. */
    int joinArrivalMs = 10_000;
    /** Where a vertex may stream to besides its requester. */
    PeerNetworks peers = DEFAULTS.inecOptions().peerNetworks();
    /** The cluster's INEC data port, the only port a peer is dialled on; 0: any. */
    int peerDataPort;

    /** This node's limits from its settings. */
    public static Limits of(NetecSettings s) {
      Limits l = new Limits();
      l.maxSegment = s.inecOptions().segment();
      l.maxTimeoutMs = s.inecOptions().timeoutMs();
      l.peers = s.inecOptions().peerNetworks();
      l.peerDataPort = s.inecOptions().dataPort();
      return l;
    }
  }

  private final InecEngine engine;
  private final BlockSource source;
  private final Limits limits;
  private final ServerSocketChannel server;
  private final Selector selector;
  private final InetSocketAddress address;
  private final ExecutorService joins;
  private final Thread acceptor;
  /** Connections whose join has not arrived whole, oldest first (selector thread only). */
  private final LinkedHashMap<SocketChannel, Pending> pending = new LinkedHashMap<>();
  private final LongAdder served = new LongAdder();
  private final LongAdder failed = new LongAdder();
  private final LongAdder bytesRead = new LongAdder();
  private final LongAdder evicted = new LongAdder();
  private volatile boolean closed;

  /** With the default {@link Limits}. */
  public InecParticipant(InecEngine engine, BlockSource source, String bindHost,
      int port, int maxJoins) throws IOException {
    this(engine, source, bindHost, port, maxJoins, new Limits());
  }

  public InecParticipant(InecEngine engine, BlockSource source, String bindHost,
      int port, int maxJoins, Limits limits) throws IOException {
    this.engine = engine;
    this.source = source;
    this.limits = limits;
    this.server = ServerSocketChannel.open();
    try {
      server.setOption(StandardSocketOptions.SO_REUSEADDR, true);
      server.bind(new InetSocketAddress(bindHost, port));
      server.configureBlocking(false);
      this.selector = Selector.open();
      server.register(selector, SelectionKey.OP_ACCEPT);
    } catch (IOException e) {
      server.close();
      throw new IOException("INEC participant cannot listen on " + bindHost + ":" + port, e);
    }
    this.address = (InetSocketAddress) server.getLocalAddress();
    this.joins = new ThreadPoolExecutor(0, maxJoins, 60, TimeUnit.SECONDS,
        new SynchronousQueue<>(), r -> {
          Thread t = new Thread(r, "inec-join");
          t.setDaemon(true);
          return t;
        });
    this.acceptor = new Thread(this::selectLoop, "inec-participant-" + address.getPort());
    acceptor.setDaemon(true);
    acceptor.start();
  }

  public InetSocketAddress address() {
    return address;
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

  /** Connections closed unread: their join did not arrive in time or newer ones needed room. */
  public long evicted() {
    return evicted.sum();
  }

  /** A connection whose join is still arriving. */
  private static final class Pending {
    final ByteBuffer buf = ByteBuffer.allocate(MAX_JOIN_BYTES);
    final long since = System.nanoTime();
  }

  /**
   * One running vertex, watched by the selector: its requester closing the control connection
   * (or sending anything after the join) cancels it, closing its streams.
   */
  private static final class Vertex {
    private final List<InecEngine.Conn> conns = new ArrayList<>();
    private volatile boolean cancelled;

    synchronized void add(InecEngine.Conn c) {
      conns.add(c);
      if (cancelled) {
        c.close();
      }
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

  private void selectLoop() {
    ByteBuffer scratch = ByteBuffer.allocate(256);
    while (!closed) {
      try {
        selector.select(250);
      } catch (IOException e) {
        logs.warn("select", "INEC participant on {}: select failed: {}", address, e.toString());
        pause();
        continue;
      } catch (ClosedSelectorException e) {
        return;
      }
      if (closed) {
        return;
      }
      for (SelectionKey key : selector.selectedKeys()) {
        if (!key.isValid()) {
          continue;
        }
        if (key.isAcceptable()) {
          acceptAll();
        } else if (key.attachment() instanceof Pending) {
          readJoin(key, (Pending) key.attachment());
        } else if (key.attachment() instanceof Vertex) {
          watchRequester(key, (Vertex) key.attachment(), scratch);
        }
      }
      selector.selectedKeys().clear();
      expire();
    }
  }

  private void acceptAll() {
    while (true) {
      SocketChannel ch;
      try {
        ch = server.accept();
      } catch (IOException e) {
        // e.g. out of file descriptors: say so once in a while, and let some close
        logs.warn("accept", "INEC participant on {}: accept failed: {}", address, e.toString());
        pause();
        return;
      }
      if (ch == null) {
        return;
      }
      if (pending.size() >= limits.maxPending) { // room for the newest: joins come at once
        Map.Entry<SocketChannel, Pending> oldest = pending.entrySet().iterator().next();
        drop(oldest.getKey());
        evicted.increment();
        logs.warn("evicted", "INEC participant on {}: {} connections wait for their join; "
            + "closing the oldest", address, limits.maxPending);
      }
      try {
        ch.configureBlocking(false);
        ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
        Pending p = new Pending();
        ch.register(selector, SelectionKey.OP_READ, p);
        pending.put(ch, p);
      } catch (IOException e) {
        IOUtils.closeStream(ch);
      }
    }
  }

  private void readJoin(SelectionKey key, Pending p) {
    SocketChannel ch = (SocketChannel) key.channel();
    JoinRequest req;
    try {
      int r = ch.read(p.buf);
      if (r < 0) {
        drop(ch);
        return;
      }
      req = JoinRequest.parse(p.buf.array(), p.buf.position());
      if (req == null) {
        if (!p.buf.hasRemaining()) {
          throw new IOException("bad join request: larger than " + MAX_JOIN_BYTES + " bytes");
        }
        return; // the rest is on its way
      }
    } catch (IOException | RuntimeException e) {
      failed.increment();
      logs.warn("bad-join", "INEC participant on {}: {} from {}", address,
          LogLimiter.oneLine(e), peer(ch));
      pending.remove(ch);
      key.cancel();
      reply(ch, 1, String.valueOf(e.getMessage()));
      IOUtils.closeStream(ch);
      return;
    }
    pending.remove(ch);
    Vertex vertex = new Vertex();
    key.attach(vertex); // from now on the selector watches for the requester leaving
    InetAddress requester = ch.socket().getInetAddress();
    try {
      joins.execute(() -> serve(ch, key, req, vertex, requester));
    } catch (RejectedExecutionException e) {
      key.cancel();
      reply(ch, 1, "participant busy");
      IOUtils.closeStream(ch);
    }
  }

  /** Anything from a requester after its join means it left (or broke the protocol). */
  private void watchRequester(SelectionKey key, Vertex vertex, ByteBuffer scratch) {
    scratch.clear();
    int r;
    try {
      r = ((SocketChannel) key.channel()).read(scratch);
    } catch (IOException e) {
      r = -1;
    }
    if (r != 0) {
      key.cancel();
      vertex.cancel();
    }
  }

  private void expire() {
    long now = System.nanoTime();
    Iterator<Map.Entry<SocketChannel, Pending>> it = pending.entrySet().iterator();
    while (it.hasNext()) {
      Map.Entry<SocketChannel, Pending> e = it.next();
      if (now - e.getValue().since < limits.joinArrivalMs * 1_000_000L) {
        break; // oldest first: the rest are younger
      }
      it.remove();
      evicted.increment();
      IOUtils.closeStream(e.getKey());
    }
  }

  private void drop(SocketChannel ch) {
    pending.remove(ch);
    IOUtils.closeStream(ch); // cancels its key
  }

  private static String peer(SocketChannel ch) {
    InetAddress a = ch.socket().getInetAddress();
    return a == null ? "?" : a.getHostAddress();
  }

  private static void pause() {
    try {
      Thread.sleep(50);
    } catch (InterruptedException ie) {
      Thread.currentThread().interrupt();
    }
  }

  private void serve(SocketChannel ch, SelectionKey key, JoinRequest req, Vertex vertex,
      InetAddress requester) {
    try {
      long bytes = run(req, vertex, requester, e -> fail(ch, req, vertex, e));
      served.increment();
      reply(ch, 0, "streamed " + bytes + " bytes");
    } catch (IOException | RuntimeException e) {
      // run reported it, before its teardown
    } finally {
      key.cancel();
      IOUtils.closeStream(ch);
    }
  }

  private void fail(SocketChannel ch, JoinRequest req, Vertex vertex, Exception e) {
    failed.increment();
    String why = vertex.cancelled ? "its requester left" : LogLimiter.oneLine(e);
    logs.warn("vertex-failed", "INEC vertex of task {} failed: {}",
        LogLimiter.oneLine(req.task), why);
    // 2: one of its streams was lost (another vertex failed); 3: its own block failed it;
    // 1: it failed otherwise
    reply(ch, e instanceof InecEngine.StreamLost ? 2 : e instanceof LocalBlockFault ? 3 : 1,
        String.valueOf(e.getMessage()));
  }

  /** The one-byte status and a message; the channel may be non-blocking (it fits at once). */
  private static void reply(SocketChannel ch, int status, String message) {
    try {
      ByteArrayOutputStream b = new ByteArrayOutputStream();
      DataOutputStream out = new DataOutputStream(b);
      out.writeByte(status);
      out.writeUTF(message.length() > 1000 ? message.substring(0, 1000) : message);
      ByteBuffer buf = ByteBuffer.wrap(b.toByteArray());
      long deadline = System.nanoTime() + 1_000_000_000L;
      while (buf.hasRemaining() && System.nanoTime() < deadline) {
        if (ch.write(buf) == 0) {
          Thread.sleep(1);
        }
      }
    } catch (IOException e) {
      LOG.debug("INEC participant: cannot answer {}: {}", ch, e.toString());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
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
  private long run(JoinRequest req, Vertex vertex, InetAddress requester,
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
      InecEngine.Conn out = engine.dial(req.output, req.outputTag, req.transport, timeoutMs);
      vertex.add(out);
      InecEngine.Conn[] inputs = new InecEngine.Conn[req.inputTags.length];
      for (int i = 0; i < inputs.length; i++) {
        inputs[i] = engine.take(req.inputTags[i], req.transport, timeoutMs,
            () -> closed || vertex.cancelled);
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
   * fault, reported with status 3 so the rebuilding node replaces this unit.
   */
  static final class LocalBlockFault extends IOException {
    private static final long serialVersionUID = 1L;

    LocalBlockFault(IOException cause) {
      super(cause.getMessage(), cause);
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

  @Override
  public void close() {
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
    }
    selector.wakeup();
    try {
      acceptor.join(2000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    for (SelectionKey key : selector.keys()) {
      IOUtils.closeStream(key.channel());
    }
    IOUtils.closeStream(selector);
    IOUtils.closeStream(server);
    joins.shutdownNow();
  }
}
