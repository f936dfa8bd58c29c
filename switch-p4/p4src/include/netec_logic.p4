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

// Tofino compares a field with a constant only (a gateway), so every comparison of two fields
// here is a subtraction in an action and a test of the difference's sign bit, and every
// condition reads at most a few bytes. The sign is the comparison only while both operands are
// below 2^31, so each operand is shown to be first: a peer's seq by its top bit, the reader's
// ackSeq by its top bit (one at 2^31 or above is past every seq), cfg.stripes by the control
// plane (MAX_STRIPES), the sums by their bounds (noted where they are taken).
// The differences are written by actions of tables (one default action each): computed in the
// apply block, the compiler folds them back into the conditions, which Tofino then rejects.

// docs/protocol.md "The switch's rules for DATA", rules 1-2 and the header checks a switch can
// make without state: returns V_MISMATCH, V_STALE, V_TOO_FAR or 0 (go on to the tracker).
// lanes_ok: the parser took the payload into lanes (its length is 1..NETEC_PAYLOAD).
control AdmitData(in netec_h n, in bit<8> lanes_ok, in task_cfg_t cfg, in bit<32> ack_seq,
                  out bit<8> verdict) {
    bit<32> past_end;   // sign set: seq < stripes
    bit<32> behind;     // sign set: seq < ackSeq (stale)
    bit<16> slot_want;
    bit<16> len_want;
    bit<16> slot_diff;
    bit<16> len_diff;
    bit<16> room;       // sign set: seq - ackSeq > S - 1 (S - 1 < 2^15, so the sign holds)
    action differences() {
        past_end = n.seq - cfg.stripes;
        behind = n.seq - ack_seq;
        slot_want = n.seq[15:0] & cfg.slot_mask;
    }
    @hidden table take_differences {
        actions = { differences; }
        const default_action = differences();
    }
    action comparisons() {
        slot_diff = n.slot ^ slot_want;
        len_diff = n.payload_len ^ len_want;
        room = cfg.slot_mask - behind[15:0];
    }
    @hidden table take_comparisons {
        actions = { comparisons; }
        const default_action = comparisons();
    }
    apply {
        take_differences.apply();
        len_want = NETEC_PAYLOAD;
        if (past_end == 0xFFFFFFFF) {  // seq = stripes - 1: the last stripe
            len_want = cfg.last_len;
        }
        take_comparisons.apply();
        verdict = 0;
        if (n.type != NETEC_DATA || lanes_ok != 1) {
            verdict = V_MISMATCH;
        } else if (n.seq[31:31] == 1 || past_end[31:31] == 0) {  // seq >= stripes
            verdict = V_MISMATCH;
        } else if (slot_diff != 0 || len_diff != 0) {
            verdict = V_MISMATCH;
        } else if (ack_seq[31:31] == 1 || behind[31:31] == 1) {
            verdict = V_STALE;
        } else if (behind[31:15] != 0 || room[15:15] == 1) {
            verdict = V_TOO_FAR;
        }
    }
}

// The reader's ACK: its seq at most the task's stripes (its last ACK is seq = stripes), and
// the reader's mark as its sender.
control ReaderAckCheck(in netec_h n, in task_cfg_t cfg, out bit<1> bad) {
    bit<32> left;  // sign set: seq > stripes
    action difference() { left = cfg.stripes - n.seq; }
    @hidden table take_difference {
        actions = { difference; }
        const default_action = difference();
    }
    apply {
        take_difference.apply();
        bad = 0;
        if (n.seq[31:31] == 1 || left[31:31] == 1 || n.sender != NETEC_READER) {
            bad = 1;
        }
    }
}

// A duplicate: the sender's bit among those counted before (bits & one-hot sender bit).
control DuplicateCheck(in bit<16> bits_before, in bit<16> sender_bit, out bit<1> duplicate) {
    bit<16> both;
    action overlap() { both = bits_before & sender_bit; }
    @hidden table take_overlap {
        actions = { overlap; }
        const default_action = overlap();
    }
    apply {
        take_overlap.apply();
        duplicate = 0;
        if (both != 0) {
            duplicate = 1;
        }
    }
}

// What a slot_seq access found (SlotTaken below): the slot held this stripe, held nothing (its
// last stripe completed, or the task is new) or held a stale stripe's partial sums.
const bit<8> SLOT_SAME = 0;
const bit<8> SLOT_STALE = 1;
const bit<8> SLOT_FREE = 2;
const bit<32> SEQ_NONE = 0xFFFFFFFF;  // slot_seq of a free slot

// Unsigned min and max of two fields in one action: Tofino's ALUs have them (TNA's min and max
// externs), so no subtraction and sign bit is needed where the answer is a value, not a
// branch. The v1model twin spells them out.
#ifdef __TARGET_TOFINO__
#define NETEC_MIN(A, B) min(A, B)
#define NETEC_MAX(A, B) max(A, B)
#else
#define NETEC_MIN(A, B) ((A) < (B) ? (A) : (B))
#define NETEC_MAX(A, B) ((A) > (B) ? (A) : (B))
#endif

// EBSN (protocol version 2 on): window = min(window, I - min(C, I)), where C is the slots
// holding partial sums bounded by the span: C = min(partial, max(0, maxStarted + 1 - ackSeq)).
// max_started_plus1 is maxStarted + 1 (0 while nothing started). Every step is a min, a max
// or a subtraction that cannot go below 0, each an action of its own (one ALU step, in
// order); the window is written by a min with the header field itself, so the action reads
// two sources (p4c-barefoot refused a copy from a field it had sliced into three).
control EbsnWindow(in bit<32> ack_seq, in bit<32> max_started_plus1, in bit<16> partial,
                   in bit<16> exposed, inout bit<16> window) {
    bit<32> high;       // max(maxStarted + 1, ackSeq)
    bit<32> span;       // max(0, maxStarted + 1 - ackSeq), then at most 0xFFFF
    bit<16> held;       // C, then min(C, I)
    bit<16> remaining;  // I - min(C, I)
    action highs() { high = NETEC_MAX(max_started_plus1, ack_seq); }
    @hidden table take_high {
        actions = { highs; }
        const default_action = highs();
    }
    action spans() { span = high - ack_seq; }
    @hidden table take_span {
        actions = { spans; }
        const default_action = spans();
    }
    action caps() { span = NETEC_MIN(span, 32w0xFFFF); }
    @hidden table take_cap {
        actions = { caps; }
        const default_action = caps();
    }
    action helds() { held = NETEC_MIN(partial, span[15:0]); }
    @hidden table take_held {
        actions = { helds; }
        const default_action = helds();
    }
    action exposes() { held = NETEC_MIN(held, exposed); }
    @hidden table take_exposed {
        actions = { exposes; }
        const default_action = exposes();
    }
    action remains() { remaining = exposed - held; }
    @hidden table take_remaining {
        actions = { remains; }
        const default_action = remains();
    }
    action lowers() { window = NETEC_MIN(window, remaining); }
    @hidden table take_window {
        actions = { lowers; }
        const default_action = lowers();
    }
    apply {
        take_high.apply();
        take_span.apply();
        take_cap.apply();
        take_held.apply();
        take_exposed.apply();
        take_remaining.apply();
        take_window.apply();
    }
}

#endif
