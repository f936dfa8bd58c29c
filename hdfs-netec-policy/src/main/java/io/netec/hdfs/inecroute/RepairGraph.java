package io.netec.hdfs.inecroute;

import io.netec.hdfs.codec.MatrixAccumulator;
import io.netec.hdfs.codec.RsMatrix;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Locale;

/**
 * The dynamic EC graph of the INEC paper (§III-D) for repairing erased units of one RS group:
 * vertices are the k survivors and the rebuilding node, edges carry data. Each vertex gets its
 * primitive from its degrees: no inputs → ec-send (or send, with nothing to compute), no output
 * → recv-ec / recv-xor, otherwise recv-ec-send; the calculator follows the vertex's job.
 *
 * <p>Schemes: {@link Scheme#RS_STAR} (every survivor sends its unit, the rebuilding node
 * decodes), {@link Scheme#PPR_TREE} (partial results reduced up a binary tree, PPR) and
 * {@link Scheme#ECPIPE_CHAIN} (partial results accumulated along a chain, slice by slice,
 * ECPipe). With several erased units every partial result carries one slice per erased unit.
 */
public final class RepairGraph {
  /** How the survivors are arranged. */
  public enum Scheme {
    RS_STAR, PPR_TREE, ECPIPE_CHAIN;

    /** Parses "rs", "ppr" or "ecpipe" (the route's configuration values). */
    public static Scheme parse(String s) {
      switch (s.trim().toLowerCase(Locale.ROOT)) {
        case "rs":
          return RS_STAR;
        case "ppr":
          return PPR_TREE;
        case "ecpipe":
          return ECPIPE_CHAIN;
        default:
          throw new IllegalArgumentException("unknown repair scheme '" + s
              + "' (rs, ppr, ecpipe)");
      }
    }
  }

  /** The INEC primitive a vertex posts. */
  public enum Primitive { SEND, EC_SEND, RECV_EC_SEND, RECV_EC, RECV_XOR }

  /** What a vertex's calculator does. */
  public enum Calculator {
    /** Nothing to compute (a raw send). */
    NONE,
    /** Multiply local and/or received data by coefficients (GF(2^8)). */
    EC,
    /** XOR received partial results. */
    XOR
  }

  /** One node of the graph. */
  public static final class Vertex {
    final int id;
    final int unit;
    final List<Integer> inputs = new ArrayList<>();
    int output = -1;
    Primitive primitive;
    Calculator calculator;

    Vertex(int id, int unit) {
      this.id = id;
      this.unit = unit;
    }

    public int id() {
      return id;
    }

    /** The survivor unit this vertex holds, or -1 for the rebuilding node. */
    public int unit() {
      return unit;
    }

    public List<Integer> inputs() {
      return Collections.unmodifiableList(inputs);
    }

    /** The vertex it sends to, or -1 (the rebuilding node). */
    public int output() {
      return output;
    }

    public Primitive primitive() {
      return primitive;
    }

    public Calculator calculator() {
      return calculator;
    }

    @Override
    public String toString() {
      return (unit < 0 ? "rebuilder" : "unit " + unit) + ":" + primitive + "/" + calculator
          + " in " + inputs + " out " + output;
    }
  }

  private final Scheme scheme;
  private final int k;
  private final int m;
  private final int[] survivors;
  private final int[] erased;
  private final byte[] decode; // rows x k: row r rebuilds erased[r] from survivors
  private final List<Vertex> vertices = new ArrayList<>();

  private RepairGraph(Scheme scheme, int k, int m, int[] survivors, int[] erased) {
    this.scheme = scheme;
    this.k = k;
    this.m = m;
    this.survivors = survivors.clone();
    this.erased = erased.clone();
    this.decode = RsMatrix.decodeRows(k, m, survivors, erased);
  }

  /**
   * @param survivors the k units used, in the order the scheme arranges them
   * @param erased the units rebuilt at the rebuilding node
   */
  public static RepairGraph build(Scheme scheme, int k, int m, int[] survivors, int[] erased) {
    RepairGraph g = new RepairGraph(scheme, k, m, survivors, erased);
    Vertex root = new Vertex(0, -1);
    g.vertices.add(root);
    for (int i = 0; i < k; i++) {
      g.vertices.add(new Vertex(i + 1, survivors[i]));
    }
    for (int i = 0; i < k; i++) {
      int parent;
      switch (scheme) {
        case RS_STAR:
          parent = 0;
          break;
        case PPR_TREE:
          parent = i == 0 ? 0 : (i - 1) / 2 + 1; // a binary tree over survivors, rooted at 1
          break;
        default:
          parent = i == k - 1 ? 0 : i + 2; // survivor i sends to survivor i+1; the last to 0
          break;
      }
      g.connect(i + 1, parent);
    }
    for (Vertex v : g.vertices) {
      g.assign(v);
    }
    return g;
  }

  private void connect(int from, int to) {
    vertices.get(from).output = to;
    vertices.get(to).inputs.add(from);
  }

  /** The paper's rules: degree picks the primitive, the vertex's job the calculator. */
  private void assign(Vertex v) {
    boolean local = v.unit >= 0;
    if (v.inputs.isEmpty()) {
      // A star's leaves send their unit raw; elsewhere they send coefficient x unit.
      v.primitive = scheme == Scheme.RS_STAR ? Primitive.SEND : Primitive.EC_SEND;
      v.calculator = scheme == Scheme.RS_STAR ? Calculator.NONE : Calculator.EC;
    } else if (v.output < 0 && !local) {
      // The rebuilding node: decodes raw units (star) or XORs partial results.
      v.primitive = scheme == Scheme.RS_STAR ? Primitive.RECV_EC : Primitive.RECV_XOR;
      v.calculator = scheme == Scheme.RS_STAR ? Calculator.EC : Calculator.XOR;
    } else {
      v.primitive = Primitive.RECV_EC_SEND;
      v.calculator = Calculator.EC;
    }
  }

  public Scheme scheme() {
    return scheme;
  }

  public List<Vertex> vertices() {
    return Collections.unmodifiableList(vertices);
  }

  public Vertex rebuilder() {
    return vertices.get(0);
  }

  public int[] erased() {
    return erased.clone();
  }

  /** Coefficient of survivor position s (0..k-1) in the row that rebuilds erased[r]. */
  public int coefficient(int r, int s) {
    return decode[r * k + s] & 0xff;
  }

  /** What one run of {@link #execute} did. */
  public static final class Execution {
    /** The rebuilt units, in the order of erased[]. */
    public byte[][] rebuilt;
    /** Bytes each vertex received, by vertex id. */
    public long[] received;
  }

  /**
   * Runs the graph over the units' bytes, slice by slice (ECPipe's pipelining; for the other
   * schemes slices change nothing but the working size): each vertex computes its output from
   * its local unit and its inputs exactly as its primitive and calculator say. This is what the
   * native engine executes over the network; here it runs in memory, for tests and planning.
   *
   * @param units all k+m units of the group, by unit index (only survivors are read)
   */
  public Execution execute(byte[][] units, int slice) {
    int len = units[survivors[0]].length;
    int rows = erased.length;
    Execution ex = new Execution();
    ex.rebuilt = new byte[rows][len];
    ex.received = new long[vertices.size()];
    // Prepared once: the order, the star's decoder, each survivor's share (its column).
    List<Vertex> order = topological();
    MatrixAccumulator star = MatrixAccumulator.java(k, rows, decode);
    MatrixAccumulator[] share = new MatrixAccumulator[k];
    for (int s = 0; s < k; s++) {
      byte[] column = new byte[rows];
      for (int r = 0; r < rows; r++) {
        column[r] = (byte) coefficient(r, s);
      }
      share[s] = MatrixAccumulator.java(1, rows, column);
    }
    int[] zeros = new int[rows];
    for (int start = 0; start < len; start += slice) {
      int n = Math.min(slice, len - start);
      // out[v] = what vertex v sends: its raw unit slice (SEND) or its rows of partial sums.
      byte[][][] out = new byte[vertices.size()][][];
      for (Vertex v : order) {
        byte[][] partial = new byte[rows][n];
        if (v.primitive == Primitive.SEND) {
          out[v.id] = new byte[][] {Arrays.copyOfRange(units[v.unit], start, start + n)};
          continue;
        }
        if (v.primitive == Primitive.RECV_EC) { // star: decode the raw units received
          for (int in : v.inputs) {
            ex.received[v.id] += n;
            star.accumulate(in - 1, out[in][0], 0, n, partial, zeros);
          }
        } else {
          for (int in : v.inputs) { // XOR the inputs' partial sums
            ex.received[v.id] += (long) rows * n;
            for (int r = 0; r < rows; r++) {
              for (int x = 0; x < n; x++) {
                partial[r][x] ^= out[in][r][x];
              }
            }
          }
          if (v.unit >= 0) { // and add coefficient x local unit
            share[v.id - 1].accumulate(0, units[v.unit], start, n, partial, zeros);
          }
        }
        out[v.id] = partial;
      }
      for (int r = 0; r < rows; r++) {
        System.arraycopy(out[0][r], 0, ex.rebuilt[r], start, n);
      }
    }
    return ex;
  }

  /** Vertices with every vertex after all of its inputs. */
  List<Vertex> topological() {
    List<Vertex> order = new ArrayList<>();
    boolean[] done = new boolean[vertices.size()];
    while (order.size() < vertices.size()) {
      boolean progress = false;
      for (Vertex v : vertices) {
        if (!done[v.id] && v.inputs.stream().allMatch(i -> done[i])) {
          order.add(v);
          done[v.id] = true;
          progress = true;
        }
      }
      if (!progress) {
        throw new IllegalStateException("repair graph has a cycle: " + vertices);
      }
    }
    return order;
  }

  @Override
  public String toString() {
    return scheme + " " + vertices;
  }
}
