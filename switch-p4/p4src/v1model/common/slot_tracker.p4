// The progress tracker (docs/protocol.md "The switch's rules for DATA", rules 3-4): the stripe
// each slot holds and the senders admitted to it. A first pass takes the slot for its stripe
// (within the window, a slot holding another stripe holds a stale one: a later stripe with the
// same slot would be too far) and sets its sender's bit; the stripe's RESULT frees the slot, so
// a packet of the stripe sent again after a lost RESULT is aggregated again from scratch.
#ifndef NETEC_V1MODEL_SLOT_TRACKER_P4
#define NETEC_V1MODEL_SLOT_TRACKER_P4

#include "../../include/netec_logic.p4"

const bit<2> TRACK_NONE = 0;
const bit<2> TRACK_ADMIT = 1;    // a first pass admitted: the slot takes its stripe and sender
const bit<2> TRACK_RELEASE = 2;  // the stripe's RESULT: the slot holds nothing

// CELL: slot array ++ slot. TAKEN: what the slot held (SLOT_SAME, SLOT_FREE, SLOT_STALE:
// netec_logic.p4); DUP: the sender's bit if it was already set (a duplicate), else 0.
control SlotTracker(in bit<2> op, in bit<32> cell, in bit<32> seq, in bit<16> sender_bit,
                    out bit<8> taken, out bit<16> dup) {
    register<bit<32>>(NETEC_SLOT_CELLS) slot_seq;   // the stripe a slot holds, SEQ_NONE: none
    register<bit<16>>(NETEC_SLOT_CELLS) slot_bits;  // the senders admitted to it
    apply {
        taken = SLOT_SAME;
        dup = 0;
        if (op == TRACK_RELEASE) {
            slot_seq.write(cell, SEQ_NONE);
        } else if (op == TRACK_ADMIT) {
            bit<32> held;
            slot_seq.read(held, cell);
            taken = held == seq ? SLOT_SAME : (held == SEQ_NONE ? SLOT_FREE : SLOT_STALE);
            slot_seq.write(cell, seq);
            bit<16> bits;
            slot_bits.read(bits, cell);
            dup = taken == SLOT_SAME ? bits & sender_bit : 0;
            slot_bits.write(cell, (taken == SLOT_SAME ? bits : 0) | sender_bit);
        }
    }
}

#endif
