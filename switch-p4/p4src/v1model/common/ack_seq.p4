// ackSeq: each task's first stripe the reader is missing. The reader's ACK raises it (it only
// grows, and never past the task's stripes); a DATA packet's first pass reads it to admit
// its seq. One read-modify-write a pass, as a Tofino stateful ALU does it (the TNA programs
// keep the bound in the register cell's other half).
#ifndef NETEC_V1MODEL_ACK_SEQ_P4
#define NETEC_V1MODEL_ACK_SEQ_P4

#include "../../include/config.p4"

// ACK_IN: an ACK's seq, or 0 to read; BOUND: the task's stripes.
control AckSeq(in bit<32> task, in bit<32> ack_in, in bit<32> bound, out bit<32> ack) {
    register<bit<32>>(NETEC_TASKS) ack_seq;
    apply {
        ack_seq.read(ack, task);
        if (ack_in > ack && bound >= ack_in) {
            ack = ack_in;
        }
        ack_seq.write(task, ack);
    }
}

#endif
