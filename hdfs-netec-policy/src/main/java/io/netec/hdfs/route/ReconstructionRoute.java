package io.netec.hdfs.route;

import java.io.IOException;

/**
 * A way to rebuild the erased units of a {@link RepairRequest} into a {@link RepairSink}: the
 * same contract on a DataNode (the sink writes internal blocks to their targets) and on a
 * client (the sink fills a degraded read). Routes are created by their {@link RouteFactory}.
 */
public interface ReconstructionRoute {
  /** The name used in netec.route.order and in logs and metrics. */
  String name();

  /**
   * Writes every row of {@code req} into {@code sink}, each in order and whole. The router
   * completes or aborts the sink; a route need not clean up what it wrote.
   *
   * @return bytes this node received to do it (its ingress), or -1 when not known
   * @throws RouteDeclinedException before doing any work, when this route cannot take the
   *     request ({@link RouteUnavailableException} when its service cannot be reached)
   * @throws IOException when the route failed; the router may retry it or move on
   */
  long repair(RepairRequest req, RepairSink sink) throws IOException;
}
