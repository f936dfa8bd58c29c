package io.netec.hdfs.switchroute;

import io.netec.hdfs.route.PeerNetworks;
import io.netec.hdfs.switchroute.wire.Hex;
import io.netec.hdfs.switchroute.wire.SetupRequest;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The switch's task table (docs/protocol.md "Control"): which task ids and slot arrays are
 * taken, the memory the tasks hold, how many tasks each requester has set up, and each task's
 * secret; a task is allocated, claimed by its reader's HELLO, and released, or ended unclaimed
 * when no reader comes. A plain class, thread-safe under one lock, with no I/O and no clock:
 * its caller schedules the claim timeout and runs the sessions.
 *
 * @param <E> the switch's session of a task, an {@link Entry}
 */
final class TaskTable<E extends TaskTable.Entry> {
  /** Task ids: the wire's one byte. */
  static final int TASK_IDS = 256;

  /** One task's place in the table; the switch's session of the task extends it. */
  static class Entry {
    final SwitchTask task;
    /** Bytes of slot memory the task holds until it is released. */
    final long memory;
    /** Claims the VIP and tears the task down: only the reader that set it up knows it. */
    final String secret;
    /** Who set the task up, until it is released (the table's, under its lock). */
    private InetAddress requester;
    /** A reader's HELLO took the task (the table's, under its lock: see claim, endUnclaimed). */
    private boolean bound;
    /**
     * Completed or failed: set once, under the table's lock, by whichever comes first ({@link
     * TaskTable#end}, {@link TaskTable#endUnclaimed}); read anywhere.
     */
    private volatile boolean done;

    /** Whether the task has ended (completed, failed or expired unclaimed). */
    boolean done() {
      return done;
    }

    Entry(SwitchTask task, long memory, String secret) {
      this.task = task;
      this.memory = memory;
      this.secret = secret;
    }

    /** Whether {@code given} is the task's secret (compared in constant time). */
    boolean secretMatches(String given) {
      return MessageDigest.isEqual(secret.getBytes(StandardCharsets.US_ASCII),
          given.getBytes(StandardCharsets.US_ASCII));
    }
  }

  /** Makes the switch's session of a task the table has placed. */
  interface Sessions<E> {
    E make(SwitchTask task, long memory, String secret);
  }

  /** The outcome of {@link #allocate}: the task, or why there is none. */
  static final class Allocation<E> {
    final E entry;
    final String refusal;

    private Allocation(E entry, String refusal) {
      this.entry = entry;
      this.refusal = refusal;
    }
  }

  private static final SecureRandom RANDOM = new SecureRandom();

  private final int slotsPerArray;
  private final long memoryBudgetBytes;
  private final int tasksPerPeer;
  private final int maxPayload;
  private final PeerNetworks agentNetworks;
  private final Object[] tasks = new Object[TASK_IDS];
  private final boolean[] arrayUsed;
  private final Map<InetAddress, Integer> tasksByPeer = new HashMap<>();
  private int lastTaskId = -1;
  private long memoryUsed;

  /**
   * @param slotArrays slot arrays (at most {@value #TASK_IDS}): one a task
   * @param agentNetworks where survivors' agents may be (a setup naming another is refused)
   */
  TaskTable(int slotArrays, int slotsPerArray, long memoryBudgetBytes, int tasksPerPeer,
      int maxPayload, PeerNetworks agentNetworks) {
    this.arrayUsed = new boolean[Math.min(TASK_IDS, slotArrays)];
    this.slotsPerArray = slotsPerArray;
    this.memoryBudgetBytes = memoryBudgetBytes;
    this.tasksPerPeer = tasksPerPeer;
    this.maxPayload = maxPayload;
    this.agentNetworks = agentNetworks;
  }

  /**
   * Places {@code req}'s task for {@code requester}, or says why not: the requester's cap, the
   * payload size, an agent outside the agent networks, the memory budget, no free task id or
   * slot array.
   */
  synchronized Allocation<E> allocate(SetupRequest req, InetAddress requester,
      Sessions<E> sessions) {
    int live = tasksByPeer.getOrDefault(requester, 0);
    if (live >= tasksPerPeer) {
      return refuse(live + " tasks live set up from " + ConnectionCaps.describe(requester)
          + " (cap " + tasksPerPeer + ")");
    }
    if (req.payload() > maxPayload) {
      return refuse("payload size " + req.payload() + " not supported (this switch: at most "
          + maxPayload + ")");
    }
    for (int i = 0; i < req.survivors().size(); i++) {
      String agent = req.survivors().get(i).agent();
      String why = agentNetworks.refusal(agent.substring(0, agent.lastIndexOf(':')));
      if (why != null) {
        return refuse("survivors[" + i + "].agent: " + why);
      }
    }
    long mem = SwitchTask.memoryBytes(slotsPerArray, req);
    if (memoryUsed + mem > memoryBudgetBytes) {
      return refuse("memory budget exceeded: " + memoryUsed + " + " + mem + " > "
          + memoryBudgetBytes + " bytes");
    }
    // ids in turn, not the lowest free one: a late packet of an ended task (a datagram, a
    // refusal) names its id, and should find no task there, not the next one
    int id = -1;
    for (int i = 0; i < tasks.length && id < 0; i++) {
      int candidate = (lastTaskId + 1 + i) % tasks.length;
      id = tasks[candidate] == null ? candidate : -1;
    }
    if (id < 0) {
      return refuse("no free task id");
    }
    lastTaskId = id; // a setup refused for want of an array passes its id on too
    int array = -1;
    for (int a = 0; a < arrayUsed.length && array < 0; a++) {
      array = arrayUsed[a] ? -1 : a;
    }
    if (array < 0) {
      return refuse("no free slot array");
    }
    E made = sessions.make(new SwitchTask(id, array, slotsPerArray, req), mem, newSecret());
    Entry e = made;
    e.requester = requester;
    tasksByPeer.merge(requester, 1, Integer::sum);
    tasks[id] = e;
    arrayUsed[array] = true;
    memoryUsed += mem;
    return new Allocation<>(made, null);
  }

  private Allocation<E> refuse(String reason) {
    return new Allocation<>(null, reason);
  }

  /** 128 random bits as 32 hex digits: what only the reader that set a task up knows. */
  static String newSecret() {
    byte[] b = new byte[16];
    RANDOM.nextBytes(b);
    return Hex.encode(b);
  }

  /** The task with id {@code id}, or null. */
  @SuppressWarnings("unchecked")
  synchronized E byId(int id) {
    return id >= 0 && id < tasks.length ? (E) tasks[id] : null;
  }

  /** The task with id {@code task} in slot array {@code array} (as a packet names it), or null. */
  synchronized E lookup(int task, int array) {
    E e = byId(task);
    return e != null && e.task.slotArray() == array ? e : null;
  }

  /** The reader's HELLO takes the task; false if it ended or is taken. */
  synchronized boolean claim(E task) {
    Entry e = task;
    if (e.done || e.bound) {
      return false;
    }
    e.bound = true;
    return true;
  }

  /**
   * Ends and releases {@code e} if no reader claimed it (decided under the same lock as {@link
   * #claim}); false if a reader did, or it had ended.
   */
  synchronized boolean endUnclaimed(E task) {
    Entry e = task;
    if (e.bound || e.done) {
      return false;
    }
    e.done = true;
    release(e);
    return true;
  }

  /**
   * Ends and releases {@code task} (completed or failed) unless it has ended already: true
   * once only, so that a task's end is counted and logged once however its ends race (a
   * teardown and the claim timeout, a failure and the completion).
   */
  synchronized boolean end(E task) {
    Entry e = task;
    if (e.done) {
      return false;
    }
    e.done = true;
    release(e);
    return true;
  }

  /** Frees the task's id, slot array and memory, and its count against its requester. */
  private void release(Entry e) {
    if (e.requester != null) {
      tasksByPeer.computeIfPresent(e.requester, (p, n) -> n > 1 ? n - 1 : null);
      e.requester = null;
    }
    if (tasks[e.task.taskId()] == e) {
      tasks[e.task.taskId()] = null;
      arrayUsed[e.task.slotArray()] = false;
      memoryUsed -= e.memory;
    }
  }

  /** Slot arrays there are: one a task. */
  int slotArrays() {
    return arrayUsed.length;
  }

  /** Tasks in the table (each holds one slot array). */
  synchronized int size() {
    int n = 0;
    for (Object t : tasks) {
      n += t == null ? 0 : 1;
    }
    return n;
  }

  /** Slot memory the tasks in the table hold. */
  synchronized long memoryInUse() {
    return memoryUsed;
  }

  /** Tasks set up from {@code requester} and not yet released (tests). */
  synchronized int tasksOf(InetAddress requester) {
    return tasksByPeer.getOrDefault(requester, 0);
  }

  /** Calls {@code each} on every task in the table (under its lock: keep it short). */
  @SuppressWarnings("unchecked")
  synchronized void forEach(Consumer<E> each) {
    for (Object t : tasks) {
      if (t != null) {
        each.accept((E) t);
      }
    }
  }
}
