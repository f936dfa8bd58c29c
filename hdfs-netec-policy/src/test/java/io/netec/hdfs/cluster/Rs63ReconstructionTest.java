package io.netec.hdfs.cluster;

/** NETEC-6-3-1024k end to end. */
class Rs63ReconstructionTest extends NetecReconstructionSuite {
  Rs63ReconstructionTest() {
    super(6, 3);
  }
}
