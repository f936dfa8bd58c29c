package io.netec.hdfs.route;

import java.io.IOException;

/**
 * A route gave up because nothing arrived for its no-progress timeout: the one failure after
 * which the router asks the attempt's proof which survivors it waited on (those whose
 * fingerprint has not come while the others' have) and runs the route again from spares.
 */
public class RouteStalledException extends IOException {
  private static final long serialVersionUID = 1L;

  public RouteStalledException(String message) {
    super(message);
  }
}
