package io.netec.hdfs.codec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.io.erasurecode.CodecRegistry;
import org.apache.hadoop.io.erasurecode.CodecUtil;
import org.apache.hadoop.io.erasurecode.ErasureCoderOptions;
import org.apache.hadoop.io.erasurecode.rawcoder.RSRawDecoder;
import org.apache.hadoop.io.erasurecode.rawcoder.RSRawEncoder;
import org.junit.jupiter.api.Test;

/**
 * The jar on a host never changes which coder Hadoop's own RS files use: without
 * io.erasurecode.codec.rs.rawcoders naming rs_netec_native in the site configuration, Hadoop's
 * rs codec gets rs_java however the registry ordered the coders, and a programmatic key alone
 * does not opt in either (its own JVM: the site configuration is read once per process).
 */
class RsCoderUnlistedTest {
  @Test
  void hadoopsRsCodecKeepsItsOwnCoderUnlessTheSiteListsOurs() {
    ErasureCoderOptions opts = new ErasureCoderOptions(6, 3);
    // registered (hdfs ec -listCodecs shows it), whatever its place in the default order
    assertTrue(Arrays.asList(CodecRegistry.getInstance().getCoderNames("rs"))
        .contains(NetecCoderFactories.RS_NETEC_NATIVE));
    Configuration conf = new Configuration(false);
    // The default order, our coder first (as a classpath with our jar before Hadoop's may
    // give it): still Hadoop's own.
    conf.set("io.erasurecode.codec.rs.rawcoders", "rs_netec_native,rs_java");
    assertEquals(RSRawEncoder.class, CodecUtil.createRawEncoder(conf, "rs", opts).getClass());
    assertEquals(RSRawDecoder.class, CodecUtil.createRawDecoder(conf, "rs", opts).getClass());
    assertEquals(RSRawEncoder.class,
        CodecUtil.createRawEncoder(new Configuration(false), "rs", opts).getClass());
  }
}
