package io.netec.hdfs.route;

import java.io.IOException;

/** A route will not take a task (not configured, unhealthy, no capacity); nothing was done. */
public class RouteDeclinedException extends IOException {
  private static final long serialVersionUID = 1L;

  public RouteDeclinedException(String reason) {
    super(reason);
  }
}
