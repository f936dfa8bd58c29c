package io.netec.hdfs.inecroute;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.File;
import java.io.IOException;
import java.net.InetSocketAddress;
import org.apache.hadoop.hdfs.protocol.ExtendedBlock;
import org.junit.jupiter.api.Test;

/**
 * Coverage-guided fuzzing (Jazzer) of the INEC participant's one parser of peer input, the
 * join request. For any bytes: an IOException or a request that is within every limit and
 * writes back to exactly the bytes it was read from; never another exception, a name to
 * resolve, or an allocation a peer sized. Regression mode runs in the suite (inputs in
 * src/test/resources/.../JoinRequestFuzzTestInputs/); {@code scripts/fuzz.sh} fuzzes it.
 */
class JoinRequestFuzzTest {

  @FuzzTest
  void join(byte[] data) {
    checkJoin(data);
  }

  static void checkJoin(byte[] data) {
    JoinRequest r;
    try {
      r = JoinRequest.parse(data, data.length);
    } catch (IOException e) {
      return; // refused: what the participant answers "bad join request"
    }
    if (r == null) {
      return; // incomplete: the participant waits for the rest (at most 16 KiB, 10 s)
    }
    assertTrue(r.segment <= JoinRequest.MAX_SEGMENT && r.chunk <= JoinRequest.MAX_CHUNK
        && r.coefficients.length <= JoinRequest.MAX_ROWS
        && r.inputTags.length <= JoinRequest.MAX_INPUTS && r.block != null
        && !r.output.isUnresolved(), "a join past the limits was accepted");
    ByteArrayOutputStream again = new ByteArrayOutputStream();
    try {
      r.write(new DataOutputStream(again));
    } catch (IOException e) {
      throw new AssertionError(e);
    }
    assertArrayEquals(data, again.toByteArray(), "an accepted join writes back differently");
  }

  private static JoinRequest valid() throws IOException {
    return new JoinRequest("blk_-160 unit 2", new ExtendedBlock("BP-1", -158, 1000, 1001),
        "dG9rZW4", 1000, 0, 1000, 4096, 65536, new byte[] {3, 7},
        new byte[][] {new byte[16], new byte[16]}, new InetSocketAddress("127.0.0.1", 50321),
        new byte[16], InecEngine.Transport.TCP, 30_000);
  }

  private static byte[] bytes(JoinRequest r) throws IOException {
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    r.write(new DataOutputStream(b));
    return b.toByteArray();
  }

  /** The check on what the fuzzer starts from: a valid join, every prefix of it, and junk. */
  @Test
  void validJoinsAndTheirPrefixesHoldTheProperty() throws Exception {
    byte[] ok = bytes(valid());
    checkJoin(ok);
    for (int n = 0; n < ok.length; n++) {
      checkJoin(java.util.Arrays.copyOf(ok, n));
    }
    checkJoin("GET / HTTP/1.1\r\n\r\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
  }

  /** For scripts/fuzz.sh: writes the seeds into DIR/join/. */
  public static void main(String[] args) throws IOException {
    File dir = new File(args[0], "join");
    if (!dir.isDirectory() && !dir.mkdirs()) {
      throw new IOException("cannot make " + dir);
    }
    java.nio.file.Files.write(new File(dir, "valid").toPath(), bytes(valid()));
  }
}
