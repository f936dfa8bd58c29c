package io.netec.hdfs.switchroute.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.junit.DictionaryEntries;
import com.code_intelligence.jazzer.junit.FuzzTest;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.hadoop.hdfs.protocol.ExtendedBlock;
import org.junit.jupiter.api.Test;

/**
 * Coverage-guided fuzzing (Jazzer) of every parser of the switch route's peer input: NetEC
 * packets, setup requests and answers (control JSON), and the HELLO a survivor agent takes.
 * Each target states what must hold for any input: bad input is a {@link ProtocolException}
 * and nothing else (no other exception, no hang, no out-of-memory), and what is accepted
 * encodes back to what was read. In the suite (regression mode) every target runs on its
 * inputs in src/test/resources/.../WireFuzzTestInputs/ (a crash found by fuzzing is kept
 * there) and {@link #sharedVectorsAndValidMessagesHoldTheProperties} runs the same checks on
 * every packet of the shared vectors; {@code scripts/fuzz.sh} fuzzes each target for a bounded
 * time, seeded from the shared vectors.
 */
class WireFuzzTest {

  @FuzzTest
  void packet(byte[] data) {
    checkPacket(data);
  }

  /** A decoded packet re-encodes to the bytes read (the checksum's two zeros aside). */
  static void checkPacket(byte[] data) {
    NetecPacket p;
    try {
      p = NetecPacket.decode(ByteBuffer.wrap(data));
    } catch (ProtocolException e) {
      return;
    }
    byte[] again = p.toBytes();
    int len = NetecPacket.frameLength(ByteBuffer.wrap(data));
    assertEquals(len, again.length);
    byte[] read = Arrays.copyOf(data, len);
    read[16] = again[16]; // ones' complement: 0x0000 and 0xffff both say zero
    read[17] = again[17];
    assertArrayEquals(read, again);
    try {
      assertEquals(p.toString(), NetecPacket.decode(ByteBuffer.wrap(again)).toString());
    } catch (ProtocolException e) {
      throw new AssertionError("a packet we encode is refused: " + e.getMessage(), e);
    }
  }

  @FuzzTest
  @DictionaryEntries({"\"op\"", "\"setup\"", "\"version\"", "\"group\"", "\"k\"", "\"rows\"",
      "\"payload\"", "\"offset\"", "\"length\"", "\"timeoutMs\"", "\"survivors\"",
      "\"sender\"", "\"agent\"", "\"block\"", "\"unitLength\"", "\"token\"",
      "\"coefficients\"", "BP-1:blk_-160_1001", "127.0.0.1:50300", "\"child\"",
      "\"slotArray\"", "\"secret\""})
  void setupRequest(byte[] json) {
    checkSetupRequest(json);
  }

  static void checkSetupRequest(byte[] json) {
    checkJson(json, SetupRequest::fromJson, SetupRequest::toJson);
  }

  /** A control message as its parser reads it. */
  private interface Parser<T> {
    T parse(byte[] json) throws ProtocolException;
  }

  /** An accepted message writes JSON that reads back to the same message. */
  private static <T> void checkJson(byte[] json, Parser<T> parser,
      java.util.function.Function<T, byte[]> writer) {
    T m;
    try {
      m = parser.parse(json);
    } catch (ProtocolException e) {
      return;
    }
    byte[] again = writer.apply(m);
    try {
      assertArrayEquals(again, writer.apply(parser.parse(again)));
    } catch (ProtocolException e) {
      throw new AssertionError("a message we write is refused: " + e.getMessage(), e);
    }
  }

  @FuzzTest
  @DictionaryEntries({"\"ok\"", "\"task\"", "\"slotArray\"", "\"slots\"", "\"vip\"",
      "\"secret\"", "\"reason\"", "true", "false"})
  void setupAnswer(byte[] json) {
    checkSetupAnswer(json);
  }

  static void checkSetupAnswer(byte[] json) {
    checkJson(json, SetupAnswer::fromJson, SetupAnswer::toJson);
  }

  @FuzzTest
  @DictionaryEntries({"\"role\"", "\"switch\"", "\"reader\"", "\"streams\"", "\"block\"",
      "\"unitLength\"", "\"length\"", "\"payload\"", "\"token\"", "\"window\"", "\"slots\"",
      "\"offset\"", "\"secret\"", "BP-1:blk_-158_1001"})
  void streamHello(byte[] payload) {
    checkStreamHello(payload, 0);
  }

  /** An agent's reading of a HELLO's payload: a request it writes back the same, or refused. */
  static void checkStreamHello(byte[] payload, int sender) {
    if (payload.length > NetecPacket.MAX_PAYLOAD) {
      return; // no packet carries it
    }
    NetecPacket hello = new NetecPacket(NetecPacket.HELLO, 1, 1, sender, 0, 0, 0, 0, payload);
    StreamRequest r;
    try {
      r = StreamRequest.fromHello(hello);
    } catch (ProtocolException e) {
      return;
    }
    StreamRequest.readerSecret(hello); // never throws: "" when absent or malformed
    assertTrue(r.length() >= 1 && r.offset() >= 0 && r.unitLength() >= 0, r.toString());
    try {
      StreamRequest back = StreamRequest.fromHello(r.toHello(1, 1, sender));
      assertEquals(r.toHello(1, 1, sender).toString(), back.toHello(1, 1, sender).toString());
      assertArrayEquals(r.toHello(1, 1, sender).payload(), back.toHello(1, 1, sender)
          .payload());
    } catch (ProtocolException e) {
      throw new AssertionError("a HELLO we write is refused: " + e.getMessage(), e);
    }
  }

  @FuzzTest
  @DictionaryEntries({"\"role\"", "\"reader\"", "\"secret\"", "\"cookie\"", "\"error\"",
      "\"parent\"", "\"task\"", "\"slotArray\"", "\"sender\"", "\"slots\"", "\"window\"",
      "\"survivors\""})
  void readerHello(byte[] payload) {
    checkReaderHello(payload);
  }

  /**
   * The switch's reading of a reader's datagram HELLO (secret and cookie), of a parent
   * switch's (its link: docs/protocol.md, "Partial sums") and the reader's of the switch's
   * answer and of its failure (reason, survivors at fault): never an exception but a refusal, strings never null; what is read is what a
   * HELLO we write carries.
   */
  static void checkReaderHello(byte[] payload) {
    if (payload.length > NetecPacket.MAX_PAYLOAD) {
      return; // no packet carries it
    }
    NetecPacket hello = new NetecPacket(NetecPacket.HELLO, 1, 1, NetecPacket.READER, 0, 0, 0,
        0, payload);
    String[] f = StreamRequest.readerFields(hello);
    assertTrue(f.length == 2 && f[0] != null && f[1] != null);
    StreamRequest.cookieOf(hello); // null when not a cookie
    StreamRequest.Failure failure = StreamRequest.errorOf(hello); // null when not an error
    if (failure != null) { // the reader reads it; as the switch writes it, read back whole
      assertTrue(failure.reason != null
          && java.util.Arrays.stream(failure.survivors).allMatch(s -> s >= 0 && s <= 255));
      StreamRequest.Failure again = StreamRequest.errorOf(StreamRequest.errorHello(1, 1,
          NetecPacket.READER, failure.reason, failure.survivors));
      // a reason is sent as UTF-8: a lone surrogate in it arrives as '?'
      String sent = new String(failure.reason.getBytes(java.nio.charset.StandardCharsets.UTF_8),
          java.nio.charset.StandardCharsets.UTF_8);
      assertTrue(again != null && java.util.Arrays.equals(failure.survivors, again.survivors)
          && (failure.reason.length() > 500 || sent.equals(again.reason)));
    }
    if (f[1].matches("[0-9a-f]{32}")) { // a cookie as the switch writes them: read back whole
      assertEquals(f[1], StreamRequest.cookieOf(StreamRequest.cookieHello(1, 1, f[1])));
    }
    ParentLink link;
    try {
      link = ParentLink.fromHello(hello);
    } catch (ProtocolException e) {
      return; // refused: the VIP closes the connection
    }
    NetecPacket written = link == null ? null : link.toHello(1, 1, f[0]);
    if (written != null && written.payloadLength() <= 4096) { // as we write it, read back
      ParentLink again;
      try {
        again = ParentLink.fromHello(written);
      } catch (ProtocolException e) {
        throw new AssertionError("a link we write is refused: " + e.getMessage(), e);
      }
      assertEquals(link.task(), again.task());
      assertEquals(link.slotArray(), again.slotArray());
      assertEquals(link.sender(), again.sender());
      assertEquals(link.slots(), again.slots());
      assertEquals(link.window(), again.window());
      assertEquals(f[0], StreamRequest.readerSecret(written));
    }
  }

  /**
   * The same checks on what the fuzzers start from: every packet of the shared vectors
   * (valid, stale, corrupt and foreign ones), and valid control messages and HELLOs.
   */
  @Test
  void sharedVectorsAndValidMessagesHoldTheProperties() throws Exception {
    List<byte[]> packets = vectorPackets();
    assertTrue(packets.size() > 100, packets.size() + " packets in the shared vectors");
    int accepted = 0;
    for (byte[] p : packets) {
      checkPacket(p);
      try {
        NetecPacket.decode(ByteBuffer.wrap(p));
        accepted++;
      } catch (ProtocolException e) {
        // the malformed vector's packets
      }
    }
    assertTrue(accepted > 0 && accepted < packets.size(), accepted + " of " + packets.size());
    checkSetupRequest(WireFormatTest.setup().toJson());
    checkSetupAnswer(SetupAnswer.accept(3, 1, 64, "127.0.0.1:50311",
        "0123456789abcdef0123456789abcdef").toJson());
    checkSetupAnswer(SetupAnswer.refuse("no free slot array").toJson());
    StreamRequest s = new StreamRequest(new ExtendedBlock("BP-1", -158, 1000, 1001), 1000, 0,
        1000, 4096, "dG9r", 8, 16);
    checkStreamHello(s.toHello(1, 1, 0).payload(), 0);
    checkReaderHello(StreamRequest.readerHello(WireFormatTest.setup(), 1, 1, 64,
        "0123456789abcdef0123456789abcdef", "00112233445566778899aabbccddeeff").payload());
    checkReaderHello(StreamRequest.cookieHello(1, 1, "00112233445566778899aabbccddeeff")
        .payload());
    checkReaderHello(parentHello());
    checkSetupRequest(parentSetup());
    assertEquals("00112233445566778899aabbccddeeff", StreamRequest.readerFields(
        StreamRequest.readerHello(WireFormatTest.setup(), 1, 1, 64, "s",
            "00112233445566778899aabbccddeeff"))[1]);
  }

  /** Every packet of src/test/vectors, as bytes. */
  static List<byte[]> vectorPackets() throws IOException {
    File dir = new File(System.getProperty("netec.repo.root", "."), "src/test/vectors");
    File[] files = dir.listFiles((d, n) -> n.endsWith(".json"));
    assertTrue(files != null && files.length > 0, "no vectors in " + dir);
    List<byte[]> out = new ArrayList<>();
    ObjectMapper json = new ObjectMapper();
    for (File f : files) {
      for (JsonNode e : json.readTree(f).path("events")) {
        String hex = e.path("packet").asText("");
        if (!hex.isEmpty()) {
          out.add(hexToBytes(hex));
        }
      }
    }
    return out;
  }

  private static byte[] hexToBytes(String hex) {
    byte[] b = new byte[hex.length() / 2];
    for (int i = 0; i < b.length; i++) {
      b[i] = (byte) Integer.parseInt(hex.substring(2 * i, 2 * i + 2), 16);
    }
    return b;
  }

  /**
   * For scripts/fuzz.sh: writes each target's seeds (the vectors' packets, valid control
   * messages and a HELLO) into DIR/TARGET/.
   */
  public static void main(String[] args) throws Exception {
    File root = new File(args[0]);
    int i = 0;
    for (byte[] p : vectorPackets()) {
      seed(root, "packet", String.format("vector-%04d", i++), p);
    }
    seed(root, "setupRequest", "valid", WireFormatTest.setup().toJson());
    seed(root, "setupAnswer", "accept", SetupAnswer.accept(3, 1, 64, "127.0.0.1:50311",
        "0123456789abcdef0123456789abcdef").toJson());
    seed(root, "setupAnswer", "refuse", SetupAnswer.refuse("no free slot array").toJson());
    seed(root, "streamHello", "switch", new StreamRequest(new ExtendedBlock("BP-1", -158, 1000,
        1001), 1000, 0, 1000, 4096, "dG9r", 8, 16).toHello(1, 1, 0).payload());
    seed(root, "readerHello", "reader", StreamRequest.readerHello(WireFormatTest.setup(), 1, 1,
        64, "0123456789abcdef0123456789abcdef", "00112233445566778899aabbccddeeff").payload());
    seed(root, "readerHello", "cookie", StreamRequest.cookieHello(1, 1,
        "00112233445566778899aabbccddeeff").payload());
    seed(root, "readerHello", "parent", parentHello());
    seed(root, "setupRequest", "parent", parentSetup());
  }

  /** A parent switch's HELLO on a child's VIP (docs/protocol.md, "Partial sums"). */
  static byte[] parentHello() {
    return new ParentLink(9, 0, 3, 64, 32, 4096, 0, 1000).toHello(4, 1,
        "00112233445566778899aabbccddeeff")
        .payload();
  }

  /** A parent's setup: one survivor agent and one child switch's task. */
  static byte[] parentSetup() throws ProtocolException {
    return new SetupRequest("BP-1:blk_-160_1001", 4096, 0, 1000, 30_000, List.of(
        new SetupRequest.Survivor(0, "127.0.0.1:50300", "BP-1:blk_-159_1001", 1000, ""),
        new SetupRequest.Survivor(1, "127.0.0.1:50311", "partial sum of /rack2", 1000, "",
            new SetupRequest.Child(4, 1, "00112233445566778899aabbccddeeff"))),
        new byte[][] {{7, 1}}).toJson();
  }

  static void seed(File root, String target, String name, byte[] data) throws IOException {
    File dir = new File(root, target);
    if (!dir.isDirectory() && !dir.mkdirs()) {
      throw new IOException("cannot make " + dir);
    }
    java.nio.file.Files.write(new File(dir, name).toPath(), data);
  }
}
