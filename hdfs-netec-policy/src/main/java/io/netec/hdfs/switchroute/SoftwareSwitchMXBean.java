package io.netec.hdfs.switchroute;

/**
 * JMX view of a software switch: {@code io.netec:type=SoftwareSwitch,port=<control port>}.
 */
public interface SoftwareSwitchMXBean {
  long getTasksAccepted();

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
}
