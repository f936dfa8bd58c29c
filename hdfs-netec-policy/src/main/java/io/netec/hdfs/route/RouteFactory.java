package io.netec.hdfs.route;

import java.io.Closeable;
import java.io.IOException;

/**
 * Makes one route; found by {@link java.util.ServiceLoader}. Built-in and third-party routes
 * alike list their factory in {@code META-INF/services/io.netec.hdfs.route.RouteFactory};
 * {@code netec.route.order} then names the route. A third-party route reads its own keys under
 * {@code netec.NAME.} from {@link RouteContext#conf()}.
 */
public interface RouteFactory {
  /** The route's name: lower case letters, digits and '-'; not "native". */
  String name();

  /**
   * A route for this side (a DataNode's tasks, or a client's degraded reads).
   *
   * @throws IllegalArgumentException naming the key at fault when the route cannot be built
   */
  ReconstructionRoute create(RouteContext ctx);

  /**
   * Starts what every DataNode runs so that others' repairs can use it (the switch route's
   * survivor agent, the INEC participant), whether or not this DataNode's own order lists the
   * route; closed when the DataNode stops. A failure costs the DataNode only this route's
   * part.
   *
   * @return what to close, or null when the route needs nothing on DataNodes
   */
  default Closeable startDataNodeServices(RouteContext ctx) throws IOException {
    return null;
  }
}
