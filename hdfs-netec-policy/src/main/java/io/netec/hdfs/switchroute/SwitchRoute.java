package io.netec.hdfs.switchroute;

import io.netec.hdfs.NetecConfigKeys;
import io.netec.hdfs.route.InternalBlockWriter;
import io.netec.hdfs.route.ReconstructionRoute;
import io.netec.hdfs.route.ReconstructionTask;
import io.netec.hdfs.route.RouteContext;
import io.netec.hdfs.route.RouteDeclinedException;
import io.netec.hdfs.route.ServiceDirectory;
import io.netec.hdfs.switchroute.wire.SetupRequest;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.protocol.DatanodeInfo;
import org.apache.hadoop.hdfs.protocol.ExtendedBlock;
import org.apache.hadoop.hdfs.server.datanode.DataNode;
import org.apache.hadoop.net.NetUtils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The switch route on the rebuilding DataNode: k survivors stream through a NetEC switch, which
 * returns one stream per erased block; each goes straight to its target through
 * {@link InternalBlockWriter}, finalized only when the whole block arrived. Declines when no
 * switch is configured or the switch refuses; fails (and the router moves on) on any error,
 * leaving no partial block on a target.
 */
public final class SwitchRoute implements ReconstructionRoute {
  public static final String NAME = "switch";
  private static final Logger LOG = LoggerFactory.getLogger(SwitchRoute.class);
  /** Bytes this JVM's switch routes read from switches (their ingress), for tests and metrics. */
  static final LongAdder BYTES_RECEIVED = new LongAdder();

  private final RouteContext ctx;
  private final InetSocketAddress control;
  private final int payload;
  private final int timeoutMs;

  public SwitchRoute(RouteContext ctx) {
    this.ctx = ctx;
    Configuration conf = ctx.conf();
    String addr = conf.getTrimmed(NetecConfigKeys.SWITCH_ADDRESS);
    this.control = addr == null || addr.isEmpty() ? null
        : NetUtils.createSocketAddr(addr, -1, NetecConfigKeys.SWITCH_ADDRESS);
    this.payload = conf.getInt(NetecConfigKeys.SWITCH_PAYLOAD,
        NetecConfigKeys.SWITCH_PAYLOAD_DEFAULT);
    this.timeoutMs = conf.getInt(NetecConfigKeys.SWITCH_TIMEOUT_MS,
        NetecConfigKeys.SWITCH_TIMEOUT_MS_DEFAULT);
  }

  @Override
  public String name() {
    return NAME;
  }

  /** Ingress of all switch routes in this JVM, in bytes read from switches. */
  public static long bytesReceived() {
    return BYTES_RECEIVED.sum();
  }

  @Override
  public long reconstruct(ReconstructionTask task) throws IOException {
    DataNode dn = ctx.dataNode();
    if (control == null) {
      throw new RouteDeclinedException(NetecConfigKeys.SWITCH_ADDRESS + " is not set");
    }
    if (dn == null) {
      throw new RouteDeclinedException("not running in a DataNode");
    }
    int k = task.dataUnits();
    int[] erased = task.erasedIndices();
    long[] rowLength = task.erasedLengths();
    long length = java.util.Arrays.stream(rowLength).max().getAsLong();
    long[] unitLength = task.unitLengths();
    int m = task.parityUnits();
    byte[] live = task.liveIndices();
    DatanodeInfo[] sources = task.sources();
    List<SwitchPlan.Available> available = new ArrayList<>();
    for (int j = 0; j < live.length; j++) {
      ExtendedBlock b = task.internalBlock(live[j]);
      available.add(new SwitchPlan.Available(live[j],
          ServiceDirectory.hostPort(ServiceDirectory.Service.SWITCH_AGENT, sources[j],
              ctx.conf()), b.toString(), ctx.readToken(b)));
    }
    SetupRequest setup = SwitchPlan.plan(task.blockGroup().toString(), k, m, unitLength,
        erased, available, 0, length, payload, timeoutMs);
    InternalBlockWriter[] writers = new InternalBlockWriter[erased.length];
    try {
      SwitchClient.Result res = SwitchClient.rebuild(control, setup, rowLength, () -> {
        SwitchClient.Sink[] sinks = new SwitchClient.Sink[writers.length];
        for (int r = 0; r < writers.length; r++) {
          writers[r] = InternalBlockWriter.open(dn, task, r);
          sinks[r] = writers[r]::write;
        }
        return sinks;
      });
      BYTES_RECEIVED.add(res.bytesReceived);
      long written = 0;
      for (InternalBlockWriter w : writers) {
        w.finish(); // refuses a block whose length is not the expected one
        written += w.written();
      }
      LOG.debug("Task {}: switch task {} delivered {} bytes for {} written, {} RETX", task,
          res.task, res.bytesReceived, written, res.retransmitRequests);
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
