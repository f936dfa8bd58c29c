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

  private static int[] ints(JsonNode a) {
    int[] out = new int[a.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = a.get(i).asInt();
    }
    return out;
  }
}
