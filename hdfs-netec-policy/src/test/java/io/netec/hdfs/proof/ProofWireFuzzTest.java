package io.netec.hdfs.proof;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.netec.hdfs.codec.Fingerprint;
import io.netec.hdfs.switchroute.wire.ProtocolException;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.apache.hadoop.hdfs.protocol.ExtendedBlock;
import org.apache.hadoop.util.DataChecksum;
import org.junit.jupiter.api.Test;

/**
 * Coverage-guided fuzzing (Jazzer) of the proof protocol's two parsers of peer input: the
 * request a proof service takes, and the answer a verifier takes. For any bytes: a
 * ProtocolException, or a message within every limit that parses again to itself from its own
 * JSON; never another exception. Regression mode runs in the suite; {@code scripts/fuzz.sh}
 * fuzzes both.
 */
class ProofWireFuzzTest {
  @FuzzTest
  void proofRequest(byte[] data) {
    checkRequest(data);
  }

  @FuzzTest
  void proofAnswer(byte[] data) {
    checkAnswer(data);
  }

  static void checkRequest(byte[] data) {
    ProofRequest r;
    try {
      r = ProofRequest.fromJson(data);
    } catch (ProtocolException e) {
      return;
    }
    assertTrue(r.length() <= ProofRequest.MAX_LENGTH && r.offset() >= 0
        && r.key().length == Fingerprint.KEY_BYTES && r.token().length() <= 4096,
        "a request past the limits was accepted");
    try {
      ProofRequest again = ProofRequest.fromJson(r.toJson());
      assertArrayEquals(r.toJson(), again.toJson(), "a request reads back differently");
    } catch (ProtocolException e) {
      throw new AssertionError("an accepted request does not parse from its own JSON", e);
    }
  }

  static void checkAnswer(byte[] data) {
    ProofAnswer a;
    try {
      a = ProofAnswer.fromJson(data);
    } catch (ProtocolException e) {
      return;
    }
    try {
      assertEquals(a.toString(), ProofAnswer.fromJson(a.toJson()).toString());
    } catch (ProtocolException e) {
      throw new AssertionError("an accepted answer does not parse from its own JSON", e);
    }
  }

  static ProofRequest valid() {
    return new ProofRequest(new ExtendedBlock("BP-1-127.0.0.1-1", -9223372036854775807L, 0,
        1001), "dG9rZW4", 2097152, 0, 2097152, new byte[16]);
  }

  static byte[][] answers() {
    return new byte[][] {
        ProofAnswer.checksum(DataChecksum.newDataChecksum(DataChecksum.Type.CRC32C, 512))
            .toJson(),
        ProofAnswer.fingerprint(new byte[Fingerprint.BYTES], 2097152).toJson(),
        ProofAnswer.failure(ProofAnswer.Fault.CORRUPT, "Checksum error at 512").toJson()};
  }

  /** The check on what the fuzzer starts from: valid messages, their prefixes, junk. */
  @Test
  void validMessagesAndTheirPrefixesHoldTheProperty() {
    byte[] ok = valid().toJson();
    checkRequest(ok);
    for (int n = 0; n < ok.length; n++) {
      checkRequest(java.util.Arrays.copyOf(ok, n));
    }
    for (byte[] a : answers()) {
      checkAnswer(a);
      for (int n = 0; n < a.length; n++) {
        checkAnswer(java.util.Arrays.copyOf(a, n));
      }
    }
    checkRequest("[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[".getBytes(StandardCharsets.UTF_8));
    checkRequest(("{\"op\":\"fingerprint\",\"version\":1,\"block\":\"b:blk_1_2\",\"token\":\"\","
        + "\"unitLength\":1,\"offset\":0,\"length\":99999999999999999999,\"key\":\"00\"}")
        .getBytes(StandardCharsets.UTF_8));
    checkAnswer("{\"ok\":true,\"checksum\":\"MIXED\",\"bytesPerChecksum\":512}"
        .getBytes(StandardCharsets.UTF_8));
  }

  /** For scripts/fuzz.sh: writes the seeds into DIR/proofRequest/ and DIR/proofAnswer/. */
  public static void main(String[] args) throws IOException {
    File req = new File(args[0], "proofRequest");
    File ans = new File(args[0], "proofAnswer");
    if (!req.mkdirs() && !req.isDirectory() || !ans.mkdirs() && !ans.isDirectory()) {
      throw new IOException("cannot make the seed directories in " + args[0]);
    }
    java.nio.file.Files.write(new File(req, "valid").toPath(), valid().toJson());
    byte[][] a = answers();
    for (int i = 0; i < a.length; i++) {
      java.nio.file.Files.write(new File(ans, "valid-" + i).toPath(), a[i]);
    }
  }
}
