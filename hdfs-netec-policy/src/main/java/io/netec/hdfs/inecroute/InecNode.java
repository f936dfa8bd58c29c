package io.netec.hdfs.inecroute;

import io.netec.hdfs.NetecSettings;
import java.io.IOException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where a process finds its INEC engine: each DataNode plugin registers the engine its
 * participant runs on (keyed by the DataNode's transfer port: a MiniDFSCluster has several
 * DataNodes in one JVM), and its route rebuilds on the same engine; a client gets one engine
 * per JVM, started on first use.
 */
public final class InecNode {
  private static final Logger LOG = LoggerFactory.getLogger(InecNode.class);
  private static final Map<Integer, InecEngine> DATANODES = new ConcurrentHashMap<>();
  private static final Map<Integer, InecParticipant> PARTICIPANTS = new ConcurrentHashMap<>();
  private static InecEngine client;
  private static String clientFailure;

  private InecNode() {
  }

  /** Starts an engine as the settings say (verbs library, transport). */
  public static InecEngine startEngine(NetecSettings s, String bindHost, int port)
      throws IOException {
    return InecEngine.start(bindHost, port, s.inecOptions().verbsLibrary(),
        InecEngine.Transport.parse(s.inecOptions().transport()) == InecEngine.Transport.TCP);
  }

  public static void register(int xferPort, InecEngine engine, InecParticipant participant) {
    DATANODES.put(xferPort, engine);
    PARTICIPANTS.put(xferPort, participant);
  }

  public static void unregister(int xferPort) {
    DATANODES.remove(xferPort);
    PARTICIPANTS.remove(xferPort);
  }

  /** The participant of the DataNode with this transfer port in this JVM, or null. */
  public static InecParticipant participant(int xferPort) {
    return PARTICIPANTS.get(xferPort);
  }

  /** The engine of the DataNode with this transfer port in this JVM, or null. */
  public static InecEngine dataNode(int xferPort) {
    return DATANODES.get(xferPort);
  }

  /** This JVM's client engine; IOException (the same reason every time) if it cannot run. */
  public static synchronized InecEngine client(NetecSettings s) throws IOException {
    if (client == null && clientFailure == null) {
      try {
        client = startEngine(s, "0.0.0.0", 0);
        LOG.info("INEC client engine: {}, data on port {}", client.describe(),
            client.dataAddress().getPort());
      } catch (IOException | IllegalArgumentException e) {
        clientFailure = e.getMessage();
      }
    }
    if (client == null) {
      throw new IOException("INEC client engine unavailable: " + clientFailure);
    }
    return client;
  }
}
