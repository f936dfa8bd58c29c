// The packets of a slot's stripe whose last pass has summed. A packet counts only once all its
// words are in the sums, so one lost between passes leaves its stripe short of k: stalled,
// never answered wrongly. Counted beside the stripe's seq, so a count another stripe left
// restarts; the k-th packet completes the stripe and marks the count free for the next one.
#ifndef NETEC_V1MODEL_STRIPE_COUNT_P4
#define NETEC_V1MODEL_STRIPE_COUNT_P4

#include "../../include/netec_logic.p4"

// CELL: slot array ++ slot; K_MINUS1: the task's k - 1 (the pass header's).
control StripeCount(in bit<32> cell, in bit<32> seq, in bit<8> k_minus1, out bit<1> complete) {
    register<bit<64>>(NETEC_SLOT_CELLS) slot_count;  // the count (high 32 bits), the seq (low)
    apply {
        complete = 0;
        bit<64> held;
        slot_count.read(held, cell);
        bit<32> held_seq = held[31:0];
        bit<32> n = held[63:32];
        if (held_seq == seq) {
            if (n == (bit<32>)k_minus1) {
                held_seq = SEQ_NONE;  // the next packet restarts the count
                complete = 1;
            }
            n = n + 1;
        } else {
            held_seq = seq;
            n = 1;
        }
        slot_count.write(cell, n ++ held_seq);
    }
}

#endif
