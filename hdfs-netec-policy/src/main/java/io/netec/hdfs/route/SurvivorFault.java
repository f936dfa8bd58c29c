package io.netec.hdfs.route;

import java.io.IOException;
import java.util.Arrays;
import java.util.Collection;

/**
 * A route's attempt failed because of survivors, not the route: units that could not be read
 * (a corrupt replica, a refused token), that stalled longer than Hadoop's striped-read timeout,
 * or that could not prove their bytes. The router tries the route again with spare survivors in
 * their place where the group has them, and does not count the failure against the route.
 */
public class SurvivorFault extends IOException {
  private static final long serialVersionUID = 1L;
  private final int[] units;

  public SurvivorFault(int[] units, String message) {
    super(message);
    this.units = units.clone();
  }

  public SurvivorFault(int unit, String message) {
    this(new int[] {unit}, message);
  }

  public SurvivorFault(Collection<Integer> units, String message) {
    this(units.stream().mapToInt(Integer::intValue).toArray(), message);
  }

  /** The units at fault. */
  public int[] units() {
    return units.clone();
  }

  @Override
  public String toString() {
    return "survivor fault (units " + Arrays.toString(units) + "): " + getMessage();
  }
}
