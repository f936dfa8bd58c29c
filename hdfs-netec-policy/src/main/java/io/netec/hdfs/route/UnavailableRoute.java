package io.netec.hdfs.route;

/** A route named in the order that this build or host cannot run: it declines every task. */
final class UnavailableRoute implements ReconstructionRoute {
  private final String name;
  private final String reason;

  UnavailableRoute(String name, String reason) {
    this.name = name;
    this.reason = reason;
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public long reconstruct(ReconstructionTask task) throws RouteDeclinedException {
    throw new RouteDeclinedException(reason);
  }
}
