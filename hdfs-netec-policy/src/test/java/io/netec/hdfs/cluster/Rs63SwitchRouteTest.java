package io.netec.hdfs.cluster;

/** The switch route for NETEC-6-3-1024k. */
class Rs63SwitchRouteTest extends SwitchRouteSuite {
  Rs63SwitchRouteTest() {
    super(6, 3);
  }
}
