package io.netec.hdfs.proof;

import static io.netec.hdfs.proof.ProofServiceTest.request;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netec.hdfs.codec.Fingerprint;
import io.netec.hdfs.route.MemoryBlocks;
import io.netec.hdfs.switchroute.wire.ControlFrames;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.util.DataChecksum;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A verifier's call to one survivor's proof service, over real sockets: the checksum then the
 * fingerprint of exactly the range from a real {@link ProofService}; and these ways a call
 * fails, each named: a refusal, a connection refused (nothing listening), a connection closed
 * after the checksum, an answer that does not parse, a fingerprint before the checksum, a call
 * closed before it started or while it waits, a DataNode with no address.
 */
class ProofCallTest {
  private static final long WAIT = TimeUnit.SECONDS.toNanos(10);
  /** A key for calls whose fingerprint is never compared. */
  private static final byte[] ZERO_KEY = new byte[Fingerprint.KEY_BYTES];
  private final MemoryBlocks blocks = new MemoryBlocks();
  private final byte[] unit = new byte[200_003];
  private ProofService service;

  @BeforeEach
  void start() throws IOException {
    new Random(5).nextBytes(unit);
    blocks.put(7, unit);
    service = new ProofService(blocks, "127.0.0.1", 0, 4, 2_000);
  }

  @AfterEach
  void stop() {
    service.close();
  }

  private InetSocketAddress serviceAddress() {
    return new InetSocketAddress("127.0.0.1", service.address().getPort());
  }

  /** The call's fingerprint, or, once it failed (or 10 s passed), null. */
  private static byte[] await(ProofCall c) {
    return c.awaitFingerprint(System.nanoTime() + WAIT);
  }

  @Test
  void answersTheChecksumThenTheFingerprintOfTheRange() {
    byte[] key = new byte[Fingerprint.KEY_BYTES];
    new Random(6).nextBytes(key);
    ProofCall c = ProofCall.prepare(2, serviceAddress(), request(unit.length, 4099, 70_000,
        key));
    c.start();
    byte[] fp = await(c);
    assertNull(c.failure());
    byte[] range = Arrays.copyOfRange(unit, 4099, 4099 + 70_000);
    assertArrayEquals(Fingerprint.of(key, range, 0, range.length), fp);
    assertEquals(DataChecksum.Type.CRC32C, c.checksumNow().getChecksumType());
    assertTrue(c.hasFingerprint());
    assertEquals(2, c.unit());
  }

  @Test
  void callsStartedTogetherEachGetTheirOwnRange() {
    byte[] key = new byte[Fingerprint.KEY_BYTES];
    new Random(7).nextBytes(key);
    ProofCall[] calls = new ProofCall[4]; // the service's cap
    for (int i = 0; i < calls.length; i++) {
      calls[i] = ProofCall.prepare(i, serviceAddress(), request(unit.length, i * 1000L,
          65_536, key));
    }
    for (ProofCall c : calls) {
      c.start();
    }
    for (int i = 0; i < calls.length; i++) {
      byte[] range = Arrays.copyOfRange(unit, i * 1000, i * 1000 + 65_536);
      assertArrayEquals(Fingerprint.of(key, range, 0, range.length), await(calls[i]),
          "call " + i + ": " + calls[i].failure());
    }
  }

  @Test
  void aRefusalIsNamed() {
    // a block longer than the replica here
    ProofCall c = ProofCall.prepare(0, serviceAddress(), request(unit.length + 10, 0,
        unit.length + 10, ZERO_KEY));
    c.start();
    assertNull(await(c));
    assertTrue(c.failure().startsWith("refused: ") && c.failure().contains("no block"),
        c.failure());
  }

  @Test
  void aConnectionRefusedFailsTheCallNamingIt() throws IOException {
    // a port bound and not listening: held for the test, and every connect to it refused
    try (Socket holder = new Socket()) {
      holder.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
      InetSocketAddress refusing = new InetSocketAddress("127.0.0.1", holder.getLocalPort());
      ProofCall c = ProofCall.prepare(1, refusing, request(unit.length, 0, 10, ZERO_KEY));
      c.start();
      assertNull(await(c));
      assertTrue(c.failure().contains("ConnectException")
          && c.failure().contains(String.valueOf(refusing.getPort())), c.failure());
    }
  }

  @Test
  void aDataNodeWithNoAddressFailsAtOnce() {
    ProofCall c = ProofCall.prepare(4, null, request(unit.length, 0, 10, ZERO_KEY));
    c.start();
    assertNull(c.awaitFingerprint(System.nanoTime() + TimeUnit.SECONDS.toNanos(1)));
    assertNotNull(c.failure(), "failed within 1 s");
    assertTrue(c.failure().contains("unit 4 has no address"), c.failure());
  }

  @Test
  void aCallClosedBeforeItStartsFailsAsClosed() {
    ProofCall c = ProofCall.prepare(0, serviceAddress(), request(unit.length, 0, 10, ZERO_KEY));
    c.close();
    c.start();
    assertNull(await(c));
    assertEquals("closed", c.failure());
  }

  @Test
  void aCallClosedWhileItWaitsFailsAsClosed() throws Exception {
    try (ServerSocket s = loopbackServer()) {
      CountDownLatch asked = new CountDownLatch(1);
      ProofCall c = callTo(peer(s, asked));
      assertTrue(asked.await(10, TimeUnit.SECONDS), "the request came");
      assertNull(c.failure());
      c.close();
      assertNull(c.awaitFingerprint(System.nanoTime() + TimeUnit.SECONDS.toNanos(2)));
      assertEquals("closed", c.failure());
    }
  }

  private static ServerSocket loopbackServer() throws IOException {
    return new ServerSocket(0, 4, InetAddress.getLoopbackAddress());
  }

  /** A peer that reads the request, then sends {@code frames} (raw JSON each) and closes. */
  private static InetSocketAddress peer(ServerSocket s, byte[]... frames) {
    return peer(s, new CountDownLatch(1), frames);
  }

  /**
   * A peer that reads the request, counts {@code asked} down, then sends {@code frames} (raw
   * JSON each) and closes; with no frames it never answers, holding until the call closes.
   */
  private static InetSocketAddress peer(ServerSocket s, CountDownLatch asked,
      byte[]... frames) {
    Thread t = new Thread(() -> {
      try (Socket c = s.accept()) {
        ControlFrames.read(new DataInputStream(c.getInputStream()));
        asked.countDown();
        DataOutputStream out = new DataOutputStream(c.getOutputStream());
        for (byte[] f : frames) {
          ControlFrames.write(out, f);
        }
        if (frames.length == 0) {
          c.getInputStream().read();
        }
      } catch (IOException e) {
        // the call closed first
      }
    }, "proof-call-test-peer");
    t.setDaemon(true);
    t.start();
    return new InetSocketAddress("127.0.0.1", s.getLocalPort());
  }

  private static ProofCall callTo(InetSocketAddress at) {
    ProofCall c = ProofCall.prepare(3, at, request(1000, 0, 1000, ZERO_KEY));
    c.start();
    return c;
  }

  @Test
  void aConnectionClosedAfterTheChecksumFailsTheCall() throws IOException {
    try (ServerSocket s = loopbackServer()) {
      ProofCall c = callTo(peer(s, ProofAnswer.checksum(DataChecksum.newDataChecksum(
          DataChecksum.Type.CRC32C, 512)).toJson()));
      assertNull(await(c));
      assertNotNull(c.checksumNow());
      assertTrue(c.failure().startsWith("proof service ") && c.failure().contains(
          String.valueOf(s.getLocalPort())), c.failure());
    }
  }

  @Test
  void anAnswerThatDoesNotParseFailsTheCallNamingIt() throws IOException {
    try (ServerSocket s = loopbackServer()) {
      ProofCall c = callTo(peer(s, "{\"ok\":".getBytes(StandardCharsets.UTF_8)));
      assertNull(await(c));
      assertNull(c.checksumNow());
      assertTrue(c.failure().startsWith("proof service "), c.failure());
    }
  }

  @Test
  void aFingerprintBeforeItsChecksumFailsTheCall() throws IOException {
    try (ServerSocket s = loopbackServer()) {
      ProofCall c = callTo(peer(s, ProofAnswer.fingerprint(new byte[Fingerprint.BYTES], 1000)
          .toJson()));
      assertNull(await(c));
      assertEquals("answered a fingerprint before its checksum", c.failure());
    }
  }
}
