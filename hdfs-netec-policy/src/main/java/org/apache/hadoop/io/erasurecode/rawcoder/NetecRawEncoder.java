package org.apache.hadoop.io.erasurecode.rawcoder;

import io.netec.hdfs.codec.CoderBackend;
import io.netec.hdfs.codec.NetecCoding;
import org.apache.hadoop.io.erasurecode.ErasureCoderOptions;

/**
 * Hadoop raw encoder over {@link NetecCoding}. It lives in Hadoop's package only because the
 * encoding-state classes it must accept are package-private there.
 */
public class NetecRawEncoder extends RawErasureEncoder {
  private final NetecCoding.Encoder encoder;
  private final boolean preferDirect;

  public NetecRawEncoder(ErasureCoderOptions options, CoderBackend backend, String coderName) {
    super(options);
    this.encoder = new NetecCoding.Encoder(options.getNumDataUnits(),
        options.getNumParityUnits(), backend, coderName);
    this.preferDirect = backend == CoderBackend.ISAL;
  }

  @Override
  protected void doEncode(ByteBufferEncodingState state) {
    encoder.encode(state.encodeLength, state.inputs, state.outputs);
  }

  @Override
  protected void doEncode(ByteArrayEncodingState state) {
    encoder.encode(state.encodeLength, state.inputs, state.inputOffsets, state.outputs,
        state.outputOffsets);
  }

  @Override
  public boolean preferDirectBuffer() {
    return preferDirect;
  }
}
