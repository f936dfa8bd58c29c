package io.netec.hdfs.cluster;

/** The INEC route for NETEC-6-3-1024k, scheme ecpipe, streams over verbs. */
class Rs63InecVerbsChainTest extends InecRouteSuite {
  Rs63InecVerbsChainTest() {
    super(6, 3, "ecpipe", "verbs");
  }
}
