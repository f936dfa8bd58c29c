// NetEC data plane, datagram mode with pre-multiplied survivors: the v1model twin of
// p4src/tna/netec_xor.p4 for BMv2 simple_switch. Shaped like it on purpose: the same tables,
// registers and decisions, every register accessed once per pass (read-modify-write in one
// place, as a stateful ALU), the same three passes of a DATA packet and the same swapping of
// the payload's halves (generated/halves.p4), the sum passes tested first and indexed by the
// header alone, EBSN's counters in egress (one access each: raised or added by a first pass,
// read by each copy of the reader's ACK). What v1model does differently: it has one
// deparser, after egress, so a DATA packet recirculates from egress (through one port's queue,
// as through Tofino's recirculation port: second passes keep the order of first passes), and
// checksums are verified and computed in their own controls.
//
// Build: p4c-bm2-ss --arch v1model -o netec_xor.json netec_xor.p4

#include <core.p4>
#include <v1model.p4>

#include "../include/headers.p4"
#include "../include/netec_logic.p4"
#include "../generated/halves.p4"

#if NETEC_XOR_HALF_WORDS != 32
#error "halves.p4 is generated for 32 words per half"
#endif

// RFC 1624 eqn. 3: the ones'-complement checksum after one 16-bit word changed from old to
// new (egress rewrites a copy's sender and window; the TNA program sums the header again from
// the residual its parser took).
control XorCsumReplace16(inout bit<16> csum, in bit<16> old_word, in bit<16> new_word) {
    apply {
        bit<32> s = (bit<32>)(~csum) + (bit<32>)(~old_word) + (bit<32>)new_word;
        s = (s & 0xffff) + (s >> 16);
        s = (s & 0xffff) + (s >> 16);
        csum = ~(s[15:0]);
    }
}

const bit<16> ETHERTYPE_SUM_FIRST = 0x88B5;   // pass 2: sum the first half
const bit<16> ETHERTYPE_SUM_SECOND = 0x88B6;  // pass 3: sum the second half
const bit<9> RECIRC_PORT = 68;
const bit<32> INSTANCE_TYPE_RECIRC = 4;  // BMv2 simple_switch: standard_metadata.instance_type
const bit<16> HALF_BYTES = 128;

const bit<8> V_OUTSIDE = 7;  // seq < ackSeq or seq >= ackSeq + S

header netec_xpass_h {
    bit<8> k_minus1;  // the task's k - 1: the last pass counts the stripe's packets to k
    bit<8> reset;
}

struct headers_t {
    ethernet_h ethernet;
    netec_xpass_h pass;
    ipv4_h ipv4;
    udp_h udp;
    netec_h netec;
    reader_hello_h hello;  // a HELLO's first bytes: the reader's secret (headers.p4)
    half_t c;
    half_t q;
    half_t d;  // the first pass's second half (a parse graph without a c -> q -> c loop)
}

struct metadata_t {
    bit<8>  words_ok;
    bit<16> csum_zero;      // 0: what a valid NetEC packet's whole sum complements to
    bit<1>  survivor;       // survivor_in and vip_in apply side by side, into fields of their own
    bit<8>  task;
    bit<8>  slot_array;
    task_cfg_t cfg;
    bit<1>  reader;
    bit<1>  secret_ok;      // reader_secret: the HELLO carries its task's secret
    bit<8>  reader_task;
    bit<32> reader_stripes;
    bit<16> sender_bit;
    bit<8>  recirculate;    // egress: back for the next pass
    bit<8>  result;         // deparse: the RESULT's checksum over header and words
    bit<8>  ebsn;           // egress: a copy of the reader's ACK (EBSN window)
    bit<8>  counters;       // egress: EBSN's counters (a first pass, or a reader's ACK)
    bit<32> started_op;     // ... maxStarted + 1 raised to this (0: read)
    bit<32> starts_inc;     // ... stripes started in a free slot: + this
    bit<32> completes_inc;  // ... stripes completed: + this
    bit<32> ack;
    bit<32> exposed;
}

parser XorParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t std) {
    state start {
        meta.words_ok = 0;
        meta.csum_zero = 0;
        pkt.extract(hdr.ethernet);
        // a pass header only on a recirculated packet (from a front port it would let a peer
        // skip the first pass's admission: such a frame has no IPv4, dropped)
        transition select(std.instance_type, hdr.ethernet.ether_type) {
            (INSTANCE_TYPE_RECIRC, ETHERTYPE_SUM_FIRST): parse_pass;
            (INSTANCE_TYPE_RECIRC, ETHERTYPE_SUM_SECOND): parse_pass;
            (_, ETHERTYPE_IPV4): parse_ipv4;
            default: accept;
        }
    }
    state parse_pass {
        pkt.extract(hdr.pass);
        transition parse_ipv4;
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        transition select(hdr.ipv4.ihl, hdr.ipv4.protocol) {
            (5, IP_PROTO_UDP): parse_udp;
            default: accept;
        }
    }
    state parse_udp {
        pkt.extract(hdr.udp);
        transition select(hdr.udp.length) {
            28 .. 0xFFFF: parse_netec;
            default: accept;
        }
    }
    state parse_netec {
        pkt.extract(hdr.netec);
        transition select(hdr.ethernet.ether_type, hdr.netec.type) {
            (ETHERTYPE_IPV4, NETEC_DATA): parse_first;
            (ETHERTYPE_IPV4, NETEC_HELLO): parse_hello;
            (ETHERTYPE_SUM_FIRST, NETEC_DATA): parse_sum_first;
            (ETHERTYPE_SUM_SECOND, NETEC_DATA): parse_sum_second;
            default: accept;
        }
    }
    state parse_hello {  // long enough to hold a secret: its first bytes, re-emitted as read
        transition select(hdr.netec.payload_len) {
            NETEC_HELLO_SECRET_END .. 0xFFFF: take_hello;
            default: accept;
        }
    }
    state take_hello {
        pkt.extract(hdr.hello);
        transition accept;
    }
    state parse_first {
        transition select(hdr.netec.payload_len) {
            NETEC_FIRST_CASES(c, words_done)
            default: accept;
        }
    }
    state parse_sum_first {
        transition select(hdr.netec.payload_len) {
            NETEC_FIRST_CASES(q, words_done)
            default: accept;
        }
    }
    state parse_sum_second {
        transition select(hdr.netec.payload_len) {
            NETEC_SECOND_CASES(q)
            default: accept;
        }
    }
#define WORD_STATE(X, J, NEXT)                                                                \
    state X##_##J {                                                                           \
        pkt.extract(hdr.X.w##J);                                                              \
        transition X##_##NEXT;                                                                \
    }
#define LAST_STATE(X, J)                                                                      \
    state X##_##J {                                                                           \
        pkt.extract(hdr.X.w##J);                                                              \
        transition X##_end;                                                                   \
    }
#define C_WORD(J, NEXT) WORD_STATE(c, J, NEXT)
#define C_LAST(J) LAST_STATE(c, J)
#define Q_WORD(J, NEXT) WORD_STATE(q, J, NEXT)
#define Q_LAST(J) LAST_STATE(q, J)
    NETEC_HALF_STATES(C_WORD, C_LAST)
    NETEC_HALF_STATES(Q_WORD, Q_LAST)
#define D_WORD(J, NEXT) WORD_STATE(d, J, NEXT)
#define D_LAST(J) LAST_STATE(d, J)
    NETEC_HALF_STATES(D_WORD, D_LAST)
    state d_end {
        transition words_done;
    }
    state c_end {
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_IPV4: first_rest;
            default: words_done;
        }
    }
    state first_rest {
        transition select(hdr.netec.payload_len) {
            NETEC_REST_CASES(d, words_done)
            default: accept;
        }
    }
    state q_end {
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_SUM_FIRST: sum_rest;
            ETHERTYPE_SUM_SECOND: c_0;
            default: words_done;
        }
    }
    state sum_rest {
        transition select(hdr.netec.payload_len) {
            NETEC_REST_CASES(c, words_done)
            default: accept;
        }
    }
    state words_done {
        meta.words_ok = 1;
        transition accept;
    }
}

// A first pass's DATA words or an ACK (header only) must sum to ones'-complement zero with
// their checksum (both encodings of a computed 0 pass); BMv2 sets checksum_error, ingress
// drops the packet. A HELLO's JSON is not judged (only its secret is read), as on Tofino;
// later passes are not judged.
control XorVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply {
        verify_checksum(hdr.netec.isValid() && hdr.ethernet.ether_type == ETHERTYPE_IPV4
                            && (meta.words_ok == 1
                                || (hdr.netec.type == NETEC_ACK && hdr.netec.payload_len == 0)),
            { hdr.netec.version, hdr.netec.type, hdr.netec.task, hdr.netec.slot_array,
              hdr.netec.sender, hdr.netec.flags, hdr.netec.slot, hdr.netec.seq,
              hdr.netec.window, hdr.netec.payload_len, hdr.netec.checksum,
              hdr.netec.reserved, NETEC_HALF_WORDS(hdr.c), NETEC_HALF_WORDS(hdr.q),
                NETEC_HALF_WORDS(hdr.d) },
            meta.csum_zero, HashAlgorithm.csum16);
    }
}

control XorIngress(inout headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t std) {
    register<bit<32>>(NETEC_TASKS) ack_seq;
    register<bit<32>>(NETEC_SLOT_CELLS) slot_seq;
    register<bit<16>>(NETEC_SLOT_CELLS) slot_bits;
    // packets whose last pass has summed, per slot: the stripe's seq (hi 32 bits) beside the
    // count (lo), so a count left by another stripe restarts
    register<bit<64>>(NETEC_SLOT_CELLS) slot_count;
    register<bit<32>>(NETEC_TASKS) reader_addr;
    register<bit<16>>(NETEC_TASKS) reader_port;
#define SUM_REGISTER(J) register<bit<32>>(NETEC_XOR_SUM_CELLS) sum##J;
    SUM_REGISTER(0)  SUM_REGISTER(1)  SUM_REGISTER(2)  SUM_REGISTER(3)
    SUM_REGISTER(4)  SUM_REGISTER(5)  SUM_REGISTER(6)  SUM_REGISTER(7)
    SUM_REGISTER(8)  SUM_REGISTER(9)  SUM_REGISTER(10) SUM_REGISTER(11)
    SUM_REGISTER(12) SUM_REGISTER(13) SUM_REGISTER(14) SUM_REGISTER(15)
    SUM_REGISTER(16) SUM_REGISTER(17) SUM_REGISTER(18) SUM_REGISTER(19)
    SUM_REGISTER(20) SUM_REGISTER(21) SUM_REGISTER(22) SUM_REGISTER(23)
    SUM_REGISTER(24) SUM_REGISTER(25) SUM_REGISTER(26) SUM_REGISTER(27)
    SUM_REGISTER(28) SUM_REGISTER(29) SUM_REGISTER(30) SUM_REGISTER(31)
    counter(8, CounterType.packets) verdicts;  // DATA packets by verdict

    action from_survivor(bit<8> task, bit<8> slot_array, bit<16> sender_bit,
                         bit<8> k_minus1, bit<16> slot_mask, bit<32> far_mask,
                         bit<32> last_seq, bit<16> last_len) {
        meta.survivor = 1;
        meta.task = task;
        meta.slot_array = slot_array;
        meta.sender_bit = sender_bit;
        meta.cfg.k_minus1 = k_minus1;
        meta.cfg.slot_mask = slot_mask;
        meta.cfg.far_mask = far_mask;
        meta.cfg.last_seq = last_seq;
        meta.cfg.last_len = last_len;
    }
    table survivor_in {
        key = {
            hdr.ipv4.src_addr : exact; hdr.udp.src_port : exact;
            hdr.ipv4.dst_addr : exact; hdr.udp.dst_port : exact;
            hdr.netec.task : exact; hdr.netec.slot_array : exact; hdr.netec.sender : exact;
        }
        actions = { from_survivor; NoAction; }
        const default_action = NoAction();
        size = NETEC_SENDER_CELLS;
    }
    action from_reader(bit<8> task, bit<32> stripes, bit<32> exposed) {
        meta.reader = 1;
        meta.reader_task = task;
        meta.reader_stripes = stripes;
        meta.exposed = exposed;
    }
    // the VIP and the task the reader's packet names (a packet naming another task is not
    // this reader's)
    table vip_in {
        key = { hdr.ipv4.dst_addr : exact; hdr.udp.dst_port : exact; hdr.netec.task : exact; }
        actions = { from_reader; NoAction; }
        const default_action = NoAction();
        size = NETEC_TASKS;
    }
    // the task's secret, which the control plane issued at setup (docs/protocol.md "setup
    // answer"): a reader's HELLO binds the VIP and reaches the survivors only with it
    action secret_ok() {
        meta.secret_ok = 1;
    }
    table reader_secret {
        key = {
            hdr.netec.task : exact;
            hdr.hello.s0 : exact; hdr.hello.s1 : exact; hdr.hello.s2 : exact;
            hdr.hello.s3 : exact; hdr.hello.s4 : exact; hdr.hello.s5 : exact;
            hdr.hello.s6 : exact; hdr.hello.s7 : exact;
        }
        actions = { secret_ok; NoAction; }
        const default_action = NoAction();
        size = NETEC_TASKS;
    }
    action route(bit<9> port, bit<48> dmac) {
        std.egress_spec = port;
        hdr.ethernet.dst_addr = dmac;
    }
    action unroutable() {
        mark_to_drop(std);
    }
    table l3_forward {
        key = { hdr.ipv4.dst_addr : lpm; }
        actions = { route; unroutable; }
        const default_action = unroutable();
        size = 1024;
    }
    // the same routes for packets rewritten to the reader: tables of their own, as in the TNA
    // program (one call site each there)
    table l3_to_reader {
        key = { hdr.ipv4.dst_addr : lpm; }
        actions = { route; unroutable; }
        const default_action = unroutable();
        size = 1024;
    }
    table l3_agent_to_reader {
        key = { hdr.ipv4.dst_addr : lpm; }
        actions = { route; unroutable; }
        const default_action = unroutable();
        size = 1024;
    }
    action drop_counted(bit<8> why) {
        verdicts.count((bit<32>)why);
        mark_to_drop(std);
    }

    apply {
        meta.survivor = 0;
        meta.reader = 0;
        meta.secret_ok = 0;
        meta.recirculate = 0;
        meta.result = 0;
        meta.ebsn = 0;
        meta.counters = 0;
        meta.started_op = 0;
        meta.starts_inc = 0;
        meta.completes_inc = 0;
        if (hdr.pass.isValid()) {
            // ---- passes 2 and 3: sum half q into its half's cells; the header's task, slot
            // array and slot are those pass 1 admitted (survivor_in's key) ----------------------
            bit<1> final = 0;
            bit<1> half = 0;
            if (hdr.ethernet.ether_type == ETHERTYPE_SUM_SECOND) {
                final = 1;
                half = 1;
            } else if (hdr.netec.payload_len <= HALF_BYTES) {
                final = 1;  // one half: no third pass
            }
            bit<32> scell = (bit<32>)(hdr.netec.slot_array
                                      ++ hdr.netec.slot[NETEC_SLOTS_LOG2 - 1:0]);
            bit<32> idx = (bit<32>)(hdr.netec.slot_array
                                    ++ hdr.netec.slot[NETEC_SLOTS_LOG2 - 1:0] ++ half);
            bit<32> v;
#define SUM_APPLY(J)                                                                          \
            sum##J.read(v, idx);                                                              \
            if (hdr.pass.reset == 1) { v = hdr.q.w##J.v; } else { v = v ^ hdr.q.w##J.v; }     \
            sum##J.write(idx, v);                                                             \
            hdr.q.w##J.v = v;
            SUM_APPLY(0)  SUM_APPLY(1)  SUM_APPLY(2)  SUM_APPLY(3)
            SUM_APPLY(4)  SUM_APPLY(5)  SUM_APPLY(6)  SUM_APPLY(7)
            SUM_APPLY(8)  SUM_APPLY(9)  SUM_APPLY(10) SUM_APPLY(11)
            SUM_APPLY(12) SUM_APPLY(13) SUM_APPLY(14) SUM_APPLY(15)
            SUM_APPLY(16) SUM_APPLY(17) SUM_APPLY(18) SUM_APPLY(19)
            SUM_APPLY(20) SUM_APPLY(21) SUM_APPLY(22) SUM_APPLY(23)
            SUM_APPLY(24) SUM_APPLY(25) SUM_APPLY(26) SUM_APPLY(27)
            SUM_APPLY(28) SUM_APPLY(29) SUM_APPLY(30) SUM_APPLY(31)
            // the last pass counts the packet: only now are all its words in the sums, so a
            // packet lost between passes leaves its stripe short of k (stalled, never answered
            // wrongly). Counted with the stripe's seq: a count another stripe left restarts.
            bit<1> done = 0;
            if (final == 1) {
                bit<64> held;
                slot_count.read(held, scell);
                bit<32> held_seq = held[63:32];
                bit<32> n = held[31:0];
                if (held_seq == hdr.netec.seq) {
                    if (n == (bit<32>)hdr.pass.k_minus1) {
                        held_seq = SEQ_NONE;  // the next packet restarts the count
                        done = 1;
                    }
                    n = n + 1;
                } else {
                    held_seq = hdr.netec.seq;
                    n = 1;
                }
                slot_count.write(scell, held_seq ++ n);
            }
            if (final == 0) {
                hdr.ethernet.ether_type = ETHERTYPE_SUM_SECOND;
                std.egress_spec = RECIRC_PORT;
                meta.recirculate = 1;
            } else if (done == 0 && hdr.pass.k_minus1 != 0) {  // k = 1: every packet completes
                verdicts.count((bit<32>)V_AGGREGATE);
                mark_to_drop(std);  // its stripe is not complete yet
            } else {
                verdicts.count((bit<32>)V_COMPLETE);
                // through egress: the completes counter (EBSN)
                meta.counters = 1;
                meta.completes_inc = 1;
                // the stripe's RESULT (its slot is freed below)
                bit<32> rt = (bit<32>)hdr.netec.task;
                bit<32> raddr;
                bit<16> rport;
                reader_addr.read(raddr, rt);
                reader_port.read(rport, rt);
                meta.result = 1;
                hdr.pass.setInvalid();
                hdr.ethernet.ether_type = ETHERTYPE_IPV4;
                hdr.netec.type = NETEC_RESULT;
                hdr.netec.sender = 0;
                hdr.ipv4.src_addr = hdr.ipv4.dst_addr;  // the VIP
                hdr.udp.src_port = hdr.udp.dst_port;
                hdr.ipv4.dst_addr = raddr;
                hdr.udp.dst_port = rport;
                hdr.udp.checksum = 0;
                l3_to_reader.apply();
            }
            // the RESULT's slot is free again (a packet of the stripe after it, a
            // retransmission after a lost RESULT, is aggregated again from scratch); after
            // the branches, as on Tofino, where slot_seq's stage would end the branch early
            if (meta.result == 1) {
                slot_seq.write(scell, SEQ_NONE);
            }
            return;
        }
        if (hdr.netec.isValid()) {
            survivor_in.apply();
            vip_in.apply();
        }
        if (hdr.hello.isValid()) {
            reader_secret.apply();
        }
        bool corrupt = std.checksum_error == 1;
        bit<32> t = (bit<32>)meta.task;
        // ackSeq, before the branches (as on Tofino: one action for both uses): an ACK's seq
        // raises it (only grows, never past the task's stripes), a first pass reads it
        bit<32> ack = 0;
        if (meta.survivor == 1 || meta.reader == 1) {
            bit<32> at = t;
            bit<32> bound = meta.cfg.last_seq + 1;
            if (meta.survivor == 0) {
                at = (bit<32>)meta.reader_task;
                bound = meta.reader_stripes;
            }
            bit<32> ack_in = 0;
            if (hdr.netec.type == NETEC_ACK) {
                ack_in = hdr.netec.seq;
            }
            ack_seq.read(ack, at);
            if (ack_in > ack && bound >= ack_in) {
                ack = ack_in;
            }
            ack_seq.write(at, ack);
        }
        bit<32> cell = (bit<32>)(hdr.netec.slot_array ++ hdr.netec.slot[NETEC_SLOTS_LOG2 - 1:0]);

        if (!hdr.ipv4.isValid()) {
            mark_to_drop(std);
        } else if (meta.survivor == 1 && corrupt) {
            mark_to_drop(std);  // a task's NetEC packet, corrupt: never summed
        } else if (meta.survivor == 1 && hdr.netec.type == NETEC_DATA) {
            // ---- pass 1: admit and track ---------------------------------------------
            bit<32> seq = hdr.netec.seq;
            bool bad = meta.words_ok != 1 || hdr.netec.version != NETEC_VERSION
                || hdr.netec.reserved != 0 || hdr.netec.flags != 0 || hdr.netec.window != 0
                || seq > meta.cfg.last_seq
                || (seq[15:0] & meta.cfg.slot_mask) != hdr.netec.slot;
            // every packet of a stripe has its length: P, or the last stripe's
            if (seq == meta.cfg.last_seq) {
                if (hdr.netec.payload_len != meta.cfg.last_len) {
                    bad = true;
                }
            } else if (hdr.netec.payload_len != NETEC_XOR_PAYLOAD) {
                bad = true;
            }
            if (bad) {
                drop_counted(V_MISMATCH);
            } else if (((seq - ack) & meta.cfg.far_mask) != 0) {
                // seq - ackSeq below S, which also fails a stale seq (it wraps above 2^31)
                drop_counted(V_OUTSIDE);
            } else {
                bit<32> held;
                slot_seq.read(held, cell);
                bit<8> taken = SLOT_STALE;
                if (held == seq) {
                    taken = SLOT_SAME;
                } else if (held == SEQ_NONE) {
                    taken = SLOT_FREE;
                }
                slot_seq.write(cell, seq);
                hdr.pass.setValid();
                hdr.pass.reset = 0;
                if (taken == SLOT_FREE) {
                    meta.starts_inc = 1;
                }
                bit<16> bits;
                bit<16> dup;
                slot_bits.read(bits, cell);
                if (taken != SLOT_SAME) {
                    hdr.pass.reset = 1;
                    dup = 0;
                    bits = meta.sender_bit;
                } else {
                    dup = bits & meta.sender_bit;
                    bits = bits | meta.sender_bit;
                }
                slot_bits.write(cell, bits);
                if (dup != 0) {
                    drop_counted(V_DUPLICATE);
                } else {
                    // counted (AGGREGATE or COMPLETE) in its last pass
                    hdr.pass.k_minus1 = meta.cfg.k_minus1;
                    // through egress (EBSN's counters), then back for the sum passes
                    meta.counters = 1;
                    meta.started_op = seq + 1;
                    hdr.ethernet.ether_type = ETHERTYPE_SUM_FIRST;
                    std.egress_spec = RECIRC_PORT;
                    meta.recirculate = 1;
                }
            }
        } else if (meta.survivor == 1) {
            // ---- an agent's HELLO (an error) or ACK: to the reader, from the VIP ---------
            bit<32> raddr;
            bit<16> rport;
            reader_addr.read(raddr, t);
            reader_port.read(rport, t);
            hdr.ipv4.src_addr = hdr.ipv4.dst_addr;
            hdr.udp.src_port = hdr.udp.dst_port;
            hdr.ipv4.dst_addr = raddr;
            hdr.udp.dst_port = rport;
            hdr.udp.checksum = 0;
            l3_agent_to_reader.apply();
        } else if (meta.reader == 1) {
            // ---- the reader's ACK or HELLO: to every survivor (egress: addresses, sender,
            // EBSN's counters read, the ACK's window) ----------------------------------------
            bit<32> rt = (bit<32>)meta.reader_task;
            if (corrupt) {
                mark_to_drop(std);
            } else if (hdr.netec.type == NETEC_ACK) {
                if (hdr.netec.seq > meta.reader_stripes || hdr.netec.sender != NETEC_READER) {
                    drop_counted(V_MISMATCH);
                } else {
                    meta.ack = ack;
                    meta.counters = 1;
                    meta.ebsn = 1;
                    std.mcast_grp = (bit<16>)meta.reader_task + 1;
                }
            } else if (hdr.netec.type == NETEC_HELLO && meta.secret_ok == 0) {
                // without the task's secret: binds nothing, reaches no survivor
                drop_counted(V_NO_SECRET);
            } else if (hdr.netec.type == NETEC_HELLO) {
                // the task's first reader HELLO binds its address; later ones change nothing
                bit<32> raddr;
                bit<16> rport;
                reader_addr.read(raddr, rt);
                reader_port.read(rport, rt);
                if (raddr == 0) {
                    raddr = hdr.ipv4.src_addr;
                }
                if (rport == 0) {
                    rport = hdr.udp.src_port;
                }
                reader_addr.write(rt, raddr);
                reader_port.write(rt, rport);
                std.mcast_grp = (bit<16>)meta.reader_task + 1;
            } else {
                drop_counted(V_MISMATCH);  // a reader sends ACKs and HELLOs only
            }
        } else {
            l3_forward.apply();  // not a task's: forwarded as it is
        }
    }
}

control XorEgress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t std) {
    XorCsumReplace16() fix_sender;
    XorCsumReplace16() fix_window;
    bit<8> copy_sender = 0;
    action to_survivor(bit<32> agent_addr, bit<16> agent_port, bit<48> agent_mac,
                       bit<8> sender) {
        hdr.ipv4.src_addr = hdr.ipv4.dst_addr;  // the VIP
        hdr.udp.src_port = hdr.udp.dst_port;
        hdr.ipv4.dst_addr = agent_addr;
        hdr.udp.dst_port = agent_port;
        hdr.ethernet.dst_addr = agent_mac;
        copy_sender = sender;
        hdr.udp.checksum = 0;
    }
    table replica {
        key = { std.egress_rid : exact; }  // task * NETEC_SENDERS + sender + 1
        actions = { to_survivor; NoAction; }
        const default_action = NoAction();
        size = NETEC_SENDER_CELLS;
    }
    EbsnWindow() ebsn;
    // EBSN's counters: one access each, for both users (a first pass raises or adds its
    // operands, each copy of the reader's ACK reads with operands 0)
    register<bit<32>>(NETEC_TASKS) max_started_plus1;
    register<bit<32>>(NETEC_TASKS) slot_starts;
    register<bit<32>>(NETEC_TASKS) slot_completes;
    bit<32> started;
    bit<32> starts;
    bit<32> completes;

    apply {
        started = 0;
        starts = 0;
        completes = 0;
        if (meta.counters == 1) {
            bit<32> t = (bit<32>)hdr.netec.task;  // survivor_in and vip_in hold it to the task
            max_started_plus1.read(started, t);
            if (meta.started_op > started) {
                started = meta.started_op;
            }
            max_started_plus1.write(t, started);
            slot_starts.read(starts, t);
            starts = starts + meta.starts_inc;
            slot_starts.write(t, starts);
            slot_completes.read(completes, t);
            completes = completes + meta.completes_inc;
            slot_completes.write(t, completes);
        }
        if (meta.recirculate == 1) {
            // field list 0 is empty: the pass header and the ethertype carry what the next
            // pass needs, as on Tofino, where no metadata survives recirculation
            recirculate_preserving_field_list(0);
            return;
        }
        if (std.egress_rid != 0) {
            if (replica.apply().hit) {
                bit<16> old_word = hdr.netec.sender ++ hdr.netec.flags;
                hdr.netec.sender = copy_sender;
                fix_sender.apply(hdr.netec.checksum, old_word,
                                 hdr.netec.sender ++ hdr.netec.flags);
                if (meta.ebsn == 1) {
                    bit<16> old_window = hdr.netec.window;
                    bit<32> partial = starts - completes;
                    ebsn.apply(meta.ack, started, partial, meta.exposed,
                               hdr.netec.window);
                    fix_window.apply(hdr.netec.checksum, old_window, hdr.netec.window);
                }
            } else {
                mark_to_drop(std);
            }
        }
    }
}

control XorComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply {
        update_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.total_len,
              hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.frag_offset, hdr.ipv4.ttl,
              hdr.ipv4.protocol, hdr.ipv4.src_addr, hdr.ipv4.dst_addr },
            hdr.ipv4.hdr_checksum, HashAlgorithm.csum16);
        // the RESULT: header (checksum as 0) and both halves; invalid words add nothing
        update_checksum(meta.result == 1,
            { hdr.netec.version, hdr.netec.type, hdr.netec.task, hdr.netec.slot_array,
              hdr.netec.sender, hdr.netec.flags, hdr.netec.slot, hdr.netec.seq,
              hdr.netec.window, hdr.netec.payload_len, 16w0, hdr.netec.reserved,
              NETEC_HALF_WORDS(hdr.c), NETEC_HALF_WORDS(hdr.q),
                NETEC_HALF_WORDS(hdr.d) },
            hdr.netec.checksum, HashAlgorithm.csum16);
    }
}

control XorDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.pass);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.udp);
        pkt.emit(hdr.netec);
        pkt.emit(hdr.hello);
        pkt.emit(hdr.c);  // c before q: the halves swap places every pass (halves.p4)
        pkt.emit(hdr.q);
        pkt.emit(hdr.d);
    }
}

V1Switch(XorParser(), XorVerifyChecksum(), XorIngress(), XorEgress(), XorComputeChecksum(),
         XorDeparser()) main;
