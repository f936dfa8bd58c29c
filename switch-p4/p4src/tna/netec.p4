// NetEC data plane for Tofino (TNA). The v1model twin (../v1model/netec.p4) has the same
// tables, registers and decisions; switch-p4/README.md describes the pipeline and gives its
// resources as p4c-barefoot reports them; netec_p4/model/pipeline.py is its executable model.
//
// Build: p4c-barefoot --target tofino --arch tna -I <p4include> netec.p4 (README.md "P4
//        toolchain"; switch-p4/README.md has the figures).
//
// A survivor's DATA packet takes up to three passes through ingress (recirculating between):
//   pass 1 (front port): classify, admit (ackSeq), track (slot_seq, slot_bits); nothing of
//           its payload changes. The pass header carries what it decided: k - 1, and whether
//           the packet starts its stripe in the slot (reset) and in a free slot (starts).
//   sum pass 0..3: multiply part q (NETEC_PASS_BYTES of the payload) by the sender's
//           coefficient in place, XOR it into the sums (one register per word, a cell per
//           slot and part); the first raises EBSN's counters. A payload of n bytes takes
//           ceil(n / NETEC_PASS_BYTES) of them.
// The last pass counts the stripe's packets (slot_count): the k-th leaves as the stripe's
// RESULT, its slot freed; the others are dropped. A packet counts only once every word of it
// is in the sums, so one lost between passes leaves its stripe short and never answered
// wrongly. Each sum pass rotates the payload on the wire by the part it summed (the deparser
// emits c before q: generated/lanes.p4), and the last puts it back in order.
// The reader's packets go to every survivor (multicast); its ACK raises ackSeq and gets the
// EBSN window. A survivor's TCP control segments go to the reader. Egress translates SEQ/ACK
// numbers between the VIP's and each survivor's (isn_delta) and gives each copy its address.
//
// Every register has one RegisterAction per call site, in a table of its own pinned to the
// register's stage where more than one branch uses it (placement does not look for one stage
// that suits every branch). Tofino 1 runs a branch as one chain of tables in rising stages, so
// what a branch needs late (the RESULT's reader address, the routes) is read before its long
// steps or in tables of its own.

#include <core.p4>
#include <tna.p4>

#include "../include/headers.p4"
#include "../include/netec_logic.p4"
#include "../generated/lanes.p4"

#if NETEC_PASS_BYTES != 16
#error "lanes.p4 is generated for parts of 4 words"
#endif

// Recirculation port of pipe 0 on Tofino 1 (68); the control plane configures it in loopback.
const PortId_t RECIRC_PORT = 68;
// A recirculated DATA packet's ethertype, in front of its pass header (read only from the
// recirculation port).
const bit<16> ETHERTYPE_NETEC_PASS = 0x88B5;

const bit<8> ROLE_NONE = 0;
const bit<8> ROLE_READER = 1;
const bit<8> ROLE_SURVIVOR = 2;

// What ingress tells egress (@flexible: the compiler lays it out, ingress and egress alike, so
// that each field's writes fit Tofino's PHV sources).
@flexible
header bridge_h {
    bit<8>  task;
    bit<8>  sender;
    bit<8>  to_reader;
    bit<8>  synack;       // a survivor's SYN-ACK: egress records its ISN
    bit<8>  synack_last;  // ... and forwards only the last of the task's
    bit<8>  netec;        // a NetEC header follows the TCP header (egress parses it)
    bit<32> vip_isn;
}

struct headers_t {
    bridge_h bridge;
    ethernet_h ethernet;
    netec_pass_h pass;
    ipv4_h ipv4;
    tcp_h tcp;
    tcp_ts_h tcp_ts;
    netec_h netec;
    reader_hello_h hello;  // a HELLO's first bytes: the reader's secret (headers.p4)
    rest_t c;
    part_t q;
    part_t d;  // pass 1's words past c (a parse graph without a c -> q -> c loop)
}

struct ig_meta_t {
    bit<16> tcp_residual;   // TCP checksum minus the fields ingress may rewrite
    bit<1>  secret_ok;      // reader_secret: the HELLO carries its task's secret
    bit<1>  has_payload;    // tcp_payload: the segment carries bytes past its headers
    bit<1>  hello_room;     // ... and room for a NetEC header and a HELLO's secret
    bit<1>  frag;           // an IP fragment (judged only whole: dropped at a VIP)
    bit<1>  hello;          // a NetEC HELLO's first segment
    bit<8>  proven;         // reader_proven as the reader's segment found it
    bit<1>  syn;
    // reader_flags: what a reader segment may do, decided before its task's proof is read,
    // so that after it the bind and clear gateways test one flag and the proof, and the
    // verdict tables key on the flags (see reader_flags)
    bit<1>  syn_bare;           // a SYN without a payload
    bit<1>  may_bind;           // it (re)binds the VIP while unproven: the secret, or syn_bare
    bit<1>  hello_no_secret;    // a HELLO without the secret: refused, ever
    bit<1>  payload_no_secret;  // a payload without the secret: refused while unproven
    bit<8>  words_ok;       // the parser took the payload into the halves (whole words, <= P)
    bool    netec_csum_ok;  // the NetEC header and words sum to ones'-complement zero
    bit<1>  netec_checked;  // the parser judged the NetEC checksum
    bit<2>  part;           // the part a sum pass adds (parser, by ethertype)
    bit<1>  last_pass;      // ... its last: the payload ends in this part (parser)
    bit<8>  role;
    bit<1>  no_cfg;         // task_cfg missed: a classified packet of no task (dropped)
    bit<8>  task;
    bit<8>  slot_array;
    bit<8>  sender;
    task_cfg_t cfg;
    log_a_t log_coeff;      // log of the sender's coefficient, one copy per group of lanes
    bit<16> sender_bit;
    bit<16> synack_bit;     // the connection's sender bit, from survivor_in
    bit<16> seq_low;        // seq's low 16 bits, from the identity hash (no slice in an action)
    bit<32> ack;
    bit<32> ack_in;         // the reader's ACK's seq (raises ackSeq), 0 otherwise (a read)
    bit<8>  verdict;
    bit<8>  taken;          // SLOT_SAME, SLOT_STALE or SLOT_FREE: what slot_seq held
    bit<16> dup;            // the sender's bit among those counted before (0: not a duplicate)
    bit<1>  first_pass;     // a survivor's DATA packet from a front port
    bit<1>  sum_pass;       // a DATA packet back from recirculation (a pass header)
    bit<1>  reader_ack;     // the reader's ACK
    bit<1>  ack_bad;        // the reader's ACK fails ReaderAckCheck
    bit<1>  bad_header;     // version, reserved or flags not as protocol version 3 has them
    bit<1>  bad_ids;        // task, slot array or sender not the connection's
    bit<1>  bad_sender;     // no coefficient for the header's task and sender
    bit<8>  complete;       // the last pass's count reached k
    bit<1>  k_one;          // k = 1 (the pass header's k - 1 is 0): every packet completes
    bit<32> k_minus1;       // the pass header's, widened for slot_count's compare
    bit<32> started_op;     // maxStarted + 1 raised to this (pass 2: seq + 1; 0: a read)
    bit<32> starts_inc;     // stripes started in a free slot: + this (pass 2)
    bit<32> started;        // EBSN's counters as this packet left them
    bit<32> starts;
    bit<32> completes;
    bit<32> partial;        // starts - completes: slots holding partial sums
    bit<32> reader_addr;
    bit<16> reader_port;
    bit<16> answered;       // synack_bits after a survivor's SYN-ACK
    bit<1>  result;         // a last pass's packet leaves as its stripe's RESULT
    bit<1>  netec_dirty;    // deparser checksum conditions are 1-bit on Tofino
    bit<1>  tcp_dirty;
}

struct eg_meta_t {
    bit<16> tcp_residual;
    bit<1>  tcp_dirty;
    bit<16> netec_residual; // NetEC checksum minus the word egress may rewrite (sender, flags)
    bit<1>  netec_dirty;
    bit<8>  sender;
    bit<8>  task;
    bit<8>  from_sender;
    bit<8>  to_reader;
    bit<8>  synack;
    bit<8>  synack_last;
    bit<32> vip_isn;
    bit<32> isn_diff;       // a survivor's SYN-ACK: its ISN minus the VIP's
    bit<32> delta;          // isn_delta of the survivor the segment comes from or goes to
}

// =============================================================================================
// Ingress
// =============================================================================================

// p4test warns that `meta` may be uninitialized when this parser ends: Tofino's parser
// zero-initializes the metadata it does not write, which the controls rely on.
parser IngressParserImpl(packet_in pkt, out headers_t hdr, out ig_meta_t meta,
                         out ingress_intrinsic_metadata_t ig_intr_md) {
    Checksum() tcp_csum;
    Checksum() netec_csum;

    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        meta.words_ok = 0;
        meta.netec_csum_ok = false;
        meta.netec_checked = 0;
        meta.tcp_residual = 0;
        meta.part = 0;
        meta.last_pass = 0;
        transition parse_ethernet;
    }
    state parse_ethernet {
        pkt.extract(hdr.ethernet);
        // a pass header only from the recirculation port: from any other port it would let
        // a peer skip the first pass's admission (such a frame has no IPv4: dropped)
        transition select(ig_intr_md.ingress_port, hdr.ethernet.ether_type) {
            (RECIRC_PORT, ETHERTYPE_NETEC_PASS): parse_pass;
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
        // Tofino: a checksum unit takes a field only in the state that extracts it.
        tcp_csum.subtract({hdr.ipv4.src_addr, hdr.ipv4.dst_addr});
        // The parser cannot subtract: room for a NetEC header is read off the IP length here
        // (20 IP + 20 TCP [+ 12 options] + 20 NetEC), where it is in the parser's window (a
        // later state would keep it in one of the few match registers, which the ethertype
        // needs).
        transition select(hdr.ipv4.ihl, hdr.ipv4.protocol, hdr.ipv4.total_len) {
            (5, IP_PROTO_TCP, 72 .. 0xFFFF): parse_tcp_room72;
            (5, IP_PROTO_TCP, 60 .. 71): parse_tcp_room60;
            (5, IP_PROTO_TCP, _): parse_tcp_short;
            default: accept;
        }
    }
    // The fields ingress may rewrite leave the TCP sum in the state that extracts them and
    // are added back in the deparser. A NetEC packet with a valid NetEC checksum sums to
    // ones'-complement zero, so rewriting one valid NetEC packet into another never changes
    // the TCP checksum: a corrupt segment stays corrupt and the reader's TCP drops it.
#define TCP_STATE(NAME, CASES)                                                                \
    state NAME {                                                                              \
        pkt.extract(hdr.tcp);                                                                 \
        tcp_csum.subtract({hdr.tcp.src_port, hdr.tcp.dst_port, hdr.tcp.seq_no,                \
                           hdr.tcp.ack_no, hdr.tcp.checksum});                                \
        tcp_csum.subtract_all_and_deposit(meta.tcp_residual);                                 \
        transition select(hdr.tcp.data_offset) {                                              \
            CASES                                                                             \
            default: accept;                                                                  \
        }                                                                                     \
    }
    TCP_STATE(parse_tcp_room72, 5: parse_netec; 8: parse_tcp_ts_netec;)
    TCP_STATE(parse_tcp_room60, 5: parse_netec; 8: parse_tcp_ts;)
    TCP_STATE(parse_tcp_short, 8: parse_tcp_ts;)
    state parse_tcp_ts {
        pkt.extract(hdr.tcp_ts);
        transition accept;
    }
    state parse_tcp_ts_netec {
        pkt.extract(hdr.tcp_ts);
        transition parse_netec;
    }
    state parse_netec {
        pkt.extract(hdr.netec);
        // The NetEC checksum of a front port's packet, header and words (docs/protocol.md: a
        // receiver drops a packet that fails it, also inside a valid TCP segment). Each field
        // is added in the state that extracts it; Tofino writes the verdict once, after the
        // last word. A sum pass's words are its own sums: not judged again.
        netec_csum.add(hdr.netec);
        // which pass: the header's reserved field (0 on the wire, i + 1 in sum pass i), read
        // here in the parser's window (the ethertype, an earlier state's field, would take one
        // of Tofino 1's few parser match registers, which ran out). A front port's packet
        // naming a sum pass is parsed as one but never judged sound: admission drops it
        // (reserved), and only a pass header, from the recirculation port, makes a sum pass.
        transition select(hdr.netec.reserved, hdr.netec.type) {
            (0, NETEC_HELLO): parse_hello;
            (0, _): parse_first;
            (1, _): parse_part0;
            (2, _): parse_part1;
            (3, _): parse_part2;
            (4, _): parse_part3;
            default: accept;
        }
    }
    // the first segment of a HELLO long enough to hold a secret: its first bytes, emitted
    // again as read
    state parse_hello {
        transition select(hdr.netec.payload_len) {
            NETEC_HELLO_SECRET_END .. 0xFFFF: take_hello;
            default: accept;
        }
    }
    state take_hello {
        pkt.extract(hdr.hello);
        transition accept;
    }
    state parse_first {  // c <- the first words, d <- the rest
        transition select(hdr.netec.payload_len) {
            NETEC_FIRST_CASES(words_verified)
            default: accept;  // a HELLO's JSON, a partial word: left as payload, never summed
        }
    }
    // a sum pass: q <- its part (first on the wire), c <- the rest
    state parse_part0 {
        transition select(hdr.netec.payload_len) {
            NETEC_PART0_CASES
            default: accept;
        }
    }
    state parse_part1 {
        meta.part = 1;
        transition select(hdr.netec.payload_len) {
            NETEC_PART1_CASES
            default: accept;
        }
    }
    state parse_part2 {
        meta.part = 2;
        transition select(hdr.netec.payload_len) {
            NETEC_PART2_CASES
            default: accept;
        }
    }
    state parse_part3 {
        meta.part = 3;
        transition select(hdr.netec.payload_len) {
            NETEC_PART3_CASES
            default: accept;
        }
    }
#define LASTQ_STATE(I, J)                                                                     \
    state lastq##I##_##J {                                                                    \
        meta.last_pass = 1;                                                                   \
        transition q##I##_##J;                                                                \
    }
    LASTQ_STATE(0, 0) LASTQ_STATE(0, 1) LASTQ_STATE(0, 2) LASTQ_STATE(0, 3)
    LASTQ_STATE(1, 0) LASTQ_STATE(1, 1) LASTQ_STATE(1, 2) LASTQ_STATE(1, 3)
    LASTQ_STATE(2, 0) LASTQ_STATE(2, 1) LASTQ_STATE(2, 2) LASTQ_STATE(2, 3)
    LASTQ_STATE(3, 0) LASTQ_STATE(3, 1) LASTQ_STATE(3, 2) LASTQ_STATE(3, 3)
#define WORD_STATE(CHAIN, X, J, NEXT)                                                         \
    state CHAIN##_##J {                                                                       \
        pkt.extract(hdr.X.w##J);                                                              \
        netec_csum.add(hdr.X.w##J);                                                           \
        transition CHAIN##_##NEXT;                                                            \
    }
#define LAST_STATE(CHAIN, X, J)                                                               \
    state CHAIN##_##J {                                                                       \
        pkt.extract(hdr.X.w##J);                                                              \
        netec_csum.add(hdr.X.w##J);                                                           \
        transition CHAIN##_end;                                                               \
    }
    NETEC_PAYLOAD_STATES(WORD_STATE, LAST_STATE)
    // pass 1: c's words, then d's if any
    // (after the words: payload_len's low byte, the entry having held it to 64 at most)
    state c_end {
        transition select(hdr.netec.payload_len[7:0]) {
            NETEC_FIRST_REST_CASES(words_verified)
            default: accept;
        }
    }
    state d_end {
        transition words_verified;
    }
    // a sum pass: its part's words, then the rest into c (chain s)
#define PART_END_STATE(I)                                                                     \
    state q##I##_end {                                                                        \
        transition select(hdr.netec.payload_len[7:0]) {                                       \
            NETEC_PART##I##_REST_CASES(words_done)                                            \
            default: accept;                                                                  \
        }                                                                                     \
    }
    PART_END_STATE(0) PART_END_STATE(1) PART_END_STATE(2) PART_END_STATE(3)
    state s_end {
        transition words_done;
    }
    state words_done {  // a sum pass: the words as the first pass judged them
        meta.words_ok = 1;
        transition accept;
    }
    state words_verified {
        meta.words_ok = 1;
        meta.netec_csum_ok = netec_csum.verify();
        meta.netec_checked = 1;
        transition accept;
    }
}

control Ingress(inout headers_t hdr, inout ig_meta_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {

// A register action (or any one step) in a keyless table of its own, pinned to STAGE.
#define PINNED(NAME, STAGE, BODY)                                                            \
    action NAME##_act() { BODY }                                                             \
    @stage(STAGE) @hidden table NAME##_tbl {                                                 \
        actions = { NAME##_act; }                                                            \
        const default_action = NAME##_act();                                                 \
    }

    // ---- registers -------------------------------------------------------------------------
    // ackSeq (lo) beside the task's stripes (hi, written at setup): the reader's ACK raises lo,
    // never past hi (each compare of a stateful ALU takes one field of the packet, so the
    // bound is the register's own); a first pass reads it. One action for both: ack_in is the
    // reader's ACK's seq, 0 for a first pass (a read).
    Register<ack_pair_t, bit<32>>(NETEC_TASKS, {0, 0}) ack_seq;
    RegisterAction<ack_pair_t, bit<32>, bit<32>>(ack_seq) ack_access = {
        void apply(inout ack_pair_t v, out bit<32> rv) {
            if (meta.ack_in > v.lo && v.hi >= meta.ack_in) {
                v.lo = meta.ack_in;
            }
            rv = v.lo;
        }
    };
    // EBSN's counters, each one action for both users: pass 2 raises maxStarted + 1 and adds
    // a stripe started in a free slot, the last pass adds a completed stripe, the reader's ACK
    // reads them (operands 0). Partial slots are starts - completes: two counters that only
    // grow, side by side, where one would wait for the count.
    Register<bit<32>, bit<32>>(NETEC_TASKS, 0) max_started_plus1;
    RegisterAction<bit<32>, bit<32>, bit<32>>(max_started_plus1) started_access = {
        void apply(inout bit<32> v, out bit<32> rv) {
            if (meta.started_op > v) {
                v = meta.started_op;
            }
            rv = v;
        }
    };
    Register<bit<32>, bit<32>>(NETEC_TASKS, 0) slot_starts;
    RegisterAction<bit<32>, bit<32>, bit<32>>(slot_starts) starts_access = {
        void apply(inout bit<32> v, out bit<32> rv) {
            v = v + meta.starts_inc;
            rv = v;
        }
    };
    // k = 1: every packet completes its stripe (the count says so only from k = 2)
    Register<bit<32>, bit<32>>(NETEC_TASKS, 0) slot_completes;
    RegisterAction<bit<32>, bit<32>, bit<32>>(slot_completes) completes_access = {
        void apply(inout bit<32> v, out bit<32> rv) {
            if (meta.complete == 1 || meta.k_one == 1) {
                v = v + 1;
            }
            rv = v;
        }
    };

    // The stripe a slot holds. The RESULT frees it: a packet of the stripe after it (a
    // retransmission after a lost RESULT) is aggregated again.
    Register<bit<32>, bit<16>>(NETEC_SLOT_CELLS, SEQ_NONE) slot_seq;
    RegisterAction<bit<32>, bit<16>, bit<8>>(slot_seq) seq_check = {
        void apply(inout bit<32> v, out bit<8> rv) {
            if (v == hdr.netec.seq) {
                rv = SLOT_SAME;
            } else if (v == SEQ_NONE) {
                rv = SLOT_FREE;
            } else {
                rv = SLOT_STALE;
            }
            v = hdr.netec.seq;
        }
    };
    RegisterAction<bit<32>, bit<16>, bit<8>>(slot_seq) seq_release = {
        void apply(inout bit<32> v) { v = SEQ_NONE; }
    };
    // The tracker's bits: the ALU returns the sender's bit as it was (set: a duplicate) and
    // stores it set, so a duplicate is known one stage after the slot.
    Register<bit<16>, bit<16>>(NETEC_SLOT_CELLS, 0) slot_bits;
    RegisterAction<bit<16>, bit<16>, bit<16>>(slot_bits) bits_add = {
        void apply(inout bit<16> v, out bit<16> rv) {
            rv = v & meta.sender_bit;
            v = v | meta.sender_bit;
        }
    };
    RegisterAction<bit<16>, bit<16>, bit<16>>(slot_bits) bits_restart = {
        void apply(inout bit<16> v, out bit<16> rv) { rv = 0; v = meta.sender_bit; }
    };
    // Packets of the slot's stripe whose last pass has summed (lo: the stripe's seq, hi: the
    // count). Returns 1 on the k-th and marks the cell free, so the next packet restarts the
    // count; a count another stripe left restarts (a stateful ALU updates each half with two
    // expressions at most: seq or the marker; count + 1 or 1).
    Register<ack_pair_t, bit<16>>(NETEC_SLOT_CELLS, {0, 0}) slot_count;
    RegisterAction<ack_pair_t, bit<16>, bit<8>>(slot_count) count_last = {
        void apply(inout ack_pair_t v, out bit<8> rv) {
            rv = 0;
            if (v.lo == hdr.netec.seq) {
                if (v.hi == meta.k_minus1) {
                    v.lo = SEQ_NONE;
                    rv = 1;
                }
                v.hi = v.hi + 1;
            } else {
                v.lo = hdr.netec.seq;
                v.hi = 1;
            }
        }
    };

    // The reader's address and port: learnt from its SYN, read for every segment to it (a
    // RESULT, a survivor's control segment).
    Register<bit<32>, bit<32>>(NETEC_TASKS, 0) reader_addr;
    RegisterAction<bit<32>, bit<32>, bit<32>>(reader_addr) reader_addr_learn = {
        void apply(inout bit<32> v) { v = hdr.ipv4.src_addr; }
    };
    RegisterAction<bit<32>, bit<32>, bit<32>>(reader_addr) reader_addr_for_result = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v; }
    };
    RegisterAction<bit<32>, bit<32>, bit<32>>(reader_addr) reader_addr_for_agent = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v; }
    };
    Register<bit<16>, bit<32>>(NETEC_TASKS, 0) reader_port;
    RegisterAction<bit<16>, bit<32>, bit<16>>(reader_port) reader_port_learn = {
        void apply(inout bit<16> v) { v = hdr.tcp.src_port; }
    };
    RegisterAction<bit<16>, bit<32>, bit<16>>(reader_port) reader_port_for_result = {
        void apply(inout bit<16> v, out bit<16> rv) { rv = v; }
    };
    RegisterAction<bit<16>, bit<32>, bit<16>>(reader_port) reader_port_for_agent = {
        void apply(inout bit<16> v, out bit<16> rv) { rv = v; }
    };
    // 1 once the reader's HELLO carried the task's secret: every reader segment reads it, and
    // the proving HELLO (reader_secret's hit) sets it, in one access
    Register<bit<8>, bit<32>>(NETEC_TASKS, 0) reader_proven;
    RegisterAction<bit<8>, bit<32>, bit<8>>(reader_proven) prove = {
        void apply(inout bit<8> v, out bit<8> rv) {
            rv = v;
            if (meta.secret_ok == 1) {
                v = 1;
            }
        }
    };
    // survivors that answered the reader's SYN: cleared by it, one bit added by each SYN-ACK
    Register<bit<16>, bit<32>>(NETEC_TASKS, 0) synack_bits;
    RegisterAction<bit<16>, bit<32>, bit<16>>(synack_bits) synack_clear = {
        void apply(inout bit<16> v) { v = 0; }
    };
    RegisterAction<bit<16>, bit<32>, bit<16>>(synack_bits) synack_add = {
        void apply(inout bit<16> v, out bit<16> rv) { v = v | meta.synack_bit; rv = v; }
    };

    Hash<bit<16>>(HashAlgorithm_t.IDENTITY) cell_of;      // slot array ++ slot
    Hash<bit<16>>(HashAlgorithm_t.IDENTITY) idx_of;       // slot array ++ slot ++ part
    Hash<bit<16>>(HashAlgorithm_t.IDENTITY) seq_low_of;   // seq's low 16 bits

    // Stages (Tofino 1: four stateful ALUs a stage), where p4c-barefoot 9.13.4 places them:
    // the count in 2, ackSeq and EBSN's three counters in 3, the reader's proof in 4 (read
    // before the branches, so that what its branch decides from it is known by 6), the
    // reader's address and the SYN-ACK bits in 6 and its port in 7 (learnt from the reader's
    // SYN or proving HELLO, read for a RESULT or a survivor's segment), the tracker in 8-9,
    // after admission; the sums in 11, after the multiply's tables (placed among the first
    // pass's small tables, 16 a stage at most).
    PINNED(count, 2, meta.complete = count_last.execute(
        cell_of.get({hdr.netec.slot_array, hdr.netec.slot[NETEC_SLOTS_LOG2 - 1:0]}));)
    PINNED(ack, 3, meta.ack = ack_access.execute((bit<32>)meta.task);)
    PINNED(started, 3, meta.started = started_access.execute((bit<32>)meta.task);)
    PINNED(starts, 3, meta.starts = starts_access.execute((bit<32>)meta.task);)
    PINNED(completes, 3, meta.completes = completes_access.execute((bit<32>)meta.task);)
    PINNED(prove, 4, meta.proven = prove.execute((bit<32>)meta.task);)
    PINNED(reader_addr_learn, 6, reader_addr_learn.execute((bit<32>)meta.task);)
    PINNED(reader_port_learn, 7, reader_port_learn.execute((bit<32>)meta.task);)
    PINNED(reader_addr_for_result, 6,
           meta.reader_addr = reader_addr_for_result.execute((bit<32>)hdr.netec.task);)
    PINNED(reader_port_for_result, 7,
           meta.reader_port = reader_port_for_result.execute((bit<32>)hdr.netec.task);)
    PINNED(reader_addr_for_agent, 6,
           meta.reader_addr = reader_addr_for_agent.execute((bit<32>)meta.task);)
    PINNED(reader_port_for_agent, 7,
           meta.reader_port = reader_port_for_agent.execute((bit<32>)meta.task);)
    PINNED(synack_clear, 6, synack_clear.execute((bit<32>)meta.task);)
    PINNED(synack_add, 6, meta.answered = synack_add.execute((bit<32>)meta.task);)
    PINNED(seq_check, 8, meta.taken = seq_check.execute(
        cell_of.get({hdr.netec.slot_array, hdr.netec.slot[NETEC_SLOTS_LOG2 - 1:0]}));)
    PINNED(seq_release, 8, seq_release.execute(
        cell_of.get({hdr.netec.slot_array, hdr.netec.slot[NETEC_SLOTS_LOG2 - 1:0]}));)
    // the slot's bits: the first packet of a stripe in the slot restarts them, and its sums
    // (reset); one started in a free slot is counted for EBSN. Keyed on slot_seq's own
    // answer, each field written once (a field computed from the answer, or written by a
    // default and then a check, would cost a stage).
    action bits_add_act() {
        meta.dup = bits_add.execute(
            cell_of.get({hdr.netec.slot_array, hdr.netec.slot[NETEC_SLOTS_LOG2 - 1:0]}));
        hdr.pass.reset = 0;
        hdr.pass.starts = 0;
    }
    action bits_restart_act(bit<8> starts) {
        meta.dup = bits_restart.execute(
            cell_of.get({hdr.netec.slot_array, hdr.netec.slot[NETEC_SLOTS_LOG2 - 1:0]}));
        hdr.pass.reset = 1;
        hdr.pass.starts = starts;
    }
    @stage(9) @hidden table bits_tbl {
        key = { meta.taken : exact; }
        actions = { bits_add_act; bits_restart_act; }
        const entries = {
            SLOT_SAME : bits_add_act(); SLOT_FREE : bits_restart_act(1);
            SLOT_STALE : bits_restart_act(0);
        }
    }

// One register per word of part q, one action at one call site: overwrite when the packet
// starts its stripe in the slot (the pass header says so), XOR otherwise, and write the new
// sum into the word. Only the completing packet's words leave as sums (the others are dropped
// in their last pass).
#define SUM_REGISTER(J)                                                                      \
    Register<bit<32>, bit<16>>(NETEC_SUM_CELLS, 0) sum##J;                                   \
    RegisterAction<bit<32>, bit<16>, bit<32>>(sum##J) sum##J##_add = {                       \
        void apply(inout bit<32> v, out bit<32> rv) {                                        \
            if (hdr.pass.reset == 1) {                                                       \
                v = hdr.q.w##J.v;                                                            \
            } else {                                                                         \
                v = v ^ hdr.q.w##J.v;                                                        \
            }                                                                                \
            rv = v;                                                                          \
        }                                                                                    \
    };                                                                                       \
    action sum##J##_act() {                                                                  \
        hdr.q.w##J.v = sum##J##_add.execute(idx_of.get({hdr.netec.slot_array,               \
            hdr.netec.slot[NETEC_SLOTS_LOG2 - 1:0], meta.part}));                            \
    }                                                                                        \
    @stage(11) @hidden table sum##J##_tbl {                                                  \
        actions = { sum##J##_act; }                                                          \
        const default_action = sum##J##_act();                                               \
    }
#define SUM_APPLY(J) sum##J##_tbl.apply();
    SUM_REGISTER(0) SUM_REGISTER(1) SUM_REGISTER(2) SUM_REGISTER(3)

    Counter<bit<32>, bit<8>>(8, CounterType_t.PACKETS) verdicts;  // DATA packets by verdict

    // ---- classify ----------------------------------------------------------------------------
    action from_survivor(bit<8> task, bit<8> slot_array, bit<8> sender, bit<32> vip_isn,
                         bit<16> sender_bit) {
        meta.role = ROLE_SURVIVOR;
        meta.task = task;
        meta.slot_array = slot_array;
        meta.sender = sender;
        meta.synack_bit = sender_bit;  // its SYN-ACK's bit (sender_coeff needs a NetEC header)
        // the bridge from action data (one source: copies from metadata need more per container)
        hdr.bridge.task = task;
        hdr.bridge.sender = sender;
        hdr.bridge.vip_isn = vip_isn;
    }
    action not_survivor() {
        meta.role = ROLE_NONE;
        hdr.bridge.task = 0;
        hdr.bridge.sender = 0;
        hdr.bridge.vip_isn = 0;
    }
    table survivor_in {
        key = {
            hdr.ipv4.src_addr : exact; hdr.tcp.src_port : exact;
            hdr.ipv4.dst_addr : exact; hdr.tcp.dst_port : exact;
        }
        actions = { from_survivor; not_survivor; }
        const default_action = not_survivor();
        size = NETEC_SENDER_CELLS;
    }

    action from_reader(bit<8> task, bit<8> slot_array, bit<32> vip_isn) {
        meta.role = ROLE_READER;
        meta.task = task;
        meta.slot_array = slot_array;
        hdr.bridge.task = task;
        hdr.bridge.vip_isn = vip_isn;
    }
    table vip_in {
        key = { hdr.ipv4.dst_addr : exact; hdr.tcp.dst_port : exact; }
        actions = { from_reader; NoAction; }
        const default_action = NoAction();
        size = NETEC_TASKS;
    }

    // the task's secret, which the control plane issued at setup (docs/protocol.md "setup
    // answer"), keyed on the VIP the segment is sent to (as vip_in: the header's task could
    // name another task, whose secret a stranger may hold) and the secret's digits
    action secret_ok() {
        meta.secret_ok = 1;
    }
    table reader_secret {
        key = {
            hdr.ipv4.dst_addr : exact; hdr.tcp.dst_port : exact;
            hdr.hello.s0 : exact; hdr.hello.s1 : exact; hdr.hello.s2 : exact;
            hdr.hello.s3 : exact; hdr.hello.s4 : exact; hdr.hello.s5 : exact;
            hdr.hello.s6 : exact; hdr.hello.s7 : exact;
        }
        actions = { secret_ok; NoAction; }
        const default_action = NoAction();
        size = NETEC_TASKS;
    }
    // What a reader segment may do, from its 1-bit flags, in one table before the proof is
    // read (a gateway per condition after it pushed the registers' tables past their stage;
    // entries and their meaning: netec_logic.p4).
    action reader_flags_set(bit<1> syn_bare, bit<1> may_bind, bit<1> hello_no_secret,
                            bit<1> payload_no_secret) {
        meta.syn_bare = syn_bare;
        meta.may_bind = may_bind;
        meta.hello_no_secret = hello_no_secret;
        meta.payload_no_secret = payload_no_secret;
    }
    table reader_flags {
        key = { meta.syn : exact; meta.hello : exact; meta.has_payload : exact;
                meta.secret_ok : exact; }
        actions = { reader_flags_set; }
        const default_action = reader_flags_set(0, 0, 0, 0);
        const entries = {
            READER_FLAGS_ENTRIES
        }
        size = 16;
    }
    // whether a segment carries a payload, and room for a HELLO's secret: the IP length past
    // the IP and TCP headers (ranges in a table, since Tofino's parser cannot subtract)
    action payload_yes() {
        meta.has_payload = 1;
    }
    action hello_room() {
        meta.has_payload = 1;
        meta.hello_room = 1;
    }
    table tcp_payload {
        key = { hdr.tcp.data_offset : exact; hdr.ipv4.total_len : range; }
        actions = { payload_yes; hello_room; NoAction; }
        const default_action = NoAction();
        const entries = {
            TCP_PAYLOAD_ENTRIES
        }
        size = 16;
    }

    action set_task(bit<16> k_mask, bit<8> k_minus1, bit<16> slot_mask, bit<32> far_mask,
                    bit<32> stripes, bit<32> last_seq, bit<16> last_len, bit<32> exposed) {
        meta.no_cfg = 0;
        meta.cfg.k_mask = k_mask;
        meta.cfg.k_minus1 = k_minus1;
        meta.cfg.slot_mask = slot_mask;
        meta.cfg.far_mask = far_mask;
        meta.cfg.stripes = stripes;
        meta.cfg.last_seq = last_seq;
        meta.cfg.last_len = last_len;
        meta.cfg.exposed = exposed;
    }
    action no_task() {
        meta.no_cfg = 1;  // a VIP or survivor entry without its task (being removed)
    }
    table task_cfg {
        key = { meta.task : exact; meta.slot_array : exact; }
        actions = { set_task; no_task; }
        const default_action = no_task();
        size = NETEC_TASKS;
    }

    // keyed on the header's task and sender (a first pass holds them to the connection's; a
    // sum pass then needs no classify before its multiply)
    action set_coeff(bit<10> log_a, bit<16> bit_s) {
        NETEC_SET_LOG_A(meta.log_coeff, log_a)
        meta.sender_bit = bit_s;
    }
    action no_coeff() {
        NETEC_SET_LOG_A(meta.log_coeff, GF_LOG_ZERO)
        meta.sender_bit = 0;
    }
    table sender_coeff {
        key = { hdr.netec.task : exact; hdr.netec.sender : exact; }
        actions = { set_coeff; no_coeff; }
        const default_action = no_coeff();
        size = NETEC_SENDER_CELLS;
    }

    action route(PortId_t port, bit<48> dmac) {
        ig_tm_md.ucast_egress_port = port;
        hdr.ethernet.dst_addr = dmac;
    }
    action unroutable() {
        ig_dprsr_md.drop_ctl = 1;
    }
    // one route table per call site (Tofino applies a table once); the control plane fills
    // all three alike
    table l3_forward {  // traffic of no task
        key = { hdr.ipv4.dst_addr : lpm; }
        actions = { route; unroutable; }
        const default_action = unroutable();
        size = 1024;
    }
    table l3_to_reader {  // a RESULT
        key = { hdr.ipv4.dst_addr : lpm; }
        actions = { route; unroutable; }
        const default_action = unroutable();
        size = 1024;
    }
    table l3_agent_to_reader {  // a survivor's control segment
        key = { hdr.ipv4.dst_addr : lpm; }
        actions = { route; unroutable; }
        const default_action = unroutable();
        size = 1024;
    }

    AdmitData() admit;
    EbsnWindow() ebsn;
    ReaderAckCheck() ack_check;
    MultiplyPass() multiply;

    action drop_counted(bit<8> why) {
        verdicts.count(why);
        ig_dprsr_md.drop_ctl = 1;
    }
    // What becomes of a reader's segment once its proof is read: one table each for its ACKs
    // and its other segments (as if-chains they took a table a verdict, 16 a stage at most).
    action to_survivors() {
        ig_tm_md.mcast_grp_a = (bit<16>)meta.task + 1;
    }
    action ack_to_survivors() {
        meta.netec_dirty = 1;  // its window rewritten
        ig_tm_md.mcast_grp_a = (bit<16>)meta.task + 1;
    }
    action drop_uncounted() {
        ig_dprsr_md.drop_ctl = 1;
    }
    table reader_ack_verdict {
        key = { meta.proven : ternary; meta.ack_bad : ternary; meta.netec_checked : ternary; }
        actions = { drop_counted; ack_to_survivors; }
        const default_action = ack_to_survivors();
        const entries = {
            READER_ACK_VERDICT_ENTRIES
        }
        size = 4;
    }
    table reader_verdict {
        key = { meta.proven : ternary; meta.syn : ternary; meta.hello_no_secret : ternary;
                meta.payload_no_secret : ternary; }
        actions = { drop_counted; drop_uncounted; to_survivors; }
        const default_action = to_survivors();
        const entries = {
            READER_VERDICT_ENTRIES
        }
        size = 8;
    }

    action partials() { meta.partial = meta.starts - meta.completes; }
    @hidden table take_partial {
        actions = { partials; }
        const default_action = partials();
    }

    apply {
        meta.netec_dirty = 0;
        meta.tcp_dirty = 0;
        meta.result = 0;
        meta.complete = 0;
        meta.no_cfg = 0;
        hdr.bridge.setValid();
        hdr.bridge.to_reader = 0;
        hdr.bridge.synack = 0;
        hdr.bridge.synack_last = 0;
        // Tofino: no conditional expressions in actions, so every choice is an if
        if (hdr.netec.isValid()) {
            hdr.bridge.netec = 1;
        } else {
            hdr.bridge.netec = 0;
        }
        meta.seq_low = seq_low_of.get({hdr.netec.seq});

        // ---- classify: who sends, for which task -------------------------------------------
        if (hdr.tcp.isValid()) {
            if (!survivor_in.apply().hit) {
                vip_in.apply();
            }
        } else {
            meta.role = ROLE_NONE;
        }
        meta.has_payload = 0;
        meta.hello_room = 0;
        if (hdr.tcp.isValid()) {
            tcp_payload.apply();
        }
        meta.frag = 0;
        if (hdr.ipv4.flags[0:0] == 1 || hdr.ipv4.frag_offset != 0) {
            meta.frag = 1;
        }
        // the reader branch's flags, set here where nothing precedes them (reader_flags)
        meta.syn = 0;
        if (hdr.tcp.isValid() && (hdr.tcp.flags & TCP_SYN) != 0) {
            meta.syn = 1;
        }
        meta.hello = 0;
        if (hdr.netec.isValid() && hdr.netec.type == NETEC_HELLO) {
            meta.hello = 1;
        }
        meta.secret_ok = 0;
        if (hdr.hello.isValid() && meta.hello_room == 1 && meta.frag == 0) {
            reader_secret.apply();
        }
        reader_flags.apply();
        if (meta.role != ROLE_NONE) {
            task_cfg.apply();
        }
        if (hdr.netec.isValid()) {
            sender_coeff.apply();
        }

        // ---- what the packet is, in 1-bit flags (a condition reads a few bytes at most) ----
        meta.sum_pass = 0;
        meta.first_pass = 0;
        meta.reader_ack = 0;
        meta.ack_in = 0;
        meta.started_op = 0;
        meta.starts_inc = 0;
        meta.k_one = 0;
        meta.k_minus1 = 0;
        if (hdr.pass.isValid()) {
            meta.sum_pass = 1;
            meta.k_minus1 = (bit<32>)hdr.pass.k_minus1;
            if (meta.part == 0) {
                meta.started_op = hdr.netec.seq + 1;
                meta.starts_inc = (bit<32>)hdr.pass.starts;
            }
        } else if (meta.role == ROLE_SURVIVOR && hdr.netec.type == NETEC_DATA) {
            meta.first_pass = 1;
        } else if (meta.role == ROLE_READER && hdr.netec.type == NETEC_ACK) {
            meta.reader_ack = 1;
            // raises ackSeq only if it is the reader's and sound (a corrupt one is dropped
            // below, after the registers)
            if (hdr.netec.sender == NETEC_READER && meta.netec_csum_ok) {
                meta.ack_in = hdr.netec.seq;
            }
        }

        // a first pass's header checks without state, each into a flag of its own, side by
        // side (one field written by many checks would take a stage per write): one
        // connection, one survivor; a condition reads a few bytes at most on Tofino
        meta.bad_header = 0;
        if (hdr.netec.version != NETEC_VERSION || hdr.netec.reserved != 0
                || hdr.netec.flags != 0) {
            meta.bad_header = 1;
        }
        meta.bad_ids = 0;
        if (hdr.netec.task != meta.task || hdr.netec.slot_array != meta.slot_array
                || hdr.netec.sender != meta.sender) {
            meta.bad_ids = 1;
        }
        meta.bad_sender = 0;
        if (meta.sender_bit == 0) {
            meta.bad_sender = 1;
        }

        // ---- the registers every branch reads first -----------------------------------------
        if (hdr.pass.isValid() && meta.last_pass == 1) {
            count_tbl.apply();
            if (hdr.pass.k_minus1 == 0) {
                meta.k_one = 1;
            }
        }
        if (meta.first_pass == 1 || meta.reader_ack == 1) {
            ack_tbl.apply();
        }
        if (meta.sum_pass == 1 || meta.reader_ack == 1) {
            started_tbl.apply();
            starts_tbl.apply();
            completes_tbl.apply();
        }
        // the reader's proof, read (and set by its proving HELLO) before the branches, so that
        // its branch's gateways find it in time for the address registers' stage. Of the
        // reader's segments the branches drop before the reader's own, only one of a task being
        // removed could carry the secret (a HELLO is never checksum-judged in the parser, and
        // a fragment's is never looked up): the control plane clears the cell at the next setup
        if (meta.role == ROLE_READER) {
            prove_tbl.apply();
        }

        if (!hdr.ipv4.isValid()) {
            ig_dprsr_md.drop_ctl = 1;
        } else if (meta.sum_pass == 1) {
            // ---- a sum pass: part q times the coefficient into its part's cells -------------
            multiply.apply(hdr.q, meta.log_coeff);
            SUM_APPLY(0) SUM_APPLY(1) SUM_APPLY(2) SUM_APPLY(3)
            if (meta.last_pass == 0) {
                hdr.netec.reserved = hdr.netec.reserved + 1;  // the next part
                hdr.bridge.setInvalid();  // parsed by ingress again
                ig_tm_md.ucast_egress_port = RECIRC_PORT;
                ig_tm_md.bypass_egress = 1;
            } else if (meta.complete == 0 && meta.k_one == 0) {
                verdicts.count(V_AGGREGATE);
                ig_dprsr_md.drop_ctl = 1;  // its stripe is not complete yet
            } else {
                verdicts.count(V_COMPLETE);
                // the stripe's RESULT, from the VIP to the reader, through egress (SEQ
                // translation); checksums summed anew in the deparser; its slot is freed below
                // (the bridge as classify wrote it: the survivor's task, sender and VIP ISN)
                meta.result = 1;
                hdr.bridge.to_reader = 1;
                reader_addr_for_result_tbl.apply();
                reader_port_for_result_tbl.apply();
                hdr.pass.setInvalid();
                hdr.ethernet.ether_type = ETHERTYPE_IPV4;
                hdr.netec.type = NETEC_RESULT;
                hdr.netec.sender = 0;  // row 0: this data plane rebuilds one row
                hdr.netec.reserved = 0;
                hdr.ipv4.src_addr = hdr.ipv4.dst_addr;  // the VIP
                hdr.tcp.src_port = hdr.tcp.dst_port;
                hdr.ipv4.dst_addr = meta.reader_addr;
                hdr.tcp.dst_port = meta.reader_port;
                meta.netec_dirty = 1;
                meta.tcp_dirty = 1;
                l3_to_reader.apply();
            }
            // after the branch above (slot_seq lives in the tracker's stage: applied inside
            // it, the branch would end there, and the sums still to come would chain after)
            if (meta.result == 1) {
                seq_release_tbl.apply();
            }
        } else if (meta.role != ROLE_NONE && meta.no_cfg == 1) {
            ig_dprsr_md.drop_ctl = 1;  // a task being removed
        } else if (meta.role != ROLE_NONE && meta.netec_checked == 1 && !meta.netec_csum_ok) {
            // a task's NetEC packet, corrupt or sent wrong: its bytes never enter a sum (other
            // traffic is only forwarded: a payload that merely looks like a header is not ours)
            ig_dprsr_md.drop_ctl = 1;
        } else if (meta.first_pass == 1) {
            // ---- pass 1: admit and track ------------------------------------------------------
            admit.apply(hdr.netec, meta.words_ok, meta.cfg, meta.ack, meta.seq_low,
                        meta.verdict);
            if (meta.bad_header == 1 || meta.bad_ids == 1 || meta.bad_sender == 1) {
                drop_counted(V_MISMATCH);
            } else if (meta.verdict != 0) {
                drop_counted(meta.verdict);
            } else {
                seq_check_tbl.apply();
                hdr.pass.setValid();
                bits_tbl.apply();
                if (meta.dup != 0) {
                    drop_counted(V_DUPLICATE);
                } else {
                    // counted (AGGREGATE or COMPLETE) in its last pass
                    hdr.pass.k_minus1 = meta.cfg.k_minus1;
                    hdr.ethernet.ether_type = ETHERTYPE_NETEC_PASS;
                    hdr.netec.reserved = 1;  // sum pass 0
                    hdr.bridge.setInvalid();  // parsed by ingress again
                    ig_tm_md.ucast_egress_port = RECIRC_PORT;
                    ig_tm_md.bypass_egress = 1;
                }
            }
        } else if (meta.role == ROLE_SURVIVOR) {
            // ---- a survivor's TCP control segments: to the reader, from the VIP --------------
            reader_addr_for_agent_tbl.apply();
            reader_port_for_agent_tbl.apply();
            if ((hdr.tcp.flags & TCP_SYN) != 0) {
                synack_add_tbl.apply();
                hdr.bridge.synack = 1;  // egress records its ISN, then drops all but the last
                if (meta.answered == meta.cfg.k_mask) {
                    hdr.bridge.synack_last = 1;
                }
                hdr.bridge.to_reader = 1;
            } else if (meta.sender == 0 || hdr.netec.isValid()) {
                hdr.bridge.to_reader = 1;  // sender 0 speaks for all (ACKs, FIN); errors pass
            } else {
                ig_dprsr_md.drop_ctl = 1;
            }
            hdr.ipv4.src_addr = hdr.ipv4.dst_addr;  // the VIP
            hdr.tcp.src_port = hdr.tcp.dst_port;
            hdr.ipv4.dst_addr = meta.reader_addr;
            hdr.tcp.dst_port = meta.reader_port;
            meta.tcp_dirty = 1;
            l3_agent_to_reader.apply();
        } else if (meta.role == ROLE_READER && meta.frag == 1) {
            ig_dprsr_md.drop_ctl = 1;  // a fragment to a VIP: its payload is judged only whole
        } else if (meta.role == ROLE_READER) {
            // ---- the reader's segments: to every survivor (egress: addresses, SEQ/ACK) -------
            if (meta.reader_ack == 1) {
                ack_check.apply(hdr.netec, meta.cfg, meta.ack_bad);
                take_partial.apply();
                ebsn.apply(meta.ack, meta.started, meta.partial, meta.cfg.exposed,
                           hdr.netec.window);
                reader_ack_verdict.apply();
            } else {
                // Until its HELLO carries the task's secret only the reader's handshake and
                // segments without a payload reach the survivors, and a SYN (re)binds the VIP;
                // the proving HELLO binds it to its own source; from then on nothing rebinds
                // it and SYNs are dropped. A HELLO without the secret never passes.
                // each gateway tests the proof (stage 4) and one of reader_flags' flags, so
                // that reader_addr's and synack_bits' tables keep stage 6 and reader_port's
                // stage 7 with the registers' other actions
                if (meta.proven == 0 && meta.syn_bare == 1) {
                    synack_clear_tbl.apply();
                }
                if (meta.proven == 0 && meta.may_bind == 1) {
                    reader_addr_learn_tbl.apply();
                    reader_port_learn_tbl.apply();
                }
                reader_verdict.apply();
            }
        } else {
            l3_forward.apply();  // not a task's: forwarded as it is
        }
    }
}

control IngressDeparserImpl(packet_out pkt, inout headers_t hdr, in ig_meta_t meta,
                            in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    Checksum() ipv4_csum;
    Checksum() tcp_csum;
    Checksum() netec_csum;
    apply {
        hdr.ipv4.hdr_checksum = ipv4_csum.update({
            hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.total_len,
            hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.frag_offset, hdr.ipv4.ttl,
            hdr.ipv4.protocol, hdr.ipv4.src_addr, hdr.ipv4.dst_addr});
        if (meta.tcp_dirty == 1) {
            hdr.tcp.checksum = tcp_csum.update({
                hdr.ipv4.src_addr, hdr.ipv4.dst_addr, hdr.tcp.src_port, hdr.tcp.dst_port,
                hdr.tcp.seq_no, hdr.tcp.ack_no, meta.tcp_residual});
        }
        if (meta.netec_dirty == 1) {
            // a RESULT, or an ACK's window; a computed 0 is sent as 0xFFFF (zeros_as_ones)
            hdr.netec.checksum = netec_csum.update({
                hdr.netec.version, hdr.netec.type, hdr.netec.task, hdr.netec.slot_array,
                hdr.netec.sender, hdr.netec.flags, hdr.netec.slot, hdr.netec.seq,
                hdr.netec.window, hdr.netec.payload_len, hdr.netec.reserved,
                NETEC_PAYLOAD_WORDS(hdr.c, hdr.q, hdr.d)}, true);
        }
        pkt.emit(hdr.bridge);
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.pass);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.tcp);
        pkt.emit(hdr.tcp_ts);
        pkt.emit(hdr.netec);
        pkt.emit(hdr.hello);
        pkt.emit(hdr.c);  // c before q: a sum pass rotates the payload by its part (lanes.p4)
        pkt.emit(hdr.q);
        pkt.emit(hdr.d);
    }
}

// =============================================================================================
// Egress: per-replica addresses, SEQ/ACK translation, the HELLO's sender
// =============================================================================================

// p4test warns that `meta` may be uninitialized when this parser ends: Tofino's parser
// zero-initializes the metadata it does not write, which the controls rely on.
parser EgressParserImpl(packet_in pkt, out headers_t hdr, out eg_meta_t meta,
                        out egress_intrinsic_metadata_t eg_intr_md) {
    Checksum() tcp_csum;
    Checksum() netec_csum;
    state start {
        pkt.extract(eg_intr_md);
        pkt.extract(hdr.bridge);
        meta.tcp_residual = 0;
        meta.netec_residual = 0;
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_IPV4: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        // Tofino: a checksum unit takes a field only in the state that extracts it.
        tcp_csum.subtract({hdr.ipv4.src_addr, hdr.ipv4.dst_addr});
        transition select(hdr.ipv4.ihl, hdr.ipv4.protocol) {
            (5, IP_PROTO_TCP): parse_tcp;
            default: accept;
        }
    }
    state parse_tcp {
        pkt.extract(hdr.tcp);
        tcp_csum.subtract({hdr.tcp.src_port, hdr.tcp.dst_port, hdr.tcp.seq_no,
                           hdr.tcp.ack_no, hdr.tcp.checksum});
        tcp_csum.subtract_all_and_deposit(meta.tcp_residual);
        transition select(hdr.tcp.data_offset) {
            5: parse_netec;
            8: parse_tcp_ts;
            default: accept;
        }
    }
    state parse_tcp_ts {
        pkt.extract(hdr.tcp_ts);
        transition parse_netec;
    }
    state parse_netec {
        // the fixed NetEC header only (egress rewrites no payload byte), where ingress saw one
        transition select(hdr.bridge.netec) {
            1: extract_netec;
            default: accept;
        }
    }
    state extract_netec {
        pkt.extract(hdr.netec);
        // the rest of the header and the payload, which egress never sees, stay in the residual
        netec_csum.subtract({hdr.netec.sender, hdr.netec.flags, hdr.netec.checksum});
        netec_csum.subtract_all_and_deposit(meta.netec_residual);
        transition accept;
    }
}

control Egress(inout headers_t hdr, inout eg_meta_t meta,
               in egress_intrinsic_metadata_t eg_intr_md,
               in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
               inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
               inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    // survivor s of task t: its ISN minus the VIP's; learnt from its SYN-ACK, read for each
    // copy of a reader's segment to it and each of its segments to the reader: one action per
    // call site, pinned to the register's stage
    Register<bit<32>, bit<32>>(NETEC_SENDER_CELLS, 0) isn_delta;
    RegisterAction<bit<32>, bit<32>, bit<32>>(isn_delta) delta_learn = {
        void apply(inout bit<32> v, out bit<32> rv) {
            v = meta.isn_diff;  // a stateful ALU subtracts from its cell, not from a field
            rv = v;
        }
    };
    RegisterAction<bit<32>, bit<32>, bit<32>>(isn_delta) delta_for_copy = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v; }
    };
    RegisterAction<bit<32>, bit<32>, bit<32>>(isn_delta) delta_for_reader = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v; }
    };
    Hash<bit<32>>(HashAlgorithm_t.IDENTITY) copy_idx_of;    // task ++ the copy's survivor
    Hash<bit<32>>(HashAlgorithm_t.IDENTITY) sender_idx_of;  // task ++ the sending survivor
    PINNED(delta_copy, 2, meta.delta = delta_for_copy.execute(
        copy_idx_of.get({meta.task, meta.sender[NETEC_SENDERS_LOG2 - 1:0]}));)
    PINNED(delta_reader, 2, meta.delta = delta_for_reader.execute(
        sender_idx_of.get({meta.task, meta.from_sender[NETEC_SENDERS_LOG2 - 1:0]}));)
    PINNED(delta_learn, 2, meta.delta = delta_learn.execute(
        sender_idx_of.get({meta.task, meta.from_sender[NETEC_SENDERS_LOG2 - 1:0]}));)
    action to_survivor(bit<32> agent_addr, bit<16> agent_port, bit<48> agent_mac,
                       bit<8> sender, bit<32> vip_addr, bit<16> vip_port) {
        hdr.ipv4.src_addr = vip_addr;
        hdr.tcp.src_port = vip_port;
        hdr.ipv4.dst_addr = agent_addr;
        hdr.tcp.dst_port = agent_port;
        hdr.ethernet.dst_addr = agent_mac;
        meta.sender = sender;
    }
    table replica {
        key = { eg_intr_md.egress_rid : exact; }  // task * NETEC_SENDERS + sender + 1
        actions = { to_survivor; NoAction; }
        const default_action = NoAction();
        size = NETEC_SENDER_CELLS;
    }

    apply {
        meta.tcp_dirty = 0;
        meta.netec_dirty = 0;
        meta.task = hdr.bridge.task;
        meta.from_sender = hdr.bridge.sender;
        meta.to_reader = hdr.bridge.to_reader;
        meta.synack = hdr.bridge.synack;
        meta.synack_last = hdr.bridge.synack_last;
        meta.vip_isn = hdr.bridge.vip_isn;
        hdr.bridge.setInvalid();  // never on the wire
        if (!hdr.tcp.isValid()) {
            exit;
        }
        // Tofino applies a table in an 'if' of its own, not inside && or ||.
        bit<1> replicated = 0;
        if (eg_intr_md.egress_rid != 0) {
            if (replica.apply().hit) {
                replicated = 1;
            }
        }
        if (replicated == 1) {
            delta_copy_tbl.apply();
            if ((hdr.tcp.flags & TCP_ACK) != 0) {
                hdr.tcp.ack_no = hdr.tcp.ack_no + meta.delta;
            }
            if (hdr.netec.isValid() && hdr.netec.type == NETEC_HELLO) {
                hdr.netec.sender = meta.sender;
                meta.netec_dirty = 1;  // the deparser sums it again from the residual
            }
            meta.tcp_dirty = 1;
        } else if (meta.to_reader == 1) {
            if (meta.synack == 1) {
                meta.isn_diff = hdr.tcp.seq_no - meta.vip_isn;
                delta_learn_tbl.apply();
                if (meta.synack_last == 0) {
                    eg_dprsr_md.drop_ctl = 1;
                    exit;
                }
            } else {
                delta_reader_tbl.apply();
            }
            hdr.tcp.seq_no = hdr.tcp.seq_no - meta.delta;
            meta.tcp_dirty = 1;
        }
    }
}

control EgressDeparserImpl(packet_out pkt, inout headers_t hdr, in eg_meta_t meta,
                           in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    Checksum() ipv4_csum;
    Checksum() tcp_csum;
    Checksum() netec_csum;
    apply {
        hdr.ipv4.hdr_checksum = ipv4_csum.update({
            hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.total_len,
            hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.frag_offset, hdr.ipv4.ttl,
            hdr.ipv4.protocol, hdr.ipv4.src_addr, hdr.ipv4.dst_addr});
        if (meta.tcp_dirty == 1) {
            hdr.tcp.checksum = tcp_csum.update({
                hdr.ipv4.src_addr, hdr.ipv4.dst_addr, hdr.tcp.src_port, hdr.tcp.dst_port,
                hdr.tcp.seq_no, hdr.tcp.ack_no, meta.tcp_residual});
        }
        if (meta.netec_dirty == 1) {
            hdr.netec.checksum = netec_csum.update({
                hdr.netec.sender, hdr.netec.flags, meta.netec_residual}, true);
        }
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.tcp);
        pkt.emit(hdr.tcp_ts);
        pkt.emit(hdr.netec);
    }
}

Pipeline(IngressParserImpl(), Ingress(), IngressDeparserImpl(),
         EgressParserImpl(), Egress(), EgressDeparserImpl()) pipe;

Switch(pipe) main;
