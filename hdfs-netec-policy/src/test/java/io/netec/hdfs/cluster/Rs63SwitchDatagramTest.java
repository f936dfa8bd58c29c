package io.netec.hdfs.cluster;

/**
 * The switch route for NETEC-6-3-1024k in datagram mode (netec.switch.transport=udp): every
 * packet between DataNodes, switch and reader in a UDP datagram of its own.
 */
class Rs63SwitchDatagramTest extends SwitchRouteSuite {
  Rs63SwitchDatagramTest() {
    super(6, 3, false, "udp");
  }
}
