package io.netec.hdfs.inecroute;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netec.hdfs.route.SurvivorFault;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Which participant's report names a broken repair's cause, over real sockets. */
class RepairReportsTest {
  private final List<Socket> sockets = new ArrayList<>();
  private ServerSocket server;

  @AfterEach
  void close() throws IOException {
    for (Socket s : sockets) {
      s.close();
    }
    if (server != null) {
      server.close();
    }
  }

  /** A watched control connection; returns the participant's end. */
  private Socket watched(RepairReports reports, String who, int unit) throws IOException {
    if (server == null) {
      server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    }
    Socket ours = new Socket(InetAddress.getLoopbackAddress(), server.getLocalPort());
    Socket theirs = server.accept();
    sockets.add(ours);
    sockets.add(theirs);
    reports.watch(ours, who, unit, -1);
    return theirs;
  }

  private static void report(Socket participant, int status, String message)
      throws IOException {
    DataOutputStream out = new DataOutputStream(participant.getOutputStream());
    out.writeByte(status);
    out.writeUTF(message);
    out.flush();
  }

  @Test
  void aParticipantsOwnSurvivorFaultOutranksANeighboursEarlierFailure() throws Exception {
    RepairReports reports = new RepairReports();
    Socket leaf = watched(reports, "leaf (unit 1)", 1);
    Socket middle = watched(reports, "middle (unit 2)", 2);
    Socket last = watched(reports, "last (unit 3)", 3);
    // the neighbours' reports come first: a stall of its own, a closed stream
    report(middle, VertexReport.FAILED, "no progress for 5000 ms");
    report(last, VertexReport.STREAM_LOST, "connection closed by the peer (EPIPE)");
    Thread.sleep(200); // the corrupt leaf's report, written by its event loop, comes last
    report(leaf, VertexReport.SURVIVOR_FAULT, "Checksum CRC32C not matched");
    IOException cause = reports.rootCause(new IOException("seen by the rebuilding node"));
    assertTrue(cause instanceof SurvivorFault, cause.toString());
    assertArrayEquals(new int[] {1}, ((SurvivorFault) cause).units());
    assertTrue(cause.getMessage().contains("Checksum"), cause.getMessage());
  }

  @Test
  void anOwnFaultArrivingWhileTheCauseIsSoughtIsNamedAndASilentOneWaitsOnlyAGrace()
      throws Exception {
    RepairReports reports = new RepairReports();
    Socket leaf = watched(reports, "leaf (unit 1)", 1);
    Socket middle = watched(reports, "middle (unit 2)", 2);
    watched(reports, "stuck (unit 3)", 3); // waits on its input until the repair ends: silent
    report(middle, VertexReport.FAILED, "no progress for 5000 ms");
    java.util.concurrent.CompletableFuture<IOException> cause =
        java.util.concurrent.CompletableFuture.supplyAsync(
            () -> reports.rootCause(new IOException("seen")));
    Thread.sleep(20); // within the grace
    report(leaf, VertexReport.SURVIVOR_FAULT, "Checksum CRC32C not matched");
    IOException named = cause.get(5, java.util.concurrent.TimeUnit.SECONDS);
    assertTrue(named instanceof SurvivorFault, named.toString());
    assertArrayEquals(new int[] {1}, ((SurvivorFault) named).units());

    RepairReports others = new RepairReports();
    Socket a = watched(others, "a (unit 1)", 1);
    watched(others, "silent (unit 2)", 2);
    report(a, VertexReport.FAILED, "join refused: the token expired");
    Thread.sleep(50); // the watcher has read it
    long t0 = System.nanoTime();
    IOException refused = others.rootCause(new IOException("seen"));
    long ms = (System.nanoTime() - t0) / 1_000_000;
    assertTrue(refused.getMessage().contains("token expired"), refused.getMessage());
    assertTrue(ms < 1_500, "a silent participant held the failure " + ms + " ms, not "
        + RepairReports.OWN_FAULT_GRACE_MS + " at most");
  }

  @Test
  void withoutOneTheFirstFailureThatIsNotAClosedStreamIsNamed() throws Exception {
    RepairReports reports = new RepairReports();
    Socket a = watched(reports, "a (unit 1)", 1);
    Socket b = watched(reports, "b (unit 2)", 2);
    report(a, VertexReport.STREAM_LOST, "connection closed by the peer (EPIPE)");
    Thread.sleep(100);
    report(b, VertexReport.FAILED, "join refused: the token expired");
    IOException cause = reports.rootCause(new IOException("seen"));
    assertTrue(cause.getMessage().contains("token expired"), cause.getMessage());
    assertTrue(!(cause instanceof SurvivorFault), "no survivor blamed: " + cause);
  }

  @Test
  void withNoReportWhatTheRebuildingNodeSawIsNamed() throws Exception {
    RepairReports reports = new RepairReports();
    Socket a = watched(reports, "a (unit 1)", 1);
    a.close(); // closed without a report: a lost stream
    IOException seen = new IOException("seen");
    IOException cause = reports.rootCause(seen);
    assertTrue(cause instanceof InecEngine.StreamLost || cause == seen, cause.toString());
    RepairReports none = new RepairReports();
    assertSame(seen, none.rootCause(seen));
  }
}
