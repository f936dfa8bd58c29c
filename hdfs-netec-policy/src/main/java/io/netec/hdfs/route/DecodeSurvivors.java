package io.netec.hdfs.route;

import java.util.ArrayList;
import java.util.List;

/**
 * The k units a route decodes from, for the switch and INEC routes alike: first the units that
 * are all zeros over the range (a short group's missing units, or units that end before the
 * range: they cost no stream, as in Hadoop's reconstruction), then available units in order of
 * preference.
 */
public final class DecodeSurvivors {
  /** The k chosen units: {@link #zeros} all-zero units first, then streamed ones. */
  public final int[] units;
  public final int zeros;

  private DecodeSurvivors(int[] units, int zeros) {
    this.units = units;
    this.zeros = zeros;
  }

  /**
   * @param unitLength length of every unit of the group (k+m entries)
   * @param erased the units to rebuild
   * @param available units that can be streamed, in order of preference
   * @param offset where the range starts in every unit
   * @throws RouteDeclinedException with fewer than k usable units, or nothing to stream
   */
  public static DecodeSurvivors choose(int k, int m, long[] unitLength, int[] erased,
      List<Integer> available, long offset) throws RouteDeclinedException {
    List<Integer> chosen = new ArrayList<>();
    for (int i = 0; i < k + m && chosen.size() < k; i++) {
      if (unitLength[i] <= offset && !contains(erased, i)) {
        chosen.add(i);
      }
    }
    int zeros = chosen.size();
    for (int a : available) {
      if (chosen.size() < k && !chosen.contains(a) && !contains(erased, a)) {
        chosen.add(a);
      }
    }
    if (chosen.size() < k) {
      throw new RouteDeclinedException("only " + chosen.size() + " usable survivors, need " + k);
    }
    if (zeros == k) {
      throw new RouteDeclinedException("nothing to stream: every survivor is an empty unit");
    }
    return new DecodeSurvivors(chosen.stream().mapToInt(Integer::intValue).toArray(), zeros);
  }

  /** Whether {@code v} is one of {@code indices}. */
  public static boolean contains(int[] indices, int v) {
    for (int x : indices) {
      if (x == v) {
        return true;
      }
    }
    return false;
  }
}
