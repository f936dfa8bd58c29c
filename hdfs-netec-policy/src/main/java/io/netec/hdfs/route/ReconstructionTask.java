package io.netec.hdfs.route;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import org.apache.hadoop.fs.StorageType;
import org.apache.hadoop.hdfs.protocol.DatanodeInfo;
import org.apache.hadoop.hdfs.protocol.ErasureCodingPolicy;
import org.apache.hadoop.hdfs.protocol.ExtendedBlock;
import org.apache.hadoop.hdfs.util.StripedBlockUtil;

/**
 * One EC reconstruction task as the NameNode gave it to a DataNode: the block group, its policy,
 * the live internal blocks and where they are, and the erased internal blocks with the target
 * that must receive each rebuilt block. Immutable. Routes see it as a {@link RepairRequest};
 * {@link InternalBlockSink} writes its targets.
 */
public final class ReconstructionTask {
  private final ExtendedBlock blockGroup;
  private final ErasureCodingPolicy policy;
  private final byte[] liveIndices;
  private final DatanodeInfo[] sources;
  private final short[] erasedIndices;
  private final DatanodeInfo[] targets;
  private final StorageType[] targetStorageTypes;
  private final String[] targetStorageIds;
  private final HadoopTask hadoopTask;

  /** Hadoop's own reconstructor for this task, which only the native route runs. */
  public interface HadoopTask {
    /**
     * Runs Hadoop's reconstruction of the given erased units (those of the task still open,
     * each to its own target); returns the bytes it wrote to targets.
     */
    long runNative(short[] erasedIndices);

    /**
     * Hadoop's bookkeeping of what the routes did for this task, once, after the router: the
     * task's reservation (xmits) given back unless a native run gave it back already.
     */
    void settle(RoutedWork work);
  }

  /** The task a Hadoop handle belongs to (it is made before the task). */
  public interface Describer {
    ReconstructionTask get();
  }

  /** What routes other than native did for a task, for Hadoop's counters. */
  public static final class RoutedWork {
    public final long bytesWritten;
    public final long bytesRead;
    public final long readMillis;
    public final long writeMillis;
    /** Some row was rebuilt by no route. */
    public final boolean failed;
    /** Attempts whose output failed its proof. */
    public final long invalid;

    public RoutedWork(long bytesWritten, long bytesRead, long readMillis, long writeMillis,
        boolean failed, long invalid) {
      this.bytesWritten = bytesWritten;
      this.bytesRead = bytesRead;
      this.readMillis = readMillis;
      this.writeMillis = writeMillis;
      this.failed = failed;
      this.invalid = invalid;
    }
  }

  /**
   * @param liveIndices index of the internal block held by each source, same order
   * @param erasedIndices index of the internal block each target must receive, same order
   */
  public ReconstructionTask(ExtendedBlock blockGroup, ErasureCodingPolicy policy,
      byte[] liveIndices, DatanodeInfo[] sources, short[] erasedIndices, DatanodeInfo[] targets,
      StorageType[] targetStorageTypes, String[] targetStorageIds, HadoopTask hadoopTask) {
    this.blockGroup = Objects.requireNonNull(blockGroup, "blockGroup");
    this.policy = Objects.requireNonNull(policy, "policy");
    this.liveIndices = liveIndices.clone();
    this.sources = sources.clone();
    this.erasedIndices = erasedIndices.clone();
    this.targets = targets.clone();
    this.targetStorageTypes = targetStorageTypes.clone();
    this.targetStorageIds = targetStorageIds.clone();
    this.hadoopTask = hadoopTask;
    if (liveIndices.length != sources.length) {
      throw new IllegalArgumentException("live indices " + Arrays.toString(liveIndices)
          + " do not match " + sources.length + " sources");
    }
    if (erasedIndices.length == 0 || erasedIndices.length > targets.length
        || targets.length != targetStorageTypes.length
        || targets.length != targetStorageIds.length) {
      throw new IllegalArgumentException("erased indices " + Arrays.toString(erasedIndices)
          + " do not match " + targets.length + " targets");
    }
  }

  public ExtendedBlock blockGroup() {
    return blockGroup;
  }

  public ErasureCodingPolicy policy() {
    return policy;
  }

  public byte[] liveIndices() {
    return liveIndices.clone();
  }

  public DatanodeInfo[] sources() {
    return sources.clone();
  }

  /** Number of internal blocks to rebuild (one per target used). */
  public int erasedCount() {
    return erasedIndices.length;
  }

  public int erasedIndex(int i) {
    return erasedIndices[i];
  }

  private int[] erasedIndices() {
    int[] a = new int[erasedIndices.length];
    for (int i = 0; i < a.length; i++) {
      a[i] = erasedIndices[i];
    }
    return a;
  }

  /** Target that receives the rebuilt block erasedIndex(i). */
  public DatanodeInfo target(int i) {
    return targets[i];
  }

  public StorageType targetStorageType(int i) {
    return targetStorageTypes[i];
  }

  public String targetStorageId(int i) {
    return targetStorageIds[i];
  }

  /** The internal block with index {@code index} of this group. */
  public ExtendedBlock internalBlock(int index) {
    return StripedBlockUtil.constructInternalBlock(blockGroup, policy, index);
  }

  public long internalBlockLength(int index) {
    return StripedBlockUtil.getInternalBlockLength(blockGroup.getNumBytes(), policy, index);
  }

  /** Lengths of the blocks to rebuild, in the order of the erased indices. */
  private long[] erasedLengths() {
    long[] a = new long[erasedIndices.length];
    for (int r = 0; r < a.length; r++) {
      a[r] = internalBlockLength(erasedIndices[r]);
    }
    return a;
  }

  /** Bytes a complete reconstruction writes: the lengths of all rebuilt blocks. */
  public long bytesToRebuild() {
    return Arrays.stream(erasedLengths()).sum();
  }

  /**
   * The request every route gets for this task: all erased blocks, whole, from the live
   * blocks in the order the NameNode listed them.
   *
   * @param readToken the READ token of an internal block, as survivors check it
   */
  public RepairRequest repairRequest(Function<ExtendedBlock, String> readToken) {
    List<RepairRequest.Survivor> survivors = new ArrayList<>();
    for (int j = 0; j < liveIndices.length; j++) {
      ExtendedBlock b = internalBlock(liveIndices[j]);
      survivors.add(new RepairRequest.Survivor(liveIndices[j], sources[j], b,
          readToken.apply(b)));
    }
    long length = Arrays.stream(erasedLengths()).max().getAsLong();
    // the NameNode gives the task to its first target, which rebuilds there: its rack is ours
    return new RepairRequest("Task " + this, blockGroup, blockGroup.getNumBytes(), policy,
        erasedIndices(), 0, length, survivors).withReaderRack(targets[0].getNetworkLocation());
  }

  HadoopTask hadoopTask() {
    return hadoopTask;
  }

  @Override
  public String toString() {
    return blockGroup.getLocalBlock() + " (" + policy.getName() + ", live "
        + Arrays.toString(liveIndices) + ", erased " + Arrays.toString(erasedIndices) + ")";
  }
}
