package io.netec.hdfs.cluster;

/** The INEC route for NETEC-3-2-1024k, scheme ecpipe, streams over tcp. */
class Rs32InecChainTest extends InecRouteSuite {
  Rs32InecChainTest() {
    super(3, 2, "ecpipe", "tcp");
  }
}
