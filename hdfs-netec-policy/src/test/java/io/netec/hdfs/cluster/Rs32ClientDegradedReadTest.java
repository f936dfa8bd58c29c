package io.netec.hdfs.cluster;

/** Client degraded reads through the switch, NETEC-3-2-1024k. */
class Rs32ClientDegradedReadTest extends ClientDegradedReadSuite {
  Rs32ClientDegradedReadTest() {
    super(3, 2);
  }
}
