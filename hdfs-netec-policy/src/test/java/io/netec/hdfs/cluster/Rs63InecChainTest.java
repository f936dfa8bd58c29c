package io.netec.hdfs.cluster;

/** The INEC route for NETEC-6-3-1024k, scheme ecpipe, streams over tcp. */
class Rs63InecChainTest extends InecRouteSuite {
  Rs63InecChainTest() {
    super(6, 3, "ecpipe", "tcp");
  }
}
