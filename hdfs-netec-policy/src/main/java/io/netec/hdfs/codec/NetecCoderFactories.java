package io.netec.hdfs.codec;

import org.apache.hadoop.io.erasurecode.ErasureCoderOptions;
import org.apache.hadoop.io.erasurecode.rawcoder.NetecRawDecoder;
import org.apache.hadoop.io.erasurecode.rawcoder.NetecRawEncoder;
import org.apache.hadoop.io.erasurecode.rawcoder.RawErasureCoderFactory;
import org.apache.hadoop.io.erasurecode.rawcoder.RawErasureDecoder;
import org.apache.hadoop.io.erasurecode.rawcoder.RawErasureEncoder;

/**
 * The raw coder factories CodecRegistry finds through ServiceLoader. A native factory throws
 * when the native library is unavailable, which is how CodecUtil moves to the next coder.
 */
public final class NetecCoderFactories {
  /** Codec name of NETEC policies (NETEC-k-m-cellk). */
  public static final String CODEC = "netec";
  public static final String NETEC_NATIVE = "netec_native";
  public static final String NETEC_JAVA = "netec_java";
  /** Our ISA-L coder offered for Hadoop's own {@code rs} codec. */
  public static final String RS_NETEC_NATIVE = "rs_netec_native";

  private NetecCoderFactories() {
  }

  private abstract static class Base implements RawErasureCoderFactory {
    private final String codec;
    private final String coder;
    private final CoderBackend backend;

    Base(String codec, String coder, CoderBackend backend) {
      this.codec = codec;
      this.coder = coder;
      this.backend = backend;
    }

    @Override
    public RawErasureEncoder createEncoder(ErasureCoderOptions options) {
      checkBackend();
      return new NetecRawEncoder(options, backend, coder);
    }

    @Override
    public RawErasureDecoder createDecoder(ErasureCoderOptions options) {
      checkBackend();
      return new NetecRawDecoder(options, backend, coder);
    }

    private void checkBackend() {
      if (backend == CoderBackend.ISAL) {
        IsalNative.checkAvailable();
      }
    }

    @Override
    public String getCoderName() {
      return coder;
    }

    @Override
    public String getCodecName() {
      return codec;
    }
  }

  /** netec_native: ISA-L through libnetec.so. */
  public static final class NetecNative extends Base {
    public NetecNative() {
      super(CODEC, NETEC_NATIVE, CoderBackend.ISAL);
    }
  }

  /** netec_java: the pure-Java coder. */
  public static final class NetecJava extends Base {
    public NetecJava() {
      super(CODEC, NETEC_JAVA, CoderBackend.JAVA);
    }
  }

  /**
   * rs_netec_native: ISA-L speed for Hadoop's rs codec without an ISA-L libhadoop, but only
   * where the operator asked for it: {@code io.erasurecode.codec.rs.rawcoders} in the site
   * configuration (core-site.xml) names it. Elsewhere it refuses to make coders, and Hadoop's
   * CodecUtil quietly takes the next coder of the list, as for any coder that cannot be made:
   * having the jar on a host never changes which coder Hadoop's own RS files use.
   */
  public static final class RsNetecNative extends Base {
    public RsNetecNative() {
      super("rs", RS_NETEC_NATIVE, CoderBackend.ISAL);
    }

    @Override
    public RawErasureEncoder createEncoder(ErasureCoderOptions options) {
      checkListed();
      return super.createEncoder(options);
    }

    @Override
    public RawErasureDecoder createDecoder(ErasureCoderOptions options) {
      checkListed();
      return super.createDecoder(options);
    }

    private static void checkListed() {
      if (!RsOptIn.LISTED) {
        throw new UnsupportedOperationException(RS_NETEC_NATIVE + " serves Hadoop's rs codec "
            + "only where " + RsOptIn.KEY + " in core-site.xml lists it");
      }
    }
  }

  /** Whether this process's site configuration lists rs_netec_native for the rs codec. */
  static final class RsOptIn {
    static final String KEY = "io.erasurecode.codec.rs.rawcoders";
    /** Read once, when a coder of Hadoop's rs codec is first asked of us. */
    static final boolean LISTED = listed(new org.apache.hadoop.conf.Configuration());

    private RsOptIn() {
    }

    static boolean listed(org.apache.hadoop.conf.Configuration site) {
      for (String name : site.getTrimmedStrings(KEY)) {
        if (name.equals(RS_NETEC_NATIVE)) {
          return true;
        }
      }
      return false;
    }
  }
}
