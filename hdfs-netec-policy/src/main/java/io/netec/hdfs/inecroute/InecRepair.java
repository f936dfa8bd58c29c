package io.netec.hdfs.inecroute;

import io.netec.hdfs.InecOptions;
import io.netec.hdfs.NetecConfigKeys;
import io.netec.hdfs.NetecSettings;
import io.netec.hdfs.route.DecodeSurvivors;
import io.netec.hdfs.route.LogLimiter;
import io.netec.hdfs.route.RackAware;
import io.netec.hdfs.route.RouteDeclinedException;
import io.netec.hdfs.route.ServiceDirectory;
import io.netec.hdfs.route.SurvivorFault;
import java.io.BufferedOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.hdfs.protocol.ExtendedBlock;
import org.apache.hadoop.io.IOUtils;

/**
 * One INEC repair of a range of erased units, run from the rebuilding node (a DataNode's route
 * or a client's degraded read): picks k decode survivors, builds the {@link RepairGraph} of
 * the configured scheme, asks each survivor's participant to join as its vertex (a unit the
 * group does not have is streamed as zeros by another participant), then posts recv-ec on its
 * own engine segment by segment and hands each rebuilt segment to a sink. Any participant's
 * failure, a broken stream or no progress within the timeout ends the repair with an
 * IOException naming the cause; every connection is closed, so nothing is left running.
 */
public final class InecRepair {
  private static final SecureRandom RANDOM = new SecureRandom();

  /** A unit a participant can stream. */
  public static final class Source {
    final int index;
    final InetSocketAddress control;
    final InetSocketAddress data;
    final ExtendedBlock block;
    final Credential token;
    /** The participant's rack (its DataNode's network location), null when not known. */
    final String rack;

    /**
     * @param control the participant's control server
     * @param data its engine's data listener
     * @param token what a join names the block with, the same each time ("" when tokens are off)
     */
    public Source(int index, InetSocketAddress control, InetSocketAddress data,
        ExtendedBlock block, String token) {
      this(index, control, data, block, () -> token);
    }

    /**
     * @param token makes what each join carries for the block's READ token: a fresh proof
     *     each time (TokenProof), since one host may run several vertices of a repair
     */
    public Source(int index, InetSocketAddress control, InetSocketAddress data,
        ExtendedBlock block, Credential token) {
      this(index, control, data, block, token, null);
    }

    /** @param rack the participant's rack, for planning by rack ({@link RackAware}) */
    public Source(int index, InetSocketAddress control, InetSocketAddress data,
        ExtendedBlock block, Credential token, String rack) {
      this.rack = rack;
      this.index = index;
      this.control = control;
      this.data = data;
      this.block = block;
      this.token = token;
    }
  }

  /** What a join carries for a block's token, made per join. */
  public interface Credential {
    String next() throws IOException;
  }

  /** Receives the rebuilt range, segment after segment, row by row. */
  public interface Sink {
    /**
     * @param row index into erased[]
     * @param data the rebuilt bytes [rangeOffset, rangeOffset + n) of the range, at 0..n
     */
    void accept(int row, ByteBuffer data, long rangeOffset, int n) throws IOException;

    /** Every participant was asked to join: the repair will stream (its proof may begin). */
    default void joined() {
    }
  }

  /** How repairs run: netec.inec.* keys. */
  public static final class Settings {
    final RepairGraph.Scheme scheme;
    final InecEngine.Transport transport;
    final int chunk;
    final int segment;
    final int timeoutMs;

    public Settings(RepairGraph.Scheme scheme, InecEngine.Transport transport, int chunk,
        int segment, int timeoutMs) {
      if (chunk <= 0 || chunk > JoinRequest.MAX_CHUNK || segment < chunk
          || segment > JoinRequest.MAX_SEGMENT || timeoutMs <= 0) {
        throw new IllegalArgumentException("bad INEC settings: " + NetecConfigKeys.INEC_CHUNK
            + "=" + chunk + ", " + NetecConfigKeys.INEC_SEGMENT + "=" + segment + ", "
            + NetecConfigKeys.INEC_TIMEOUT_MS + "=" + timeoutMs + " (chunk 1 B..16 MiB, "
            + "segment chunk..256 MiB, timeout > 0)");
      }
      this.scheme = scheme;
      this.transport = transport;
      this.chunk = chunk;
      this.segment = segment;
      this.timeoutMs = timeoutMs;
    }

    /** From the checked settings (netec.inec.* keys). */
    public static Settings from(NetecSettings settings) {
      InecOptions s = settings.inecOptions();
      return new Settings(RepairGraph.Scheme.parse(s.scheme()),
          InecEngine.Transport.parse(s.transport()), s.chunk(), s.segment(), s.timeoutMs());
    }

    public RepairGraph.Scheme scheme() {
      return scheme;
    }

    /** The same settings with another no-progress timeout. */
    public Settings withTimeout(int ms) {
      return ms == timeoutMs ? this : new Settings(scheme, transport, chunk, segment, ms);
    }
  }

  /** What a repair did. */
  public static final class Result {
    /** Stream bytes the rebuilding node received (its ingress, frame headers included). */
    public final long bytesReceived;
    /** Transport of the rebuilding node's input streams. */
    public final InecEngine.Transport transport;
    /** Participants that streamed. */
    public final int participants;
    /** The plan by rack, for the task's log line: the racks in the graph's order, and why. */
    public final String racks;
    /** The graph's edges between racks (-1: the reader's rack not known). */
    public final int crossings;

    Result(long bytesReceived, InecEngine.Transport transport, int participants,
        RepairRackPlan plan) {
      this.bytesReceived = bytesReceived;
      this.transport = transport;
      this.participants = participants;
      this.racks = plan.text;
      this.crossings = plan.crossings;
    }
  }

  private InecRepair() {
  }

  /**
   * Whether vertex {@code v}'s participant, whose control port could not be reached, is its
   * survivor's fault, as Hadoop's striped reader takes a DataNode it cannot connect to for a
   * dead source: when that host said so ({@code refused}: a reset came back), or when this node
   * reached another participant over the same network (see {@link #speaksFor}): one of the
   * vertices before {@code v}, or else a probe of another ({@link #reachesAnother}). A timeout
   * while no other participant answers over that network may be this node's own link, and
   * blames no survivor.
   */
  static boolean survivorAtFault(Source[] at, int v, boolean refused, int probeMs) {
    if (refused) {
      return true;
    }
    InetSocketAddress failed = at[v].control;
    boolean failedHere = ServiceDirectory.isThisHost(failed.getAddress());
    for (int u = 1; u < v; u++) { // connected before this one
      if (speaksFor(failedHere, at[u].control)) {
        return true;
      }
    }
    return reachesAnother(at, failed, probeMs);
  }

  /**
   * Whether {@code other} answering shows that this node reaches the network of a participant
   * that timed out ({@code failedHere}: one on this host): a participant on this host answers
   * over loopback even while this node's link is down, so it speaks for another on this host
   * only (a client reading on a DataNode's host would otherwise blame every survivor it could
   * not reach).
   */
  private static boolean speaksFor(boolean failedHere, InetSocketAddress other) {
    return failedHere || !ServiceDirectory.isThisHost(other.getAddress());
  }

  /**
   * Whether another participant than the one at {@code failed} answers a connection within
   * {@code timeoutMs} (at most {@value #PROBE_MS} ms: the repair has already waited its timeout
   * for the first): {@link #probeTarget}'s, connected to and closed at once (a participant
   * drops a connection that never sends a join, silently).
   */
  private static final int PROBE_MS = 2_000;

  static boolean reachesAnother(Source[] at, InetSocketAddress failed, int timeoutMs) {
    InetSocketAddress target = probeTarget(at, failed);
    if (target == null) {
      return false;
    }
    try (Socket probe = new Socket()) {
      probe.connect(target, timeoutMs);
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  /**
   * The participant to probe when the one at {@code failed} timed out: one in the plan with
   * another control address that {@link #speaksFor speaks for it}; for one on another
   * host, on a third host first (a dead host's second participant would answer for nobody);
   * null when there is none.
   */
  static InetSocketAddress probeTarget(Source[] at, InetSocketAddress failed) {
    boolean failedHere = ServiceDirectory.isThisHost(failed.getAddress());
    InetSocketAddress sameHost = null;
    for (int v = 1; v < at.length; v++) {
      InetSocketAddress a = at[v].control;
      if (!a.equals(failed) && speaksFor(failedHere, a)) {
        if (failedHere || a.getAddress() == null
            || !a.getAddress().equals(failed.getAddress())) {
          return a;
        }
        if (sameHost == null) {
          sameHost = a;
        }
      }
    }
    return sameHost;
  }

  /**
   * Rebuilds units {@code erased} over {@code [offset, offset + length)}.
   *
   * @param unitLength length of every unit of the group (k+m entries)
   * @param available units participants can stream, in order of preference
   * @throws RouteDeclinedException when fewer than k usable survivors exist (nothing started)
   */
  public static Result run(InecEngine engine, Settings s, String label, int k, int m,
      long[] unitLength, int[] erased, List<Source> available, long offset, long length,
      Sink sink) throws IOException {
    return run(engine, s, label, k, m, unitLength, erased, available, null, false, offset,
        length, sink);
  }

  /**
   * As {@link #run(InecEngine, Settings, String, int, int, long[], int[], List, long, long,
   * Sink)}, planned by rack when the rebuilding node's rack and the sources' are known: the
   * survivors nearest first ({@link RackAware#preferNear}: the reader's rack, then the racks
   * holding most), and a chain visiting each rack's survivors together, the reader's rack last
   * ({@link RackAware#chainOrder}), so that each rack's partial result leaves it once.
   *
   * @param readerRack the rebuilding node's rack, null when not known
   * @param byRack whether to plan by rack (else the sources' order, as given); the plan's
   *     racks are reported either way ({@link Result#racks})
   */
  public static Result run(InecEngine engine, Settings s, String label, int k, int m,
      long[] unitLength, int[] erased, List<Source> available, String readerRack,
      boolean byRack, long offset, long length, Sink sink) throws IOException {
    if (byRack) {
      // units empty over the range are streamed as zeros by another participant: only the
      // others count for a rack (else a rack of empty units would look fullest)
      List<Source> streamable = new ArrayList<>();
      List<Source> empty = new ArrayList<>();
      for (Source a : available) {
        (unitLength[a.index] > offset ? streamable : empty).add(a);
      }
      streamable = RackAware.preferNear(streamable, a -> a.rack, readerRack);
      streamable.addAll(empty);
      available = streamable;
    }
    List<Integer> indices = new ArrayList<>();
    for (Source a : available) {
      indices.add(a.index);
    }
    DecodeSurvivors chosen = DecodeSurvivors.choose(k, m, unitLength, erased, indices, offset);
    int[] survivors = chosen.units.clone();
    if (byRack && s.scheme == RepairGraph.Scheme.ECPIPE_CHAIN) {
      // the streamed survivors (after the all-zero units, which run on the first of them) in
      // the chain's order: a rack's together, the reader's last
      List<Source> streamed = new ArrayList<>();
      for (int i = chosen.zeros; i < k; i++) {
        streamed.add(available.get(indices.indexOf(survivors[i])));
      }
      List<Source> order = RackAware.chainOrder(streamed, a -> a.rack, readerRack);
      for (int i = chosen.zeros; i < k; i++) {
        survivors[i] = order.get(i - chosen.zeros).index;
      }
    }
    List<Source> hosts = new ArrayList<>(); // null: an all-zero unit
    for (int i = 0; i < k; i++) {
      hosts.add(i < chosen.zeros ? null : available.get(indices.indexOf(survivors[i])));
    }
    Source zeroHost = hosts.get(chosen.zeros); // streams the zero units' vertices
    RepairGraph g = RepairGraph.build(s.scheme, k, m, survivors, erased);
    int rows = erased.length;
    byte[][] tags = new byte[k + 1][16];
    for (byte[] t : tags) {
      RANDOM.nextBytes(t);
    }
    List<Socket> controls = new ArrayList<>();
    RepairReports reports = new RepairReports();
    InecEngine.Op op = null;
    RepairRackPlan plan;
    // a participant this node could not reach at its join: known first-hand, it outranks what
    // the vertices joined before it report (one whose output it is cannot finish its
    // handshake with it, and fails too)
    SurvivorFault unreachable = null;
    try {
      // a path may hold control characters; a join carries printable text only
      String wireLabel = LogLimiter.escape(label, 200);
      Source[] at = new Source[k + 1]; // the participant running vertex v
      for (int v = 1; v <= k; v++) {
        at[v] = hosts.get(v - 1) == null ? zeroHost : hosts.get(v - 1);
      }
      plan = RepairRackPlan.of(g, at, readerRack, byRack);
      for (int v = 1; v <= k; v++) { // vertex v holds survivors[v - 1]
        Source host = at[v];
        Socket c = new Socket();
        controls.add(c);
        try {
          c.connect(host.control, s.timeoutMs);
          c.setTcpNoDelay(true);
        } catch (IOException e) {
          String why = "INEC participant " + host.control + " unreachable: " + e;
          // (the kernel's own SYN timeout comes as a ConnectException too: a timeout)
          boolean refused = e instanceof java.net.ConnectException
              && !String.valueOf(e.getMessage()).contains("timed out");
          if (survivorAtFault(at, v, refused, Math.min(s.timeoutMs / 2, PROBE_MS))) {
            unreachable = new SurvivorFault(host.index, why);
            throw unreachable;
          }
          throw new IOException(why, e);
        }
        RepairGraph.Vertex vx = g.vertices().get(v);
        byte[] coefficients = new byte[rows];
        if (s.scheme == RepairGraph.Scheme.RS_STAR) {
          coefficients = new byte[] {1}; // the unit itself: the rebuilding node decodes
        } else {
          for (int r = 0; r < rows; r++) {
            coefficients[r] = (byte) g.coefficient(r, v - 1);
          }
        }
        byte[][] inTags = new byte[vx.inputs().size()][];
        for (int i = 0; i < inTags.length; i++) {
          inTags[i] = tags[vx.inputs().get(i)];
        }
        InetSocketAddress out;
        if (vx.output() == 0) { // to us, at the address this participant reaches us on
          out = new InetSocketAddress(c.getLocalAddress(), engine.dataAddress().getPort());
        } else {
          out = at[vx.output()].data;
        }
        boolean zeros = hosts.get(v - 1) == null;
        // A zeros vertex proves its right to join with its host's own block and token (a
        // proof of its own: its host checks one for each vertex it runs).
        JoinRequest req = new JoinRequest(wireLabel, host.block, host.token.next(),
            zeros ? 0 : unitLength[survivors[v - 1]], offset, length,
            s.chunk, s.segment, coefficients, inTags, out, tags[v], s.transport, s.timeoutMs);
        DataOutputStream dos = new DataOutputStream(
            new BufferedOutputStream(c.getOutputStream()));
        req.write(dos);
        dos.flush();
        String who = host.control + (zeros ? " (zeros of unit " : " (unit ")
            + survivors[v - 1] + ")";
        int unit = host.index;
        int outputUnit = vx.output() == 0 ? -1 : at[vx.output()].index;
        reports.watch(c, who, unit, outputUnit);
      }
      sink.joined();
      RepairGraph.Vertex root = g.rebuilder();
      InecEngine.Conn[] in = new InecEngine.Conn[root.inputs().size()];
      for (int i = 0; i < in.length; i++) {
        in[i] = engine.take(tags[root.inputs().get(i)], s.transport, s.timeoutMs,
            reports::failed);
        reports.addInput(in[i]);
      }
      byte[] matrix = null;
      if (s.scheme == RepairGraph.Scheme.RS_STAR) {
        matrix = new byte[rows * in.length];
        for (int r = 0; r < rows; r++) {
          for (int j = 0; j < in.length; j++) {
            matrix[r * in.length + j] = (byte) g.coefficient(r, root.inputs().get(j) - 1);
          }
        }
      }
      ByteBuffer[] out = new ByteBuffer[rows];
      for (int r = 0; r < rows; r++) {
        out[r] = ByteBuffer.allocateDirect((int) Math.min(s.segment, length));
      }
      for (long base = 0; base < length; base += s.segment) {
        int n = (int) Math.min(s.segment, length - base);
        op = matrix != null ? engine.recvEc(in, matrix, out, n, s.chunk)
            : engine.recvXor(in, out, n, s.chunk);
        try {
          if (!op.await(s.timeoutMs)) {
            throw new io.netec.hdfs.route.RouteStalledException("no progress for " + s.timeoutMs
                + " ms");
          }
        } catch (IOException e) {
          throw reports.failed() ? reports.failure() : e;
        }
        op.close();
        op = null;
        for (int r = 0; r < rows; r++) {
          out[r].clear();
          sink.accept(r, out[r], base, n);
        }
      }
      reports.awaitAll(s.timeoutMs);
      long received = 0;
      for (InecEngine.Conn c : in) {
        received += c.bytesIn();
      }
      return new Result(received, in[0].transport(), hosts.size(), plan);
    } catch (IOException e) {
      throw e == unreachable ? e : reports.rootCause(e);
    } finally {
      reports.end(); // stops the watchers' work, closes our inputs
      if (op != null) {
        op.awaitEnd();
        op.close();
      }
      for (Socket c : controls) {
        IOUtils.closeSocket(c);
      }
    }
  }
}
