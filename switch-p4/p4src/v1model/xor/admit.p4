// A DATA packet's first pass in the datagram program (docs/protocol.md "The switch's rules for
// DATA", rules 1-2, and the header checks a switch makes without state): 0 to go on to the
// tracker, V_MISMATCH for fields that do not fit the task, V_OUTSIDE for a seq outside the
// window. Pure: no register, no table.
#ifndef NETEC_V1MODEL_XOR_ADMIT_P4
#define NETEC_V1MODEL_XOR_ADMIT_P4

#include "../../include/netec_logic.p4"

// besides netec_logic.p4's verdicts: seq < ackSeq or seq >= ackSeq + S
const bit<8> V_OUTSIDE = 7;

// WORDS_OK: the parser took the payload into words; ACK: the task's ackSeq.
control XorAdmit(in netec_h n, in bit<8> words_ok, in task_cfg_t cfg, in bit<32> ack,
                 out bit<8> verdict) {
    apply {
        bool bad = words_ok != 1 || n.version != NETEC_VERSION || n.reserved != 0
            || n.flags != 0 || n.window != 0 || n.seq > cfg.last_seq
            || (n.seq[15:0] & cfg.slot_mask) != n.slot;
        // every packet of a stripe has its length: P, or the last stripe's
        if (n.seq == cfg.last_seq) {
            if (n.payload_len != cfg.last_len) {
                bad = true;
            }
        } else if (n.payload_len != NETEC_XOR_PAYLOAD) {
            bad = true;
        }
        verdict = 0;
        if (bad) {
            verdict = V_MISMATCH;
        } else if (((n.seq - ack) & cfg.far_mask) != 0) {
            // seq - ackSeq below S, which also fails a stale seq (it wraps above 2^31)
            verdict = V_OUTSIDE;
        }
    }
}

#endif
