package io.netec.hdfs.switchroute;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netec.hdfs.switchroute.wire.ControlFrames;
import io.netec.hdfs.switchroute.wire.SetupAnswer;
import java.io.BufferedReader;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.File;
import java.io.InputStreamReader;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The software switch as its own process, and its option errors. */
class SoftwareSwitchMainTest {
  @Test
  void runsAsAProcessAndAnswersMalformedRequestsWithAReason() throws Exception {
    Process p = new ProcessBuilder(
        System.getProperty("java.home") + File.separator + "bin" + File.separator + "java",
        "-cp", System.getProperty("java.class.path"), SoftwareSwitchMain.class.getName(),
        "--control-port", "0", "--data-port", "0", "--slot-arrays", "4", "--metrics-port", "0")
        .redirectErrorStream(true).start();
    try {
      BufferedReader out = new BufferedReader(
          new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
      String line;
      do {
        line = out.readLine();
      } while (line != null && !line.startsWith("netec-switch control "));
      assertTrue(line != null, "no address line");
      int control = Integer.parseInt(line.split(" ")[2]);
      try (Socket s = new Socket("127.0.0.1", control)) {
        DataOutputStream o = new DataOutputStream(s.getOutputStream());
        DataInputStream i = new DataInputStream(s.getInputStream());
        // a reader of protocol version 1 is refused with the reason, the connection serves on
        ControlFrames.write(o, "{\"op\":\"setup\",\"version\":1}".getBytes(StandardCharsets.UTF_8));
        SetupAnswer old = SetupAnswer.fromJson(ControlFrames.read(i));
        assertFalse(old.ok());
        assertEquals("version: 1 not supported (this side speaks 3)", old.reason());
        ControlFrames.write(o, "{\"op\":\"setup\",\"version\":3}".getBytes(StandardCharsets.UTF_8));
        SetupAnswer a = SetupAnswer.fromJson(ControlFrames.read(i));
        assertFalse(a.ok());
        assertTrue(a.reason().startsWith("survivors"), a.reason());
        ControlFrames.write(o, "not json".getBytes(StandardCharsets.UTF_8));
        assertTrue(SetupAnswer.fromJson(ControlFrames.read(i)).reason().contains("JSON"));
      }
      assertTrue(p.isAlive(), "malformed requests must not stop the switch");
      // The metrics page counts what happened: the three malformed requests were refusals.
      java.net.URL prom = new java.net.URL(line.substring(line.indexOf("metrics ") + 8));
      String page = new String(prom.openStream().readAllBytes(), StandardCharsets.UTF_8);
      assertTrue(page.contains("\nnetec_switch_tasks_refused 3\n"), page);
      assertTrue(page.contains("\nnetec_switch_tasks_accepted 0\n"), page);
      String jmx = new String(new java.net.URL(prom.toString().replace("/prom", "/jmx"))
          .openStream().readAllBytes(), StandardCharsets.UTF_8);
      assertTrue(jmx.contains("\"TasksRefused\":3"), jmx);
    } finally {
      p.destroy();
      assertTrue(p.waitFor(10, TimeUnit.SECONDS));
    }
  }

  @Test
  void badOptionsNameTheFlag() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> SoftwareSwitchMain.parse(new String[] {"--slots", "1"}));
    assertTrue(e.getMessage().startsWith("--slots 1"), e.getMessage());
    e = assertThrows(IllegalArgumentException.class,
        () -> SoftwareSwitchMain.parse(new String[] {"--speed", "9"}));
    assertTrue(e.getMessage().contains("--speed"));
    assertEquals(7, SoftwareSwitchMain.parse(new String[] {"--io-threads", "7"}).ioThreads);
    e = assertThrows(IllegalArgumentException.class, () -> SoftwareSwitchMain.parse(
        new String[] {"--tasks-per-peer", "100", "--control-per-peer", "64"}));
    assertTrue(e.getMessage().contains("--tasks-per-peer 100")
        && e.getMessage().contains("--control-per-peer 64"), e.getMessage());
  }
}
