package io.netec.hdfs.route;

import java.io.IOException;

/**
 * Hadoop's own repair, always available and always last: the DataNode's
 * StripedBlockReconstructor, or the client's striped stream, as the sink provides.
 */
public final class NativeRoute implements ReconstructionRoute {
  public static final String NAME = "native";

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public long repair(RepairRequest req, RepairSink sink) throws IOException {
    int[] rows = new int[req.rows()];
    for (int r = 0; r < rows.length; r++) {
      rows[r] = r;
    }
    sink.repairNatively(rows);
    return -1;
  }
}
