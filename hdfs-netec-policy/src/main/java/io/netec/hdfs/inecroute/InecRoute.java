package io.netec.hdfs.inecroute;

import io.netec.hdfs.route.LogLimiter;
import io.netec.hdfs.route.ReconstructionRoute;
import io.netec.hdfs.route.RepairRequest;
import io.netec.hdfs.route.RepairSink;
import io.netec.hdfs.route.RouteContext;
import io.netec.hdfs.route.RouteDeclinedException;
import io.netec.hdfs.route.ServiceDirectory;
import io.netec.hdfs.route.TokenProof;
import io.netec.hdfs.route.ServiceDirectory.Service;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;
import org.apache.hadoop.hdfs.server.datanode.DataNode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The INEC route: the survivors' participants run the repair graph of the configured scheme
 * (ECPipe chain by default) and this node, its root, receives the rebuilt units through its
 * engine (a DataNode's own, or the client's) and hands them to the sink. Declines when this
 * node has no engine; fails (the router moves on) on any error.
 */
public final class InecRoute implements ReconstructionRoute {
  public static final String NAME = "inec";
  private static final Logger LOG = LoggerFactory.getLogger(InecRoute.class);
  /** A task's plan by rack, at most once a second: one line a task would flood a busy log. */
  private static final LogLimiter PLANS = new LogLimiter(LOG, 1_000);
  /** Bytes this JVM's DataNodes' INEC routes received from participants (their ingress). */
  static final LongAdder BYTES_RECEIVED = new LongAdder();
  /** Tasks this JVM's DataNodes' INEC routes served, by the transport of their streams. */
  private static final LongAdder[] SERVED_OVER = {new LongAdder(), new LongAdder(),
      new LongAdder()};

  private final RouteContext ctx;
  private final InecRepair.Settings settings;

  public InecRoute(RouteContext ctx) {
    this.ctx = ctx;
    this.settings = InecRepair.Settings.from(ctx.settings());
  }

  @Override
  public String name() {
    return NAME;
  }

  /** Tasks served in this JVM whose streams to the rebuilding DataNode used transport t. */
  public static long servedOver(InecEngine.Transport t) {
    return SERVED_OVER[t.ordinal()].sum();
  }

  /** Ingress of the INEC routes of this JVM's DataNodes. */
  public static long bytesReceived() {
    return BYTES_RECEIVED.sum();
  }

  private InecEngine engine() throws IOException {
    DataNode dn = ctx.dataNode();
    if (dn == null) {
      try {
        return InecNode.client(ctx.settings());
      } catch (IOException e) {
        throw new RouteDeclinedException(e.getMessage());
      }
    }
    InecEngine engine = InecNode.dataNode(dn.getXferPort());
    if (engine == null) {
      String why = InecEngine.unavailableReason();
      throw new RouteDeclinedException("no INEC engine on this DataNode"
          + (why != null ? ": " + why : " (netec.inec.enabled is false, or it did not start)"));
    }
    return engine;
  }

  @Override
  public long repair(RepairRequest req, RepairSink sink) throws IOException {
    if (ctx.settings().cleartextRefusal() != null) {
      throw new RouteDeclinedException(ctx.settings().cleartextRefusal());
    }
    InecEngine engine = engine();
    boolean racks = ctx.settings().inecOptions().racks();
    List<InecRepair.Source> available = new ArrayList<>();
    for (RepairRequest.Survivor s : req.survivors()) {
      available.add(new InecRepair.Source(s.index,
          ServiceDirectory.resolve(Service.INEC_CONTROL, s.node, ctx.settings()),
          ServiceDirectory.resolve(Service.INEC_DATA, s.node, ctx.settings()), s.block,
          () -> TokenProof.prove(s.token, s.block), // a proof per join
          s.node.getNetworkLocation()));
    }
    long[] rowLength = req.rowLengths();
    InecRepair.Settings s = settings.withTimeout(req.progressTimeoutMs(settings.timeoutMs));
    InecRepair.Result res = InecRepair.run(engine, s, req.label(), req.dataUnits(),
        req.parityUnits(), req.unitLengths(), req.erased(), available, req.readerRack(), racks,
        req.offset(), req.length(), new InecRepair.Sink() {
          @Override
          public void accept(int row, ByteBuffer data, long off, int n) throws IOException {
            long want = Math.min(n, rowLength[row] - off); // rows may be shorter than the range
            if (want > 0) {
              data.limit((int) want);
              sink.write(row, data);
            }
          }

          @Override
          public void joined() {
            sink.accepted(); // its survivors' proofs run beside the repair
          }
        });
    if (ctx.dataNode() != null) {
      BYTES_RECEIVED.add(res.bytesReceived);
      SERVED_OVER[res.transport.ordinal()].increment();
    }
    if (res.crossings > 0) {
      // a cluster with racks, the plan crossing them: said once in a while, with the node
      // that rebuilt (PLANS holds back the rest)
      PLANS.info("racks", "{}: INEC {} at {}, {}", req, settings.scheme(),
          ctx.dataNode() != null ? ctx.dataNode().getDatanodeId().getXferAddr() : "a client",
          res.racks);
    }
    LOG.debug("{}: INEC {} over {} from {} participants ({}): received {} bytes", req,
        settings.scheme(), res.transport, res.participants, res.racks, res.bytesReceived);
    return res.bytesReceived;
  }
}
