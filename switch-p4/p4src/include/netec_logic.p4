// The NetEC data plane's architecture-independent logic (P4-16 core only, no externs): what
// the TNA program and its v1model twin compute alike. Registers, recirculation and checksum
// units differ between the architectures and stay in their programs.
#ifndef NETEC_LOGIC_P4
#define NETEC_LOGIC_P4

#include "headers.p4"

// Verdicts of a DATA packet (first pass); the programs count each in their verdicts counter.
const bit<8> V_MISMATCH = 1;  // fields that do not fit the task: dropped
const bit<8> V_STALE = 2;     // seq < ackSeq: the reader has it
const bit<8> V_TOO_FAR = 3;   // seq >= ackSeq + S: could only collide
const bit<8> V_DUPLICATE = 4; // tracker bit already set
const bit<8> V_AGGREGATE = 5; // counted; more packets of the stripe to come
const bit<8> V_COMPLETE = 6;  // counted; the stripe is complete: this packet becomes RESULT

// The task's configuration (table task_cfg, installed by the control plane at setup).
struct task_cfg_t {
    bit<16> k_mask;     // (1 << k) - 1
    bit<8>  k_minus1;   // k - 1: the count at which a stripe completes
    bit<16> slot_mask;  // S - 1
    bit<32> stripes;    // ceil(L / P)
    bit<16> last_len;   // payload bytes of the last stripe
    bit<16> exposed;    // I = S / 2
}

// docs/protocol.md "The switch's rules for DATA", rules 1-2 and the header checks a switch can
// make without state: returns V_MISMATCH, V_STALE, V_TOO_FAR or 0 (go on to the tracker).
// lanes_ok: the parser took the payload into lanes (its length is 1..NETEC_PAYLOAD).
control AdmitData(in netec_h n, in bit<8> lanes_ok, in task_cfg_t cfg, in bit<32> ack_seq,
                  out bit<8> verdict) {
    apply {
        bit<16> want_len = (n.seq == cfg.stripes - 1) ? cfg.last_len : (bit<16>)NETEC_PAYLOAD;
        verdict = 0;
        if (n.type != NETEC_DATA || n.seq >= cfg.stripes
                || n.slot != ((bit<16>)n.seq & cfg.slot_mask)
                || n.payload_len != want_len || lanes_ok != 1) {
            verdict = V_MISMATCH;
        } else if (n.seq < ack_seq) {
            verdict = V_STALE;
        } else if (n.seq - ack_seq > (bit<32>)cfg.slot_mask) {
            verdict = V_TOO_FAR;
        }
    }
}

// EBSN: R = I - C if C < I else 0, C = max(0, maxStarted + 1 - ackSeq); window = min(window, R).
// max_started_plus1 is maxStarted + 1 (0 while nothing started), so no signed arithmetic.
control EbsnWindow(in bit<32> ack_seq, in bit<32> max_started_plus1, in bit<16> exposed,
                   inout bit<16> window) {
    apply {
        bit<32> span = 0;
        if (max_started_plus1 > ack_seq) {
            span = max_started_plus1 - ack_seq;
        }
        bit<16> remaining = 0;
        if (span < (bit<32>)exposed) {
            remaining = exposed - (bit<16>)span;
        }
        if (remaining < window) {
            window = remaining;
        }
    }
}

#endif
