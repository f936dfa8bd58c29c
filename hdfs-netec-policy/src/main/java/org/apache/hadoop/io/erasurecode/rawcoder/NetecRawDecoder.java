package org.apache.hadoop.io.erasurecode.rawcoder;

import io.netec.hdfs.codec.CoderBackend;
import io.netec.hdfs.codec.NetecCoding;
import org.apache.hadoop.io.erasurecode.ErasureCoderOptions;

/**
 * Hadoop raw decoder over {@link NetecCoding}: erased indices in any order (HADOOP-19180 does
 * not apply), null inputs beyond the first k, heap or direct buffers at any position/offset.
 */
public class NetecRawDecoder extends RawErasureDecoder {
  private final NetecCoding.Decoder decoder;
  private final boolean preferDirect;

  public NetecRawDecoder(ErasureCoderOptions options, CoderBackend backend, String coderName) {
    super(options);
    this.decoder = new NetecCoding.Decoder(options.getNumDataUnits(),
        options.getNumParityUnits(), backend, coderName);
    this.preferDirect = backend == CoderBackend.ISAL;
  }

  @Override
  protected void doDecode(ByteBufferDecodingState state) {
    decoder.decode(state.decodeLength, state.inputs, state.erasedIndexes, state.outputs);
  }

  @Override
  protected void doDecode(ByteArrayDecodingState state) {
    decoder.decode(state.decodeLength, state.inputs, state.inputOffsets, state.erasedIndexes,
        state.outputs, state.outputOffsets);
  }

  @Override
  public boolean preferDirectBuffer() {
    return preferDirect;
  }
}
