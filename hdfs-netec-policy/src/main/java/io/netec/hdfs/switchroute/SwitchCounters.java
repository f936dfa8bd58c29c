package io.netec.hdfs.switchroute;

import java.util.concurrent.atomic.LongAdder;

/** What the switch counts, read by its MXBean and metrics page; written from any thread. */
final class SwitchCounters {
  final LongAdder accepted = new LongAdder();
  final LongAdder premultiplied = new LongAdder();
  /** Tasks with a child switch's task among their survivors (a rack's partial sum). */
  final LongAdder parents = new LongAdder();
  /** Tasks whose reader was a parent switch: their stream went on as a partial sum. */
  final LongAdder partialSums = new LongAdder();
  final LongAdder refused = new LongAdder();
  final LongAdder completed = new LongAdder();
  final LongAdder failed = new LongAdder();
  final LongAdder bytesIn = new LongAdder();
  final LongAdder bytesOut = new LongAdder();
  /** Times a reader could take no more and its task's survivors were paused (autoRead). */
  final LongAdder stalls = new LongAdder();
  /** Packets that failed a check, or came for no task: dropped. */
  final LongAdder dropped = new LongAdder();
  /** DATA that came again after it was counted (stale or duplicate): resent in vain. */
  final LongAdder resent = new LongAdder();
  /** DATA refused and not counted (too far ahead, slot busy, mismatched): to be resent. */
  final LongAdder lost = new LongAdder();
  /** Reader ACKs with RETX, and those of them passed on without it (TCP, nothing lost). */
  final LongAdder retransmitRequests = new LongAdder();
  final LongAdder retransmitRequestsHeld = new LongAdder();
  /** Datagram mode: cookies sent to readers' addresses not yet proven. */
  final LongAdder cookies = new LongAdder();
}
