package io.netec.hdfs.inecroute;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netec.hdfs.route.ServiceDirectory;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Whether a participant whose control port timed out is its survivor's fault: only when this
 * node reached another participant over the same network, before it or by a probe; a
 * participant on this host answers over loopback while this node's link is down, so it speaks
 * for no participant on another host. The 198.18.255.x addresses are never connected to.
 */
class ProbeTargetTest {
  private static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();
  private static final InetSocketAddress HERE_1 = new InetSocketAddress(LOOPBACK, 50_001);
  private static final InetSocketAddress HERE_2 = new InetSocketAddress(LOOPBACK, 50_002);
  private static final InetSocketAddress AWAY_1 = new InetSocketAddress("198.18.255.201", 50_010);
  private static final InetSocketAddress AWAY_1B = new InetSocketAddress("198.18.255.201", 50_011);
  private static final InetSocketAddress AWAY_2 = new InetSocketAddress("198.18.255.202", 50_010);

  private static InecRepair.Source[] plan(InetSocketAddress... controls) {
    InecRepair.Source[] at = new InecRepair.Source[controls.length + 1]; // vertex 0: the reader
    for (int v = 1; v <= controls.length; v++) {
      at[v] = new InecRepair.Source(v - 1, controls[v - 1], controls[v - 1], null, "");
    }
    return at;
  }

  @BeforeAll
  static void addressesAreWhereTheyClaim() {
    assertTrue(ServiceDirectory.isThisHost(LOOPBACK));
    assertFalse(ServiceDirectory.isThisHost(AWAY_1.getAddress()), AWAY_1 + " is on this host");
    assertFalse(ServiceDirectory.isThisHost(AWAY_2.getAddress()), AWAY_2 + " is on this host");
    assertFalse(ServiceDirectory.isThisHost(
        InetSocketAddress.createUnresolved("dn9", 1).getAddress()));
  }

  @Test
  void aParticipantOnAnotherHostIsProbedPastThisHostsOwn() {
    assertEquals(AWAY_2, InecRepair.probeTarget(plan(AWAY_1, HERE_1, AWAY_2), AWAY_1));
    // another host than the failed one's first: its second participant speaks for nobody
    assertEquals(AWAY_2, InecRepair.probeTarget(plan(AWAY_1, AWAY_1B, AWAY_2), AWAY_1));
    assertEquals(AWAY_1B, InecRepair.probeTarget(plan(AWAY_1, AWAY_1B, HERE_1), AWAY_1));
  }

  @Test
  void noParticipantOnAnotherHostMeansNoProbe() {
    assertNull(InecRepair.probeTarget(plan(AWAY_1, HERE_1, HERE_2), AWAY_1));
    assertNull(InecRepair.probeTarget(plan(AWAY_1, AWAY_1), AWAY_1), "the same address");
  }

  @Test
  void aParticipantOnThisHostThatTimedOutMayBeJudgedByAnyOther() {
    // loopback crossed no link: any answer shows this node is fine (a one-host cluster)
    assertEquals(HERE_2, InecRepair.probeTarget(plan(HERE_1, HERE_2, AWAY_1), HERE_1));
    assertEquals(AWAY_1, InecRepair.probeTarget(plan(HERE_1, HERE_1, AWAY_1), HERE_1));
  }

  @Test
  void onlyAnAnswerOverTheSameNetworkBlamesTheSurvivor() throws Exception {
    try (ServerSocket listening = new ServerSocket(0, 50, LOOPBACK)) {
      InetSocketAddress here = new InetSocketAddress(LOOPBACK, listening.getLocalPort());
      // this host's own participant answers, but says nothing of the link to another host
      assertFalse(InecRepair.reachesAnother(plan(AWAY_1, here), AWAY_1, 500));
      assertFalse(InecRepair.survivorAtFault(plan(AWAY_1, here), 1, false, 500));
      // reached before it, on this host: no more proof (a client on a DataNode's host whose
      // link is down puts its own participant first)
      assertFalse(InecRepair.survivorAtFault(plan(here, AWAY_1), 2, false, 500));
      // reached before it on another host: its fault at once, no probe
      assertTrue(InecRepair.survivorAtFault(plan(AWAY_2, AWAY_1), 2, false, 500));
      // a participant on this host that timed out, another here answering: its fault
      assertTrue(InecRepair.reachesAnother(plan(HERE_1, here), HERE_1, 500));
      assertTrue(InecRepair.survivorAtFault(plan(HERE_1, here), 1, false, 500));
      // a reset came back: its fault whatever else answers
      assertTrue(InecRepair.survivorAtFault(plan(AWAY_1), 1, true, 500));
    }
    assertFalse(InecRepair.reachesAnother(plan(HERE_1, HERE_2), HERE_1, 500), "nobody listens");
  }
}
