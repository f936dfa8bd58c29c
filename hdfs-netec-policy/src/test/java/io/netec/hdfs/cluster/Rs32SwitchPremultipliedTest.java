package io.netec.hdfs.cluster;

/**
 * The switch route for NETEC-3-2-1024k, with netec.switch.premultiply on: the one-unit tasks
 * are pre-multiplied by the survivors' agents, the two-unit tasks multiplied by the switch.
 */
class Rs32SwitchPremultipliedTest extends SwitchRouteSuite {
  Rs32SwitchPremultipliedTest() {
    super(3, 2, true, "tcp");
  }
}
