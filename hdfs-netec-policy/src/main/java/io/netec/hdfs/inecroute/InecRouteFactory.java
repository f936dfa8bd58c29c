package io.netec.hdfs.inecroute;

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
 * The INEC route, and on every DataNode its engine (the route rebuilds on it) and its
 * participant (joins other nodes' repair graphs).
 */
public final class InecRouteFactory implements RouteFactory {
  private static final Logger LOG = LoggerFactory.getLogger(InecRouteFactory.class);

  @Override
  public String name() {
    return InecRoute.NAME;
  }

  @Override
  public ReconstructionRoute create(RouteContext ctx) {
    return new InecRoute(ctx);
  }

  @Override
  public Closeable startDataNodeServices(RouteContext ctx) throws IOException {
    NetecSettings s = ctx.settings();
    if (!ctx.startsServices(name(), s.inecOptions().enabled())) {
      return null;
    }
    DataNode dn = ctx.dataNode();
    String host = dn.getXferAddress().getAddress().getHostAddress();
    int xferPort = dn.getXferPort();
    InecEngine engine = null;
    InecParticipant participant = null;
    try {
      engine = InecNode.startEngine(s, host, s.inecOptions().dataPort());
      participant = new InecParticipant(engine, ctx.blocks(), host, s.inecOptions().port(),
          s.inecOptions().maxVertices(), InecParticipant.Limits.of(s));
    } catch (IOException | RuntimeException e) {
      if (engine != null) {
        engine.close();
      }
      throw new IOException("INEC participant not started (" + NetecConfigKeys.INEC_PORT + "="
          + s.inecOptions().port() + ", " + NetecConfigKeys.INEC_DATA_PORT + "="
          + s.inecOptions().dataPort()
          + "): " + e.getMessage() + "; the inec route will decline here and INEC repairs "
          + "will not use this DataNode", e);
    }
    InecNode.register(xferPort, engine, participant);
    ServiceDirectory.register(ServiceDirectory.Service.INEC_DATA, xferPort,
        engine.dataAddress());
    ServiceDirectory.register(ServiceDirectory.Service.INEC_CONTROL, xferPort,
        new InetSocketAddress(host, participant.address().getPort()));
    LOG.info("NetEC INEC participant of DataNode {} on {} (data {}): {}", dn.getDisplayName(),
        participant.address(), engine.dataAddress(), engine.describe());
    InecEngine e = engine;
    InecParticipant p = participant;
    return () -> {
      InecNode.unregister(xferPort);
      ServiceDirectory.unregister(ServiceDirectory.Service.INEC_CONTROL, xferPort);
      ServiceDirectory.unregister(ServiceDirectory.Service.INEC_DATA, xferPort);
      p.close();
      e.close();
    };
  }
}
