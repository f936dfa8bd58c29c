package io.netec.hdfs.cluster;

/** The INEC route for NETEC-3-2-1024k, scheme ppr, streams over tcp. */
class Rs32InecTreeTest extends InecRouteSuite {
  Rs32InecTreeTest() {
    super(3, 2, "ppr", "tcp");
  }
}
