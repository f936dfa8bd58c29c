package io.netec.hdfs.route;

import java.io.IOException;

/**
 * Hadoop's own reconstruction (StripedBlockReconstructor.run). Always available, always last.
 * Hadoop logs and swallows its own failures, so success is judged by the bytes it wrote: a
 * complete reconstruction writes every rebuilt block in full.
 */
public final class NativeRoute implements ReconstructionRoute {
  public static final String NAME = "native";

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public long reconstruct(ReconstructionTask task) throws IOException {
    if (task.hadoopTask() == null) {
      throw new RouteDeclinedException("task has no Hadoop reconstructor");
    }
    long written = task.hadoopTask().runNative();
    if (written != task.bytesToRebuild()) {
      throw new IOException("Hadoop's reconstruction wrote " + written + " of "
          + task.bytesToRebuild() + " bytes (see the DataNode log for its error)");
    }
    return written;
  }
}
