package io.netec.hdfs.cluster;

/** The INEC route for NETEC-6-3-1024k, scheme ppr, streams over tcp. */
class Rs63InecTreeTest extends InecRouteSuite {
  Rs63InecTreeTest() {
    super(6, 3, "ppr", "tcp");
  }
}
