package io.netec.hdfs.switchroute;

import java.util.concurrent.atomic.LongAdder;

/** What the switch counts, read by its MXBean and metrics page; written from any thread. */
final class SwitchCounters {
  final LongAdder accepted = new LongAdder();
  final LongAdder premultiplied = new LongAdder();
  final LongAdder refused = new LongAdder();
  final LongAdder completed = new LongAdder();
  final LongAdder failed = new LongAdder();
  final LongAdder bytesIn = new LongAdder();
  final LongAdder bytesOut = new LongAdder();
  /** Times a reader could take no more and its task's survivors were paused (autoRead). */
  final LongAdder stalls = new LongAdder();
  /** Packets that failed a check, or came for no task: dropped. */
  final LongAdder dropped = new LongAdder();
  /** Datagram mode: cookies sent to readers' addresses not yet proven. */
  final LongAdder cookies = new LongAdder();
}
