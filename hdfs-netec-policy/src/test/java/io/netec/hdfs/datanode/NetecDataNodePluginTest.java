package io.netec.hdfs.datanode;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netec.hdfs.NetecConfigKeys;
import io.netec.hdfs.Waits;
import java.lang.management.ManagementFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.atomic.AtomicInteger;
import javax.management.ObjectName;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.apache.hadoop.hdfs.server.datanode.DataNode;
import org.junit.jupiter.api.Test;

/**
 * The plugin never breaks a DataNode: a Hadoop whose EC internals differ, or a bad route
 * configuration, leaves the DataNode's own reconstruction pool in place and registers nothing;
 * on a matching Hadoop it swaps in the routing pool with the same threads.
 */
class NetecDataNodePluginTest {
  /** One DataNode, its plugin's services on free ports. */
  private static MiniDFSCluster oneDataNode() throws java.io.IOException {
    Configuration conf = new Configuration();
    conf.setInt(NetecConfigKeys.AGENT_PORT, 0);
    conf.setInt(NetecConfigKeys.PROOF_PORT, 0);
    return new MiniDFSCluster.Builder(conf).numDataNodes(1).build();
  }

  @Test
  void installsOnlyWhenHadoopAndConfigurationFit() throws Exception {
    try (MiniDFSCluster cluster = oneDataNode()) {
      DataNode dn = cluster.getDataNodes().get(0);
      HadoopEcInternals internals = HadoopEcInternals.bind();
      ThreadPoolExecutor hadoopPool = internals.pool(dn.getErasureCodingWorker());
      ObjectName bean = new ObjectName("Hadoop:service=DataNode,name=NetecRouter-"
          + dn.getXferPort());
      // The metrics2 view of the same counters (what /prom and metrics sinks publish).
      ObjectName metrics2 = new ObjectName("Hadoop:service=DataNode,name=NetecRouterMetrics-"
          + dn.getXferPort());

      // Another Hadoop version: a private field is gone.
      NetecDataNodePlugin mismatched = new NetecDataNodePlugin(() -> {
        throw new NoSuchFieldException("stripedReconstructionPool");
      });
      mismatched.start(dn);
      assertNull(mismatched.router());
      assertSame(hadoopPool, internals.pool(dn.getErasureCodingWorker()));
      assertFalse(ManagementFactory.getPlatformMBeanServer().isRegistered(bean));

      // A route order naming a route nobody provides.
      dn.getConf().set(NetecConfigKeys.ROUTE_ORDER, "teleport,native");
      NetecDataNodePlugin misconfigured = new NetecDataNodePlugin();
      misconfigured.start(dn);
      assertNull(misconfigured.router());
      assertSame(hadoopPool, internals.pool(dn.getErasureCodingWorker()));
      dn.getConf().unset(NetecConfigKeys.ROUTE_ORDER);

      NetecDataNodePlugin plugin = new NetecDataNodePlugin();
      plugin.start(dn);
      assertNotNull(plugin.router());
      ThreadPoolExecutor routing = internals.pool(dn.getErasureCodingWorker());
      assertInstanceOf(RoutingReconstructionPool.class, routing);
      assertEquals(hadoopPool.getCorePoolSize(), routing.getCorePoolSize());
      assertEquals(hadoopPool.getMaximumPoolSize(), routing.getMaximumPoolSize());
      assertTrue(hadoopPool.isShutdown());
      assertTrue(ManagementFactory.getPlatformMBeanServer().isRegistered(bean));
      assertEquals(0L, ManagementFactory.getPlatformMBeanServer().getAttribute(metrics2,
          "NativeServed"));
      assertEquals(0L, ManagementFactory.getPlatformMBeanServer().getAttribute(metrics2,
          "Tasks"));
      plugin.stop();
      assertFalse(ManagementFactory.getPlatformMBeanServer().isRegistered(bean));
      assertFalse(ManagementFactory.getPlatformMBeanServer().isRegistered(metrics2));
    }
  }

  /**
   * No task is lost while the plugin starts: a task handed to Hadoop's pool by a command
   * processed just before the swap (the actor read the old pool) still runs, and so does every
   * task submitted from another thread while the plugin starts.
   */
  @Test
  void tasksArrivingWhileThePluginStartsAllRun() throws Exception {
    try (MiniDFSCluster cluster = oneDataNode()) {
      DataNode dn = cluster.getDataNodes().get(0);
      HadoopEcInternals internals = HadoopEcInternals.bind();
      AtomicInteger ran = new AtomicInteger();
      AtomicInteger submitted = new AtomicInteger();
      AtomicInteger lost = new AtomicInteger();
      ThreadPoolExecutor stale = internals.pool(dn.getErasureCodingWorker());
      java.util.concurrent.atomic.AtomicBoolean starting =
          new java.util.concurrent.atomic.AtomicBoolean(true);
      // what ErasureCodingWorker.processErasureCodingTasks does, over and over: read the pool
      // field, submit (Hadoop catches and only logs what submit throws: such a task is lost)
      Thread actor = new Thread(() -> {
        while (starting.get()) {
          try {
            ThreadPoolExecutor pool = internals.pool(dn.getErasureCodingWorker());
            submitted.incrementAndGet();
            pool.submit(ran::incrementAndGet);
          } catch (Throwable t) {
            lost.incrementAndGet();
          }
        }
      });
      actor.start();
      NetecDataNodePlugin plugin = new NetecDataNodePlugin();
      plugin.start(dn);
      starting.set(false);
      actor.join();
      // a command processed just before the swap: its task reaches the retired pool late
      submitted.incrementAndGet();
      stale.submit(ran::incrementAndGet);
      Waits.within(10_000, 10, () -> ran.get() >= submitted.get());
      assertEquals(0, lost.get(), "tasks lost");
      assertEquals(submitted.get(), ran.get(), "every task ran");
      assertTrue(submitted.get() > 1);
      plugin.stop();
    }
  }
}
