package io.netec.hdfs.route;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import org.apache.hadoop.hdfs.protocol.DatanodeInfo;
import org.apache.hadoop.hdfs.protocol.ErasureCodingPolicy;
import org.apache.hadoop.hdfs.protocol.ExtendedBlock;
import org.apache.hadoop.hdfs.util.StripedBlockUtil;

/**
 * What a route is asked to rebuild, the same on a DataNode and on a client: the erased units
 * of one block group over the range [offset, offset + length) of every unit, and the units
 * that survive, where they are and the READ token of each. Row r of the output is unit
 * {@code erased[r]}, {@link #rowLength(int)} bytes long (a unit shorter than the range ends
 * early). Immutable.
 */
public final class RepairRequest {
  /** A unit that can be read, on which DataNode, with which token. */
  public static final class Survivor {
    public final int index;
    public final DatanodeInfo node;
    public final ExtendedBlock block;
    /** encodeToUrlString() of a READ token for {@link #block}, "" when tokens are off. */
    public final String token;

    public Survivor(int index, DatanodeInfo node, ExtendedBlock block, String token) {
      this.index = index;
      this.node = Objects.requireNonNull(node, "node");
      this.block = Objects.requireNonNull(block, "block");
      this.token = token == null ? "" : token;
    }
  }

  private final String label;
  private final ExtendedBlock blockGroup;
  private final long groupBytes;
  private final ErasureCodingPolicy policy;
  private final int[] erased;
  private final long offset;
  private final long length;
  private final List<Survivor> survivors;
  private final int progressTimeoutMs;
  /** The rebuilding node's rack (its network location), null when not known. */
  private final String readerRack;

  /**
   * @param label names the task or read in logs (e.g. the block group and the file)
   * @param groupBytes the group's logical length, from which every unit's length follows
   * @param survivors units that can be read, in order of preference
   */
  public RepairRequest(String label, ExtendedBlock blockGroup, long groupBytes,
      ErasureCodingPolicy policy, int[] erased, long offset, long length,
      List<Survivor> survivors) {
    this(label, blockGroup, groupBytes, policy, erased, offset, length, survivors, 0, null);
  }

  private RepairRequest(String label, ExtendedBlock blockGroup, long groupBytes,
      ErasureCodingPolicy policy, int[] erased, long offset, long length,
      List<Survivor> survivors, int progressTimeoutMs, String readerRack) {
    this.progressTimeoutMs = progressTimeoutMs;
    this.readerRack = readerRack;
    this.label = label;
    this.blockGroup = Objects.requireNonNull(blockGroup, "blockGroup");
    this.groupBytes = groupBytes;
    this.policy = Objects.requireNonNull(policy, "policy");
    this.erased = erased.clone();
    this.offset = offset;
    this.length = length;
    this.survivors = Collections.unmodifiableList(new ArrayList<>(survivors));
    int units = policy.getNumDataUnits() + policy.getNumParityUnits();
    if (erased.length == 0 || Arrays.stream(erased).anyMatch(e -> e < 0 || e >= units)
        || Arrays.stream(erased).distinct().count() != erased.length) {
      throw new IllegalArgumentException("bad erased units " + Arrays.toString(erased));
    }
    if (offset < 0 || length < 0) {
      throw new IllegalArgumentException("bad range " + offset + "+" + length);
    }
  }

  public String label() {
    return label;
  }

  public ExtendedBlock blockGroup() {
    return blockGroup;
  }

  public ErasureCodingPolicy policy() {
    return policy;
  }

  public int dataUnits() {
    return policy.getNumDataUnits();
  }

  public int parityUnits() {
    return policy.getNumParityUnits();
  }

  public int[] erased() {
    return erased.clone();
  }

  public int rows() {
    return erased.length;
  }

  /** Where the range starts in every unit. */
  public long offset() {
    return offset;
  }

  /** Bytes of the range (the longest row). */
  public long length() {
    return length;
  }

  public List<Survivor> survivors() {
    return survivors;
  }

  public long unitLength(int index) {
    return StripedBlockUtil.getInternalBlockLength(groupBytes, policy, index);
  }

  /** Length of every unit of the group (k+m entries). */
  public long[] unitLengths() {
    long[] a = new long[dataUnits() + parityUnits()];
    for (int i = 0; i < a.length; i++) {
      a[i] = unitLength(i);
    }
    return a;
  }

  /** Bytes row r holds: unit erased[r] within the range. */
  public long rowLength(int r) {
    return Math.max(0, Math.min(length, unitLength(erased[r]) - offset));
  }

  public long[] rowLengths() {
    long[] a = new long[erased.length];
    for (int r = 0; r < a.length; r++) {
      a[r] = rowLength(r);
    }
    return a;
  }

  /** Bytes a complete repair delivers: the sum of the rows. */
  public long bytesToRebuild() {
    return Arrays.stream(rowLengths()).sum();
  }

  /**
   * The longest a route may go without progress before it gives up, so that a stalled survivor
   * is replaced by a spare as Hadoop's reconstruction replaces a source (its striped-read
   * timeout): 0 when the route's own timeout applies (no spare, or no such limit).
   */
  public int progressTimeoutMs() {
    return progressTimeoutMs;
  }

  /** A route's no-progress timeout for this request: its own, cut to {@link #progressTimeoutMs}. */
  public int progressTimeoutMs(int routeTimeoutMs) {
    return progressTimeoutMs > 0 ? Math.min(routeTimeoutMs, progressTimeoutMs) : routeTimeoutMs;
  }

  /** The same request with a no-progress limit for routes (0: none). */
  public RepairRequest withProgressTimeout(int ms) {
    return new RepairRequest(label, blockGroup, groupBytes, policy, erased, offset, length,
        survivors, Math.max(0, ms), readerRack);
  }

  /**
   * The same request with the rebuilding node's rack (its network location as the NameNode
   * gave it), for routes that plan by rack ({@link RackAware}); null when not known.
   */
  public RepairRequest withReaderRack(String rack) {
    return new RepairRequest(label, blockGroup, groupBytes, policy, erased, offset, length,
        survivors, progressTimeoutMs, rack);
  }

  /** The rebuilding node's rack, or null when not known (a client's read). */
  public String readerRack() {
    return readerRack;
  }

  /** The same request for rows {@code rows} only (indices into this request's rows). */
  public RepairRequest withRows(int[] rows) {
    int[] e = new int[rows.length];
    for (int i = 0; i < rows.length; i++) {
      e[i] = erased[rows[i]];
    }
    return new RepairRequest(label, blockGroup, groupBytes, policy, e, offset, length,
        survivors, progressTimeoutMs, readerRack);
  }

  /** The same request without the survivors holding {@code units}. */
  public RepairRequest without(java.util.Collection<Integer> units) {
    List<Survivor> kept = new ArrayList<>();
    for (Survivor s : survivors) {
      if (!units.contains(s.index)) {
        kept.add(s);
      }
    }
    return new RepairRequest(label, blockGroup, groupBytes, policy, erased, offset, length,
        kept, progressTimeoutMs, readerRack);
  }

  /**
   * Survivors beyond the k a decode needs: how many faulty ones can be replaced. Units that are
   * all zeros over the range count as survivors that need no stream.
   */
  public int spareSurvivors() {
    int k = dataUnits();
    int usable = 0;
    for (int i = 0; i < k + parityUnits(); i++) {
      if (unitLength(i) <= offset && !DecodeSurvivors.contains(erased, i)) {
        usable++;
      }
    }
    java.util.Set<Integer> seen = new java.util.HashSet<>();
    for (Survivor s : survivors) {
      if (unitLength(s.index) > offset && !DecodeSurvivors.contains(erased, s.index)
          && seen.add(s.index)) {
        usable++;
      }
    }
    return Math.max(0, usable - k);
  }

  @Override
  public String toString() {
    return label;
  }
}
