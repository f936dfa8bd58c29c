// The TCP program's proxy state (v1model): one reader connection to the VIP stands for one
// connection to each survivor (docs/protocol.md "TCP mode").
#ifndef NETEC_V1MODEL_TCP_PROXY_P4
#define NETEC_V1MODEL_TCP_PROXY_P4

#include "../../include/config.p4"

// Whether the task's reader has proven itself: 1 once its HELLO carried the task's secret. Its
// segments with a payload reach the survivors only from then on, and no later SYN rebinds the
// VIP. Read by every reader segment (one access, as on Tofino), set by the proving one.
control ReaderProof(in bit<32> task, in bit<1> secret_ok, out bit<8> proven) {
    register<bit<8>>(NETEC_TASKS) reader_proven;
    apply {
        reader_proven.read(proven, task);
        if (secret_ok == 1) {
            reader_proven.write(task, 1);
        }
    }
}

const bit<2> SYNACK_ANSWER = 1;  // a survivor's SYN-ACK: its bit joins the answered ones
const bit<2> SYNACK_CLEAR = 2;   // the reader's bare SYN, before its proof: none answered yet

// The survivors that answered the reader's SYN: the reader gets one SYN-ACK, the last one.
control SynAcks(in bit<2> op, in bit<32> task, in bit<16> sender_bit, out bit<16> answered) {
    register<bit<16>>(NETEC_TASKS) synack_bits;
    apply {
        answered = 0;
        if (op == SYNACK_ANSWER) {
            synack_bits.read(answered, task);
            answered = answered | sender_bit;
            synack_bits.write(task, answered);
        } else if (op == SYNACK_CLEAR) {
            synack_bits.write(task, 0);
        }
    }
}

const bit<2> ISN_READ = 1;
const bit<2> ISN_RECORD = 2;

// Each survivor's ISN minus the VIP's (egress): recorded from its SYN-ACK, then added to the
// reader's ACK numbers on their way to it and subtracted from its sequence numbers on theirs
// to the reader. INDEX: task * NETEC_SENDERS + sender.
control IsnDeltas(in bit<2> op, in bit<32> index, in bit<32> record, out bit<32> delta) {
    register<bit<32>>(NETEC_SENDER_CELLS) isn_delta;
    apply {
        delta = record;
        if (op == ISN_RECORD) {
            isn_delta.write(index, record);
        } else if (op == ISN_READ) {
            isn_delta.read(delta, index);
        }
    }
}

#endif
