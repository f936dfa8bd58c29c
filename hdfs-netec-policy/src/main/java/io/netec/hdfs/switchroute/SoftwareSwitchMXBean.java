package io.netec.hdfs.switchroute;

/**
 * JMX view of a software switch: {@code io.netec:type=SoftwareSwitch,port=<control port>}.
 */
public interface SoftwareSwitchMXBean {
  long getTasksAccepted();

  /** Accepted tasks in pre-multiplied mode (survivors multiplied, the switch only XORed). */
  long getTasksPremultiplied();

  /** Accepted tasks with a child switch's task among their survivors (a rack's partial sum). */
  long getTasksWithChildren();

  /** Tasks claimed by a parent switch: their rebuilt stream went on as a partial sum. */
  long getTasksPartialSums();

  long getTasksRefused();

  long getTasksCompleted();

  long getTasksFailed();

  /** Tasks holding a slot array now. */
  int getSlotArraysInUse();

  /** Bytes of partial sums reserved by running tasks (what the memory budget counts). */
  long getMemoryInUse();

  /** Bytes of partial sums held now: taken as data reaches a slot, not at setup. */
  long getMemoryHeld();

  long getBytesIn();

  long getBytesOut();

  long getStalls();

  long getPacketsDropped();

  /**
   * DATA packets (of those dropped) that came again after the switch had counted them, stale or
   * duplicate: what resends cost in vain, at least (a copy of a stripe completed but not yet
   * ACKed starts its slot again and is not counted here).
   */
  long getPacketsResent();

  /**
   * DATA packets (of those dropped) refused and not counted (too far ahead, slot busy,
   * mismatched): a resend must bring them again.
   */
  long getPacketsLost();

  /**
   * ACKs asking for a resend (RETX) that the switch's tasks took from their readers (a task
   * whose reader is a parent switch counts its parent's; datagram tasks' too).
   */
  long getRetransmitRequests();

  /**
   * RETX a TCP task passed on to its survivor agents as a plain ACK: nothing was lost that a
   * resend could bring, so it would only have repeated what the task had counted.
   */
  long getRetransmitRequestsHeld();

  /**
   * Datagram mode: cookies sent to reader addresses not yet proven (each answers a HELLO with
   * the task's secret, and is no larger than it).
   */
  long getDatagramCookies();

  /**
   * CPU time, in nanoseconds, of the switch's I/O threads (where all its packet work runs:
   * framing, checksums, multiply-accumulate), alive or ended; -1 where the JVM cannot measure
   * thread CPU time.
   */
  long getCpuNanos();
}
