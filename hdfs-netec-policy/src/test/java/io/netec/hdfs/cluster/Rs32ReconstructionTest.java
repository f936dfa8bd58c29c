package io.netec.hdfs.cluster;

/** NETEC-3-2-1024k end to end. */
class Rs32ReconstructionTest extends NetecReconstructionSuite {
  Rs32ReconstructionTest() {
    super(3, 2);
  }
}
