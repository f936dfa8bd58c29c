// The NetEC data plane's architecture-independent logic (P4-16 core only, no externs): what
// the TNA program and its v1model twin compute alike. Registers, recirculation and checksum
// units differ between the architectures and stay in their programs.
#ifndef NETEC_LOGIC_P4
#define NETEC_LOGIC_P4

#include "headers.p4"
#include "../generated/narrow.p4"

// Verdicts of a DATA packet (first pass); the programs count each in their verdicts counter,
// and a reader's HELLO refused in cell V_NO_SECRET.
const bit<8> V_NO_SECRET = 0; // a reader's HELLO without its task's secret: dropped, binds nothing
const bit<8> V_MISMATCH = 1;  // fields that do not fit the task: dropped
const bit<8> V_STALE = 2;     // seq < ackSeq: the reader has it
const bit<8> V_TOO_FAR = 3;   // seq >= ackSeq + S: could only collide
const bit<8> V_DUPLICATE = 4; // tracker bit already set
const bit<8> V_AGGREGATE = 5; // counted; more packets of the stripe to come
const bit<8> V_COMPLETE = 6;  // counted; the stripe is complete: this packet becomes RESULT

// The TCP programs' reader_flags entries: what a reader segment may do, from (syn, hello,
// has_payload, secret_ok), one table before its task's proof is read:
//   reader_flags_set(syn_bare, may_bind, hello_no_secret, payload_no_secret)
//   syn_bare = syn and no payload; may_bind = secret_ok or syn_bare (while unproven, it binds
//   the VIP to its source); hello_no_secret, payload_no_secret: refused without the secret.
#define READER_FLAGS_ENTRIES \
    (0, 0, 0, 0) : reader_flags_set(0, 0, 0, 0); \
    (0, 0, 0, 1) : reader_flags_set(0, 1, 0, 0); \
    (0, 0, 1, 0) : reader_flags_set(0, 0, 0, 1); \
    (0, 0, 1, 1) : reader_flags_set(0, 1, 0, 0); \
    (0, 1, 0, 0) : reader_flags_set(0, 0, 1, 0); \
    (0, 1, 0, 1) : reader_flags_set(0, 1, 0, 0); \
    (0, 1, 1, 0) : reader_flags_set(0, 0, 1, 1); \
    (0, 1, 1, 1) : reader_flags_set(0, 1, 0, 0); \
    (1, 0, 0, 0) : reader_flags_set(1, 1, 0, 0); \
    (1, 0, 0, 1) : reader_flags_set(1, 1, 0, 0); \
    (1, 0, 1, 0) : reader_flags_set(0, 0, 0, 1); \
    (1, 0, 1, 1) : reader_flags_set(0, 1, 0, 0); \
    (1, 1, 0, 0) : reader_flags_set(1, 1, 1, 0); \
    (1, 1, 0, 1) : reader_flags_set(1, 1, 0, 0); \
    (1, 1, 1, 0) : reader_flags_set(0, 0, 1, 1); \
    (1, 1, 1, 1) : reader_flags_set(0, 1, 0, 0);

// What becomes of a reader's segment (not an ACK) once its task's proof is read, keyed on
// (proven, syn, hello_no_secret, payload_no_secret); the first entry that matches decides
// (0 matches 0 only, _ anything). Unproven, a HELLO without the secret and data are refused
// and the rest passes (the handshake, empty segments, the proving HELLO); proven, a SYN is
// dropped (the VIP is its proven reader's), a HELLO without the secret refused, the rest
// passes (the default, to_survivors).
#define READER_VERDICT_ENTRIES \
    (0, _, 1, _) : drop_counted(V_NO_SECRET); \
    (0, _, _, 1) : drop_counted(V_NO_SECRET); \
    (0, _, _, _) : to_survivors(); \
    (_, 1, _, _) : drop_uncounted(); \
    (_, _, 1, _) : drop_counted(V_NO_SECRET);

// The reader's ACK, keyed on (proven, ack_bad, judged: whether the parser checked its words,
// 0 or not): an ACK before the proof reaches no survivor; one that fails ReaderAckCheck, or
// that the parser did not judge, is a mismatch; the rest pass (the default, ack_to_survivors).
#define READER_ACK_VERDICT_ENTRIES \
    (0, _, _) : drop_counted(V_NO_SECRET); \
    (_, 1, _) : drop_counted(V_MISMATCH); \
    (_, _, 0) : drop_counted(V_MISMATCH);

// The TCP program's tcp_payload entries: a segment of data offset o (5..15, in words) carries
// a payload when the IP length passes 20 + 4o bytes, and has room for a NetEC header and a
// HELLO's first 59 bytes (the secret) when it reaches 20 + 4o + 20 + 59: a HELLO whose header
// claims more than its segment holds is not read for a secret.
#define TCP_PAYLOAD_ENTRIES \
    (5, 41 .. 118): payload_yes(); \
    (5, 119 .. 0xFFFF): hello_room(); \
    (6, 45 .. 122): payload_yes(); \
    (6, 123 .. 0xFFFF): hello_room(); \
    (7, 49 .. 126): payload_yes(); \
    (7, 127 .. 0xFFFF): hello_room(); \
    (8, 53 .. 130): payload_yes(); \
    (8, 131 .. 0xFFFF): hello_room(); \
    (9, 57 .. 134): payload_yes(); \
    (9, 135 .. 0xFFFF): hello_room(); \
    (10, 61 .. 138): payload_yes(); \
    (10, 139 .. 0xFFFF): hello_room(); \
    (11, 65 .. 142): payload_yes(); \
    (11, 143 .. 0xFFFF): hello_room(); \
    (12, 69 .. 146): payload_yes(); \
    (12, 147 .. 0xFFFF): hello_room(); \
    (13, 73 .. 150): payload_yes(); \
    (13, 151 .. 0xFFFF): hello_room(); \
    (14, 77 .. 154): payload_yes(); \
    (14, 155 .. 0xFFFF): hello_room(); \
    (15, 81 .. 158): payload_yes(); \
    (15, 159 .. 0xFFFF): hello_room();

// The task's configuration (table task_cfg, installed by the control plane at setup).
struct task_cfg_t {
    bit<16> k_mask;     // (1 << k) - 1
    bit<8>  k_minus1;   // k - 1: the count at which a stripe completes
    bit<16> slot_mask;  // S - 1: slot = seq & (S - 1)
    bit<32> far_mask;   // ~(S - 1): seq - ackSeq has none of these bits while within S
    bit<32> stripes;    // ceil(L / P)
    bit<32> last_seq;   // stripes - 1
    bit<16> last_len;   // payload bytes of the last stripe
    bit<32> exposed;    // I = S / 2
}

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

// Tofino compares a field with a constant only (a gateway), so every comparison of two fields
// here is computed in actions, as whole fields (no slice of a field in an action: p4c-barefoot
// then slices every field the value meets, and ran out of PHV containers): x <= y as
// max(x, y) ^ y == 0, x == y as x ^ y == 0, a difference below S as no bit of ~(S - 1) set.
// These hold for every 32-bit value (no sign bits, no bounds to show first). The actions
// belong to tables of one default action each: computed in the apply block, the compiler
// folds them back into the conditions, which Tofino then rejects.

// docs/protocol.md "The switch's rules for DATA", rules 1-2 and the header checks a switch can
// make without state: returns V_MISMATCH, V_STALE, V_TOO_FAR or 0 (go on to the tracker).
// lanes_ok: the parser took the payload into words (whole words, at most NETEC_PAYLOAD);
// seq_low: the low 16 bits of seq, which the program takes out of the header without an ALU
// slice (Tofino: an identity hash).
control AdmitData(in netec_h n, in bit<8> lanes_ok, in task_cfg_t cfg, in bit<32> ack_seq,
                  in bit<16> seq_low, out bit<8> verdict) {
    bit<32> past;       // max(seq, stripes - 1), then ^ (stripes - 1): 0 iff seq < stripes
    bit<32> high;       // max(seq, ackSeq), then ^ seq: 0 iff seq >= ackSeq (not stale)
    bit<32> behind;     // seq - ackSeq, then & ~(S - 1): 0 iff within the slot array
    bit<32> last_diff;  // seq ^ (stripes - 1): 0 on the last stripe
    bit<16> len_want;
    bit<16> slot_diff;  // seq mod S, then ^ slot: 0 iff the slot is seq's
    bit<16> len_diff;
    // step 1: seq's maxima with the bounds, its distance from ackSeq, seq mod S
    action seq_extremes() {
        past = NETEC_MAX(n.seq, cfg.last_seq);
        high = NETEC_MAX(n.seq, ack_seq);
        behind = n.seq - ack_seq;
        last_diff = n.seq ^ cfg.last_seq;
        slot_diff = seq_low & cfg.slot_mask;
    }
    @hidden table take_seq_extremes {
        actions = { seq_extremes; }
        const default_action = seq_extremes();
    }
    // step 2: each of them to a value that is 0 iff its test passes
    action seq_tests() {
        past = past ^ cfg.last_seq;
        high = high ^ n.seq;
        behind = behind & cfg.far_mask;
        slot_diff = slot_diff ^ n.slot;
    }
    @hidden table take_seq_tests {
        actions = { seq_tests; }
        const default_action = seq_tests();
    }
    action length_test() { len_diff = n.payload_len ^ len_want; }
    @hidden table take_length_test {
        actions = { length_test; }
        const default_action = length_test();
    }
    apply {
        take_seq_extremes.apply();
        take_seq_tests.apply();
        len_want = NETEC_PAYLOAD;
        if (last_diff == 0) {  // the last stripe
            len_want = cfg.last_len;
        }
        take_length_test.apply();
        verdict = 0;
        if (n.type != NETEC_DATA || lanes_ok != 1) {
            verdict = V_MISMATCH;
        } else if (past != 0) {  // seq >= stripes
            verdict = V_MISMATCH;
        } else if (slot_diff != 0 || len_diff != 0) {
            verdict = V_MISMATCH;
        } else if (high != 0) {  // seq < ackSeq
            verdict = V_STALE;
        } else if (behind != 0) {  // seq - ackSeq > S - 1
            verdict = V_TOO_FAR;
        }
    }
}

// The reader's ACK: its seq at most the task's stripes (its last ACK is seq = stripes), and
// the reader's mark as its sender.
control ReaderAckCheck(in netec_h n, in task_cfg_t cfg, out bit<1> bad) {
    bit<32> over;  // max(seq, stripes), then ^ stripes: 0 iff seq <= stripes
    action ack_seq_max() { over = NETEC_MAX(n.seq, cfg.stripes); }
    @hidden table take_ack_seq_max {
        actions = { ack_seq_max; }
        const default_action = ack_seq_max();
    }
    action ack_past_end() { over = over ^ cfg.stripes; }
    @hidden table take_ack_past_end {
        actions = { ack_past_end; }
        const default_action = ack_past_end();
    }
    apply {
        take_ack_seq_max.apply();
        take_ack_past_end.apply();
        bad = 0;
        if (over != 0 || n.sender != NETEC_READER) {
            bad = 1;
        }
    }
}

// A Tofino register cell of two 32-bit halves: ack_seq's (ackSeq, and its bound: the task's
// stripes, written at setup) and slot_count's (the stripe's seq, and its packets counted).
struct ack_pair_t {
    bit<32> lo;
    bit<32> hi;
}

// What a slot_seq access found (SlotTaken below): the slot held this stripe, held nothing (its
// last stripe completed, or the task is new) or held a stale stripe's partial sums.
const bit<8> SLOT_SAME = 0;
const bit<8> SLOT_STALE = 1;
const bit<8> SLOT_FREE = 2;
// slot_seq of a free slot: above every stripe (the control plane keeps stripes below 2^31 - 1)
// and a constant a Tofino stateful ALU can compare with (bfas refused 2^32 - 1)
const bit<32> SEQ_NONE = 0x7FFFFFFF;

// EBSN (protocol version 2 on): window = min(window, I - min(C, I)), where C is the slots
// holding partial sums bounded by the span: C = min(partial, max(0, maxStarted + 1 - ackSeq)).
// max_started_plus1 is maxStarted + 1 (0 while nothing started). Every step is one ALU
// instruction on whole 32-bit fields, each an action of its own: the span is a saturating
// subtraction (|-|: max(0, a - b)), and so is the room left (I |-| C = I - min(C, I)); the
// result (at most I) comes back to 16 bits through a table keyed on it (a slice in an action
// would slice every field it meets), and the window is written by a min with the header field
// itself, so that action reads two sources.
control EbsnWindow(in bit<32> ack_seq, in bit<32> max_started_plus1, in bit<32> partial,
                   in bit<32> exposed, inout bit<16> window) {
    // one working field through every step (p4c-barefoot keeps the fields that ALU steps join
    // in one group of 16 PHV containers: each field fewer is room)
    bit<32> x;          // the span; min with partial: C; I |-| C: the room left, at most I
    bit<16> narrow;     // the same, 16 bits
    action started_span() { x = max_started_plus1 |-| ack_seq; }
    @hidden table take_span {
        actions = { started_span; }
        const default_action = started_span();
    }
    action held_in_span() { x = NETEC_MIN(partial, x); }
    @hidden table take_held {
        actions = { held_in_span; }
        const default_action = held_in_span();
    }
    action room_left() { x = exposed |-| x; }
    @hidden table take_room {
        actions = { room_left; }
        const default_action = room_left();
    }
    action room_is(bit<16> v) { narrow = v; }
    table room_16_bits {
        key = { x : exact; }
        actions = { room_is; }
        const default_action = room_is(0);
#ifdef __TARGET_TOFINO__
        size = NETEC_SLOTS / 2 + 1;
#endif
        const entries = {
            NETEC_NARROW_ENTRIES
        }
    }
    action window_at_most_room() { window = NETEC_MIN(window, narrow); }
    @hidden table take_window {
        actions = { window_at_most_room; }
        const default_action = window_at_most_room();
    }
    apply {
        take_span.apply();
        take_held.apply();
        take_room.apply();
        room_16_bits.apply();
        take_window.apply();
    }
}

#endif

