package io.netec.hdfs.switchroute;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netec.hdfs.route.PeerNetworks;
import io.netec.hdfs.switchroute.wire.ProtocolException;
import io.netec.hdfs.switchroute.wire.SetupRequest;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The switch's task table and its datagram cookies, without a socket. */
class TaskTableTest {
  private static final int SLOTS = 8;
  private static final int PAYLOAD = 1024;
  private static final InetAddress A = address("198.18.0.1");
  private static final InetAddress B = address("198.18.0.2");

  private static InetAddress address(String ip) {
    try {
      return InetAddress.getByName(ip);
    } catch (java.net.UnknownHostException e) {
      throw new AssertionError(e);
    }
  }

  private static SetupRequest setup(String agentHost, int payload) throws ProtocolException {
    List<SetupRequest.Survivor> sv = new ArrayList<>();
    for (int s = 0; s < 2; s++) {
      sv.add(new SetupRequest.Survivor(s, agentHost + ":50200", "blk_" + s, 4096, ""));
    }
    return new SetupRequest("blk_g", payload, 4096, 30_000, sv, new byte[][] {{1, 1}});
  }

  private static SetupRequest setup() throws ProtocolException {
    return setup("198.18.0.9", PAYLOAD);
  }

  private static TaskTable<TaskTable.Entry> table(int arrays, long memory, int perPeer) {
    return new TaskTable<>(arrays, SLOTS, memory, perPeer, PAYLOAD,
        PeerNetworks.of(List.of("198.18.0.0/15"), "agent networks", "--agent-networks"));
  }

  private static TaskTable.Entry place(TaskTable<TaskTable.Entry> t, InetAddress from)
      throws ProtocolException {
    TaskTable.Allocation<TaskTable.Entry> a = t.allocate(setup(), from, TaskTable.Entry::new);
    assertNull(a.refusal);
    return a.entry;
  }

  @Test
  void aTaskHoldsItsIdArrayAndMemoryUntilReleased() throws ProtocolException {
    long mem = SwitchTask.memoryBytes(SLOTS, setup());
    TaskTable<TaskTable.Entry> t = table(4, 10 * mem, 8);
    TaskTable.Entry e = place(t, A);
    assertEquals(1, t.size());
    assertEquals(mem, t.memoryInUse());
    assertEquals(1, t.tasksOf(A));
    assertSame(e, t.byId(e.task.taskId()));
    assertSame(e, t.lookup(e.task.taskId(), e.task.slotArray()));
    assertNull(t.lookup(e.task.taskId(), e.task.slotArray() + 1), "another array: no task");
    assertNull(t.byId(-1));
    assertNull(t.byId(TaskTable.TASK_IDS));
    TaskTable.Entry other = place(t, A);
    assertTrue(t.end(e));
    assertTrue(e.done());
    assertFalse(t.end(e), "twice: nothing more, and not counted again");
    assertEquals(1, t.size());
    assertEquals(mem, t.memoryInUse());
    assertEquals(1, t.tasksOf(A), "the other task still counts against A");
    assertNull(t.byId(e.task.taskId()));
    assertSame(other, t.byId(other.task.taskId()));
    assertTrue(t.end(other));
    assertEquals(0, t.tasksOf(A));
    assertEquals(0, t.memoryInUse());
  }

  @Test
  void idsAreGivenInTurnSoALatePacketFindsNoNewTask() throws ProtocolException {
    TaskTable<TaskTable.Entry> t = table(4, Long.MAX_VALUE, 8);
    TaskTable.Entry first = place(t, A);
    t.end(first);
    TaskTable.Entry second = place(t, A);
    assertNotEquals(first.task.taskId(), second.task.taskId());
    assertNull(t.byId(first.task.taskId()));
    assertEquals(first.task.slotArray(), second.task.slotArray(), "the freed array is reused");
  }

  @Test
  void eachTaskHasItsOwnSecretComparedWhole() throws ProtocolException {
    TaskTable<TaskTable.Entry> t = table(8, Long.MAX_VALUE, 8);
    Set<String> secrets = new HashSet<>();
    for (int i = 0; i < 8; i++) {
      TaskTable.Entry e = place(t, A);
      assertTrue(e.secret.matches("[0-9a-f]{32}"), e.secret);
      assertTrue(secrets.add(e.secret));
      assertTrue(e.secretMatches(e.secret));
      assertFalse(e.secretMatches(e.secret.substring(1)));
      assertFalse(e.secretMatches(""));
      assertFalse(e.secretMatches(e.secret + "0"));
    }
  }

  @Test
  void refusalsSayWhy() throws ProtocolException {
    long mem = SwitchTask.memoryBytes(SLOTS, setup());
    TaskTable<TaskTable.Entry> t = table(2, 2 * mem, 1);
    place(t, A);
    assertTrue(t.allocate(setup(), A, TaskTable.Entry::new).refusal
        .contains("1 tasks live set up from"), "the requester's cap");
    assertTrue(t.allocate(setup("198.18.0.9", PAYLOAD + 64), B, TaskTable.Entry::new).refusal
        .contains("payload size"));
    String outside = t.allocate(setup("203.0.113.5", PAYLOAD), B, TaskTable.Entry::new)
        .refusal;
    assertTrue(outside.startsWith("survivors[0].agent: "), outside);
    place(t, B);
    TaskTable<TaskTable.Entry> small = table(1, Long.MAX_VALUE, 8);
    place(small, A);
    assertEquals("no free slot array",
        small.allocate(setup(), B, TaskTable.Entry::new).refusal);
    TaskTable<TaskTable.Entry> tight = table(8, mem + mem / 2, 8);
    place(tight, A);
    assertTrue(tight.allocate(setup(), B, TaskTable.Entry::new).refusal
        .startsWith("memory budget exceeded"));
    assertEquals(1, tight.size(), "a refusal takes nothing");
    assertEquals(mem, tight.memoryInUse());
    assertEquals(0, tight.tasksOf(B));
  }

  @Test
  void aSetupRefusedForWantOfAnArrayPassesItsIdOn() throws ProtocolException {
    TaskTable<TaskTable.Entry> t = table(1, Long.MAX_VALUE, 8);
    TaskTable.Entry first = place(t, A);
    assertEquals("no free slot array", t.allocate(setup(), B, TaskTable.Entry::new).refusal);
    t.end(first);
    assertEquals(first.task.taskId() + 2, place(t, B).task.taskId(),
        "ids in turn: the refused setup's id is not given to the next task");
  }

  @Test
  void aClaimedTaskCannotBeEndedUnclaimedNorClaimedTwice() throws ProtocolException {
    TaskTable<TaskTable.Entry> t = table(4, Long.MAX_VALUE, 8);
    TaskTable.Entry e = place(t, A);
    assertTrue(t.claim(e));
    assertFalse(t.claim(e), "a second HELLO takes nothing");
    assertFalse(t.endUnclaimed(e), "the claim timeout leaves a claimed task alone");
    assertFalse(e.done());
    assertEquals(1, t.size());
  }

  @Test
  void anUnclaimedTaskEndsOnceAndCannotBeClaimedAfter() throws ProtocolException {
    TaskTable<TaskTable.Entry> t = table(4, Long.MAX_VALUE, 8);
    TaskTable.Entry e = place(t, A);
    assertTrue(t.endUnclaimed(e));
    assertTrue(e.done());
    assertFalse(t.endUnclaimed(e), "ended once: a second end counts nothing");
    assertFalse(t.claim(e), "a HELLO after the timeout finds the task ended");
    assertEquals(0, t.size());
    assertEquals(0, t.tasksOf(A));
  }

  @Test
  void everyArrayIsUsableAndTheCapIsPerRequester() throws ProtocolException {
    TaskTable<TaskTable.Entry> t = table(TaskTable.TASK_IDS + 10, Long.MAX_VALUE, 200);
    assertEquals(TaskTable.TASK_IDS, t.slotArrays(), "one array a task id, at most");
    Set<Integer> arrays = new HashSet<>();
    for (int i = 0; i < 200; i++) {
      arrays.add(place(t, A).task.slotArray());
    }
    for (int i = 0; i < TaskTable.TASK_IDS - 200; i++) {
      arrays.add(place(t, B).task.slotArray());
    }
    assertEquals(TaskTable.TASK_IDS, arrays.size());
    assertEquals(200, t.tasksOf(A));
    assertEquals("no free task id",
        t.allocate(setup(), B, TaskTable.Entry::new).refusal);
  }

  @Test
  void aCookieBindsTaskSecretAddressAndPortUnderThisSwitchsKey() {
    ReturnCookies c = new ReturnCookies();
    InetSocketAddress from = new InetSocketAddress(A, 40000);
    String cookie = c.cookie(3, 1, "s3cret", from);
    assertTrue(cookie.matches("[0-9a-f]{32}"), cookie);
    assertEquals(cookie, c.cookie(3, 1, "s3cret", from), "no state: the same inputs");
    assertTrue(ReturnCookies.same(cookie, cookie));
    assertFalse(ReturnCookies.same(c.cookie(3, 1, "s3cret", new InetSocketAddress(A, 40001)),
        cookie), "port");
    assertFalse(ReturnCookies.same(c.cookie(3, 1, "s3cret", new InetSocketAddress(B, 40000)),
        cookie), "address");
    assertFalse(ReturnCookies.same(c.cookie(4, 1, "s3cret", from), cookie), "task");
    assertFalse(ReturnCookies.same(c.cookie(3, 2, "s3cret", from), cookie), "array");
    assertFalse(ReturnCookies.same(c.cookie(3, 1, "other", from), cookie), "secret");
    assertFalse(ReturnCookies.same(cookie, cookie.substring(2)), "truncated");
    assertFalse(ReturnCookies.same(new ReturnCookies().cookie(3, 1, "s3cret", from), cookie),
        "another key");
  }
}
