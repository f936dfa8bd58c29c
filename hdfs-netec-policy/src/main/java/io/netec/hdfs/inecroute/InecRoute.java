package io.netec.hdfs.inecroute;

import io.netec.hdfs.route.InternalBlockWriter;
import io.netec.hdfs.route.ReconstructionRoute;
import io.netec.hdfs.route.ReconstructionTask;
import io.netec.hdfs.route.RouteContext;
import io.netec.hdfs.route.RouteDeclinedException;
import io.netec.hdfs.route.ServiceDirectory;
import io.netec.hdfs.route.ServiceDirectory.Service;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;
import org.apache.hadoop.hdfs.protocol.DatanodeInfo;
import org.apache.hadoop.hdfs.protocol.ExtendedBlock;
import org.apache.hadoop.hdfs.server.datanode.DataNode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The INEC route on the rebuilding DataNode: the survivors' participants run the repair graph
 * of the configured scheme (ECPipe chain by default) and this DataNode, its root, receives the
 * rebuilt blocks through its engine and writes each to its target with
 * {@link InternalBlockWriter}, finalized only when complete. Declines when this DataNode has
 * no engine; fails (the router moves on) on any error, leaving no partial block on a target.
 */
public final class InecRoute implements ReconstructionRoute {
  public static final String NAME = "inec";
  private static final Logger LOG = LoggerFactory.getLogger(InecRoute.class);
  /** Bytes this JVM's INEC routes received from participants (their ingress). */
  static final LongAdder BYTES_RECEIVED = new LongAdder();
  /** Tasks this JVM's INEC routes served, by the transport of their streams. */
  private static final LongAdder[] SERVED_OVER = {new LongAdder(), new LongAdder(),
      new LongAdder()};

  private final RouteContext ctx;
  private final InecRepair.Settings settings;

  /** @throws IllegalArgumentException naming the netec.inec.* key that is wrong */
  public InecRoute(RouteContext ctx) {
    this.ctx = ctx;
    this.settings = InecRepair.Settings.fromConf(ctx.conf());
  }

  @Override
  public String name() {
    return NAME;
  }

  /** Tasks served in this JVM whose streams to the rebuilding node used transport t. */
  public static long servedOver(InecEngine.Transport t) {
    return SERVED_OVER[t.ordinal()].sum();
  }

  /** Ingress of all INEC routes in this JVM. */
  public static long bytesReceived() {
    return BYTES_RECEIVED.sum();
  }

  @Override
  public long reconstruct(ReconstructionTask task) throws IOException {
    DataNode dn = ctx.dataNode();
    if (dn == null) {
      throw new RouteDeclinedException("not running in a DataNode");
    }
    InecEngine engine = InecNode.dataNode(dn.getXferPort());
    if (engine == null) {
      String why = InecEngine.unavailableReason();
      throw new RouteDeclinedException("no INEC engine on this DataNode"
          + (why != null ? ": " + why : " (netec.inec.enabled is false, or it did not start)"));
    }
    int k = task.dataUnits();
    int m = task.parityUnits();
    int[] erased = task.erasedIndices();
    long[] rowLength = task.erasedLengths();
    long length = java.util.Arrays.stream(rowLength).max().getAsLong();
    long[] unitLength = task.unitLengths();
    byte[] live = task.liveIndices();
    DatanodeInfo[] sources = task.sources();
    List<InecRepair.Source> available = new ArrayList<>();
    for (int j = 0; j < live.length; j++) {
      ExtendedBlock b = task.internalBlock(live[j]);
      available.add(new InecRepair.Source(live[j],
          ServiceDirectory.resolve(Service.INEC_CONTROL, sources[j], ctx.conf()),
          ServiceDirectory.resolve(Service.INEC_DATA, sources[j], ctx.conf()), b,
          ctx.readToken(b)));
    }
    InternalBlockWriter[] writers = new InternalBlockWriter[erased.length];
    try {
      InecRepair.Result res = InecRepair.run(engine, settings, task.blockGroup().toString(), k,
          m, unitLength, erased, available, 0, length, (row, data, off, n) -> {
            if (writers[row] == null) {
              writers[row] = InternalBlockWriter.open(dn, task, row);
            }
            long want = Math.min(n, rowLength[row] - off); // rows may be shorter than the range
            if (want > 0) {
              data.limit((int) want);
              writers[row].write(data);
            }
          });
      BYTES_RECEIVED.add(res.bytesReceived);
      long written = 0;
      for (int r = 0; r < writers.length; r++) {
        if (writers[r] == null) {
          writers[r] = InternalBlockWriter.open(dn, task, r);
        }
        writers[r].finish(); // refuses a block whose length is not the expected one
        written += writers[r].written();
      }
      SERVED_OVER[res.transport.ordinal()].increment();
      LOG.info("Task {}: INEC {} over {} from {} participants: received {} bytes for {} written",
          task, settings.scheme(), res.transport, res.participants, res.bytesReceived, written);
      return written;
    } finally {
      for (InternalBlockWriter w : writers) {
        if (w != null) {
          w.close(); // aborts any block not finished
        }
      }
    }
  }
}
