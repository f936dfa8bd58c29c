package io.netec.hdfs.switchroute;

import io.netec.hdfs.NetecConfigKeys;
import io.netec.hdfs.NetecSettings;
import io.netec.hdfs.route.LogLimiter;
import io.netec.hdfs.route.RackAware;
import io.netec.hdfs.route.ReconstructionRoute;
import io.netec.hdfs.route.RepairRequest;
import io.netec.hdfs.route.RepairSink;
import io.netec.hdfs.route.RouteContext;
import io.netec.hdfs.route.RouteDeclinedException;
import io.netec.hdfs.route.ServiceDirectory;
import io.netec.hdfs.route.SurvivorFault;
import io.netec.hdfs.route.TokenProof;
import io.netec.hdfs.switchroute.wire.ProtocolException;
import io.netec.hdfs.switchroute.wire.SetupRequest;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;
import org.apache.hadoop.net.NetUtils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The switch route: k survivors stream through a NetEC switch, which returns one stream per
 * erased unit, straight into the sink (a DataNode's target blocks, a client's read). Declines
 * when no switch is configured or the switch refuses; is unavailable when the switch cannot be
 * reached; fails (the router moves on) on any other error.
 */
public final class SwitchRoute implements ReconstructionRoute {
  public static final String NAME = "switch";
  private static final Logger LOG = LoggerFactory.getLogger(SwitchRoute.class);
  private static final LogLimiter PLANS = new LogLimiter(LOG, 1_000);
  /** A configuration mistake: said once a minute, not once a task. */
  private static final LogLimiter MISCONFIGURED = new LogLimiter(LOG, 60_000);
  /**
   * Whether a rack switch name has matched a rack of a task in this JVM: from then on a task
   * whose racks have none is a partial deployment, not a misnamed key, and is not warned of.
   */
  private static volatile boolean rackNameMatched;
  /** Rack switches found unreachable of late: their racks' survivors stream to the parent. */
  static final RackSwitchesDown RACK_SWITCHES_DOWN = new RackSwitchesDown();
  /** Bytes this JVM's DataNodes' switch routes read from switches (their ingress). */
  static final LongAdder BYTES_RECEIVED = new LongAdder();

  private final RouteContext ctx;
  private final NetecSettings settings;
  private final InetSocketAddress control;

  public SwitchRoute(RouteContext ctx) {
    this.ctx = ctx;
    this.settings = ctx.settings();
    String addr = settings.switchOptions().address();
    this.control = addr == null ? null
        : NetUtils.createSocketAddr(addr, -1, NetecConfigKeys.SWITCH_ADDRESS);
  }

  @Override
  public String name() {
    return NAME;
  }

  /** Ingress of the switch routes of this JVM's DataNodes, in bytes read from switches. */
  public static long bytesReceived() {
    return BYTES_RECEIVED.sum();
  }

  @Override
  public long repair(RepairRequest req, RepairSink sink) throws IOException {
    if (ctx.settings().cleartextRefusal() != null) {
      throw new RouteDeclinedException(ctx.settings().cleartextRefusal());
    }
    if (control == null && settings.switchOptions().rackSwitches().isEmpty()) {
      throw new RouteDeclinedException(NetecConfigKeys.SWITCH_ADDRESS + " is not set");
    }
    Map<String, String> rackSwitches = settings.switchOptions().rackSwitches();
    boolean byRack = SwitchRackPlan.splittable(req.rows(), req.readerRack(), rackSwitches);
    List<RepairRequest.Survivor> survivors = byRack
        ? RackAware.preferNear(req.survivors(), s -> s.node.getNetworkLocation(),
            req.readerRack())
        : req.survivors();
    List<SwitchPlan.Available> available = new ArrayList<>();
    Map<String, String> rackOfBlock = new HashMap<>();
    for (RepairRequest.Survivor s : survivors) {
      available.add(new SwitchPlan.Available(s.index, ServiceDirectory.hostPort(
          ServiceDirectory.Service.SWITCH_AGENT, s.node, settings), s.block.toString(),
          TokenProof.prove(s.token, s.block)));
      rackOfBlock.put(s.block.toString(), s.node.getNetworkLocation());
    }
    SetupRequest setup = SwitchPlan.plan(req.blockGroup().toString(), req.dataUnits(),
        req.parityUnits(), req.unitLengths(), req.erased(), available, req.offset(),
        req.length(), settings.switchOptions().payload(),
        req.progressTimeoutMs(settings.switchOptions().timeoutMs()),
        settings.switchOptions().premultiply(), settings.switchOptions().datagrams());
    SwitchClient.SinkOpener opener = () -> {
      sink.accepted(); // the switch took the task: its survivors' proofs run beside it
      SwitchClient.Sink[] rows = new SwitchClient.Sink[req.rows()];
      for (int r = 0; r < rows.length; r++) {
        int row = r;
        rows[r] = (b, o, l) -> sink.write(row, ByteBuffer.wrap(b, o, l));
      }
      return rows;
    };
    if (!rackNameMatched && !rackSwitches.isEmpty() && req.readerRack() != null) {
      String unmatched = SwitchRackPlan.unmatched(rackSwitches, req.readerRack(),
          rackOfBlock.values());
      if (unmatched == null) {
        rackNameMatched = true;
      } else {
        MISCONFIGURED.warn("racks", "{} (said until a name matches a task's rack)", unmatched);
      }
    }
    SwitchRackPlan plan = null;
    if (byRack) {
      List<String> senderRack = new ArrayList<>();
      for (SetupRequest.Survivor v : setup.survivors()) {
        senderRack.add(rackOfBlock.get(v.block()));
      }
      try {
        plan = SwitchRackPlan.plan(setup, senderRack, req.readerRack(),
            RACK_SWITCHES_DOWN.inUse(rackSwitches), settings.switchOptions().address());
      } catch (ProtocolException e) {
        throw new RouteDeclinedException("cannot describe a rack's task to its switch: "
            + e.getMessage());
      }
    }
    // a task not split by rack runs on netec.switch.address, else on the reader's rack's
    String readerRackSwitch = req.readerRack() == null ? null
        : rackSwitches.get(req.readerRack());
    InetSocketAddress flat = control != null ? control : readerRackSwitch == null ? null
        : NetUtils.createSocketAddr(readerRackSwitch, -1, NetecConfigKeys.SWITCH_RACKS);
    if (plan == null && flat == null) {
      throw new RouteDeclinedException(NetecConfigKeys.SWITCH_ADDRESS + " is not set, and "
          + NetecConfigKeys.SWITCH_RACKS + " has no switch for this task: " + (
          req.readerRack() == null ? "the reader's rack is not known (a client's read)"
          : "no switch for the reader's rack " + req.readerRack()));
    }
    SwitchClient.Result res;
    try {
      res = rebuild(req, setup, plan, byRack, flat, opener);
    } catch (SwitchClient.SurvivorsFailed e) {
      // as Hadoop's striped reader takes a DataNode it cannot connect to for a dead source
      List<Integer> units = new ArrayList<>();
      for (RepairRequest.Survivor s : survivors) {
        if (e.blocks().contains(s.block.toString())) {
          units.add(s.index);
        }
      }
      if (units.isEmpty()) {
        throw e;
      }
      throw new SurvivorFault(units, e.getMessage());
    }
    if (ctx.dataNode() != null) {
      BYTES_RECEIVED.add(res.bytesReceived);
    }
    LOG.debug("{}: switch task {} delivered {} bytes, {} RETX", req, res.task,
        res.bytesReceived, res.retransmitRequests);
    return res.bytesReceived;
  }

  /** The task through the rack switches' plan, else flat on {@code flat}. */
  private SwitchClient.Result rebuild(RepairRequest req, SetupRequest setup,
      SwitchRackPlan plan, boolean byRack, InetSocketAddress flat,
      SwitchClient.SinkOpener opener) throws IOException {
    SwitchClient.Result res;
    if (plan != null) {
      // said once in a while: where the parent ran and which racks summed their survivors
      PLANS.info("racks", "{}: switch by rack at {}, {}", req, ctx.dataNode() != null
          ? ctx.dataNode().getDatanodeId().getXferAddr() : "a client", plan.text());
      res = SwitchClient.rebuild(plan, flat, req.rowLengths(), opener, (rack, at, why) -> {
        if (SwitchClient.unreachable(why)) {
          RACK_SWITCHES_DOWN.down(at, settings.routeBackoffMs());
        }
        PLANS.warn("not-taken", "{}: {} {} did not take its part ({}); {}", req,
            rack == null ? "the parent's switch" : "the switch of " + rack, at,
            LogLimiter.oneLine(why.getMessage()), rack == null || SwitchClient.attachFailed(why)
                ? "the task runs flat on " + flat : "its survivors stream to the parent");
      });
    } else {
      if (byRack) {
        PLANS.info("flat", "{}: switch task flat on {}: no other rack holds two or more of "
            + "its survivors with a switch in use", req, flat);
      }
      res = SwitchClient.rebuild(flat, setup, req.rowLengths(), opener);
    }
    return res;
  }
}
