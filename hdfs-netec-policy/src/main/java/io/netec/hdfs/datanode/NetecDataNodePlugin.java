package io.netec.hdfs.datanode;

import io.netec.hdfs.NetecConfigKeys;
import io.netec.hdfs.inecroute.InecEngine;
import io.netec.hdfs.inecroute.InecNode;
import io.netec.hdfs.inecroute.InecParticipant;
import io.netec.hdfs.route.ReconstructionRouter;
import io.netec.hdfs.route.ServiceDirectory;
import io.netec.hdfs.datanode.DataNodeBlockSource;
import io.netec.hdfs.switchroute.SurvivorAgent;
import java.io.IOException;
import java.net.InetSocketAddress;
import io.netec.hdfs.route.RouteContext;
import io.netec.hdfs.route.RouteMetrics;
import java.util.concurrent.ThreadPoolExecutor;
import javax.management.ObjectName;
import org.apache.hadoop.conf.Configuration;
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
  private SurvivorAgent agent;
  private InecEngine inecEngine;
  private InecParticipant participant;
  private int xferPort;

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
    try {
      r = ReconstructionRouter.fromConf(new RouteContext(dn.getConf(), dn), new RouteMetrics());
    } catch (IllegalArgumentException e) {
      LOG.error("NetEC plugin inactive on DataNode {}, EC reconstruction left to Hadoop: {}",
          dn.getDisplayName(), e.getMessage(), e);
      return;
    }
    try {
      HadoopEcInternals internals = binder.bind();
      ErasureCodingWorker worker = dn.getErasureCodingWorker();
      ThreadPoolExecutor old = internals.pool(worker);
      internals.setPool(worker, new RoutingReconstructionPool(old, internals::policyOf,
          task -> internals.describe(task, dn, worker), r));
      old.shutdown(); // tasks already queued there still run, natively
    } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
      LOG.warn("NetEC plugin inactive on DataNode {}: Hadoop {} EC internals differ from what "
          + "this plugin expects ({}); EC reconstruction left to Hadoop", dn.getDisplayName(),
          VersionInfo.getVersion(), e.toString());
      return;
    }
    router = r;
    xferPort = dn.getXferPort();
    startAgent(dn);
    startInec(dn);
    mbean = MBeans.register("DataNode", "NetecRouter-" + dn.getXferPort(), r.metrics());
    registerMetricsSource(r);
    LOG.info("NetEC plugin active on DataNode {}: routes {}, metrics {}", dn.getDisplayName(),
        r.routeNames(), mbean);
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

  /** Starts the survivor agent; a failure costs this DataNode its part in switch tasks only. */
  private void startAgent(DataNode dn) {
    if (!dn.getConf().getBoolean(NetecConfigKeys.AGENT_ENABLED,
        NetecConfigKeys.AGENT_ENABLED_DEFAULT)) {
      return;
    }
    int port = dn.getConf().getInt(NetecConfigKeys.AGENT_PORT, NetecConfigKeys.AGENT_PORT_DEFAULT);
    // The agent listens where the DataNode's transfer server does.
    String host = dn.getXferAddress().getAddress().getHostAddress();
    try {
      agent = new SurvivorAgent(new DataNodeBlockSource(dn), host, port,
          dn.getConf().getInt(NetecConfigKeys.AGENT_MAX_STREAMS,
              NetecConfigKeys.AGENT_MAX_STREAMS_DEFAULT),
          dn.getConf().getInt(NetecConfigKeys.AGENT_IDLE_TIMEOUT_MS,
              NetecConfigKeys.AGENT_IDLE_TIMEOUT_MS_DEFAULT));
      ServiceDirectory.register(ServiceDirectory.Service.SWITCH_AGENT, xferPort, new InetSocketAddress(host, agent.address().getPort()));
      LOG.info("NetEC survivor agent of DataNode {} on {}", dn.getDisplayName(),
          agent.address());
    } catch (IOException | RuntimeException e) {
      LOG.error("NetEC survivor agent not started on DataNode {} ({}={}): {}; switch tasks "
          + "will not use this DataNode as a survivor", dn.getDisplayName(),
          NetecConfigKeys.AGENT_PORT, port, e.getMessage());
    }
  }

  /**
   * Starts this DataNode's INEC engine (the route rebuilds on it) and its participant; a
   * failure costs this DataNode the INEC route and its part in INEC repairs only.
   */
  private void startInec(DataNode dn) {
    Configuration conf = dn.getConf();
    if (!conf.getBoolean(NetecConfigKeys.INEC_ENABLED, NetecConfigKeys.INEC_ENABLED_DEFAULT)) {
      return;
    }
    String host = dn.getXferAddress().getAddress().getHostAddress();
    int dataPort = conf.getInt(NetecConfigKeys.INEC_DATA_PORT,
        NetecConfigKeys.INEC_DATA_PORT_DEFAULT);
    int port = conf.getInt(NetecConfigKeys.INEC_PORT, NetecConfigKeys.INEC_PORT_DEFAULT);
    try {
      inecEngine = InecNode.startEngine(conf, host, dataPort);
      participant = new InecParticipant(inecEngine, new DataNodeBlockSource(dn), host, port,
          conf.getInt(NetecConfigKeys.INEC_MAX_VERTICES,
              NetecConfigKeys.INEC_MAX_VERTICES_DEFAULT));
      InecNode.register(xferPort, inecEngine, participant);
      ServiceDirectory.register(ServiceDirectory.Service.INEC_DATA, xferPort,
          inecEngine.dataAddress());
      ServiceDirectory.register(ServiceDirectory.Service.INEC_CONTROL, xferPort,
          new InetSocketAddress(host, participant.address().getPort()));
      LOG.info("NetEC INEC participant of DataNode {} on {} (data {}): {}", dn.getDisplayName(),
          participant.address(), inecEngine.dataAddress(), inecEngine.describe());
    } catch (IOException | RuntimeException e) {
      LOG.error("NetEC INEC participant not started on DataNode {} ({}={}, {}={}): {}; the "
          + "inec route will decline here and INEC repairs will not use this DataNode",
          dn.getDisplayName(), NetecConfigKeys.INEC_PORT, port, NetecConfigKeys.INEC_DATA_PORT,
          dataPort, e.getMessage());
      stopInec();
    }
  }

  private void stopInec() {
    InecNode.unregister(xferPort);
    ServiceDirectory.unregister(ServiceDirectory.Service.INEC_CONTROL, xferPort);
    ServiceDirectory.unregister(ServiceDirectory.Service.INEC_DATA, xferPort);
    if (participant != null) {
      participant.close();
      participant = null;
    }
    if (inecEngine != null) {
      inecEngine.close();
      inecEngine = null;
    }
  }

  /** The router, or null while the plugin is inactive. */
  public ReconstructionRouter router() {
    return router;
  }

  @Override
  public void stop() {
    if (agent != null) {
      ServiceDirectory.unregister(ServiceDirectory.Service.SWITCH_AGENT, xferPort);
      agent.close();
      agent = null;
    }
    stopInec();
    if (mbean != null) {
      MBeans.unregister(mbean);
      mbean = null;
    }
    if (metricsSource != null) {
      DefaultMetricsSystem.instance().unregisterSource(metricsSource);
      metricsSource = null;
    }
  }

  @Override
  public void close() {
    stop();
  }
}
