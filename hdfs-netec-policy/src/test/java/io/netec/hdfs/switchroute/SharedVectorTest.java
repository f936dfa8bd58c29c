package io.netec.hdfs.switchroute;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.netec.hdfs.codec.IsalNative;
import io.netec.hdfs.codec.MatrixAccumulator;
import io.netec.hdfs.codec.RsMatrix;
import io.netec.hdfs.switchroute.wire.NetecPacket;
import io.netec.hdfs.switchroute.wire.ParentLink;
import io.netec.hdfs.switchroute.wire.ProtocolException;
import io.netec.hdfs.switchroute.wire.SetupRequest;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.apache.hadoop.util.StringUtils;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The shared switch vectors (src/test/vectors, generated from real RS stripes by generate.py)
 * replayed through the Java SwitchTask: every verdict and every emitted packet must equal the
 * vector's bytes, with Java tables and with ISA-L. The Python reference model replays the same
 * files (src/test/python), so the two implementations are held to one behaviour.
 */
class SharedVectorTest {
  static Stream<Arguments> vectors() throws IOException {
    Path dir = Paths.get(System.getProperty("netec.repo.root", ".."), "src", "test", "vectors");
    List<Arguments> out = new ArrayList<>();
    try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, "*.json")) {
      for (Path p : files) {
        out.add(Arguments.of(p.getFileName().toString(), p, "java"));
        if (IsalNative.isAvailable()) {
          out.add(Arguments.of(p.getFileName().toString(), p, "isal"));
        }
      }
    }
    assertTrue(out.size() >= 5, "vectors in " + dir);
    return out.stream();
  }

  @ParameterizedTest(name = "{0} ({2})")
  @MethodSource("vectors")
  void javaSwitchReproducesVector(String name, Path file, String multiplier) throws Exception {
    JsonNode v = new ObjectMapper().readTree(file.toFile());
    int k = v.get("k").asInt();
    int m = v.get("m").asInt();
    int rows = v.get("rows").asInt();
    int[] survivors = ints(v.get("survivorUnits"));
    int[] erased = ints(v.get("erased"));
    byte[][] coefficients = new byte[rows][k];
    for (int r = 0; r < rows; r++) {
      for (int s = 0; s < k; s++) {
        coefficients[r][s] = (byte) v.get("coefficients").get(r).get(s).asInt();
      }
    }
    // The Python generator's RS math equals ours (and so Hadoop's).
    byte[] ours = RsMatrix.decodeRows(k, m, survivors, erased);
    for (int r = 0; r < rows; r++) {
      assertArrayEquals(java.util.Arrays.copyOfRange(ours, r * k, (r + 1) * k),
          coefficients[r], "decode row " + r);
    }
    List<SetupRequest.Survivor> sv = new ArrayList<>();
    for (int s = 0; s < k; s++) {
      sv.add(new SetupRequest.Survivor(s, "h:1", "bp:blk_1_1", v.get("length").asLong(), ""));
    }
    SetupRequest setup = new SetupRequest(name, v.get("payload").asInt(), 0,
        v.get("length").asLong(), 30_000, sv, coefficients, v.get("premultiplied").asBoolean());
    SwitchTask t = new SwitchTask(v.get("task").asInt(), v.get("slotArray").asInt(),
        v.get("slots").asInt(), setup, multiplier.equals("isal") ? MatrixAccumulator::isal
            : MatrixAccumulator::java);
    int n = 0;
    for (JsonNode e : v.get("events")) {
      byte[] wire = StringUtils.hexStringToByte(e.get("packet").asText());
      List<String> got = new ArrayList<>();
      if (e.get("from").asText().equals("reader")) {
        NetecPacket out = t.onAck(NetecPacket.decode(ByteBuffer.wrap(wire)));
        if (out != null) {
          got.add(StringUtils.byteToHexString(out.toBytes()));
        }
      } else {
        String verdict;
        try {
          verdict = t.onData(NetecPacket.decode(ByteBuffer.wrap(wire)),
              p -> got.add(StringUtils.byteToHexString(p.toBytes()))).name();
        } catch (ProtocolException malformed) {
          verdict = "MALFORMED";
        }
        assertEquals(e.get("verdict").asText(), verdict, name + " event " + n);
      }
      List<String> want = new ArrayList<>();
      e.get("emit").forEach(x -> want.add(x.asText()));
      assertEquals(want, got, name + " event " + n);
      n++;
    }
    assertTrue(t.finished(), name + " finished");
  }

  static Stream<Arguments> partialSums() throws IOException {
    Path dir = Paths.get(System.getProperty("netec.repo.root", ".."), "src", "test", "vectors",
        "partial-sums");
    List<Arguments> out = new ArrayList<>();
    try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, "*.json")) {
      for (Path p : files) {
        out.add(Arguments.of(p.getFileName().toString(), p));
      }
    }
    assertTrue(!out.isEmpty(), "vectors in " + dir);
    return out.stream();
  }

  /**
   * A two-level task (docs/protocol.md, "Partial sums"): the child's and the parent's
   * SwitchTask and the ParentLink between them must emit the vector's bytes, event by event,
   * and the two levels rebuild the erased unit.
   */
  @ParameterizedTest(name = "{0}")
  @MethodSource("partialSums")
  void twoLevelsReproduceVector(String name, Path file) throws Exception {
    JsonNode v = new ObjectMapper().readTree(file.toFile());
    SwitchTask child = level(name, v, v.get("child"));
    SwitchTask parent = level(name, v, v.get("parent"));
    JsonNode l = v.get("link");
    ParentLink link = new ParentLink(l.get("task").asInt(), l.get("slotArray").asInt(),
        l.get("sender").asInt(), l.get("slots").asInt(), l.get("window").asInt(),
        v.get("payload").asInt(), 0, v.get("length").asLong());
    java.io.ByteArrayOutputStream rebuilt = new java.io.ByteArrayOutputStream();
    int n = 0;
    for (JsonNode e : v.get("events")) {
      NetecPacket p = NetecPacket.decode(ByteBuffer.wrap(
          StringUtils.hexStringToByte(e.get("packet").asText())));
      SwitchTask t = e.get("at").asText().equals("parent") ? parent : child;
      List<NetecPacket> out = new ArrayList<>();
      switch (e.get("from").asText()) {
        case "survivor":
          assertEquals(e.get("verdict").asText(), t.onData(p, out::add).name(),
              name + " event " + n);
          if (t == parent) {
            for (NetecPacket r : out) {
              if (r.seq() * v.get("payload").asInt() == rebuilt.size()) {
                rebuilt.write(r.payload());
              }
            }
          }
          break;
        case "result":
          out.add(link.asData(p));
          break;
        case "reader":
          out.add(t.onAck(p));
          break;
        default: // the parent's copy of its reader's ACK, the child's reader ACK
          out.add(t.onAck(link.asChildAck(p, t.taskId(), t.slotArray())));
      }
      List<String> got = new ArrayList<>();
      out.forEach(r -> got.add(StringUtils.byteToHexString(r.toBytes())));
      List<String> want = new ArrayList<>();
      e.get("emit").forEach(x -> want.add(x.asText()));
      assertEquals(want, got, name + " event " + n);
      n++;
    }
    assertTrue(parent.finished() && child.finished(), name + " both levels finished");
    int length = v.get("length").asInt();
    assertEquals(v.get("erasedUnits").get(0).asText(), StringUtils.byteToHexString(
        java.util.Arrays.copyOf(rebuilt.toByteArray(), length)), name + " the rebuilt unit");
  }

  private static SwitchTask level(String name, JsonNode v, JsonNode level)
      throws ProtocolException {
    int k = level.get("k").asInt();
    byte[][] coefficients = new byte[1][k];
    List<SetupRequest.Survivor> sv = new ArrayList<>();
    for (int s = 0; s < k; s++) {
      coefficients[0][s] = (byte) level.get("coefficients").get(0).get(s).asInt();
      sv.add(new SetupRequest.Survivor(s, "h:1", "bp:blk_1_1", v.get("length").asLong(), ""));
    }
    SetupRequest setup = new SetupRequest(name, v.get("payload").asInt(), 0,
        v.get("length").asLong(), 30_000, sv, coefficients);
    return new SwitchTask(level.get("task").asInt(), level.get("slotArray").asInt(),
        level.get("slots").asInt(), setup, MatrixAccumulator::java);
  }

  private static int[] ints(JsonNode a) {
    int[] out = new int[a.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = a.get(i).asInt();
    }
    return out;
  }
}
