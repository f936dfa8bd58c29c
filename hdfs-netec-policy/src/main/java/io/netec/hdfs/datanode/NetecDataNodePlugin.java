package io.netec.hdfs.datanode;

import io.netec.hdfs.NetecConfigKeys;
import io.netec.hdfs.NetecSettings;
import io.netec.hdfs.proof.ProofService;
import io.netec.hdfs.route.InternalBlockSink;
import io.netec.hdfs.route.ReconstructionRouter;
import io.netec.hdfs.route.ReconstructionTask;
import io.netec.hdfs.route.RouteFactory;
import io.netec.hdfs.route.ServiceDirectory;
import java.io.Closeable;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.ThreadPoolExecutor;
import javax.management.ObjectName;
import org.apache.hadoop.fs.StorageType;
import org.apache.hadoop.hdfs.protocol.ExtendedBlock;
import org.apache.hadoop.hdfs.security.token.block.BlockTokenIdentifier;
import org.apache.hadoop.hdfs.server.datanode.DataNode;
import org.apache.hadoop.hdfs.server.datanode.erasurecode.ErasureCodingWorker;
import org.apache.hadoop.metrics2.lib.DefaultMetricsSystem;
import org.apache.hadoop.metrics2.util.MBeans;
import org.apache.hadoop.util.ServicePlugin;
import org.apache.hadoop.util.VersionInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * DataNode plugin ({@code dfs.datanode.plugins}): routes every EC reconstruction task of a
 * NETEC policy through the {@link ReconstructionRouter}. It never stops a DataNode: a bad
 * configuration or an unexpected Hadoop version logs one clear line and leaves EC to Hadoop.
 * Metrics: the live JMX bean {@code Hadoop:service=DataNode,name=NetecRouter-<xfer port>}, and
 * the same counters as the metrics2 source {@code NetecRouterMetrics-<xfer port>} (record
 * NetecRouter), which Hadoop publishes on {@code /jmx}, {@code /prom} and to metrics2 sinks.
 */
public class NetecDataNodePlugin implements ServicePlugin {
  private static final Logger LOG = LoggerFactory.getLogger(NetecDataNodePlugin.class);

  /** Resolves Hadoop's EC internals; throws if this Hadoop is not the one we expect. */
  interface InternalsBinder {
    HadoopEcInternals bind() throws ReflectiveOperationException;
  }

  private final InternalsBinder binder;
  private ObjectName mbean;
  private String metricsSource;
  private ReconstructionRouter router;
  /** What the routes' factories started on this DataNode (agent, participant), to close. */
  private final List<Closeable> services = new ArrayList<>();
  private int xferPort;
  /** Proof requests one DataNode serves at once (each a block read of its own). */
  static final int PROOF_CONNECTIONS = 256;
  /** A proof request must arrive whole within this. */
  static final int PROOF_ARRIVAL_MS = 10_000;

  /** The constructor Hadoop calls for dfs.datanode.plugins. */
  public NetecDataNodePlugin() {
    this(HadoopEcInternals::bind);
  }

  NetecDataNodePlugin(InternalsBinder binder) {
    this.binder = binder;
  }

  @Override
  public void start(Object service) {
    if (!(service instanceof DataNode)) {
      LOG.error("NetecDataNodePlugin belongs in dfs.datanode.plugins, not on a {}",
          service == null ? "null service" : service.getClass().getName());
      return;
    }
    DataNode dn = (DataNode) service;
    ReconstructionRouter r;
    DataNodeBlockSource blocks = new DataNodeBlockSource(dn);
    try {
      r = ReconstructionRouter.start(dn.getConf(), dn, blocks);
    } catch (IllegalArgumentException e) {
      LOG.error("NetEC plugin inactive on DataNode {}, EC reconstruction left to Hadoop: {}",
          dn.getDisplayName(), e.getMessage(), e);
      return;
    }
    startProofService(r, dn, blocks);
    try {
      HadoopEcInternals internals = binder.bind();
      ErasureCodingWorker worker = dn.getErasureCodingWorker();
      ThreadPoolExecutor old = internals.pool(worker);
      RoutingReconstructionPool routing = new RoutingReconstructionPool(old,
          internals::policyOf, task -> internals.describe(task, dn, worker),
          task -> route(r, dn, task), r.metrics());
      internals.setPool(dn, worker, routing);
      handOver(old, routing);
    } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
      closeServices();
      LOG.warn("NetEC plugin inactive on DataNode {}: Hadoop {} EC internals differ from what "
          + "this plugin expects ({}); EC reconstruction left to Hadoop", dn.getDisplayName(),
          VersionInfo.getVersion(), e.toString());
      return;
    }
    router = r;
    xferPort = dn.getXferPort();
    startServices(r, dn);
    mbean = MBeans.register("DataNode", "NetecRouter-" + dn.getXferPort(), r.metrics());
    registerMetricsSource(r);
    LOG.info("NetEC plugin active on DataNode {}: routes {}, metrics {}", dn.getDisplayName(),
        r.routeNames(), mbean);
  }

  /** One task through the router; then Hadoop's bookkeeping of what the routes did. */
  private static void route(ReconstructionRouter r, DataNode dn, ReconstructionTask task) {
    InternalBlockSink sink = new InternalBlockSink(dn, task);
    ReconstructionRouter.Outcome o = null;
    try {
      o = r.repair(task.repairRequest(b -> readToken(dn, b)), sink);
    } catch (RuntimeException | Error e) { // never silently: a pool's FutureTask would eat it
      LOG.error("NetEC task {} failed", task, e);
      throw e;
    } finally {
      sink.settle(o); // Hadoop's reservation goes back, whatever happened
    }
  }

  /**
   * Retires Hadoop's pool without losing a task: what is queued there still runs there
   * (natively), and a task that a command processed before the swap became visible submits to
   * it afterwards is handed to the routing pool (as Hadoop submitted it: natively) instead of
   * being rejected, which Hadoop would only log while the NameNode waits out its timeout.
   */
  static void handOver(ThreadPoolExecutor old, ThreadPoolExecutor routing) {
    old.setRejectedExecutionHandler((task, pool) -> {
      LOG.info("EC task arrived at Hadoop's retired pool while the NetEC plugin started: "
          + "run natively");
      routing.execute(task);
    });
    old.shutdown();
  }

  /** The proof service of this DataNode: the fingerprints that prove other nodes' rebuilds. */
  private void startProofService(ReconstructionRouter r, DataNode dn,
      DataNodeBlockSource blocks) {
    NetecSettings s = r.context().settings();
    String host = dn.getXferAddress().getAddress().getHostAddress();
    int port = dn.getXferPort();
    try {
      ProofService proofs = new ProofService(blocks, blocks.taps(), host, s.proofPort(),
          PROOF_CONNECTIONS, PROOF_ARRIVAL_MS);
      ServiceDirectory.register(ServiceDirectory.Service.PROOF, port,
          new InetSocketAddress(host, proofs.address().getPort()));
      services.add(() -> {
        ServiceDirectory.unregister(ServiceDirectory.Service.PROOF, port);
        proofs.close();
      });
      LOG.info("NetEC proof service of DataNode {} on {}", dn.getDisplayName(),
          proofs.address());
    } catch (IOException e) {
      LOG.error("NetEC proof service not started on DataNode {} ({}={}): {}; other nodes' "
          + "routes cannot prove rebuilds from this DataNode's blocks and will use others",
          dn.getDisplayName(), NetecConfigKeys.PROOF_PORT, s.proofPort(), e.getMessage());
    }
  }

  /** Publishes the router's counters through the DataNode's metrics2 system (/prom, sinks). */
  private void registerMetricsSource(ReconstructionRouter r) {
    String name = "NetecRouterMetrics-" + xferPort;
    try {
      DefaultMetricsSystem.instance().register(name, "NetEC reconstruction router", r.metrics());
      metricsSource = name;
    } catch (RuntimeException e) {
      LOG.warn("NetEC router counters not published through metrics2 ({}): {}", name,
          e.toString());
    }
  }

  /**
   * Starts what each route runs on every DataNode (the switch route's survivor agent, the
   * INEC participant); a failure costs this DataNode that route's part only.
   */
  private void startServices(ReconstructionRouter r, DataNode dn) {
    for (RouteFactory f : r.registry().factories()) {
      try {
        Closeable c = f.startDataNodeServices(r.context());
        if (c != null) {
          services.add(c);
        }
      } catch (IOException | RuntimeException e) {
        LOG.error("NetEC route {} on DataNode {}: {}", f.name(), dn.getDisplayName(),
            e.getMessage());
      }
    }
  }

  /** A READ token for an internal block, as survivors check it ("" when it cannot be made). */
  static String readToken(DataNode dn, ExtendedBlock b) {
    try {
      return dn.getBlockAccessToken(b, EnumSet.of(BlockTokenIdentifier.AccessMode.READ),
          new StorageType[0], new String[0]).encodeToUrlString();
    } catch (IOException e) {
      LOG.warn("No READ token for {} (survivors will refuse it): {}", b, e.toString());
      return "";
    }
  }

  /** The router, or null while the plugin is inactive. */
  public ReconstructionRouter router() {
    return router;
  }

  @Override
  public void stop() {
    closeServices();
    if (mbean != null) {
      MBeans.unregister(mbean);
      mbean = null;
    }
    if (metricsSource != null) {
      DefaultMetricsSystem.instance().unregisterSource(metricsSource);
      metricsSource = null;
    }
  }

  private void closeServices() {
    for (Closeable c : services) {
      try {
        c.close();
      } catch (IOException | RuntimeException e) {
        LOG.warn("NetEC service of DataNode port {} did not close cleanly: {}", xferPort,
            e.toString());
      }
    }
    services.clear();
  }

  @Override
  public void close() {
    stop();
  }
}
