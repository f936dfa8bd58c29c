package io.netec.hdfs.codec;

/** Makes a {@link MatrixCoder} for a matrix: the one choice between ISA-L and Java. */
public interface CoderBackend {
  CoderBackend ISAL = IsalMatrixCoder::new;
  CoderBackend JAVA = JavaMatrixCoder::new;

  MatrixCoder create(int k, int rows, byte[] matrix);
}
