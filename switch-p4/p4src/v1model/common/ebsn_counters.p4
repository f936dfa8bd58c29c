// EBSN's counters of a task (docs/protocol.md "EBSN"): the highest stripe begun (+ 1), the
// stripes started in a free slot and the stripes completed; partial slots are the last two's
// difference (two counters that only grow, each one access a pass, rather than one that a
// start raises and a completion lowers). A first pass raises and adds its operands, each copy
// of the reader's ACK reads them (operands 0) to lower the window (EbsnWindow, netec_logic.p4).
#ifndef NETEC_V1MODEL_EBSN_COUNTERS_P4
#define NETEC_V1MODEL_EBSN_COUNTERS_P4

#include "../../include/config.p4"

control EbsnCounters(in bit<32> task, in bit<32> started_op, in bit<32> starts_inc,
                     in bit<32> completes_inc, out bit<32> started, out bit<32> partial) {
    register<bit<32>>(NETEC_TASKS) max_started_plus1;  // maxStarted + 1, 0 while none began
    register<bit<32>>(NETEC_TASKS) slot_starts;
    register<bit<32>>(NETEC_TASKS) slot_completes;
    apply {
        max_started_plus1.read(started, task);
        if (started_op > started) {
            started = started_op;
        }
        max_started_plus1.write(task, started);
        bit<32> starts;
        slot_starts.read(starts, task);
        starts = starts + starts_inc;
        slot_starts.write(task, starts);
        bit<32> completes;
        slot_completes.read(completes, task);
        completes = completes + completes_inc;
        slot_completes.write(task, completes);
        partial = starts - completes;
    }
}

#endif
