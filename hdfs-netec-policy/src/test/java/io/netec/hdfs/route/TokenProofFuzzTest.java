package io.netec.hdfs.route;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.EnumSet;
import org.apache.hadoop.fs.StorageType;
import org.apache.hadoop.hdfs.protocol.ExtendedBlock;
import org.apache.hadoop.hdfs.security.token.block.BlockTokenIdentifier;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.security.token.Token;
import org.junit.jupiter.api.Test;

/**
 * Coverage-guided fuzzing (Jazzer) of the block-token proof a DataNode takes from peers. For
 * any text: refused with an IOException, or accepted only if it is the one good proof the
 * fuzzer started from (nothing else carries a MAC under the password); never another
 * exception. Each input meets a fresh verifier whose clock is the seed's issue time.
 */
class TokenProofFuzzTest {
  private static final ExtendedBlock BLOCK =
      new ExtendedBlock("BP-1-198.18.0.1-1", -9223372036854775792L, 4096, 1001);
  private static final long ISSUED = 1_800_000_000_000L;
  private static final byte[] PASSWORD = new byte[20];

  static {
    Arrays.fill(PASSWORD, (byte) 7);
  }

  /** The one good proof: a READ token of BLOCK under PASSWORD, issued at ISSUED. */
  static String seed() throws IOException {
    BlockTokenIdentifier id = new BlockTokenIdentifier("root", BLOCK.getBlockPoolId(),
        BLOCK.getBlockId(), EnumSet.of(BlockTokenIdentifier.AccessMode.READ),
        new StorageType[0], new String[0], false);
    Token<BlockTokenIdentifier> t = new Token<>(id.getBytes(), PASSWORD,
        new Text("HDFS_BLOCK_TOKEN"), new Text());
    return TokenProof.prove(t.encodeToUrlString(), BLOCK, ISSUED, new byte[16]);
  }

  @FuzzTest
  void tokenProof(byte[] data) throws IOException {
    check(new String(data, StandardCharsets.UTF_8));
  }

  static void check(String text) throws IOException {
    TokenProof.Verifier v = new TokenProof.Verifier(() -> ISSUED);
    try {
      v.verify(text, BLOCK, new TokenProof.Keys() {
        @Override
        public byte[] password(BlockTokenIdentifier id) {
          return PASSWORD.clone();
        }

        @Override
        public void checkRead(BlockTokenIdentifier id, ExtendedBlock block) {
          // every identifier's terms pass here: the proof alone is under test
        }
      });
    } catch (IOException e) {
      return;
    }
    assertEquals(seed(), text, "a proof other than the good one was accepted");
  }

  @Test
  void theSeedItsPrefixesAndJunkHoldTheProperty() throws IOException {
    String ok = seed();
    check(ok);
    for (int n = 0; n < ok.length(); n++) {
      check(ok.substring(0, n));
    }
    check(TokenProof.PREFIX + "...." + "\u0000\uFFFF");
  }

  /** For scripts/fuzz.sh: writes the seed into DIR/tokenProof/. */
  public static void main(String[] args) throws IOException {
    File dir = new File(args[0], "tokenProof");
    if (!dir.mkdirs() && !dir.isDirectory()) {
      throw new IOException("cannot make the seed directory " + dir);
    }
    java.nio.file.Files.write(new File(dir, "valid").toPath(),
        seed().getBytes(StandardCharsets.UTF_8));
  }
}
