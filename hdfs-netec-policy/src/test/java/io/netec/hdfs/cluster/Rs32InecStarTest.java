package io.netec.hdfs.cluster;

/** The INEC route for NETEC-3-2-1024k, scheme rs, streams over tcp. */
class Rs32InecStarTest extends InecRouteSuite {
  Rs32InecStarTest() {
    super(3, 2, "rs", "tcp");
  }
}
