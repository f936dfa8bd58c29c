package io.netec.hdfs.datanode;

import io.netec.hdfs.route.ReconstructionTask;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.util.BitSet;
import java.util.concurrent.ThreadPoolExecutor;
import org.apache.hadoop.fs.StorageType;
import org.apache.hadoop.hdfs.protocol.DatanodeInfo;
import org.apache.hadoop.hdfs.protocol.ErasureCodingPolicy;
import org.apache.hadoop.hdfs.protocol.ExtendedBlock;
import org.apache.hadoop.hdfs.server.datanode.DataNode;
import org.apache.hadoop.hdfs.server.datanode.erasurecode.ErasureCodingWorker;
import org.apache.hadoop.hdfs.util.StripedBlockUtil;

/**
 * Every private part of Hadoop's DataNode EC code that the plugin touches, resolved once by
 * {@link #bind()}. Hadoop offers no hook for EC reconstruction, so the plugin swaps the worker's
 * reconstruction pool and reads each task's description from its fields (identical in 3.4.3 and
 * 3.5.0). If any part is missing, bind() fails and the plugin leaves every task to Hadoop.
 */
final class HadoopEcInternals {
  private static final String PKG = "org.apache.hadoop.hdfs.server.datanode.erasurecode.";

  private final Field workerPool;
  private final Class<?> blockReconstructor;
  private final Field ecPolicy;
  private final Field blockGroup;
  private final Field liveBitSet;
  private final Field excludeBitSet;
  private final Field stripedReader;
  private final Field readerLiveIndices;
  private final Field readerSources;
  private final Field stripedWriter;
  private final Field writerTargets;
  private final Field writerStorageTypes;
  private final Field writerStorageIds;
  private final Method getXmits;
  private final Method getBytesWritten;

  private HadoopEcInternals() throws ReflectiveOperationException {
    workerPool = field(ErasureCodingWorker.class, "stripedReconstructionPool");
    blockReconstructor = Class.forName(PKG + "StripedBlockReconstructor");
    Class<?> reconstructor = Class.forName(PKG + "StripedReconstructor");
    Class<?> reader = Class.forName(PKG + "StripedReader");
    Class<?> writer = Class.forName(PKG + "StripedWriter");
    ecPolicy = field(reconstructor, "ecPolicy");
    blockGroup = field(reconstructor, "blockGroup");
    liveBitSet = field(reconstructor, "liveBitSet");
    excludeBitSet = field(reconstructor, "excludeBitSet");
    stripedReader = field(reconstructor, "stripedReader");
    readerLiveIndices = field(reader, "liveIndices");
    readerSources = field(reader, "sources");
    stripedWriter = field(blockReconstructor, "stripedWriter");
    writerTargets = field(writer, "targets");
    writerStorageTypes = field(writer, "targetStorageTypes");
    writerStorageIds = field(writer, "targetStorageIds");
    getXmits = method(reconstructor, "getXmits");
    getBytesWritten = method(reconstructor, "getBytesWritten");
    if (!ThreadPoolExecutor.class.isAssignableFrom(workerPool.getType())) {
      throw new NoSuchFieldException("stripedReconstructionPool is a " + workerPool.getType());
    }
  }

  /** Resolves everything or throws, naming what this Hadoop lacks. */
  static HadoopEcInternals bind() throws ReflectiveOperationException {
    return new HadoopEcInternals();
  }

  private static Field field(Class<?> c, String name) throws NoSuchFieldException {
    Field f = c.getDeclaredField(name);
    f.setAccessible(true);
    return f;
  }

  private static Method method(Class<?> c, String name) throws NoSuchMethodException {
    Method m = c.getDeclaredMethod(name);
    m.setAccessible(true);
    return m;
  }

  ThreadPoolExecutor pool(ErasureCodingWorker worker) throws IllegalAccessException {
    return (ThreadPoolExecutor) workerPool.get(worker);
  }

  void setPool(ErasureCodingWorker worker, ThreadPoolExecutor pool) throws IllegalAccessException {
    workerPool.set(worker, pool);
  }

  /** The task's policy if {@code r} is Hadoop's block reconstructor, else null. */
  ErasureCodingPolicy policyOf(Runnable r) {
    if (!blockReconstructor.isInstance(r)) {
      return null;
    }
    return (ErasureCodingPolicy) get(ecPolicy, r);
  }

  /** Describes a StripedBlockReconstructor; its run() stays available as the native route. */
  ReconstructionTask describe(Runnable r, DataNode dn, ErasureCodingWorker worker) {
    ErasureCodingPolicy policy = policyOf(r);
    ExtendedBlock group = (ExtendedBlock) get(blockGroup, r);
    BitSet live = (BitSet) get(liveBitSet, r);
    BitSet exclude = (BitSet) get(excludeBitSet, r);
    Object reader = get(stripedReader, r);
    Object writer = get(stripedWriter, r);
    DatanodeInfo[] targets = (DatanodeInfo[]) get(writerTargets, writer);
    // The same choice of erased indices as StripedWriter.initTargetIndices: missing, non-empty,
    // not excluded, at most one per target.
    int units = policy.getNumDataUnits() + policy.getNumParityUnits();
    short[] erased = new short[Math.min(targets.length, units)];
    int n = 0;
    for (int i = 0; i < units && n < targets.length; i++) {
      if (!live.get(i) && !exclude.get(i)
          && StripedBlockUtil.getInternalBlockLength(group.getNumBytes(), policy, i) > 0) {
        erased[n++] = (short) i;
      }
    }
    short[] used = java.util.Arrays.copyOf(erased, n);
    return new ReconstructionTask(group, policy, (byte[]) get(readerLiveIndices, reader),
        (DatanodeInfo[]) get(readerSources, reader), used,
        java.util.Arrays.copyOf(targets, n),
        java.util.Arrays.copyOf((StorageType[]) get(writerStorageTypes, writer), n),
        java.util.Arrays.copyOf((String[]) get(writerStorageIds, writer), n),
        new HadoopTaskHandle(r, dn, worker));
  }

  private static Object get(Field f, Object o) {
    try {
      return f.get(o);
    } catch (IllegalAccessException e) {
      throw new IllegalStateException("cannot read " + f, e);
    }
  }

  private Object call(Method m, Object o) {
    try {
      return m.invoke(o);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("cannot call " + m, e);
    }
  }

  /** Runs or releases Hadoop's reconstructor, mirroring the bookkeeping of its run(). */
  private final class HadoopTaskHandle implements ReconstructionTask.HadoopTask {
    private final Runnable reconstructor;
    private final DataNode dn;
    private final ErasureCodingWorker worker;

    HadoopTaskHandle(Runnable reconstructor, DataNode dn, ErasureCodingWorker worker) {
      this.reconstructor = reconstructor;
      this.dn = dn;
      this.worker = worker;
    }

    @Override
    public long runNative() {
      reconstructor.run();
      return (Long) call(getBytesWritten, reconstructor);
    }

    @Override
    public void releaseServedElsewhere(long bytesWritten) {
      // What StripedBlockReconstructor.run() does in its finally block, minus the reader and
      // writer it never opened: xmits reserved at submission go back, task metrics count.
      int xmits = (Integer) call(getXmits, reconstructor);
      dn.decrementXmitsInProgress(Math.max((int) (xmits * worker.getXmitWeight()), 1));
      dn.getMetrics().incrECReconstructionTasks();
      dn.getMetrics().incrECReconstructionBytesWritten(bytesWritten);
    }
  }
}
