package io.netec.hdfs.switchroute;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netec.hdfs.NetecConfigKeys;
import io.netec.hdfs.Waits;
import io.netec.hdfs.route.MemoryBlocks;
import io.netec.hdfs.switchroute.wire.AttachRequest;
import io.netec.hdfs.switchroute.wire.NetecPacket;
import io.netec.hdfs.switchroute.wire.ParentLink;
import io.netec.hdfs.switchroute.wire.ProtocolException;
import io.netec.hdfs.switchroute.wire.SetupAnswer;
import io.netec.hdfs.switchroute.wire.SetupRequest;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.hdfs.protocol.ExtendedBlock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Aggregation by rack (docs/protocol.md, "Partial sums") over real TCP: a software switch per
 * rack, survivor agents serving RS units from memory, {@link SwitchClient} reading from the
 * reader's rack's switch. A rack's survivors are summed on its own switch, which sends one
 * stream on as a sender of the parent; the bytes must equal the erased unit, and each switch's
 * counters must show one stream leaving a rack that summed.
 */
class SwitchRacksTest {
  private static final int LENGTH = 700_000 + 13;
  private static final int PAYLOAD = 8192;
  private final List<AutoCloseable> open = new ArrayList<>();
  private final MemoryBlocks blocks = new MemoryBlocks();

  @AfterEach
  void closeAll() throws Exception {
    for (AutoCloseable c : open) {
      c.close();
    }
  }

  private SoftwareSwitch startSwitch(int slots, int maxPayload) throws IOException {
    return startSwitch(slots, maxPayload, o -> { });
  }

  /** ... with {@code more} options (its networks, its address). */
  private SoftwareSwitch startSwitch(int slots, int maxPayload,
      java.util.function.Consumer<SoftwareSwitch.Options> more) throws IOException {
    SoftwareSwitch.Options o = new SoftwareSwitch.Options();
    o.slotArrays = 4;
    o.slotsPerArray = slots;
    o.maxPayload = maxPayload;
    more.accept(o);
    SoftwareSwitch sw = new SoftwareSwitch(o);
    open.add(sw);
    return sw;
  }

  private static String control(SoftwareSwitch sw) {
    return "127.0.0.1:" + sw.controlAddress().getPort();
  }

  /** Rack name, switch, ... as the control addresses netec.switch.racks would name. */
  private static Map<String, String> controls(Object... rackThenSwitch) {
    Map<String, String> out = new LinkedHashMap<>();
    for (int i = 0; i < rackThenSwitch.length; i += 2) {
      Object sw = rackThenSwitch[i + 1];
      out.put((String) rackThenSwitch[i],
          sw instanceof SoftwareSwitch ? control((SoftwareSwitch) sw) : (String) sw);
    }
    return out;
  }

  /**
   * The tree the route plans for {@code flat} with its senders in {@code senderRacks} (sender
   * order), the reader in {@code readerRack}, {@code switches} by rack and no spine.
   */
  private static SwitchRackPlan plan(SetupRequest flat, String readerRack,
      Map<String, String> switches, String... senderRacks) throws ProtocolException {
    return SwitchRackPlan.plan(flat, Arrays.asList(senderRacks), readerRack, switches, null);
  }

  /**
   * The flat task of group g: sender s is served by an agent of its own (its unit in memory,
   * {@code missing} senders' blocks absent), as the switch route plans it.
   */
  private SetupRequest flat(SwitchTaskTest.Group g, boolean premultiplied, int... missing)
      throws IOException, ProtocolException {
    return flat(g, premultiplied, false, PAYLOAD, missing);
  }

  private SetupRequest flat(SwitchTaskTest.Group g, boolean premultiplied, boolean datagram,
      int payload, int... missing) throws IOException, ProtocolException {
    List<SetupRequest.Survivor> sv = new ArrayList<>();
    for (int s = 0; s < g.k; s++) {
      int unit = g.survivors[s];
      SurvivorAgent a = new SurvivorAgent(blocks, "127.0.0.1", 0, 64, 60_000);
      open.add(a);
      ExtendedBlock b = new ExtendedBlock("BP-racks", 7000 + unit, g.unitLength[unit], 1001);
      int sender = s;
      if (Arrays.stream(missing).noneMatch(x -> x == sender)) {
        blocks.put(b.getBlockId(), Arrays.copyOf(g.units[unit], (int) g.unitLength[unit]));
      }
      sv.add(new SetupRequest.Survivor(s, "127.0.0.1:" + a.address().getPort(), b.toString(),
          g.unitLength[unit], ""));
    }
    byte[][] co = {new byte[g.k]};
    for (int s = 0; s < g.k; s++) {
      co[0][s] = (byte) g.setup.coefficient(0, s);
    }
    return new SetupRequest("racks", payload, 0, LENGTH, 5_000, sv, co, premultiplied,
        datagram);
  }

  /** What a rebuild through a tree delivered, and what its reader counted. */
  private static final class Rebuilt {
    final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    final List<String> notTaken = java.util.Collections.synchronizedList(new ArrayList<>());
    SwitchClient.Result result;
  }

  private static byte[] rebuild(SwitchRackPlan plan, List<String> notTaken) throws IOException {
    Rebuilt r = new Rebuilt();
    try {
      return rebuild(plan, null, r);
    } finally {
      notTaken.addAll(r.notTaken);
    }
  }

  private static byte[] rebuild(SwitchRackPlan plan, java.net.InetSocketAddress flat,
      Rebuilt r) throws IOException {
    SwitchClient.Sink[] sinks = {r.bytes::write};
    r.result = SwitchClient.rebuild(plan, flat, new long[] {LENGTH}, () -> sinks,
        (rack, at, e) -> r.notTaken.add((rack == null ? "parent" : rack) + ": "
            + e.getMessage()));
    // the reader returns at its FIN; the switches' counts are final once they closed
    assertTrue(r.result.closed.awaitUninterruptibly(5_000), "the VIP connection closed");
    return r.bytes.toByteArray();
  }

  /**
   * Rebuilds through {@code plan}, every switch taking its part and no RETX (the byte counts
   * callers check are exact only then: a RETX resends a window), the bytes {@code unit}'s.
   */
  private static void rebuildWithoutRetransmission(SwitchRackPlan plan, byte[] unit)
      throws IOException {
    Rebuilt r = new Rebuilt();
    assertArrayEquals(unit, rebuild(plan, null, r), "the rebuilt unit");
    assertTrue(r.notTaken.isEmpty(), r.notTaken.toString());
    assertEquals(0, r.result.retransmitRequests, "RETX on an idle loopback");
  }

  /** {@code rack}'s switch took in its {@code survivors} streams and sent one: its partial sum. */
  private static void assertSummedOnce(SoftwareSwitch rack, int survivors, long stream) {
    assertEquals(survivors * stream, rack.getBytesIn());
    assertEquals(stream, rack.getBytesOut(), "one stream out of the rack: its partial sum");
    assertEquals(1, rack.getTasksPartialSums());
  }

  private static List<String> racks(String... r) {
    return Arrays.asList(r);
  }

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void aRemoteRacksSurvivorsReachTheReaderAsOneStream(boolean premultiplied) throws Exception {
    // RS(6,3), unit 0 lost: the reader's rack holds two survivors, rack 2 three, rack 3 one
    SwitchTaskTest.Group g = new SwitchTaskTest.Group(6, 3, new int[] {0}, LENGTH, 11);
    SoftwareSwitch local = startSwitch(32, PAYLOAD);
    SoftwareSwitch rack2 = startSwitch(32, PAYLOAD);
    SoftwareSwitch rack3 = startSwitch(32, PAYLOAD);
    SetupRequest flat = flat(g, premultiplied);
    SwitchRackPlan plan = plan(flat, "/r1", controls("/r1", local, "/r2", rack2, "/r3", rack3),
        "/r1", "/r2", "/r2", "/r1", "/r2", "/r3");
    assertNotNull(plan);
    assertEquals("parent at " + control(local) + " (reader in /r1), survivors by rack: "
        + "/r1: 2 local, /r2: 3 summed at " + control(rack2) + ", /r3: 1 direct", plan.text());
    rebuildWithoutRetransmission(plan, g.units[0]);
    long stream = SoftwareSwitchTest.sentPerStream(flat);
    assertSummedOnce(rack2, 3, stream);
    // the parent took in two local, one direct and the partial sum: four streams, not six
    assertEquals(4 * stream, local.getBytesIn());
    assertEquals(stream, local.getBytesOut());
    assertEquals(1, local.getTasksWithChildren());
    assertEquals(0, rack3.getTasksAccepted(), "a lone survivor is sent direct, not summed");
    Waits.until("both levels complete on the reader's FIN", 5_000,
        () -> local.getTasksCompleted() == 1 && rack2.getTasksCompleted() == 1);
    assertEquals(0, local.getSlotArraysInUse() + rack2.getSlotArraysInUse());
  }

  /**
   * docs/protocol.md, "Partial sums over datagrams": the reader attaches rack 2's child to the
   * parent on the child's control connection; the child's partial sums reach the parent's VIP
   * as its sender's DATA and the parent's ACK copies drive the child, so the erased unit comes
   * out byte for byte with one stream leaving rack 2, as over TCP.
   */
  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void overDatagramsAnAttachedChildSendsItsRacksOneStream(boolean premultiplied)
      throws Exception {
    SwitchTaskTest.Group g = new SwitchTaskTest.Group(6, 3, new int[] {0}, LENGTH, 21);
    SoftwareSwitch local = startSwitch(32, 1024);
    SoftwareSwitch rack2 = startSwitch(32, 1024);
    SetupRequest flat = datagramFlat(g, premultiplied);
    SwitchRackPlan plan = plan(flat, "/r1", controls("/r1", local, "/r2", rack2),
        "/r1", "/r2", "/r2", "/r1", "/r2", "/r1");
    assertNotNull(plan);
    rebuildWithoutRetransmission(plan, g.units[0]);
    long stream = SoftwareSwitchTest.sentPerStream(flat);
    assertSummedOnce(rack2, 3, stream);
    assertEquals(4 * stream, local.getBytesIn(), "three local survivors and the partial sum");
    assertEquals(stream, local.getBytesOut());
    Waits.until("both levels complete on the reader's FIN", 5_000,
        () -> local.getTasksCompleted() == 1 && rack2.getTasksCompleted() == 1);
    assertEquals(0, local.getSlotArraysInUse() + rack2.getSlotArraysInUse());
  }

  /**
   * Two racks' children on one software switch: they share its VIP, so the reader tells them
   * apart by task (each attached as its own sender) and the switch by sender; the unit comes
   * out byte for byte with two partial sums summed on that switch.
   */
  @Test
  void overDatagramsTwoChildrenOnOneSwitchAreTwoSendersOfTheParent() throws Exception {
    SwitchTaskTest.Group g = new SwitchTaskTest.Group(6, 3, new int[] {0}, LENGTH, 23);
    SoftwareSwitch local = startSwitch(32, 1024);
    SoftwareSwitch shared = startSwitch(32, 1024);
    SetupRequest flat = datagramFlat(g, true);
    SwitchRackPlan plan = plan(flat, "/r1", controls("/r1", local, "/r2", shared, "/r3",
        shared), "/r1", "/r2", "/r2", "/r3", "/r3", "/r1");
    assertEquals(2, plan.children().size(), plan.text());
    Rebuilt r = new Rebuilt();
    assertArrayEquals(g.units[0], rebuild(plan, null, r), "the rebuilt unit");
    assertTrue(r.notTaken.isEmpty(), r.notTaken.toString());
    assertEquals(2, shared.getTasksPartialSums());
    long stream = SoftwareSwitchTest.sentPerStream(flat);
    assertEquals(4 * stream, shared.getBytesIn());
    assertEquals(2 * stream, shared.getBytesOut(), "one partial sum a rack");
    Waits.until("every task completes on the reader's FIN", 5_000,
        () -> local.getTasksCompleted() == 1 && shared.getTasksCompleted() == 2);
  }

  /** A datagram task of 1024-byte packets (what a 1500-byte MTU takes). */
  private SetupRequest datagramFlat(SwitchTaskTest.Group g, boolean premultiplied)
      throws IOException, ProtocolException {
    return flat(g, premultiplied, true, 1024);
  }

  /**
   * An attach proves itself with the child's secret, names a datagram task not yet claimed
   * and a parent VIP inside the agent networks; each refusal says which, and a child that
   * cannot be attached leaves the tree to run flat on the fallback switch, byte for byte.
   */
  @Test
  void anAttachIsCheckedAndOneRefusedRunsTheTaskFlat() throws Exception {
    SwitchTaskTest.Group g = new SwitchTaskTest.Group(6, 3, new int[] {0}, LENGTH, 22);
    SoftwareSwitch local = startSwitch(32, 1024);
    SoftwareSwitch rack2 = startSwitch(32, 1024,
        o -> o.agentNetworks = List.of("127.0.0.0/8", "198.18.0.0/15"));
    SetupRequest flat = datagramFlat(g, true);
    SwitchRackPlan plan = plan(flat, "/r1", controls("/r1", local, "/r2", rack2),
        "/r1", "/r2", "/r2", "/r1", "/r2", "/r1");
    SetupRequest child = plan.children().get(0).setup;
    try (java.net.Socket held = new java.net.Socket()) {
      held.connect(rack2.controlAddress());
      SetupAnswer a = SetupAnswer.fromJson(SwitchClient.exchange(held, child.held().toJson()));
      assertTrue(a.ok(), a.reason());
      String vip = "127.0.0.1:" + local.dataAddress().getPort();
      assertEquals("no task " + a.task(), reason(attach(held, new AttachRequest(a.task(),
          "ffffffffffffffffffffffffffffffff", vip, 1, 1, 0, 32, 16))));
      assertTrue(reason(attach(held, new AttachRequest(a.task(), a.secret(),
          "203.0.113.9:40000", 1, 1, 0, 32, 16))).startsWith("parent.vip: "));
      assertTrue(reason(SwitchClient.exchange(held, ("{\"op\":\"attach\",\"task\":1,"
          + "\"parent\":{\"vip\":\"here\"}}").getBytes(StandardCharsets.UTF_8)))
          .startsWith("parent.vip: 'here'"));
      assertEquals("{\"ok\":true}", new String(attach(held, new AttachRequest(a.task(),
          a.secret(), vip, 1, 1, 0, 32, 16)), StandardCharsets.UTF_8));
      assertEquals("attach: task " + a.task() + " is attached already", reason(attach(held,
          new AttachRequest(a.task(), a.secret(), vip, 1, 1, 2, 32, 16))));
      // another task cannot take the same sender of that parent (its stream would be that
      // sender's, from this switch's one VIP)
      SetupAnswer b = SetupAnswer.fromJson(SwitchClient.exchange(held, child.held().toJson()));
      assertTrue(b.ok(), b.reason());
      assertEquals("attach: another task is sender 0 of parent task 1 at " + vip,
          reason(attach(held, new AttachRequest(b.task(), b.secret(), vip, 1, 1, 0, 32, 16))));
      assertEquals("{\"ok\":true}", new String(attach(held, new AttachRequest(b.task(),
          b.secret(), vip, 1, 1, 1, 32, 16)), StandardCharsets.UTF_8));
      assertTrue(reason(attach(held, new AttachRequest(b.task(), b.secret(), "127.0.0.1:0",
          1, 1, 1, 32, 16))).startsWith("parent.vip: '127.0.0.1:0' is not"));
      // the reader's teardown frees an attached (claimed) task at once
      assertEquals(2, rack2.getSlotArraysInUse());
      SetupAnswer down = SetupAnswer.fromJson(SwitchClient.exchange(held,
          ("{\"op\":\"teardown\",\"task\":" + b.task() + ",\"secret\":\"" + b.secret()
              + "\"}").getBytes(StandardCharsets.UTF_8)));
      assertTrue(down.ok(), down.reason());
      Waits.until("the torn-down task's slot array freed", 5_000,
          () -> rack2.getSlotArraysInUse() == 1);
    }
    // the parent's VIP outside the rack switch's agent networks: the tree's attach is refused,
    // and the task runs flat on the fallback switch, nothing having streamed
    SoftwareSwitch fenced = startSwitch(32, 1024, o -> o.agentNetworks = List.of("127.0.0.1/32"));
    // its VIP outside the fenced switch's agent networks
    SoftwareSwitch parentSwitch = startSwitch(32, 1024, o -> o.bindHost = "127.0.0.2");
    SoftwareSwitch spine = startSwitch(32, 1024);
    // rack 2's child is attached first, rack 3's refused: the attached one is torn down
    int before = rack2.getSlotArraysInUse();
    SwitchRackPlan tree = plan(flat, "/r1", controls("/r1", "127.0.0.2:" + parentSwitch
        .controlAddress().getPort(), "/r2", rack2, "/r3", fenced), "/r1", "/r2", "/r2", "/r3",
        "/r3", "/r1");
    assertEquals(2, tree.children().size(), tree.text());
    Rebuilt r = new Rebuilt();
    assertArrayEquals(g.units[0], rebuild(tree, spine.controlAddress(), r), "the rebuilt unit");
    assertEquals(1, r.notTaken.size(), r.notTaken.toString());
    assertTrue(r.notTaken.get(0).startsWith("/r3: "), r.notTaken.toString());
    assertTrue(r.notTaken.get(0).contains("refused to attach its partial sum: parent.vip: "),
        r.notTaken.toString());
    assertEquals(1, spine.getTasksAccepted(), "flat on the fallback switch");
    assertEquals(0, fenced.getTasksPartialSums());
    // what the tree set up is gone at once, not at its 5 s timeout: the attached (claimed)
    // child too, torn down by the reader
    Waits.until("the tree's tasks freed", 2_000,
        () -> rack2.getSlotArraysInUse() == before && fenced.getSlotArraysInUse()
            + parentSwitch.getSlotArraysInUse() == 0);
  }

  /** The switch's answer to attach {@code r} on the control connection {@code held}. */
  private static byte[] attach(java.net.Socket held, AttachRequest r) throws IOException {
    return SwitchClient.exchange(held, r.toJson());
  }

  private static String reason(byte[] answer) throws IOException {
    return io.netec.hdfs.switchroute.wire.JsonLimits.mapper().readTree(answer).path("reason")
        .asText("(ok)");
  }

  @Test
  void twoRacksSumForAnRs104RebuildAndTheParentRunsOnTheSpineWhenTheReadersRackHasNoSwitch()
      throws Exception {
    SwitchTaskTest.Group g = new SwitchTaskTest.Group(10, 4, new int[] {3}, LENGTH, 12);
    SoftwareSwitch spine = startSwitch(32, PAYLOAD);
    SoftwareSwitch rack2 = startSwitch(32, PAYLOAD);
    SoftwareSwitch rack3 = startSwitch(32, PAYLOAD);
    SetupRequest flat = flat(g, false);
    SwitchRackPlan plan = SwitchRackPlan.plan(flat, racks("/r1", "/r1", "/r2", "/r2", "/r2",
        "/r2", "/r3", "/r3", "/r3", "/r3"), "/r1", controls("/r2", rack2, "/r3", rack3),
        control(spine));
    assertEquals(2, plan.children().size());
    assertEquals(control(spine), plan.parentControl());
    assertArrayEquals(g.units[3], rebuild(plan, new ArrayList<>()));
    long stream = SoftwareSwitchTest.sentPerStream(flat);
    assertEquals(4 * stream, spine.getBytesIn(), "two local survivors and two partial sums");
    assertEquals(stream, rack2.getBytesOut());
    assertEquals(stream, rack3.getBytesOut());
  }

  @Test
  void aChildItsSwitchRefusesLeavesItsSurvivorsToTheParent() throws Exception {
    SwitchTaskTest.Group g = new SwitchTaskTest.Group(6, 3, new int[] {2}, LENGTH, 13);
    SoftwareSwitch local = startSwitch(32, PAYLOAD);
    SoftwareSwitch small = startSwitch(32, 4096); // refuses payload 8192
    SetupRequest flat = flat(g, false);
    SwitchRackPlan plan = plan(flat, "/r1", controls("/r1", local, "/r2", small),
        "/r1", "/r2", "/r2", "/r2", "/r2", "/r1");
    List<String> refused = new ArrayList<>();
    assertArrayEquals(g.units[2], rebuild(plan, refused));
    assertEquals(1, refused.size(), refused.toString());
    assertTrue(refused.get(0).startsWith("/r2: ") && refused.get(0).contains("payload"),
        refused.get(0));
    assertEquals(6 * SoftwareSwitchTest.sentPerStream(flat), local.getBytesIn(),
        "all six survivors streamed to the parent");
  }

  @Test
  void aChildThatFailsMidTaskFailsTheParentAndNoWrongByteIsDelivered()
      throws Exception {
    SwitchTaskTest.Group g = new SwitchTaskTest.Group(6, 3, new int[] {0}, LENGTH, 14);
    SoftwareSwitch local = startSwitch(32, PAYLOAD);
    SoftwareSwitch rack2 = startSwitch(32, PAYLOAD);
    SetupRequest flat = flat(g, false);
    // sender 3's block (rack 2's) fails a third of the way in, as a corrupt chunk would
    blocks.failAt.put(7000L + g.survivors[3], (long) LENGTH / 3);
    SwitchRackPlan plan = plan(flat, "/r1", controls("/r1", local, "/r2", rack2),
        "/r1", "/r1", "/r2", "/r2", "/r2", "/r1");
    Rebuilt r = new Rebuilt();
    IOException e = assertThrows(IOException.class, () -> rebuild(plan, null, r));
    Waits.until("both levels fail: " + e, 5_000,
        () -> local.getTasksFailed() == 1 && rack2.getTasksFailed() == 1);
    byte[] got = r.bytes.toByteArray();
    assertTrue(got.length > 0 && got.length < LENGTH, "the stream ended part way: " + got.length);
    assertArrayEquals(Arrays.copyOf(g.units[0], got.length), got, "what came is the unit's");
    assertEquals(0, local.getSlotArraysInUse() + rack2.getSlotArraysInUse());
  }

  @Test
  void aParentThatFailsTakesItsChildWithItAtOnce() throws Exception {
    SwitchTaskTest.Group g = new SwitchTaskTest.Group(6, 3, new int[] {0}, LENGTH, 19);
    SoftwareSwitch local = startSwitch(32, PAYLOAD);
    SoftwareSwitch rack2 = startSwitch(32, PAYLOAD);
    SetupRequest flat = flat(g, false, 0); // sender 0 (the reader's rack's) has no block
    SwitchRackPlan plan = plan(flat, "/r1", controls("/r1", local, "/r2", rack2),
        "/r1", "/r2", "/r2", "/r2", "/r1", "/r1");
    long start = System.nanoTime();
    IOException e = assertThrows(IOException.class, () -> rebuild(plan, new ArrayList<>()));
    // the child ends with its parent's connection, not at its own 5 s without progress
    Waits.until("the child fails with its parent: " + e, 2_000,
        () -> rack2.getTasksFailed() == 1);
    assertTrue(System.nanoTime() - start < 4_000_000_000L, "the child waited for its timeout");
    assertEquals(0, rack2.getSlotArraysInUse());
  }

  @Test
  void aParentItsSwitchRefusesRunsFlatOnTheFallbackSwitchItsChildrenFreed() throws Exception {
    SwitchTaskTest.Group g = new SwitchTaskTest.Group(6, 3, new int[] {4}, LENGTH, 20);
    SoftwareSwitch small = startSwitch(32, 4096); // the reader's rack's: refuses payload 8192
    SoftwareSwitch rack2 = startSwitch(32, PAYLOAD);
    SoftwareSwitch spine = startSwitch(32, PAYLOAD);
    SetupRequest flat = flat(g, false);
    SwitchRackPlan plan = plan(flat, "/r1", controls("/r1", small, "/r2", rack2),
        "/r1", "/r2", "/r2", "/r2", "/r1", "/r1");
    Rebuilt r = new Rebuilt();
    assertArrayEquals(g.units[4], rebuild(plan, spine.controlAddress(), r));
    assertEquals(1, r.notTaken.size(), r.notTaken.toString());
    assertTrue(r.notTaken.get(0).startsWith("parent: ") && r.notTaken.get(0).contains("payload"),
        r.notTaken.get(0));
    assertEquals(1, spine.getTasksCompleted(), "the flat task ran on the fallback");
    Waits.until("the unclaimed child freed with its requester's connection", 2_000,
        () -> rack2.getSlotArraysInUse() == 0);
    assertEquals(0, rack2.getTasksPartialSums());
  }

  @Test
  void backPressureHoldsAcrossLevels() throws Exception {
    // the child's slot array is 8 times the parent's: without the parent's first window and
    // its ACKs' windows passed down, the child's survivors would run past the parent's ring
    // (dropped as too far ahead, recovered only by RETX)
    SwitchTaskTest.Group g = new SwitchTaskTest.Group(6, 3, new int[] {1}, LENGTH, 15);
    SoftwareSwitch local = startSwitch(8, PAYLOAD);
    SoftwareSwitch rack2 = startSwitch(64, PAYLOAD);
    SetupRequest flat = flat(g, false);
    SwitchRackPlan plan = plan(flat, "/r1", controls("/r1", local, "/r2", rack2),
        "/r2", "/r2", "/r2", "/r2", "/r2", "/r1");
    assertArrayEquals(g.units[1], rebuild(plan, new ArrayList<>()));
    assertEquals(0, local.getPacketsDropped(), "the parent dropped packets");
    assertEquals(0, rack2.getPacketsDropped(), "the child dropped packets");
  }

  @Test
  void whatCannotBeSplitByRackIsLeftFlat() throws Exception {
    SwitchTaskTest.Group one = new SwitchTaskTest.Group(3, 2, new int[] {0}, 4096, 16);
    Map<String, String> sw = Map.of("/a", "h:1", "/b", "h:2");
    SetupRequest flat = one.setup;
    assertNull(SwitchRackPlan.plan(flat, racks("/a", "/b", "/b"), null, sw, null),
        "the reader's rack unknown");
    assertNull(SwitchRackPlan.plan(flat, racks("/a", "/b", "/c"), "/a", sw, null),
        "no rack with two survivors besides the reader's");
    assertNull(SwitchRackPlan.plan(flat, racks("/a", "/b", "/b"), "/c", sw, null),
        "no switch for the reader's rack and no default");
    SwitchTaskTest.Group two = new SwitchTaskTest.Group(3, 2, new int[] {0, 1}, 4096, 17);
    assertNull(SwitchRackPlan.plan(two.setup, racks("/a", "/b", "/b"), "/a", sw, null),
        "two rows");
    assertNotNull(SwitchRackPlan.plan(flat, racks("/a", "/b", "/b"), "/a", sw, null));
  }

  @Test
  void rackSwitchesNamedForNoRackOfTheTaskAreCalledOut() {
    Map<String, String> sw = Map.of("/rack1", "h:1", "/rack2", "h:2");
    String why = SwitchRackPlan.unmatched(sw, "/dc1/rack1", List.of("/dc1/rack2", "/dc1/rack1"));
    assertNotNull(why);
    assertTrue(why.contains(NetecConfigKeys.SWITCH_RACKS) && why.contains("[/rack1, /rack2]")
        && why.contains("[/dc1/rack1, /dc1/rack2]"), why);
    assertNull(SwitchRackPlan.unmatched(sw, "/rack3", List.of("/rack2")), "one matches");
    assertNull(SwitchRackPlan.unmatched(Map.of(), "/a", List.of("/b")), "none named");
    assertNull(SwitchRackPlan.unmatched(sw, null, List.of("/b")), "a client's read");
    java.util.List<String> unknown = new java.util.ArrayList<>();
    unknown.add(null);
    assertNotNull(SwitchRackPlan.unmatched(sw, "/x", unknown), "a survivor's rack unknown");
  }

  @Test
  void aChildSurvivorIsCheckedAndCarriedInTheSetup() throws Exception {
    String secret = "00112233445566778899aabbccddeeff";
    SetupRequest.Child child = new SetupRequest.Child(7, 2, secret);
    List<SetupRequest.Survivor> sv = List.of(
        new SetupRequest.Survivor(0, "h:1", "BP-1:blk_1_1", 100, ""),
        new SetupRequest.Survivor(1, "h:2", "partial sum of /r2", 100, "", child));
    SetupRequest ok = new SetupRequest("g", 64, 0, 100, 1000, sv, new byte[][] {{9, 1}});
    SetupRequest back = SetupRequest.fromJson(ok.toJson());
    SetupRequest.Child c = back.survivors().get(1).child();
    assertEquals(7, c.task());
    assertEquals(2, c.slotArray());
    assertEquals(secret, c.secret());
    assertNull(back.survivors().get(0).child());
    ProtocolException e = assertThrows(ProtocolException.class,
        () -> new SetupRequest("g", 64, 0, 100, 1000, sv, new byte[][] {{9, 2}}));
    assertTrue(e.getMessage().startsWith("survivors[1].child: coefficient must be 1"),
        e.getMessage());
    e = assertThrows(ProtocolException.class,
        () -> new SetupRequest("g", 64, 0, 100, 1000, sv, new byte[][] {{9, 1}, {1, 1}}));
    assertTrue(e.getMessage().startsWith("survivors[1].child: needs rows 1"), e.getMessage());
    // over datagrams too: the reader attaches the child, and the parent claims nothing
    assertEquals(7, SetupRequest.fromJson(new SetupRequest("g", 64, 0, 100, 1000, sv,
        new byte[][] {{9, 1}}, false, true).toJson()).survivors().get(1).child().task());
    List<SetupRequest.Survivor> badSecret = List.of(new SetupRequest.Survivor(0, "h:2", "p",
        100, "", new SetupRequest.Child(7, 2, "not hex")));
    e = assertThrows(ProtocolException.class,
        () -> new SetupRequest("g", 64, 0, 100, 1000, badSecret, new byte[][] {{1}}));
    assertTrue(e.getMessage().contains("secret is not 32 hex digits"), e.getMessage());
  }

  @Test
  void aPartialSumIsReaddressedBothWays() throws Exception {
    ParentLink link = new ParentLink(9, 3, 5, 16, 8, 4096, 0, 10_000);
    NetecPacket hello = link.toHello(4, 1, "00112233445566778899aabbccddeeff");
    assertEquals(4, hello.task());
    assertEquals(NetecPacket.READER, hello.sender());
    ParentLink back = ParentLink.fromHello(hello);
    assertEquals(9, back.task());
    assertEquals(3, back.slotArray());
    assertEquals(5, back.sender());
    assertEquals(16, back.slots());
    assertEquals(8, back.window());
    assertNull(back.mismatch(new SetupRequest("g", 4096, 0, 10_000, 1000,
        List.of(new SetupRequest.Survivor(0, "h:1", "BP-1:blk_1_1", 100, "")),
        new byte[][] {{1}})));
    assertTrue(back.mismatch(new SetupRequest("g", 4096, 64, 10_000, 1000,
        List.of(new SetupRequest.Survivor(0, "h:1", "BP-1:blk_1_1", 100, "")),
        new byte[][] {{1}})).contains("stripes"));
    byte[] sum = {1, 2, 3, 4};
    NetecPacket result = new NetecPacket(NetecPacket.RESULT, 4, 1, 0, 0, 37 % 32, 37, 0, sum);
    NetecPacket data = link.asData(result);
    assertEquals(NetecPacket.DATA, data.type());
    assertEquals(9, data.task());
    assertEquals(3, data.slotArray());
    assertEquals(5, data.sender());
    assertEquals(37 % 16, data.slot());
    assertEquals(37, data.seq());
    assertArrayEquals(sum, data.payload());
    NetecPacket ack = new NetecPacket(NetecPacket.ACK, 9, 3, 5, NetecPacket.FLAG_RETX, 0, 30, 6,
        new byte[0]);
    NetecPacket mine = link.asChildAck(ack, 4, 1);
    assertEquals(4, mine.task());
    assertEquals(1, mine.slotArray());
    assertEquals(NetecPacket.READER, mine.sender());
    assertEquals(30, mine.seq());
    assertEquals(6, mine.window());
    assertTrue(mine.hasFlag(NetecPacket.FLAG_RETX));
    assertNull(link.asChildAck(new NetecPacket(NetecPacket.ACK, 9, 3, 4, 0, 0, 30, 6,
        new byte[0]), 4, 1), "an ACK to another sender of the parent");
    assertNull(ParentLink.fromHello(new NetecPacket(NetecPacket.HELLO, 4, 1, NetecPacket.READER,
        0, 0, 0, 0, "{\"role\":\"reader\",\"secret\":\"x\"}".getBytes(StandardCharsets.UTF_8))));
    assertThrows(ProtocolException.class, () -> ParentLink.fromHello(new NetecPacket(
        NetecPacket.HELLO, 4, 1, NetecPacket.READER, 0, 0, 0, 0,
        "{\"parent\":{\"task\":900}}".getBytes(StandardCharsets.UTF_8))));
  }

  @Test
  void aParentHelloWithAWrongSecretClaimsNothing() throws Exception {
    SwitchTaskTest.Group g = new SwitchTaskTest.Group(6, 3, new int[] {0}, LENGTH, 18);
    SoftwareSwitch rack2 = startSwitch(32, PAYLOAD);
    SetupRequest flat = flat(g, false);
    SwitchRackPlan plan = plan(flat, "/r1", controls("/r1", "127.0.0.1:1", "/r2", rack2),
        "/r1", "/r2", "/r2", "/r2", "/r1", "/r1");
    SetupRequest child = plan.children().get(0).setup;
    try (java.net.Socket held = new java.net.Socket()) {
      held.connect(rack2.controlAddress());
      java.io.DataOutputStream out = new java.io.DataOutputStream(held.getOutputStream());
      io.netec.hdfs.switchroute.wire.ControlFrames.write(out, child.toJson());
      SetupAnswer a = SetupAnswer.fromJson(io.netec.hdfs.switchroute.wire.ControlFrames.read(
          new java.io.DataInputStream(held.getInputStream())));
      assertTrue(a.ok(), a.reason());
      assertClosedUnanswered(rack2, new ParentLink(1, 0, 0, 32, 16, PAYLOAD, 0, LENGTH)
          .toHello(a.task(), a.slotArray(), "ffffffffffffffffffffffffffffffff"));
      // the right secret with a parent whose stripes are not the task's: closed, unclaimed
      assertClosedUnanswered(rack2, new ParentLink(1, 0, 0, 32, 16, PAYLOAD, 0, LENGTH + 64)
          .toHello(a.task(), a.slotArray(), a.secret()));
      assertEquals(0, rack2.getTasksPartialSums());
      assertEquals(1, rack2.getSlotArraysInUse(), "the task stays its reader's");
    }
  }

  /** {@code hello} sent to {@code sw}'s VIP: the switch closes the connection, sending nothing. */
  private static void assertClosedUnanswered(SoftwareSwitch sw, NetecPacket hello)
      throws IOException {
    try (java.net.Socket vip = new java.net.Socket("127.0.0.1", sw.dataAddress().getPort())) {
      java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(hello.encodedLength());
      hello.encode(b);
      vip.getOutputStream().write(b.array());
      vip.setSoTimeout(5_000);
      assertEquals(-1, vip.getInputStream().read(), "closed, nothing sent");
    }
  }
}
