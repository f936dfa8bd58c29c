package io.netec.hdfs.switchroute;

import io.netty.util.concurrent.DefaultThreadFactory;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.List;

/**
 * Netty's thread factory that also sums the CPU time of the threads it made, ended ones
 * included: how the software switch reports what its packet work costs (JMX, metrics page,
 * {@code bin/netec-bench switch-e2e}).
 */
public final class CpuAccountedThreads extends DefaultThreadFactory {
  private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

  private final List<Thread> live = new ArrayList<>();
  private long ended;

  public CpuAccountedThreads(String poolName) {
    super(poolName, false); // as Netty's default: the switch's loops keep its process alive
  }

  @Override
  protected Thread newThread(Runnable r, String name) {
    // the thread's last act is to bank its own CPU time: once ended, the JVM forgets it
    Runnable banked = () -> {
      try {
        r.run();
      } finally {
        bank(Thread.currentThread());
      }
    };
    Thread t = super.newThread(banked, name);
    synchronized (this) {
      live.add(t);
    }
    return t;
  }

  private synchronized void bank(Thread t) {
    long ns = THREADS.isCurrentThreadCpuTimeSupported() ? THREADS.getCurrentThreadCpuTime() : 0;
    ended += Math.max(0, ns);
    live.remove(t);
  }

  /** CPU nanoseconds of each live thread, in the order they were made (empty if unmeasurable). */
  synchronized long[] liveCpuNanos() {
    if (!THREADS.isThreadCpuTimeSupported()) {
      return new long[0];
    }
    return live.stream().mapToLong(t -> Math.max(0, THREADS.getThreadCpuTime(t.getId())))
        .toArray();
  }

  /** CPU nanoseconds of every thread made so far; -1 if this JVM cannot measure it. */
  public synchronized long cpuNanos() {
    if (!THREADS.isThreadCpuTimeSupported()) {
      return -1;
    }
    long sum = ended;
    for (Thread t : live) {
      sum += Math.max(0, THREADS.getThreadCpuTime(t.getId()));
    }
    return sum;
  }
}
