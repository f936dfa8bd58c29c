// NetEC data plane for Tofino 1 (TNA), datagram mode with pre-multiplied survivors
// (docs/protocol.md "Datagram mode", "Pre-multiplied mode"): every NetEC packet travels alone
// in a UDP datagram, each survivor has multiplied its unit by its coefficient, and the switch
// only XORs. With no multiply tables, every stateful ALU the tracker leaves is a payload word:
// P = NETEC_XOR_PAYLOAD bytes per packet. The v1model twin (../v1model/netec_xor.p4) has the
// same tables, registers and decisions, and runs on BMv2 against the shared vectors that the
// reference model (netec_p4/model/netec_model.py) and the Java switch reproduce.
//
// Where the work is done (Tofino 1: 12 MAU stages, 4 stateful ALUs and 16 logical tables a
// stage, shared by ingress and egress; an egress parser reads at most 160 bytes, so payload
// words are ingress's alone):
//   pass 1:  classify (one table gives a survivor's or the reader's whole task config),
//            admission, the slot tracker (slot_seq, slot_bits, slot_count); no sums: a
//            duplicate is known only in the tracker's third stage;
//   egress of pass 1: EBSN's counters (maxStarted + 1, stripes started in a free slot,
//            stripes completed), on the packet's way to the recirculation port;
//   pass 2:  the 32 sum registers, one per word of the payload half `q` (halves.p4), at
//            register index cell ++ 0; a payload of one half leaves now;
//   pass 3:  the same registers for the other half at cell ++ 1 (payloads over one half);
//   egress:  each survivor's copy of a reader's packet: addresses, sender, EBSN's counters
//            read, the window.
// Ingress tests the sum passes first: their branch reads only what the parser wrote (the pass
// header, the half, and the task, slot array and slot of the NetEC header, which pass 1 held
// to the survivor's survivor_in entry), so no table precedes the sums and they may take any
// stage; everything else is the other branch. EBSN's counters are egress's so that every
// register of ingress but the reader's address and port and slot_seq has one user.
// The ingress deparser emits half c before q, so the halves swap places on the wire every
// pass: pass 1 parses the payload's first half into c (nothing changes), pass 2 into q (summed,
// then behind the rest), pass 3 finds the rest first, in q, and puts the payload back in order.
// The last pass rewrites the stripe's completing packet into its RESULT (checksum summed over
// header and words in the ingress deparser) or drops it.

#include <core.p4>
#include <tna.p4>

#include "../include/headers.p4"
#include "../include/netec_logic.p4"
#include "../generated/halves.p4"

#if NETEC_XOR_HALF_WORDS != 32
#error "halves.p4 is generated for 32 words per half"
#endif

// A recirculated DATA packet's ethertype says which pass it comes back for (the parser
// selects on it in every pass: a pass header's own field would be unset in the first).
const bit<16> ETHERTYPE_SUM_FIRST = 0x88B5;   // pass 2: sum the first half
const bit<16> ETHERTYPE_SUM_SECOND = 0x88B6;  // pass 3: sum the second half
// Recirculation port of pipe 0 on Tofino 1 (68); the control plane configures it in loopback.
const PortId_t RECIRC_PORT = 68;
// A payload longer than one half takes a third pass.
const bit<16> HALF_BYTES = 128;  // 4 * NETEC_XOR_HALF_WORDS

// Verdict of a DATA packet's first pass (the counter verdicts) besides netec_logic.p4's
// MISMATCH, DUPLICATE, AGGREGATE and COMPLETE: seq < ackSeq or seq >= ackSeq + S.
const bit<8> V_OUTSIDE = 7;

// Carried by a DATA packet into its next passes: what the first decided.
header netec_xpass_h {
    bit<8> k_minus1;  // the task's k - 1: the last pass counts the stripe's packets to k
    bit<8> reset;     // 1: the slot starts this stripe: overwrite the sums
}

// What ingress tells egress: a first pass's updates of EBSN's counters, and for a reader's
// packet copied to every survivor, the window's inputs ingress has.
@flexible
header bridge_h {
    bit<8>  counters;     // 1: egress runs EBSN's counters of the header's task (a first
                          // pass, a RESULT, or a reader's ACK)
    bit<32> started_op;   // maxStarted + 1 raised to this (0: read)
    bit<32> starts_inc;   // stripes started in a free slot: + this
    bit<32> completes_inc;// stripes completed: + this
    bit<8>  ebsn;         // an ACK: egress lowers each copy's window (EBSN)
    bit<32> ack;          // ackSeq, read by ingress
    bit<32> exposed;      // I, from vip_in
}

struct headers_t {
    bridge_h bridge;
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

struct ig_meta_t {
    bit<8>  words_ok;       // the parser took the payload into the halves (whole words, <= P)
    bool    netec_csum_ok;
    bit<1>  netec_checked;  // the parser judged the NetEC checksum (DATA words or an ACK)
    bit<1>  recirculated;   // the parser read a pass header (recirculation port only)
    // survivor_in (a survivor's packet), or else vip_in (any other to a VIP: the reader's)
    bit<1>  survivor;
    bit<8>  task;
    bit<8>  slot_array;
    task_cfg_t cfg;
    bit<16> sender_bit;
    bit<1>  reader;
    bit<1>  secret_ok;      // reader_secret: the HELLO carries its task's secret
    bit<32> reader_stripes;
    bit<16> cell;
    bit<32> ack;
    bit<32> ack_in;         // an ACK's seq (raises ackSeq), 0 otherwise (reads it)
    bit<8>  taken;
    bit<16> dup;            // the sender's bit among those counted before (0: not a duplicate)
    bit<8>  complete;       // a last pass's count reached k
    bit<32> k_minus1;       // the pass header's, widened for slot_count's compare
    bit<1>  half;           // the half a sum pass adds: 0 in pass 2, 1 in pass 3 (parser)
    bit<1>  result;         // a sum pass's packet leaves as its stripe's RESULT
    bit<1>  len_full;       // payload_len == P
    bit<32> seq_plus1;
    bit<16> seq_low;
    // admission (docs/protocol.md "The switch's rules for DATA"): each check into a 1-bit flag
    // of its own (a condition reads 4 bytes and 12 bits at most; one field written by many
    // checks would take a stage per write)
    bit<32> past;           // max(seq, stripes - 1) ^ (stripes - 1): 0 iff seq < stripes
    bit<32> behind;         // (seq - ackSeq) & ~(S - 1): 0 iff ackSeq <= seq < ackSeq + S
    bit<32> last_diff;      // seq ^ (stripes - 1): 0 on the last stripe
    bit<16> len_last_diff;  // payload_len ^ the last stripe's length
    bit<16> slot_diff;      // (seq mod S) ^ slot
    bit<1>  bad_words;
    bit<1>  bad_version;
    bit<1>  bad_reserved;
    bit<1>  bad_flags;
    bit<1>  bad_past;
    bit<1>  bad_slot;
    bit<1>  is_last;
    bit<1>  len_last;
    bit<1>  bad_len;
    bit<32> over;           // the reader's ACK: max(seq, stripes) ^ stripes, 0 iff seq <= stripes
    bit<32> reader_addr;
    bit<16> reader_port;
}

struct eg_meta_t {
    bit<16> netec_residual; // the NetEC checksum less its header: its payload's sum
    bit<32> started;        // EBSN's counters as this packet left them
    bit<32> starts;
    bit<32> completes;
    bit<32> partial;        // starts - completes: slots holding partial sums
}

// =============================================================================================
// Ingress
// =============================================================================================

// p4test warns that `meta` may be uninitialized when this parser ends: Tofino's parser
// zero-initializes the metadata it does not write, which the controls rely on.
parser IngressParserImpl(packet_in pkt, out headers_t hdr, out ig_meta_t meta,
                         out ingress_intrinsic_metadata_t ig_intr_md) {
    Checksum() netec_csum;

    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        meta.words_ok = 0;
        meta.netec_csum_ok = false;
        meta.netec_checked = 0;
        meta.recirculated = 0;
        meta.half = 0;
        transition parse_ethernet;
    }
    state parse_ethernet {
        pkt.extract(hdr.ethernet);
        // a pass header only from the recirculation port: from any other port it would let a
        // peer skip the first pass's admission (such a frame has no IPv4: dropped)
        transition select(ig_intr_md.ingress_port, hdr.ethernet.ether_type) {
            (RECIRC_PORT, ETHERTYPE_SUM_FIRST): parse_pass;
            (RECIRC_PORT, ETHERTYPE_SUM_SECOND): parse_pass;
            (_, ETHERTYPE_IPV4): parse_ipv4;
            default: accept;
        }
    }
    state parse_pass {
        pkt.extract(hdr.pass);
        meta.recirculated = 1;
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
            28 .. 0xFFFF: parse_netec;  // 8 UDP + 20 NetEC
            default: accept;
        }
    }
    state parse_netec {
        pkt.extract(hdr.netec);
        netec_csum.add(hdr.netec);
        // DATA words into the halves by pass (first pass: checksum judged after the last);
        // an ACK's header judged; a HELLO's JSON stays payload, never summed
        transition select(hdr.ethernet.ether_type, hdr.netec.type) {
            (ETHERTYPE_IPV4, NETEC_DATA): parse_first;
            (ETHERTYPE_IPV4, NETEC_ACK): parse_ack;
            (ETHERTYPE_IPV4, NETEC_HELLO): parse_hello;
            (ETHERTYPE_SUM_FIRST, NETEC_DATA): parse_sum_first;
            (ETHERTYPE_SUM_SECOND, NETEC_DATA): parse_sum_second;
            default: accept;
        }
    }
    state parse_ack {
        transition select(hdr.netec.payload_len) {
            0: netec_verified;
            default: accept;
        }
    }
    state parse_hello {  // long enough to hold a secret: its first bytes, emitted again as read
        transition select(hdr.netec.payload_len) {
            NETEC_HELLO_SECRET_END .. 0xFFFF: take_hello;
            default: accept;
        }
    }
    state take_hello {
        pkt.extract(hdr.hello);
        transition accept;
    }
    state parse_first {  // c <- the first half, q <- the rest
        transition select(hdr.netec.payload_len) {
            NETEC_FIRST_CASES(c, words_verified)
            default: accept;
        }
    }
    state parse_sum_first {  // q <- the first half, c <- the rest
        meta.half = 0;
        transition select(hdr.netec.payload_len) {
            NETEC_FIRST_CASES(q, words_done)
            default: accept;
        }
    }
    state parse_sum_second {  // q <- the rest (first on the wire now), c <- the first half
        meta.half = 1;
        transition select(hdr.netec.payload_len) {
            NETEC_SECOND_CASES(q)
            default: accept;
        }
    }
#define WORD_STATE(X, J, NEXT)                                                                \
    state X##_##J {                                                                           \
        pkt.extract(hdr.X.w##J);                                                              \
        netec_csum.add(hdr.X.w##J);                                                           \
        transition X##_##NEXT;                                                                \
    }
#define LAST_STATE(X, J)                                                                      \
    state X##_##J {                                                                           \
        pkt.extract(hdr.X.w##J);                                                              \
        netec_csum.add(hdr.X.w##J);                                                           \
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
        transition words_verified;
    }
    // after c's last word: the first pass goes on into q; pass 2 parsed q first, so is done
    state c_end {
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_IPV4: first_rest;
            default: words_done;
        }
    }
    state first_rest {
        transition select(hdr.netec.payload_len) {
            NETEC_REST_CASES(d, words_verified)
            default: accept;
        }
    }
    // after q's last word: pass 2 goes on into c; pass 3 takes the whole first half into c
    state q_end {
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_SUM_FIRST: sum_rest;
            ETHERTYPE_SUM_SECOND: c_0;
            default: words_verified;
        }
    }
    state sum_rest {
        transition select(hdr.netec.payload_len) {
            NETEC_REST_CASES(c, words_done)
            default: accept;
        }
    }
    state words_done {  // a later pass: the words as the first pass judged them
        meta.words_ok = 1;
        transition accept;
    }
    state words_verified {
        meta.words_ok = 1;
        transition netec_verified;
    }
    state netec_verified {
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

    // ---- registers: a register's actions all run in its one stage; the branches that use one
    // (survivor, sum pass, reader) exclude each other, so they share it ----------------------
    // ackSeq (lo) beside the task's stripes (hi, written at setup): the reader's ACK raises lo,
    // never past hi (each compare of a stateful ALU takes one field of the packet, so the
    // bound is the register's own); a DATA packet's first pass reads it
    Register<ack_pair_t, bit<32>>(NETEC_TASKS, {0, 0}) ack_seq;
    // one action for both (a register's two actions from two branches found no common
    // stage): ack_in is an ACK's seq, 0 for DATA (a read)
    RegisterAction<ack_pair_t, bit<32>, bit<32>>(ack_seq) ack_access = {
        void apply(inout ack_pair_t v, out bit<32> rv) {
            if (meta.ack_in > v.lo && v.hi >= meta.ack_in) {
                v.lo = meta.ack_in;
            }
            rv = v.lo;
        }
    };
    // slot_seq and the reader's address and port are used from both branches (a sum pass's
    // RESULT, and a first pass or the reader's packets): each use is a RegisterAction of its
    // own in a table pinned to the register's stage, as placement does not look for one stage
    // that suits every branch ("not able to allocate ... in the same stage along with
    // Register").
    // The stripe a slot holds. The completing packet's last pass frees the slot: a packet of
    // the stripe after it (a retransmission after a lost RESULT) is aggregated again.
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
    // count): a packet counts only once all its words are in the sums, so one lost between
    // passes leaves the stripe short of k, stalled and never answered wrongly; a count another
    // stripe left restarts. Returns 1 on the k-th (k = 1: the pass header says so), and
    // marks the cell free, so the next packet restarts the count (a stateful ALU updates each
    // half with two expressions at most: seq or the marker; count + 1 or 1).
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
    // The reader's address and port: bound by the task's first reader HELLO (the control
    // plane clears them at setup; later HELLOs change nothing), read for each RESULT and each
    // survivor's packet to the reader.
    Register<bit<32>, bit<32>>(NETEC_TASKS, 0) reader_addr;
    RegisterAction<bit<32>, bit<32>, bit<32>>(reader_addr) reader_addr_learn = {
        void apply(inout bit<32> v) {
            if (v == 0) {
                v = hdr.ipv4.src_addr;
            }
        }
    };
    RegisterAction<bit<32>, bit<32>, bit<32>>(reader_addr) reader_addr_for_result = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v; }
    };
    RegisterAction<bit<32>, bit<32>, bit<32>>(reader_addr) reader_addr_for_agent = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v; }
    };
    Register<bit<16>, bit<32>>(NETEC_TASKS, 0) reader_port;
    RegisterAction<bit<16>, bit<32>, bit<16>>(reader_port) reader_port_learn = {
        void apply(inout bit<16> v) {
            if (v == 0) {
                v = hdr.udp.src_port;
            }
        }
    };
    RegisterAction<bit<16>, bit<32>, bit<16>>(reader_port) reader_port_for_result = {
        void apply(inout bit<16> v, out bit<16> rv) { rv = v; }
    };
    RegisterAction<bit<16>, bit<32>, bit<16>>(reader_port) reader_port_for_agent = {
        void apply(inout bit<16> v, out bit<16> rv) { rv = v; }
    };

// A register action in a keyless table of its own, pinned to STAGE.
#define PINNED(NAME, STAGE, BODY)                                                            \
    action NAME##_act() { BODY }                                                             \
    @stage(STAGE) @hidden table NAME##_tbl {                                                 \
        actions = { NAME##_act; }                                                            \
        const default_action = NAME##_act();                                                 \
    }
    // Stages: where a first pass reaches them (classify in 0, ackSeq in 2, admission in 2-5,
    // the tracker in 6-7); the count and the reader's registers early, for a sum pass's RESULT.
    PINNED(ack, 2, meta.ack = ack_access.execute((bit<32>)meta.task);)
    PINNED(seq_check, 6, meta.taken = seq_check.execute(meta.cell);)
    PINNED(seq_release, 6, seq_release.execute(meta.cell);)
    PINNED(reader_addr_learn, 2, reader_addr_learn.execute((bit<32>)meta.task);)
    PINNED(reader_port_learn, 2, reader_port_learn.execute((bit<32>)meta.task);)
    PINNED(reader_addr_for_result, 2,
           meta.reader_addr = reader_addr_for_result.execute((bit<32>)hdr.netec.task);)
    PINNED(reader_port_for_result, 2,
           meta.reader_port = reader_port_for_result.execute((bit<32>)hdr.netec.task);)
    PINNED(reader_addr_for_agent, 2,
           meta.reader_addr = reader_addr_for_agent.execute((bit<32>)meta.task);)
    PINNED(reader_port_for_agent, 2,
           meta.reader_port = reader_port_for_agent.execute((bit<32>)meta.task);)
    // the slot's bits: the first packet of a stripe in the slot restarts them, and its sums
    // (reset), and a stripe started in a free slot is counted for EBSN; keyed on slot_seq's own
    // answer, each field written once (a field computed from the answer, or written by a
    // default and then a check, would cost a stage)
    action bits_add_act() {
        meta.dup = bits_add.execute(meta.cell);
        hdr.pass.reset = 0;
        hdr.bridge.starts_inc = 0;
    }
    action bits_restart_act(bit<32> starts) {
        meta.dup = bits_restart.execute(meta.cell);
        hdr.pass.reset = 1;
        hdr.bridge.starts_inc = starts;
    }
    @stage(7) @hidden table bits_tbl {
        key = { meta.taken : exact; }
        actions = { bits_add_act; bits_restart_act; }
        const entries = {
            SLOT_SAME : bits_add_act(); SLOT_FREE : bits_restart_act(1);
            SLOT_STALE : bits_restart_act(0);
        }
    }
    PINNED(count, 1, meta.complete = count_last.execute(meta.cell);)

    Hash<bit<16>>(HashAlgorithm_t.IDENTITY) idx_of;       // slot array ++ slot ++ half

// One register per word of half q, one action at one call site: overwrite when the slot
// starts the stripe (the pass header says so), XOR otherwise, and write the new sum into the
// word. Only the completing packet's words leave as sums (the others are dropped in their last
// pass).
#define SUM_REGISTER(J)                                                                      \
    Register<bit<32>, bit<16>>(NETEC_XOR_SUM_CELLS, 0) sum##J;                               \
    RegisterAction<bit<32>, bit<16>, bit<32>>(sum##J) sum##J##_add = {                       \
        void apply(inout bit<32> v, out bit<32> rv) {                                        \
            if (hdr.pass.reset == 1) {                                                       \
                v = hdr.q.w##J.v;                                                            \
            } else {                                                                         \
                v = v ^ hdr.q.w##J.v;                                                        \
            }                                                                                \
            rv = v;                                                                          \
        }                                                                                    \
    };
// Each sum in a table pinned to a stage, its cell hashed in that stage from header fields:
// the placement fills stages with sums greedily and left the tracker no stateful ALU until
// stage 10 (15 stages in all); pinned, the sums take what the rest leaves (slot_count and
// egress's three EBSN counters fill stage 1, ackSeq and the reader's address and port 2,
// slot_seq 6, slot_bits 7), four a stage in 3-5, where the first pass only computes. They
// stay there only because nothing of the sum branch after them sits in a later stage than
// its predecessors allow: Tofino 1 runs a branch as one chain of tables in rising stages, so
// the RESULT's tables (stages 1-3) end the chain early and slot_seq's release, in stage 6,
// comes after the branch (p4c-barefoot 9.13.4: 11 stages; 14 with the release inside).
#define SUM_TABLE(J, STAGE)                                                                  \
    action sum##J##_act() {                                                                  \
        hdr.q.w##J.v = sum##J##_add.execute(idx_of.get({hdr.netec.slot_array,               \
            hdr.netec.slot[NETEC_SLOTS_LOG2 - 1:0], meta.half}));                            \
    }                                                                                        \
    @stage(STAGE) @hidden table sum##J##_tbl {                                              \
        actions = { sum##J##_act; }                                                          \
        const default_action = sum##J##_act();                                               \
    }
#define SUM_APPLY(J) sum##J##_tbl.apply();
    SUM_REGISTER(0)  SUM_REGISTER(1)  SUM_REGISTER(2)  SUM_REGISTER(3)
    SUM_REGISTER(4)  SUM_REGISTER(5)  SUM_REGISTER(6)  SUM_REGISTER(7)
    SUM_REGISTER(8)  SUM_REGISTER(9)  SUM_REGISTER(10) SUM_REGISTER(11)
    SUM_REGISTER(12) SUM_REGISTER(13) SUM_REGISTER(14) SUM_REGISTER(15)
    SUM_REGISTER(16) SUM_REGISTER(17) SUM_REGISTER(18) SUM_REGISTER(19)
    SUM_REGISTER(20) SUM_REGISTER(21) SUM_REGISTER(22) SUM_REGISTER(23)
    SUM_REGISTER(24) SUM_REGISTER(25) SUM_REGISTER(26) SUM_REGISTER(27)
    SUM_REGISTER(28) SUM_REGISTER(29) SUM_REGISTER(30) SUM_REGISTER(31)
    SUM_TABLE(0, 0)   SUM_TABLE(1, 0)   SUM_TABLE(2, 0)   SUM_TABLE(3, 0)
    SUM_TABLE(4, 3)   SUM_TABLE(5, 3)   SUM_TABLE(6, 4)   SUM_TABLE(7, 4)
    SUM_TABLE(8, 4)   SUM_TABLE(9, 4)   SUM_TABLE(10, 5)  SUM_TABLE(11, 5)
    SUM_TABLE(12, 5)  SUM_TABLE(13, 5)  SUM_TABLE(14, 6)  SUM_TABLE(15, 6)
    SUM_TABLE(16, 6)  SUM_TABLE(17, 7)  SUM_TABLE(18, 7)  SUM_TABLE(19, 7)
    SUM_TABLE(20, 8)  SUM_TABLE(21, 8)  SUM_TABLE(22, 8)  SUM_TABLE(23, 8)
    SUM_TABLE(24, 9)  SUM_TABLE(25, 9)  SUM_TABLE(26, 9)  SUM_TABLE(27, 9)
    SUM_TABLE(28, 10) SUM_TABLE(29, 10) SUM_TABLE(30, 10) SUM_TABLE(31, 10)

    Counter<bit<32>, bit<8>>(8, CounterType_t.PACKETS) verdicts;  // DATA packets by verdict

    // ---- classify -------------------------------------------------------------------------
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
    // the agent's address and port, the VIP's, and the task, slot array and sender the packet
    // names (one agent may serve two senders of a task from one address; a packet naming
    // another task is not this survivor's)
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

    // ACKS: the v1model twin's (0 once attached to a parent: ../v1model/xor/classify.p4); this
    // program serves no attach, so every entry has 1
    action from_reader(bit<8> task, bit<32> stripes, bit<32> exposed, bit<1> acks) {
        meta.reader = 1;
        meta.task = task;
        meta.reader_stripes = stripes;
        hdr.bridge.exposed = exposed;
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
    // answer"): a reader's HELLO binds the VIP and reaches the survivors only with it. Keyed
    // on the header alone, so it runs beside classify.
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

    action route(PortId_t port, bit<48> dmac) {
        ig_tm_md.ucast_egress_port = port;
        hdr.ethernet.dst_addr = dmac;
    }
    action unroutable() {
        ig_dprsr_md.drop_ctl = 1;
    }
    table l3_forward {
        key = { hdr.ipv4.dst_addr : lpm; }
        actions = { route; unroutable; }
        const default_action = unroutable();
        size = 1024;
    }

    // the same routes for packets rewritten to the reader (tables of their own: one call
    // site each; the control plane fills all three)
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

    // ---- admission: every comparison of two fields is computed in an action, as whole
    // fields (Tofino compares a field with a constant only), each step a table of one default
    // action --------------------------------------------------------------------------------
    action admit_seq_extremes() {
        meta.past = NETEC_MAX(hdr.netec.seq, meta.cfg.last_seq);
        meta.last_diff = hdr.netec.seq ^ meta.cfg.last_seq;
        meta.len_last_diff = hdr.netec.payload_len ^ meta.cfg.last_len;
        meta.slot_diff = meta.seq_low & meta.cfg.slot_mask;
        meta.seq_plus1 = hdr.netec.seq + 1;
    }
    @hidden table take_admit_seq_extremes {
        actions = { admit_seq_extremes; }
        const default_action = admit_seq_extremes();
    }
    action admit_behind() {
        meta.behind = hdr.netec.seq - meta.ack;
    }
    @hidden table take_admit_behind {
        actions = { admit_behind; }
        const default_action = admit_behind();
    }
    action admit_seq_tests() {
        meta.past = meta.past ^ meta.cfg.last_seq;
        meta.slot_diff = meta.slot_diff ^ hdr.netec.slot;
    }
    @hidden table take_admit_seq_tests {
        actions = { admit_seq_tests; }
        const default_action = admit_seq_tests();
    }
    // seq - ackSeq below S, which also fails a stale seq: its difference wraps above 2^31
    action admit_window() {
        meta.behind = meta.behind & meta.cfg.far_mask;
    }
    @hidden table take_admit_window {
        actions = { admit_window; }
        const default_action = admit_window();
    }
    // bfas warns of "conflicting instruction slot usage" between take_ack_seq_max and
    // reader_addr_for_agent_tbl (stage 2): a reader's ACK and a survivor's HELLO or ACK, two
    // branches of one if-else chain (survivor_in and vip_in never both hit), so at most one
    // of them writes the container the compiler overlaid their fields in.
    action ack_seq_max() { meta.over = NETEC_MAX(hdr.netec.seq, meta.reader_stripes); }
    @hidden table take_ack_seq_max {
        actions = { ack_seq_max; }
        const default_action = ack_seq_max();
    }
    action ack_past_end() { meta.over = meta.over ^ meta.reader_stripes; }
    @hidden table take_ack_past_end {
        actions = { ack_past_end; }
        const default_action = ack_past_end();
    }

    Hash<bit<16>>(HashAlgorithm_t.IDENTITY) cell_of;      // slot array ++ slot
    Hash<bit<16>>(HashAlgorithm_t.IDENTITY) seq_low_of;   // seq's low 16 bits

    action drop_counted(bit<8> why) {
        verdicts.count(why);
        ig_dprsr_md.drop_ctl = 1;
    }

    // ---- a sum pass (2 or 3): half q into its half's cells; the last pass of a complete
    // stripe leaves as its RESULT. Indexes from the header alone: its task, slot array and
    // slot are the ones pass 1 admitted (survivor_in's key), and a pass header is parsed only
    // from the recirculation port.
    action sum_pass() {
        ig_tm_md.bypass_egress = 1;
        hdr.bridge.setInvalid();
        meta.result = 0;  // P4-16 metadata starts undefined on Tofino
    }
    @hidden table take_sum_pass {
        actions = { sum_pass; }
        const default_action = sum_pass();
    }

    apply {
        // the slot's cell, from the header alone (a first pass admits only a header whose
        // slot array is its survivor's, so both branches may use it)
        meta.cell = cell_of.get({hdr.netec.slot_array, hdr.netec.slot[NETEC_SLOTS_LOG2 - 1:0]});
        if (hdr.pass.isValid()) {
            take_sum_pass.apply();
            SUM_APPLY(0)  SUM_APPLY(1)  SUM_APPLY(2)  SUM_APPLY(3)
            SUM_APPLY(4)  SUM_APPLY(5)  SUM_APPLY(6)  SUM_APPLY(7)
            SUM_APPLY(8)  SUM_APPLY(9)  SUM_APPLY(10) SUM_APPLY(11)
            SUM_APPLY(12) SUM_APPLY(13) SUM_APPLY(14) SUM_APPLY(15)
            SUM_APPLY(16) SUM_APPLY(17) SUM_APPLY(18) SUM_APPLY(19)
            SUM_APPLY(20) SUM_APPLY(21) SUM_APPLY(22) SUM_APPLY(23)
            SUM_APPLY(24) SUM_APPLY(25) SUM_APPLY(26) SUM_APPLY(27)
            SUM_APPLY(28) SUM_APPLY(29) SUM_APPLY(30) SUM_APPLY(31)
            // a payload over one half takes pass 3 (pass 2 has half 0); the last pass counts
            if (meta.half == 0 && hdr.netec.payload_len[15:7] != 0
                    && hdr.netec.payload_len != HALF_BYTES) {
                hdr.ethernet.ether_type = ETHERTYPE_SUM_SECOND;
                ig_tm_md.ucast_egress_port = RECIRC_PORT;
            } else {
                meta.k_minus1 = (bit<32>)hdr.pass.k_minus1;
                count_tbl.apply();
                // k = 1: every packet is its stripe (tested here, not written into complete:
                // a second writer would cost a stage)
                if (meta.complete == 0 && hdr.pass.k_minus1 != 0) {
                    verdicts.count(V_AGGREGATE);
                    ig_dprsr_md.drop_ctl = 1;  // its stripe is not complete yet
                } else {
                    verdicts.count(V_COMPLETE);
                    // the stripe's RESULT, from the VIP to the reader (summed anew in the
                    // deparser), through egress (the completes counter); its slot is freed
                    ig_tm_md.bypass_egress = 0;
                    hdr.bridge.setValid();
                    hdr.bridge.counters = 1;
                    hdr.bridge.started_op = 0;
                    hdr.bridge.starts_inc = 0;
                    hdr.bridge.completes_inc = 1;
                    hdr.bridge.ebsn = 0;
                    hdr.bridge.ack = 0;
                    hdr.bridge.exposed = 0;
                    reader_addr_for_result_tbl.apply();
                    reader_port_for_result_tbl.apply();
                    meta.result = 1;
                    hdr.pass.setInvalid();
                    hdr.ethernet.ether_type = ETHERTYPE_IPV4;
                    hdr.netec.type = NETEC_RESULT;
                    hdr.netec.sender = 0;
                    hdr.ipv4.src_addr = hdr.ipv4.dst_addr;  // the VIP
                    hdr.udp.src_port = hdr.udp.dst_port;
                    hdr.ipv4.dst_addr = meta.reader_addr;
                    hdr.udp.dst_port = meta.reader_port;
                    hdr.udp.checksum = 0;
                    l3_to_reader.apply();
                }
            }
            // the RESULT's slot is freed after the sums (slot_seq lives in the tracker's
            // stage, 6: applied inside the branch above, it would end that branch there, and
            // Tofino 1 would chain the sums still to come after it)
            if (meta.result == 1) {
                seq_release_tbl.apply();
            }
        } else {
            meta.survivor = 0;
            meta.reader = 0;
            meta.complete = 0;
            meta.result = 0;
            hdr.bridge.setValid();
            hdr.bridge.counters = 0;
            hdr.bridge.started_op = 0;
            hdr.bridge.completes_inc = 0;
            hdr.bridge.ebsn = 0;
            hdr.bridge.ack = 0;
            hdr.bridge.exposed = 0;
            // (starts_inc: written by the tracker for a first pass, by the ACK's copy below)
            // wide tests into 1-bit flags, side by side (a condition reads 4 bytes and 12 bits
            // at most, its enclosing conditions included)
            meta.len_full = 0;
            if (hdr.netec.payload_len == NETEC_XOR_PAYLOAD) {
                meta.len_full = 1;
            }
            meta.bad_words = 0;
            if (meta.words_ok != 1) {
                meta.bad_words = 1;
            }
            meta.bad_version = 0;
            if (hdr.netec.version != NETEC_VERSION) {
                meta.bad_version = 1;
            }
            meta.bad_reserved = 0;
            if (hdr.netec.reserved != 0) {
                meta.bad_reserved = 1;
            }
            meta.bad_flags = 0;
            if (hdr.netec.flags != 0 || hdr.netec.window != 0) {
                meta.bad_flags = 1;
            }
            meta.seq_low = seq_low_of.get({hdr.netec.seq});
            if (hdr.netec.isValid()) {
                // the reader's packets after: every register is indexed by the one task field
                if (!survivor_in.apply().hit) {
                    vip_in.apply();
                }
            }
            meta.secret_ok = 0;
            if (hdr.hello.isValid()) {
                reader_secret.apply();
            }

            // ackSeq, before the branches: raised by an ACK of the reader's, read by a first
            // pass
            meta.ack_in = 0;
            if (hdr.netec.type == NETEC_ACK) {
                meta.ack_in = hdr.netec.seq;
            }
            if (meta.survivor == 1 || meta.reader == 1) {
                ack_tbl.apply();
            }

            if (!hdr.ipv4.isValid()) {
                ig_dprsr_md.drop_ctl = 1;
            } else if (meta.survivor == 1 && meta.netec_checked == 1 && !meta.netec_csum_ok) {
                ig_dprsr_md.drop_ctl = 1;  // a task's NetEC packet, corrupt: never summed
            } else if (meta.survivor == 1 && hdr.netec.type == NETEC_DATA) {
                // ---- pass 1: admit and track ---------------------------------------------
                take_admit_seq_extremes.apply();
                take_admit_behind.apply();
                take_admit_seq_tests.apply();
                take_admit_window.apply();
                meta.bad_past = 0;
                if (meta.past != 0) {
                    meta.bad_past = 1;
                }
                meta.bad_slot = 0;
                if (meta.slot_diff != 0) {
                    meta.bad_slot = 1;
                }
                meta.is_last = 0;
                if (meta.last_diff == 0) {
                    meta.is_last = 1;
                }
                meta.len_last = 0;
                if (meta.len_last_diff == 0) {
                    meta.len_last = 1;
                }
                // every packet of a stripe has its length: P, or the last stripe's
                meta.bad_len = 0;
                if (meta.is_last == 1 && meta.len_last == 0) {
                    meta.bad_len = 1;
                }
                if (meta.is_last == 0 && meta.len_full == 0) {
                    meta.bad_len = 1;
                }
                if (meta.bad_words == 1 || meta.bad_version == 1 || meta.bad_reserved == 1
                        || meta.bad_flags == 1 || meta.bad_past == 1 || meta.bad_slot == 1
                        || meta.bad_len == 1) {
                    drop_counted(V_MISMATCH);
                } else if (meta.behind != 0) {
                    drop_counted(V_OUTSIDE);
                } else {
                    seq_check_tbl.apply();
                    hdr.pass.setValid();
                    bits_tbl.apply();
                    if (meta.dup != 0) {
                        drop_counted(V_DUPLICATE);
                    } else {
                        // counted (AGGREGATE or COMPLETE) in its last pass
                        hdr.pass.k_minus1 = meta.cfg.k_minus1;
                        // through egress (EBSN's counters) to the recirculation port
                        hdr.bridge.counters = 1;
                        hdr.bridge.started_op = meta.seq_plus1;
                        hdr.ethernet.ether_type = ETHERTYPE_SUM_FIRST;
                        ig_tm_md.ucast_egress_port = RECIRC_PORT;
                    }
                }
            } else if (meta.survivor == 1) {
                // ---- an agent's HELLO (an error) or ACK: to the reader, from the VIP -------
                reader_addr_for_agent_tbl.apply();
                reader_port_for_agent_tbl.apply();
                hdr.ipv4.src_addr = hdr.ipv4.dst_addr;
                hdr.udp.src_port = hdr.udp.dst_port;
                hdr.ipv4.dst_addr = meta.reader_addr;
                hdr.udp.dst_port = meta.reader_port;
                hdr.udp.checksum = 0;
                l3_agent_to_reader.apply();
            } else if (meta.reader == 1) {
                // ---- the reader's ACK or HELLO: to every survivor (egress: addresses, sender,
                // the ACK's EBSN window) ------------------------------------------------------
                if (meta.netec_checked == 1 && !meta.netec_csum_ok) {
                    ig_dprsr_md.drop_ctl = 1;
                } else if (hdr.netec.type == NETEC_ACK) {
                    hdr.bridge.ack = meta.ack;
                    take_ack_seq_max.apply();
                    take_ack_past_end.apply();
                    if (meta.over != 0 || hdr.netec.sender != NETEC_READER) {
                        ig_dprsr_md.drop_ctl = 1;  // past the task's stripes, or not the reader's
                    } else {
                        hdr.bridge.counters = 1;  // read by each copy
                        hdr.bridge.starts_inc = 0;
                        hdr.bridge.ebsn = 1;
                        ig_tm_md.mcast_grp_a = (bit<16>)meta.task + 1;
                    }
                } else if (hdr.netec.type == NETEC_HELLO && meta.secret_ok == 0) {
                    // without the task's secret: binds nothing, reaches no survivor
                    drop_counted(V_NO_SECRET);
                } else if (hdr.netec.type == NETEC_HELLO) {
                    reader_addr_learn_tbl.apply();
                    reader_port_learn_tbl.apply();
                    ig_tm_md.mcast_grp_a = (bit<16>)meta.task + 1;
                } else {
                    ig_dprsr_md.drop_ctl = 1;  // a reader sends ACKs and HELLOs only
                }
            } else {
                l3_forward.apply();  // not a task's: forwarded as it is
            }
        }
    }
}

control IngressDeparserImpl(packet_out pkt, inout headers_t hdr, in ig_meta_t meta,
                            in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    Checksum() ipv4_csum;
    Checksum() netec_csum;
    apply {
        hdr.ipv4.hdr_checksum = ipv4_csum.update({
            hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.total_len,
            hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.frag_offset, hdr.ipv4.ttl,
            hdr.ipv4.protocol, hdr.ipv4.src_addr, hdr.ipv4.dst_addr});
        if (meta.result == 1) {
            // the RESULT; a computed 0 is sent as 0xFFFF (docs/protocol.md)
            hdr.netec.checksum = netec_csum.update({
                hdr.netec.version, hdr.netec.type, hdr.netec.task, hdr.netec.slot_array,
                hdr.netec.sender, hdr.netec.flags, hdr.netec.slot, hdr.netec.seq,
                hdr.netec.window, hdr.netec.payload_len, hdr.netec.reserved,
                NETEC_HALF_WORDS(hdr.c), NETEC_HALF_WORDS(hdr.q),
                NETEC_HALF_WORDS(hdr.d)}, true);
        }
        pkt.emit(hdr.bridge);
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

// =============================================================================================
// Egress: a first pass's DATA packet on its way to the recirculation port (EBSN's counters),
// and each survivor's copy of a reader's packet (sum passes and RESULTs bypass it)
// =============================================================================================

parser EgressParserImpl(packet_in pkt, out headers_t hdr, out eg_meta_t meta,
                        out egress_intrinsic_metadata_t eg_intr_md) {
    Checksum() netec_csum;
    state start {
        pkt.extract(eg_intr_md);
        pkt.extract(hdr.bridge);
        meta.netec_residual = 0;
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_IPV4: parse_ipv4;
            ETHERTYPE_SUM_FIRST: parse_pass;  // a first pass, to the recirculation port
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
        // the payload stays unparsed: its sum is what the header leaves of the checksum
        netec_csum.subtract({hdr.netec.version, hdr.netec.type, hdr.netec.task,
                             hdr.netec.slot_array, hdr.netec.sender, hdr.netec.flags,
                             hdr.netec.slot, hdr.netec.seq, hdr.netec.window,
                             hdr.netec.payload_len, hdr.netec.checksum, hdr.netec.reserved});
        netec_csum.subtract_all_and_deposit(meta.netec_residual);
        transition accept;
    }
}

control Egress(inout headers_t hdr, inout eg_meta_t meta,
               in egress_intrinsic_metadata_t eg_intr_md,
               in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
               inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
               inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    action to_survivor(bit<32> agent_addr, bit<16> agent_port, bit<48> agent_mac,
                       bit<8> sender) {
        hdr.ipv4.src_addr = hdr.ipv4.dst_addr;  // the VIP
        hdr.udp.src_port = hdr.udp.dst_port;
        hdr.ipv4.dst_addr = agent_addr;
        hdr.udp.dst_port = agent_port;
        hdr.ethernet.dst_addr = agent_mac;
        hdr.netec.sender = sender;
        hdr.udp.checksum = 0;
    }
    table replica {
        key = { eg_intr_md.egress_rid : exact; }  // task * NETEC_SENDERS + sender + 1
        actions = { to_survivor; NoAction; }
        const default_action = NoAction();
        size = NETEC_SENDER_CELLS;
    }
    // EBSN's counters, each one action at one call site for both users: a first pass raises
    // or adds (its operands), each copy of the reader's ACK reads (operands 0). Partial slots
    // are starts - completes: two counters that only grow, in two stages side by side, where
    // one would wait for the completing packet's stage.
    Register<bit<32>, bit<32>>(NETEC_TASKS, 0) max_started_plus1;
    RegisterAction<bit<32>, bit<32>, bit<32>>(max_started_plus1) started_access = {
        void apply(inout bit<32> v, out bit<32> rv) {
            if (hdr.bridge.started_op > v) {
                v = hdr.bridge.started_op;
            }
            rv = v;
        }
    };
    Register<bit<32>, bit<32>>(NETEC_TASKS, 0) slot_starts;
    RegisterAction<bit<32>, bit<32>, bit<32>>(slot_starts) starts_access = {
        void apply(inout bit<32> v, out bit<32> rv) {
            v = v + hdr.bridge.starts_inc;
            rv = v;
        }
    };
    Register<bit<32>, bit<32>>(NETEC_TASKS, 0) slot_completes;
    RegisterAction<bit<32>, bit<32>, bit<32>>(slot_completes) completes_access = {
        void apply(inout bit<32> v, out bit<32> rv) {
            v = v + hdr.bridge.completes_inc;
            rv = v;
        }
    };
    // indexed by the header's task (survivor_in and vip_in hold it to the packet's task); one
    // stateful ALU operation an action, so each counter is a table of its own, side by side,
    // in stage 1 (ingress's count_tbl takes the stage's fourth stateful ALU)
    PINNED(started, 1, meta.started = started_access.execute((bit<32>)hdr.netec.task);)
    PINNED(starts, 1, meta.starts = starts_access.execute((bit<32>)hdr.netec.task);)
    PINNED(completes, 1, meta.completes = completes_access.execute((bit<32>)hdr.netec.task);)
    action partials() { meta.partial = meta.starts - meta.completes; }
    @hidden table take_partial {
        actions = { partials; }
        const default_action = partials();
    }
    EbsnWindow() ebsn;

    apply {
        if (hdr.bridge.counters == 1) {
            started_tbl.apply();
            starts_tbl.apply();
            completes_tbl.apply();
        }
        bit<1> copied = 0;
        if (eg_intr_md.egress_rid != 0) {
            if (replica.apply().hit) {
                copied = 1;
            }
        }
        if (copied == 1) {
            if (hdr.bridge.ebsn == 1) {
                take_partial.apply();
                ebsn.apply(hdr.bridge.ack, meta.started, meta.partial,
                           hdr.bridge.exposed, hdr.netec.window);
            }
        }
        hdr.bridge.setInvalid();  // never on the wire
    }
}

control EgressDeparserImpl(packet_out pkt, inout headers_t hdr, in eg_meta_t meta,
                           in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    Checksum() ipv4_csum;
    Checksum() netec_csum;
    apply {
        hdr.ipv4.hdr_checksum = ipv4_csum.update({
            hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.total_len,
            hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.frag_offset, hdr.ipv4.ttl,
            hdr.ipv4.protocol, hdr.ipv4.src_addr, hdr.ipv4.dst_addr});
        if (hdr.netec.isValid()) {
            // a copy's sender and window, summed again from the residual (a packet egress
            // does not change sums to its own checksum)
            hdr.netec.checksum = netec_csum.update({
                hdr.netec.version, hdr.netec.type, hdr.netec.task, hdr.netec.slot_array,
                hdr.netec.sender, hdr.netec.flags, hdr.netec.slot, hdr.netec.seq,
                hdr.netec.window, hdr.netec.payload_len, hdr.netec.reserved,
                meta.netec_residual}, true);
        }
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.pass);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.udp);
        pkt.emit(hdr.netec);
    }
}

Pipeline(IngressParserImpl(), Ingress(), IngressDeparserImpl(),
         EgressParserImpl(), Egress(), EgressDeparserImpl()) pipe;

Switch(pipe) main;
