package io.netec.hdfs.route;

import java.io.IOException;

/**
 * A way to rebuild the erased internal blocks of a task and put them on the task's targets.
 * Implementations must leave no target with a partial or wrong block when they throw: the
 * next route will write the same blocks.
 */
public interface ReconstructionRoute {
  /** The name used in netec.route.order and in logs and metrics. */
  String name();

  /**
   * Rebuilds every erased internal block of {@code task} onto its target.
   *
   * @return bytes written to targets
   * @throws RouteDeclinedException before doing any work, when this route cannot take the task
   * @throws IOException when the route failed; the router may retry it or move on
   */
  long reconstruct(ReconstructionTask task) throws IOException;
}
