package io.netec.hdfs.datanode;

import java.io.IOException;
import org.apache.hadoop.hdfs.protocol.ExtendedBlock;
import org.apache.hadoop.hdfs.server.datanode.DataNode;

/**
 * Faults of a survivor's local reads, injected by tests as Hadoop's DataNodeFaultInjector
 * injects its own: a slow or failing disk under the agents, participants and proof service of
 * one DataNode. Does nothing unless a test sets one.
 */
public class SurvivorFaultInjector {
  private static volatile SurvivorFaultInjector instance = new SurvivorFaultInjector();

  public static SurvivorFaultInjector get() {
    return instance;
  }

  /** Installs {@code injector} (null: none); returns the one it replaced. */
  public static SurvivorFaultInjector set(SurvivorFaultInjector injector) {
    SurvivorFaultInjector before = instance;
    instance = injector == null ? new SurvivorFaultInjector() : injector;
    return before;
  }

  /** Before a read of a replica is opened on {@code dn}. */
  public void beforeOpen(DataNode dn, ExtendedBlock block) throws IOException {
  }

  /** Before each span of a replica is read from {@code dn}'s disk, at {@code offset}. */
  public void beforeRead(DataNode dn, ExtendedBlock block, long offset) throws IOException {
  }
}
