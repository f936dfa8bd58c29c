package io.netec.hdfs.inecroute;

import io.netec.hdfs.NetecSettings;
import io.netec.hdfs.route.BlockSource;
import io.netec.hdfs.route.LogLimiter;
import io.netec.hdfs.route.PeerNetworks;
import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
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
 * (the next segment is read while the engine works on the current one).
 *
 * <p>What a peer can hold: one selector thread reads every join, so a connection that sends
 * nothing costs a socket, not a thread; at most {@link Limits#maxPending} connections wait for
 * their join at once (a new one evicts the oldest), each for at most {@link
 * Limits#joinArrivalMs}. A thread is taken only for a whole, well-formed join, at most {@code
 * maxJoins} at once (more are answered "participant busy"). A vertex streams its output only to
 * the requester's own address or to a peer in {@link Limits#peers} on the cluster's INEC data
 * port, dials no names, and ends as soon as its requester leaves.
 *
 * <p>By job: this class is the join server (accept, read joins, evict, expire, watch the
 * requester, answer); {@link VertexRunner} runs each vertex.
 */
public final class InecParticipant implements Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(InecParticipant.class);
  /** Lines peers can cause: one per cause every 10 s, then a count. */
  private final LogLimiter logs = new LogLimiter(LOG, 10_000);
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
  private final Limits limits;
  /** Runs the vertices the joins ask for. */
  private final VertexRunner runner;
  private final ServerSocketChannel server;
  private final Selector selector;
  private final InetSocketAddress address;
  private final ExecutorService joins;
  private final Thread acceptor;
  /** Connections whose join has not arrived whole, oldest first (selector thread only). */
  private final LinkedHashMap<SocketChannel, Pending> pending = new LinkedHashMap<>();
  private final LongAdder served = new LongAdder();
  private final LongAdder failed = new LongAdder();
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
    this.limits = limits;
    this.runner = new VertexRunner(engine, source, limits, () -> closed);
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
    return runner.bytesRead();
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
        } else if (key.attachment() instanceof VertexRunner.Vertex) {
          watchRequester(key, (VertexRunner.Vertex) key.attachment(), scratch);
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
    VertexRunner.Vertex vertex = new VertexRunner.Vertex();
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
  private void watchRequester(SelectionKey key, VertexRunner.Vertex vertex, ByteBuffer scratch) {
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

  private void serve(SocketChannel ch, SelectionKey key, JoinRequest req,
      VertexRunner.Vertex vertex, InetAddress requester) {
    try {
      long bytes = runner.run(req, vertex, requester, e -> fail(ch, req, vertex, e));
      served.increment();
      reply(ch, 0, "streamed " + bytes + " bytes");
    } catch (IOException | RuntimeException e) {
      // run reported it, before its teardown
    } finally {
      key.cancel();
      IOUtils.closeStream(ch);
    }
  }

  private void fail(SocketChannel ch, JoinRequest req, VertexRunner.Vertex vertex, Exception e) {
    failed.increment();
    String why = vertex.cancelled() ? "its requester left" : LogLimiter.oneLine(e);
    logs.warn("vertex-failed", "INEC vertex of task {} failed: {}",
        LogLimiter.oneLine(req.task), why);
    // 2: one of its streams was lost (another vertex failed); 3: its own block failed it;
    // 1: it failed otherwise
    reply(ch, e instanceof InecEngine.StreamLost ? 2
        : e instanceof VertexRunner.LocalBlockFault ? 3 : 1, String.valueOf(e.getMessage()));
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
