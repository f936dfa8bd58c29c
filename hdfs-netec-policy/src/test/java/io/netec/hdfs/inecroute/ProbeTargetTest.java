package io.netec.hdfs.inecroute;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Which participant a repair probes when the chain's first one timed out (its answer makes the
 * timeout that survivor's fault): one the timed-out connection's network reaches, never this
 * host's own participant for a participant on another host, since loopback answers while this
 * node's link is down. The addresses are never connected to.
 */
class ProbeTargetTest {
  private static final InetSocketAddress HERE_1 =
      new InetSocketAddress(InetAddress.getLoopbackAddress(), 50_001);
  private static final InetSocketAddress HERE_2 =
      new InetSocketAddress(InetAddress.getLoopbackAddress(), 50_002);
  private static final InetSocketAddress AWAY_1 = new InetSocketAddress("198.18.255.201", 50_010);
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
    assertTrue(InecRepair.onThisHost(HERE_1));
    assertFalse(InecRepair.onThisHost(AWAY_1), AWAY_1 + " is assigned on this host");
    assertFalse(InecRepair.onThisHost(AWAY_2), AWAY_2 + " is assigned on this host");
    assertFalse(InecRepair.onThisHost(InetSocketAddress.createUnresolved("dn9", 1)));
  }

  @Test
  void aParticipantOnAnotherHostIsProbedPastThisHostsOwn() {
    assertEquals(AWAY_2, InecRepair.probeTarget(plan(AWAY_1, HERE_1, AWAY_2), AWAY_1));
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
}
