package io.netec.hdfs.datanode;

import io.netec.hdfs.route.ReconstructionTask;
import java.lang.reflect.Constructor;
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
  private final Constructor<?> reconstructionInfo;
  private final Constructor<?> newReconstructor;
  private final Method allBpOs;
  private final Method bposWriteLock;
  private final Method bposWriteUnlock;

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
    Class<?> info = Class.forName(PKG + "StripedReconstructionInfo");
    reconstructionInfo = info.getDeclaredConstructor(ExtendedBlock.class,
        ErasureCodingPolicy.class, byte[].class, DatanodeInfo[].class, DatanodeInfo[].class,
        StorageType[].class, String[].class, byte[].class);
    reconstructionInfo.setAccessible(true);
    newReconstructor = blockReconstructor.getDeclaredConstructor(ErasureCodingWorker.class,
        info);
    newReconstructor.setAccessible(true);
    allBpOs = method(DataNode.class, "getAllBpOs");
    Class<?> bpos = Class.forName("org.apache.hadoop.hdfs.server.datanode.BPOfferService");
    bposWriteLock = method(bpos, "writeLock");
    bposWriteUnlock = method(bpos, "writeUnlock");
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

  /**
   * Puts {@code pool} in the worker's place so that every later EC command uses it: the field is
   * written, then each block pool's lock is taken and released, which the thread that processes
   * the NameNode's commands takes before each command (BPOfferService.processCommandFromActor),
   * so the write happens-before every command processed after this returns.
   */
  void setPool(DataNode dn, ErasureCodingWorker worker, ThreadPoolExecutor pool)
      throws ReflectiveOperationException {
    workerPool.set(worker, pool);
    for (Object bpos : (java.util.List<?>) allBpOs.invoke(dn)) {
      bposWriteLock.invoke(bpos);
      bposWriteUnlock.invoke(bpos);
    }
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
    ReconstructionTask[] self = new ReconstructionTask[1];
    HadoopTaskHandle handle = new HadoopTaskHandle(r, dn, worker, () -> self[0]);
    self[0] = new ReconstructionTask(group, policy, (byte[]) get(readerLiveIndices, reader),
        (DatanodeInfo[]) get(readerSources, reader), used,
        java.util.Arrays.copyOf(targets, n),
        java.util.Arrays.copyOf((StorageType[]) get(writerStorageTypes, writer), n),
        java.util.Arrays.copyOf((String[]) get(writerStorageIds, writer), n),
        handle);
    return self[0];
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

  /** Runs or settles Hadoop's reconstructor, mirroring the bookkeeping of its run(). */
  private final class HadoopTaskHandle implements ReconstructionTask.HadoopTask {
    private final Runnable reconstructor;
    private final DataNode dn;
    private final ErasureCodingWorker worker;
    private final ReconstructionTask.Describer task;
    /** The task's reservation (xmits) went back (a run of Hadoop's reconstructor returns it). */
    private boolean returned;

    HadoopTaskHandle(Runnable reconstructor, DataNode dn, ErasureCodingWorker worker,
        ReconstructionTask.Describer task) {
      this.reconstructor = reconstructor;
      this.dn = dn;
      this.worker = worker;
      this.task = task;
    }

    @Override
    public long runNative(short[] erasedIndices) {
      ReconstructionTask t = task.get();
      if (erasedIndices.length == t.erasedCount()) {
        returned = true; // run() gives the xmits back in its finally, whatever happens
        reconstructor.run();
        return (Long) call(getBytesWritten, reconstructor);
      }
      // Some targets were written by routes: a reconstructor of Hadoop's for the others only,
      // the written units excluded (as the NameNode excludes units being rebuilt). Its run()
      // gives back the xmits of its sources, the same sources as the task's.
      java.util.List<DatanodeInfo> targets = new java.util.ArrayList<>();
      java.util.List<StorageType> types = new java.util.ArrayList<>();
      java.util.List<String> ids = new java.util.ArrayList<>();
      java.util.Set<Integer> open = new java.util.HashSet<>();
      for (short e : erasedIndices) {
        open.add((int) e);
      }
      BitSet exclude = (BitSet) ((BitSet) get(excludeBitSet, reconstructor)).clone();
      for (int r = 0; r < t.erasedCount(); r++) {
        if (open.contains(t.erasedIndex(r))) {
          targets.add(t.target(r));
          types.add(t.targetStorageType(r));
          ids.add(t.targetStorageId(r));
        } else {
          exclude.set(t.erasedIndex(r));
        }
      }
      byte[] excluded = new byte[exclude.cardinality()];
      for (int i = exclude.nextSetBit(0), n = 0; i >= 0; i = exclude.nextSetBit(i + 1)) {
        excluded[n++] = (byte) i;
      }
      try {
        Object info = reconstructionInfo.newInstance(t.blockGroup(), t.policy(),
            t.liveIndices(), t.sources(), targets.toArray(new DatanodeInfo[0]),
            types.toArray(new StorageType[0]), ids.toArray(new String[0]), excluded);
        Runnable rest = (Runnable) newReconstructor.newInstance(worker, info);
        // rest.run() gives back its own xmits (weighted, at least 1): the task reserved its
        // own at submission, more when it had more targets than sources; the rest goes back
        // here, so the DataNode's count stays balanced
        int reserved = weighted((Integer) call(getXmits, reconstructor));
        int back = weighted((Integer) call(getXmits, rest));
        returned = true;
        try {
          rest.run();
        } finally {
          if (reserved > back) {
            dn.decrementXmitsInProgress(reserved - back);
          }
        }
        return (Long) call(getBytesWritten, rest);
      } catch (ReflectiveOperationException e) {
        throw new IllegalStateException("cannot make Hadoop's reconstructor of units "
            + java.util.Arrays.toString(erasedIndices) + ": " + e, e);
      }
    }

    /** What the worker counts for a reconstructor's xmits (at least 1, as it submits). */
    private int weighted(int xmits) {
      return Math.max((int) (xmits * worker.getXmitWeight()), 1);
    }

    @Override
    public void settle(ReconstructionTask.RoutedWork w) {
      // What StripedBlockReconstructor.run() does in its finally block and reconstruct() per
      // step, for the routes' part: xmits reserved at submission go back (unless a native run
      // did), the EC counters count.
      org.apache.hadoop.hdfs.server.datanode.metrics.DataNodeMetrics m = dn.getMetrics();
      if (!returned) {
        returned = true;
        dn.decrementXmitsInProgress(weighted((Integer) call(getXmits, reconstructor)));
        m.incrECReconstructionTasks();
        if (w.failed) {
          m.incrECFailedReconstructionTasks();
        }
      }
      if (w.invalid > 0) { // once a task however many attempts failed, as Hadoop counts
        m.incrECInvalidReconstructionTasks();
      }
      if (w.bytesWritten > 0 || w.bytesRead > 0) {
        m.incrECReconstructionBytesRead(w.bytesRead);
        m.incrECReconstructionRemoteBytesRead(w.bytesRead);
        m.incrECReconstructionBytesWritten(w.bytesWritten);
        m.incrECReconstructionReadTime(w.readMillis);
        m.incrECReconstructionWriteTime(w.writeMillis);
      }
    }
  }
}
