package io.netec.hdfs.switchroute;

import io.netec.hdfs.codec.RsMatrix;
import io.netec.hdfs.route.DecodeSurvivors;
import io.netec.hdfs.route.RouteDeclinedException;
import io.netec.hdfs.switchroute.wire.ProtocolException;
import io.netec.hdfs.switchroute.wire.SetupRequest;
import java.util.ArrayList;
import java.util.List;

/**
 * Plans one switch task for a block group, for the DataNode route and the client alike: picks
 * k decode survivors ({@link DecodeSurvivors}: all-zero units cost no stream) and turns the RS
 * decode rows into per-sender coefficients for the units actually streamed.
 */
public final class SwitchPlan {
  /** A unit a survivor agent can stream. */
  public static final class Available {
    final int index;
    final String agent;
    final String block;
    final String token;

    /**
     * @param agent host:port of the agent holding it
     * @param block ExtendedBlock.toString() of the internal block
     * @param token encodeToUrlString() of a READ token, "" when tokens are off
     */
    public Available(int index, String agent, String block, String token) {
      this.index = index;
      this.agent = agent;
      this.block = block;
      this.token = token;
    }
  }

  private SwitchPlan() {
  }

  /**
   * @param unitLength length of every unit of the group (k+m entries)
   * @param erased the units to rebuild, one output row each
   * @param available units that may be streamed, in order of preference
   * @param premultiply pre-multiplied mode when there is one row to rebuild
   * @param datagram datagram mode (UDP)
   */
  public static SetupRequest plan(String group, int k, int m, long[] unitLength, int[] erased,
      List<Available> available, long offset, long length, int payload, int timeoutMs,
      boolean premultiply, boolean datagram) throws RouteDeclinedException {
    List<Integer> indices = new ArrayList<>();
    for (Available a : available) {
      indices.add(a.index);
    }
    DecodeSurvivors chosen = DecodeSurvivors.choose(k, m, unitLength, erased, indices, offset);
    int zeros = chosen.zeros;
    List<Available> streamed = new ArrayList<>();
    for (int i = zeros; i < k; i++) {
      streamed.add(available.get(indices.indexOf(chosen.units[i])));
    }
    int[] survivors = chosen.units;
    byte[] rows = RsMatrix.decodeRows(k, m, survivors, erased);
    byte[][] coefficients = new byte[erased.length][streamed.size()];
    List<SetupRequest.Survivor> senders = new ArrayList<>();
    for (int s = 0; s < streamed.size(); s++) {
      Available a = streamed.get(s);
      senders.add(new SetupRequest.Survivor(s, a.agent, a.block, unitLength[a.index], a.token));
      for (int r = 0; r < erased.length; r++) {
        coefficients[r][s] = rows[r * k + zeros + s]; // empty units' columns multiply zeros
      }
    }
    try {
      return new SetupRequest(group, payload, offset, length, timeoutMs, senders, coefficients,
          premultiply && erased.length == 1, datagram);
    } catch (ProtocolException e) {
      throw new RouteDeclinedException("cannot describe the task to a switch: "
          + e.getMessage());
    }
  }
}
