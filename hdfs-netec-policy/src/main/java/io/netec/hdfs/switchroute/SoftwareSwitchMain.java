package io.netec.hdfs.switchroute;

import io.netec.hdfs.route.PeerNetworks;
import java.util.concurrent.CountDownLatch;

/**
 * Runs the software switch as its own process (bin/netec-switch). Prints one line with its
 * control and data addresses (and the metrics page's, with --metrics-port), then serves until
 * terminated.
 */
public final class SoftwareSwitchMain {
  private static final String USAGE = "usage: netec-switch [--bind HOST] [--advertise HOST]"
      + " [--control-port N] [--data-port N] [--slot-arrays N] [--slots N] [--memory-mb N]"
      + " [--io-threads N] [--metrics-port N] [--agent-networks CIDR[,CIDR...]]"
      + " [--control-per-peer N] [--data-per-peer N] [--control-idle-ms N] [--tasks-per-peer N]"
      + " [--claim-timeout-ms N]";

  private SoftwareSwitchMain() {
  }

  public static void main(String[] args) throws Exception {
    SoftwareSwitch.Options o;
    try {
      o = parse(args);
    } catch (IllegalArgumentException e) {
      System.err.println("netec-switch: " + e.getMessage());
      System.err.println(USAGE);
      System.exit(2);
      return;
    }
    SoftwareSwitch sw = new SoftwareSwitch(o);
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      sw.close();
      stopped.countDown();
    }));
    System.out.println("netec-switch control " + sw.controlAddress().getPort() + " data "
        + sw.dataAddress().getPort() + " on " + o.bindHost + (sw.metricsAddress() == null ? ""
            : " metrics http://" + o.bindHost + ":" + sw.metricsAddress().getPort() + "/prom"));
    System.out.flush();
    stopped.await();
  }

  static SoftwareSwitch.Options parse(String[] args) {
    SoftwareSwitch.Options o = new SoftwareSwitch.Options();
    for (int i = 0; i < args.length; i++) {
      String flag = args[i];
      if (i + 1 >= args.length) {
        throw new IllegalArgumentException(flag + " needs a value");
      }
      String v = args[++i];
      switch (flag) {
        case "--bind":
          o.bindHost = v;
          break;
        case "--advertise":
          o.advertisedHost = v;
          break;
        case "--control-port":
          o.controlPort = number(flag, v, 0, 65535);
          break;
        case "--data-port":
          o.dataPort = number(flag, v, 0, 65535);
          break;
        case "--slot-arrays":
          o.slotArrays = number(flag, v, 1, 256);
          break;
        case "--slots":
          o.slotsPerArray = number(flag, v, 2, 65535);
          break;
        case "--memory-mb":
          o.memoryBudgetBytes = (long) number(flag, v, 1, 1 << 20) << 20;
          break;
        case "--io-threads":
          o.ioThreads = number(flag, v, 1, 256);
          break;
        case "--metrics-port":
          o.metricsPort = number(flag, v, 0, 65535);
          break;
        case "--control-per-peer":
          o.maxControlPerPeer = number(flag, v, 1, 65536);
          break;
        case "--data-per-peer":
          o.maxDataPerPeer = number(flag, v, 1, 65536);
          break;
        case "--control-idle-ms":
          o.controlIdleMs = number(flag, v, 100, 3_600_000);
          break;
        case "--tasks-per-peer":
          o.tasksPerPeer = number(flag, v, 1, 256);
          break;
        case "--claim-timeout-ms":
          o.claimTimeoutMs = number(flag, v, 100, 600_000);
          break;
        case "--agent-networks":
          o.agentNetworks = java.util.Arrays.asList(v.split(","));
          PeerNetworks.of(o.agentNetworks, SoftwareSwitch.AGENT_NETWORKS, flag); // a bad CIDR fails here, naming it
          break;
        default:
          throw new IllegalArgumentException("unknown option " + flag);
      }
    }
    // each task's reader holds a control connection until the task ends: a cap of tasks
    // above the cap of connections would be the connections' cap, refusing as "unreachable"
    if (o.tasksPerPeer > o.maxControlPerPeer) {
      throw new IllegalArgumentException("--tasks-per-peer " + o.tasksPerPeer + " is above "
          + "--control-per-peer " + o.maxControlPerPeer + " (each task's reader holds a control "
          + "connection until the task ends)");
    }
    return o;
  }

  private static int number(String flag, String v, int lo, int hi) {
    try {
      int n = Integer.parseInt(v);
      if (n >= lo && n <= hi) {
        return n;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw new IllegalArgumentException(flag + " " + v + ": expected a number in " + lo + ".."
        + hi);
  }
}
