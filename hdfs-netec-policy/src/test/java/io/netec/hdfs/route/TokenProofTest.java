package io.netec.hdfs.route;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.Base64;
import java.util.EnumSet;
import org.apache.hadoop.fs.StorageType;
import org.apache.hadoop.hdfs.protocol.ExtendedBlock;
import org.apache.hadoop.hdfs.security.token.block.BlockTokenIdentifier;
import org.apache.hadoop.hdfs.security.token.block.BlockTokenIdentifier.AccessMode;
import org.apache.hadoop.hdfs.security.token.block.BlockTokenSecretManager;
import org.apache.hadoop.security.token.Token;
import org.apache.hadoop.util.StringUtils;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Block-token proofs against Hadoop's own secret managers: a NameNode's issues the tokens, a
 * DataNode's (with the NameNode's keys) derives the passwords that check the proofs.
 */
class TokenProofTest {
  private static final String POOL = "BP-1-198.18.0.1-1";
  private final ExtendedBlock block = new ExtendedBlock(POOL, -9223372036854775792L, 4096, 1001);
  private BlockTokenSecretManager dataNode;
  private BlockTokenSecretManager nameNode;
  private long[] now;
  private TokenProof.Verifier verifier;

  @BeforeEach
  void keys() throws IOException {
    nameNode = new BlockTokenSecretManager(600_000, 600_000, 0, 1, POOL, null, false);
    dataNode = new BlockTokenSecretManager(600_000, 600_000, POOL, null, false);
    dataNode.addKeys(nameNode.exportKeys());
    now = new long[] {System.currentTimeMillis()};
    verifier = new TokenProof.Verifier(() -> now[0]);
  }

  private Token<BlockTokenIdentifier> token(ExtendedBlock b, AccessMode mode)
      throws IOException {
    return nameNode.generateToken(b, EnumSet.of(mode), new StorageType[0], new String[0]);
  }

  private String proof(Token<BlockTokenIdentifier> t, ExtendedBlock b) throws IOException {
    return TokenProof.prove(t.encodeToUrlString(), b);
  }

  private BlockTokenIdentifier verify(String proof, ExtendedBlock b) throws IOException {
    return verifier.verify(proof, b, new TokenProof.Keys() {
      @Override
      public byte[] password(BlockTokenIdentifier id) throws IOException {
        return dataNode.retrievePassword(id);
      }

      @Override
      public void checkRead(BlockTokenIdentifier id, ExtendedBlock block) throws IOException {
        dataNode.checkAccess(id, null, block, AccessMode.READ);
      }
    });
  }

  private static String refusal(IOException e) {
    return e.getMessage();
  }

  @Test
  void aProofPassesAndItsIdentifierIsTheTokens() throws IOException {
    Token<BlockTokenIdentifier> t = token(block, AccessMode.READ);
    BlockTokenIdentifier id = verify(proof(t, block), block);
    dataNode.checkAccess(id, null, block, AccessMode.READ);
    assertEquals(t.decodeIdentifier().getExpiryDate(), id.getExpiryDate());
    assertEquals(block.getBlockId(), id.getBlockId());
  }

  @Test
  void theProofCarriesNoPasswordInAnyEncoding() throws IOException {
    Token<BlockTokenIdentifier> t = token(block, AccessMode.READ);
    String p = proof(t, block);
    byte[] password = t.getPassword();
    for (String form : new String[] {Base64.getUrlEncoder().withoutPadding()
        .encodeToString(password), Base64.getEncoder().withoutPadding().encodeToString(password),
        StringUtils.byteToHexString(password), t.encodeToUrlString()}) {
      assertFalse(p.contains(form), "the password, as " + form + ", in " + p);
    }
    assertTrue(p.startsWith(TokenProof.PREFIX), p);
    assertFalse(p.equals(proof(t, block)), "each proof is fresh");
  }

  @Test
  void aProofIsGoodOnce() throws IOException {
    String p = proof(token(block, AccessMode.READ), block);
    verify(p, block);
    IOException e = assertThrows(IOException.class, () -> verify(p, block));
    assertTrue(refusal(e).contains("replay"), refusal(e));
  }

  @Test
  void aProofIsForItsBlockAndItsTokenOnly() throws IOException {
    Token<BlockTokenIdentifier> t = token(block, AccessMode.READ);
    ExtendedBlock other = new ExtendedBlock(POOL, block.getBlockId() + 1, 4096, 1001);
    IOException e = assertThrows(IOException.class, () -> verify(proof(t, block), other));
    assertTrue(refusal(e).contains("does not match"), refusal(e));
    ExtendedBlock otherPool = new ExtendedBlock("BP-2-198.18.0.1-1", block.getBlockId(), 4096,
        1001);
    assertThrows(IOException.class, () -> verify(proof(t, block), otherPool));
    // the identifier of a real token with a password guessed: what a forger holds
    Token<BlockTokenIdentifier> forged = new Token<>(t.getIdentifier(), new byte[20],
        t.getKind(), t.getService());
    e = assertThrows(IOException.class, () -> verify(proof(forged, block), block));
    assertTrue(refusal(e).contains("does not match"), refusal(e));
    // a good proof of a token for another block, or of a WRITE token: the token's own terms
    // refuse it, before its nonce takes room
    String forOther = proof(token(other, AccessMode.READ), block);
    e = assertThrows(IOException.class, () -> verify(forOther, block));
    assertFalse(refusal(e).contains("does not match"), "Hadoop's check: " + refusal(e));
    String write = proof(token(block, AccessMode.WRITE), block);
    e = assertThrows(IOException.class, () -> verify(write, block), "a WRITE token reads nothing");
    assertFalse(refusal(e).contains("does not match"), "Hadoop's check: " + refusal(e));
  }

  @Test
  void everyFlippedCharacterIsRefused() throws IOException {
    String p = proof(token(block, AccessMode.READ), block);
    for (int i = TokenProof.PREFIX.length(); i < p.length(); i++) {
      char c = p.charAt(i);
      String bad = p.substring(0, i) + (c == 'A' ? 'B' : 'A') + p.substring(i + 1);
      assertThrows(IOException.class, () -> verify(bad, block), "changed at " + i);
    }
    verify(p, block); // none of those was taken for it
  }

  @Test
  void aProofIssuedFarFromTheDataNodesClockIsRefused() throws IOException {
    Token<BlockTokenIdentifier> t = token(block, AccessMode.READ);
    byte[] nonce = new byte[16];
    for (long skew : new long[] {-TokenProof.Verifier.MAX_SKEW_MS - 1,
        TokenProof.Verifier.MAX_SKEW_MS + 1}) {
      nonce[0]++;
      String p = TokenProof.prove(t.encodeToUrlString(), block, now[0] + skew, nonce);
      IOException e = assertThrows(IOException.class, () -> verify(p, block));
      assertTrue(refusal(e).contains("clock"), refusal(e));
    }
    nonce[0]++;
    verify(TokenProof.prove(t.encodeToUrlString(), block, now[0] - 60_000, nonce), block);
  }

  @Test
  void tokensWithTheirPasswordAndGarbageAreRefusedNamingTheBlock() throws IOException {
    Token<BlockTokenIdentifier> t = token(block, AccessMode.READ);
    IOException e = assertThrows(IOException.class, () -> verify(t.encodeToUrlString(), block));
    assertTrue(refusal(e).contains("password") && refusal(e).contains(block.toString()),
        refusal(e));
    for (String bad : new String[] {"", TokenProof.PREFIX, TokenProof.PREFIX + "a.b.c.d",
        TokenProof.PREFIX + "AAAA.1.AAAAAAAAAAAAAAAAAAAAAA.AAAA", TokenProof.PREFIX + "....."}) {
      e = assertThrows(IOException.class, () -> verify(bad, block), bad);
      assertTrue(refusal(e).contains(block.toString()), refusal(e));
    }
    assertEquals("", TokenProof.prove("", block), "tokens off: nothing to prove");
    assertThrows(IOException.class, () -> TokenProof.prove("token-3", block));
  }

  @Test
  void identifiersClaimingMoreThanTheyHoldAreRefusedBeforeHadoopReadsThem() throws IOException {
    // expiry, key id, then a user name claiming 25 MB (Hadoop would allocate them)
    byte[] huge = {-115, 0x7f, -1, -1, -1, 1, 0x7f, -1, -1, -1};
    // expiry, key id, no user, no pool, block id, no modes, 2^31 - 1 storage types
    byte[] typesClaimed = {-1, 1, -1, -1, -1, -1, -1, -1, -1, -1, 1, 0, -116, 0x7f, -1, -1, -1};
    for (byte[] id : new byte[][] {huge, typesClaimed, new byte[TokenProof.MAX_IDENTIFIER + 1]}) {
      assertFalse(TokenProof.LegacyIdentifier.boundsHold(id) && id.length
          <= TokenProof.MAX_IDENTIFIER);
      String p = TokenProof.PREFIX + Base64.getUrlEncoder().withoutPadding().encodeToString(id)
          + "." + now[0] + ".AAAAAAAAAAAAAAAAAAAAAA.AAAA";
      IOException e = assertThrows(IOException.class, () -> verify(p, block));
      assertTrue(refusal(e).contains("malformed"), refusal(e));
    }
    Token<BlockTokenIdentifier> t = token(block, AccessMode.READ);
    assertTrue(TokenProof.LegacyIdentifier.boundsHold(t.getIdentifier()), "a real one holds");
  }

  @Test
  void acceptedNoncesAreForgottenOnlyOnceTheirProofsAreTooOldAndOneUserHoldsHalf()
      throws IOException {
    Token<BlockTokenIdentifier> t = token(block, AccessMode.READ);
    String first = proof(t, block);
    verify(first, block);
    for (int i = 1; i < TokenProof.Verifier.MAX_PER_USER; i++) {
      verify(proof(t, block), block);
    }
    IOException e = assertThrows(IOException.class, () -> verify(proof(t, block), block));
    assertTrue(refusal(e).contains("too many proofs") && refusal(e).contains("of root"),
        refusal(e));
    // another user's token still passes: one user cannot lock the others out
    BlockTokenIdentifier other = verify(TokenProof.prove(nameNode.generateToken("other",
        block, java.util.EnumSet.of(AccessMode.READ), new StorageType[0], new String[0])
        .encodeToUrlString(), block), block);
    assertEquals("other", other.getUserId());
    now[0] += 2 * TokenProof.Verifier.MAX_SKEW_MS; // (the loop's proofs were issued later)
    assertThrows(IOException.class, () -> verify(first, block), "too old, though forgotten");
    byte[] nonce = new byte[16];
    verify(TokenProof.prove(t.encodeToUrlString(), block, now[0], nonce), block);
  }
}
