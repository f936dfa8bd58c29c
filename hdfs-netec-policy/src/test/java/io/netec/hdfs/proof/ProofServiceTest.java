package io.netec.hdfs.proof;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netec.hdfs.codec.Fingerprint;
import io.netec.hdfs.route.MemoryBlocks;
import io.netec.hdfs.switchroute.wire.ControlFrames;
import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.apache.hadoop.hdfs.protocol.ExtendedBlock;
import org.apache.hadoop.util.DataChecksum;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The proof service as a verifier meets it, over a real socket: the replica's checksum first,
 * then the fingerprint of exactly the range asked (zeros past the unit), a corrupt replica
 * answered as corrupt, bad requests and short blocks refused, a connection that never sends its
 * request closed, and the connection cap held.
 */
class ProofServiceTest {
  private final MemoryBlocks blocks = new MemoryBlocks();
  private final byte[] unit = new byte[300_001];
  private ProofService service;
  private final List<Socket> open = new ArrayList<>();

  @BeforeEach
  void start() throws IOException {
    new Random(3).nextBytes(unit);
    blocks.put(7, unit);
    service = new ProofService(blocks, "127.0.0.1", 0, 4, 500);
  }

  @AfterEach
  void stop() throws IOException {
    for (Socket s : open) {
      s.close();
    }
    service.close();
  }

  private Socket connect() throws IOException {
    Socket s = new Socket("127.0.0.1", service.address().getPort());
    s.setSoTimeout(10_000);
    open.add(s);
    return s;
  }

  private List<ProofAnswer> ask(byte[] request) throws Exception {
    Socket s = connect();
    ControlFrames.write(new DataOutputStream(s.getOutputStream()), request);
    DataInputStream in = new DataInputStream(new BufferedInputStream(s.getInputStream()));
    List<ProofAnswer> answers = new ArrayList<>();
    try {
      while (answers.size() < 2) {
        answers.add(ProofAnswer.fromJson(ControlFrames.read(in)));
      }
    } catch (java.io.EOFException e) {
      // the service closed after a refusal
    }
    return answers;
  }

  /** A request for block 7 (the tests' replica) with no token. */
  static ProofRequest request(long unitLength, long offset, long length, byte[] key) {
    return new ProofRequest(new ExtendedBlock("bp", 7, 0, 1001), "", unitLength, offset, length,
        key);
  }

  @Test
  void answersTheChecksumThenTheFingerprintOfTheRange() throws Exception {
    byte[] key = new byte[16];
    new Random(4).nextBytes(key);
    // a range inside the unit, and one running past its end (zeros)
    for (long[] r : new long[][] {{0, unit.length}, {4096 + 17, 100_000},
        {250_000, 200_000}}) {
      List<ProofAnswer> a = ask(request(unit.length, r[0], r[1], key).toJson());
      assertEquals(2, a.size(), a.toString());
      assertEquals(DataChecksum.Type.CRC32C, a.get(0).checksum().getChecksumType());
      byte[] range = new byte[(int) r[1]];
      System.arraycopy(unit, (int) r[0], range, 0,
          (int) Math.min(r[1], unit.length - r[0]));
      assertArrayEquals(Fingerprint.of(key, range, 0, range.length), a.get(1).fingerprint(),
          "range " + r[0] + "+" + r[1]);
    }
    assertEquals(3, service.answered());
  }

  @Test
  void aCorruptReplicaIsAnsweredAsCorrupt() throws Exception {
    blocks.corrupt.add(7L);
    List<ProofAnswer> a = ask(request(unit.length, 0, unit.length, new byte[16]).toJson());
    assertEquals(2, a.size());
    assertFalse(a.get(1).ok());
    assertEquals(ProofAnswer.Fault.CORRUPT, a.get(1).fault());
    assertEquals(1, service.corrupt());
  }

  @Test
  void badRequestsAndMissingBytesAreRefusedNamingWhy() throws Exception {
    List<ProofAnswer> a = ask("{\"op\":\"steal\"}".getBytes(StandardCharsets.UTF_8));
    assertEquals(ProofAnswer.Fault.REFUSED, a.get(0).fault());
    assertTrue(a.get(0).reason().contains("op"), a.get(0).reason());
    // a block longer than the replica here
    a = ask(request(unit.length + 10, 0, unit.length + 10, new byte[16]).toJson());
    assertEquals(ProofAnswer.Fault.REFUSED, a.get(0).fault());
    assertTrue(a.get(0).reason().contains("no block"), a.get(0).reason());
    assertEquals(2, service.refused());
  }

  @Test
  void idlePeersAreClosedAndTheCapHolds() throws Exception {
    List<Socket> idle = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      idle.add(connect());
    }
    // beyond the cap of 4 closed at once; the others when their request does not come
    for (Socket s : idle) {
      assertEquals(-1, s.getInputStream().read(), "closed");
    }
    assertTrue(service.refused() >= 2);
    // and the service still answers
    assertEquals(2, ask(request(unit.length, 0, 10, new byte[16]).toJson()).size());
  }
}
