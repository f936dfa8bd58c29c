package io.netec.hdfs.cluster;

/** Client degraded reads through the switch, NETEC-6-3-1024k. */
class Rs63ClientDegradedReadTest extends ClientDegradedReadSuite {
  Rs63ClientDegradedReadTest() {
    super(6, 3);
  }
}
