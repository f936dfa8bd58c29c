package io.netec.hdfs.cluster;

/** The switch route for NETEC-3-2-1024k. */
class Rs32SwitchRouteTest extends SwitchRouteSuite {
  Rs32SwitchRouteTest() {
    super(3, 2);
  }
}
