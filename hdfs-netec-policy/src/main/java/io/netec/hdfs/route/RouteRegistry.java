package io.netec.hdfs.route;

import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;
import java.util.Set;

/** The routes a process has: every {@link RouteFactory} ServiceLoader finds, by name. */
public final class RouteRegistry {
  private final Map<String, RouteFactory> factories;

  private RouteRegistry(Map<String, RouteFactory> factories) {
    this.factories = Collections.unmodifiableMap(factories);
  }

  /**
   * @throws IllegalArgumentException when a listed factory cannot be loaded, two share a
   *     name, or a name is not allowed
   */
  public static RouteRegistry load(ClassLoader loader) {
    Map<String, RouteFactory> found = new LinkedHashMap<>();
    Iterator<RouteFactory> it = ServiceLoader.load(RouteFactory.class, loader).iterator();
    while (true) {
      RouteFactory f;
      try {
        if (!it.hasNext()) {
          break;
        }
        f = it.next();
      } catch (ServiceConfigurationError e) {
        throw new IllegalArgumentException("a route listed in META-INF/services/"
            + RouteFactory.class.getName() + " cannot be loaded: " + e.getMessage(), e);
      }
      String name = f.name();
      if (name == null || !name.matches("[a-z][a-z0-9-]{0,31}") || name.equals(NativeRoute.NAME)) {
        throw new IllegalArgumentException("route factory " + f.getClass().getName()
            + " has a bad name '" + name + "' (lower case letters, digits, '-'; not native)");
      }
      RouteFactory other = found.putIfAbsent(name, f);
      if (other != null && other.getClass() != f.getClass()) {
        throw new IllegalArgumentException("two routes are named '" + name + "': "
            + other.getClass().getName() + " and " + f.getClass().getName());
      }
    }
    return new RouteRegistry(found);
  }

  /** Names of the routes found (native is not among them: it is always there). */
  public Set<String> names() {
    return factories.keySet();
  }

  public RouteFactory get(String name) {
    return factories.get(name);
  }

  public Iterable<RouteFactory> factories() {
    return factories.values();
  }
}
