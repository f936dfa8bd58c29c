package io.netec.hdfs.datanode;

import io.netec.hdfs.codec.NetecCoderFactories;
import io.netec.hdfs.route.ReconstructionTask;
import io.netec.hdfs.route.RouteMetrics;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;
import org.apache.hadoop.hdfs.protocol.ErasureCodingPolicy;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Stands in for ErasureCodingWorker's reconstruction pool, with the same threads and queue.
 * Tasks of NETEC policies run through the router (via {@code route}); all others run exactly
 * as Hadoop submitted.
 */
final class RoutingReconstructionPool extends ThreadPoolExecutor {
  private static final Logger LOG = LoggerFactory.getLogger(RoutingReconstructionPool.class);

  private final Function<Runnable, ErasureCodingPolicy> policyOf;
  private final Function<Runnable, ReconstructionTask> describe;
  private final Consumer<ReconstructionTask> route;
  private final RouteMetrics metrics;

  RoutingReconstructionPool(ThreadPoolExecutor replaced,
      Function<Runnable, ErasureCodingPolicy> policyOf,
      Function<Runnable, ReconstructionTask> describe, Consumer<ReconstructionTask> route,
      RouteMetrics metrics) {
    super(replaced.getCorePoolSize(), replaced.getMaximumPoolSize(),
        replaced.getKeepAliveTime(TimeUnit.MILLISECONDS), TimeUnit.MILLISECONDS,
        new LinkedBlockingQueue<>(), replaced.getThreadFactory());
    allowCoreThreadTimeOut(replaced.allowsCoreThreadTimeOut());
    this.policyOf = policyOf;
    this.describe = describe;
    this.route = route;
    this.metrics = metrics;
  }

  @Override
  public Future<?> submit(Runnable task) {
    ErasureCodingPolicy policy = policyOf.apply(task);
    if (policy == null || !NetecCoderFactories.CODEC.equals(policy.getCodecName())) {
      metrics.passedThrough();
      return super.submit(task);
    }
    ReconstructionTask described;
    try {
      described = describe.apply(task);
    } catch (RuntimeException e) {
      LOG.warn("Cannot describe EC task {}, leaving it to Hadoop", task, e);
      metrics.passedThrough();
      return super.submit(task);
    }
    return super.submit(() -> route.accept(described));
  }
}
