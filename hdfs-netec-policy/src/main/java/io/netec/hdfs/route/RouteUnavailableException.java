package io.netec.hdfs.route;

/**
 * A route could not reach the service it needs (connection refused, no route, timed out
 * connecting): nothing was done, and the router does not ask the route again until
 * {@code netec.route.backoff.ms} has passed, so a dead switch costs one attempt, not one per
 * range.
 */
public class RouteUnavailableException extends RouteDeclinedException {
  private static final long serialVersionUID = 1L;

  public RouteUnavailableException(String reason) {
    super(reason);
  }
}
