package io.netec.hdfs.switchroute;

import io.netec.hdfs.NetecConfigKeys;
import io.netec.hdfs.NetecSettings;
import io.netec.hdfs.route.ReconstructionRoute;
import io.netec.hdfs.route.RouteContext;
import io.netec.hdfs.route.RouteFactory;
import io.netec.hdfs.route.ServiceDirectory;
import java.io.Closeable;
import java.io.IOException;
import java.net.InetSocketAddress;
import org.apache.hadoop.hdfs.server.datanode.DataNode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The switch route, and on every DataNode its survivor agent (streams local blocks to
 * switches), listening where the DataNode's transfer server does.
 */
public final class SwitchRouteFactory implements RouteFactory {
  private static final Logger LOG = LoggerFactory.getLogger(SwitchRouteFactory.class);

  @Override
  public String name() {
    return SwitchRoute.NAME;
  }

  @Override
  public ReconstructionRoute create(RouteContext ctx) {
    return new SwitchRoute(ctx);
  }

  @Override
  public Closeable startDataNodeServices(RouteContext ctx) throws IOException {
    NetecSettings s = ctx.settings();
    if (!ctx.startsServices(name(), s.agentOptions().enabled())) {
      return null;
    }
    DataNode dn = ctx.dataNode();
    String host = dn.getXferAddress().getAddress().getHostAddress();
    int xferPort = dn.getXferPort();
    SurvivorAgent agent;
    try {
      agent = new SurvivorAgent(ctx.blocks(), host, s.agentOptions().port(),
          s.agentOptions().maxStreams(), s.agentOptions().idleTimeoutMs());
    } catch (IOException | RuntimeException e) {
      throw new IOException("survivor agent not started (" + NetecConfigKeys.AGENT_PORT + "="
          + s.agentOptions().port() + "): " + e.getMessage() + "; switch tasks will not use this "
          + "DataNode as a survivor", e);
    }
    ServiceDirectory.register(ServiceDirectory.Service.SWITCH_AGENT, xferPort,
        new InetSocketAddress(host, agent.address().getPort()));
    LOG.info("NetEC survivor agent of DataNode {} on {}", dn.getDisplayName(), agent.address());
    return () -> {
      ServiceDirectory.unregister(ServiceDirectory.Service.SWITCH_AGENT, xferPort);
      agent.close();
    };
  }
}
