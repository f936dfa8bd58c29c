// NetEC data plane for Tofino (TNA). The v1model twin (../v1model/netec.p4) has the same
// tables, registers and decisions; switch-p4/README.md describes the pipeline and works out
// its resources; model/pipeline.py is its executable model.
//
// Build: bf-p4c --target tofino --arch tna -D__TARGET_TOFINO__=1 -I ../include netec.p4
//        (p4c's Tofino backend; not available where this was written: never compiled here)
//
// Per pass: Classify (survivor_in / vip_in / task_cfg / sender_coeff), Admit (ack_seq),
// Track (slot_seq, slot_bits, slot_count), Multiply (32 log/exp lanes per pass),
// Aggregate (8 of the 16 sum registers), then recirculate for the other half, or EBSN for a
// reader's ACK. Every register has one RegisterAction executed per pass.

#include <core.p4>
#include <tna.p4>

#include "../include/headers.p4"
#include "../include/netec_logic.p4"
#include "../generated/lanes.p4"

const bit<16> ETHERTYPE_NETEC_PASS = 0x88B5;
// Recirculation port of pipe 0 on Tofino 1 (68); the control plane configures it in loopback.
const PortId_t RECIRC_PORT = 68;

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
    lanes_t lanes;
}

struct ig_meta_t {
    bit<16> tcp_residual;   // TCP checksum minus the fields ingress may rewrite
    bit<8>  lanes_ok;       // the payload was taken into lanes
    bool    netec_csum_ok;  // the NetEC header and lanes sum to ones'-complement zero
    bit<1>  netec_checked;  // the parser judged the NetEC checksum (payload_len <= P)
    bit<8>  role;
    bit<8>  task;
    bit<8>  slot_array;
    bit<8>  sender;
    bit<32> vip_addr;
    bit<16> vip_port;
    bit<32> vip_isn;
    task_cfg_t cfg;
    log_a_t log_coeff;      // log of the sender's coefficient, one copy per group of lanes
    bit<16> sender_bit;
    bit<32> cell;
    bit<32> ack;
    bit<8>  verdict;
    bit<8>  taken;          // SLOT_SAME, SLOT_STALE or SLOT_FREE: what slot_seq held
    bit<8>  reset;          // the slot was taken over (taken != SLOT_SAME)
    bit<16> bits_before;
    bit<1>  duplicate;      // DuplicateCheck's verdict
    bit<1>  ack_bad;        // the reader's ACK fails ReaderAckCheck
    bit<1>  reader_syn;     // the reader's SYN: learn its address and port
    bit<1>  ack_raise;      // the reader's ACK, checked: raises ackSeq, gets the EBSN window
    bit<1>  started_raise;  // a stripe's first packet: raises maxStarted + 1
    bit<32> started;        // maxStarted + 1
    bit<32> partial_delta;  // +1 a free slot starts a stripe, -1 (2^32 - 1) a stripe completes
    bit<32> partial;        // slots holding partial sums
    bit<16> seq_low;        // seq's low 16 bits, from the identity hash (no slice in an action)
    bit<8>  complete;
    bit<32> seq_plus1;
    bit<1>  netec_dirty;    // deparser checksum conditions are 1-bit on Tofino
    bit<1>  tcp_dirty;
    bit<8>  to_reader;      // ingress's copy of bridge.to_reader (the bridge may be invalid)
    bit<1>  first_pass;     // a survivor's DATA packet, first half of its lanes
    bit<1>  second_pass;    // the same packet back from recirculation, second half
    bit<32> w0; bit<32> w1; bit<32> w2; bit<32> w3;
    bit<32> w4; bit<32> w5; bit<32> w6; bit<32> w7;
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
        meta.lanes_ok = 0;
        meta.netec_csum_ok = false;
        meta.netec_checked = 0;
        meta.tcp_residual = 0;
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
        transition select(hdr.ipv4.ihl, hdr.ipv4.protocol) {
            (5, IP_PROTO_TCP): parse_tcp;
            default: accept;
        }
    }
    state parse_tcp {
        pkt.extract(hdr.tcp);
        // The fields ingress may rewrite leave the sum here and are added back in the
        // deparser. A NetEC packet with a valid NetEC checksum sums to ones'-complement zero,
        // so rewriting one valid NetEC packet into another never changes the TCP checksum:
        // a corrupt segment stays corrupt and the reader's TCP drops it.
        tcp_csum.subtract({hdr.tcp.src_port, hdr.tcp.dst_port, hdr.tcp.seq_no,
                           hdr.tcp.ack_no, hdr.tcp.checksum});
        tcp_csum.subtract_all_and_deposit(meta.tcp_residual);
        // the parser cannot subtract: room for a NetEC header is read off the IP length
        // (20 IP + 20 TCP [+ 12 options] + 20 NetEC)
        transition select(hdr.tcp.data_offset, hdr.ipv4.total_len) {
            (5, 60 .. 0xFFFF): parse_netec;
            (8, 72 .. 0xFFFF): parse_tcp_ts_netec;
            (8, _): parse_tcp_ts;
            default: accept;
        }
    }
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
        // The NetEC checksum of a DATA packet or an ACK, header and lanes (docs/protocol.md: a
        // receiver drops a packet that fails it, also inside a valid TCP segment). Each field
        // is added in the state that extracts it; Tofino writes the verdict once, in
        // netec_verified, after the last lane.
        netec_csum.add(hdr.netec);
        transition select(hdr.netec.payload_len) {
            NETEC_PAYLOAD_CASES(netec_verified)
            default: accept;  // a HELLO's JSON, a partial word: left as payload, never summed
        }
    }
    // The payload's states (lanes.p4): one chain, entered where the payload's words end with
    // it (no parser counter).
#define WORD_STATE(J, NEXT)                                                                   \
    state parse_w##J {                                                                        \
        meta.lanes_ok = 1;                                                                    \
        pkt.extract(hdr.lanes.q##J);                                                          \
        netec_csum.add(hdr.lanes.q##J);                                                       \
        transition NEXT;                                                                      \
    }
#define LAST_WORD_STATE(J, AFTER)                                                             \
    state parse_w##J {                                                                        \
        meta.lanes_ok = 1;                                                                    \
        pkt.extract(hdr.lanes.q##J);                                                          \
        netec_csum.add(hdr.lanes.q##J);                                                       \
        transition AFTER;                                                                     \
    }
    NETEC_WORD_STATES(WORD_STATE, LAST_WORD_STATE, netec_verified)
#undef WORD_STATE
#undef LAST_WORD_STATE
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

    // ---- registers and their one action per pass -------------------------------------------
    // ackSeq, raised by the reader's ACK (it only grows) and read by a DATA packet's first
    // pass; maxStarted + 1, raised by a stripe's first packet and read by the reader's ACK
    // (EBSN). One action each at one call site: p4c-barefoot places a register's actions in one
    // stage, which the reader's branch and the survivors' could not share.
    Register<bit<32>, bit<32>>(NETEC_TASKS, 0) ack_seq;
    RegisterAction<bit<32>, bit<32>, bit<32>>(ack_seq) ack_access = {
        void apply(inout bit<32> v, out bit<32> rv) {
            if (meta.ack_raise == 1 && hdr.netec.seq > v) {
                v = hdr.netec.seq;
            }
            rv = v;
        }
    };
    Register<bit<32>, bit<32>>(NETEC_TASKS, 0) max_started_plus1;
    RegisterAction<bit<32>, bit<32>, bit<32>>(max_started_plus1) started_access = {
        void apply(inout bit<32> v, out bit<32> rv) {
            if (meta.started_raise == 1 && meta.seq_plus1 > v) {
                v = meta.seq_plus1;
            }
            rv = v;
        }
    };

    // slots holding partial sums (EBSN's C): changed by a stripe's first packet in a free slot
    // and by its completing one, read by the reader's ACK
    Register<bit<32>, bit<32>>(NETEC_TASKS, 0) partial_slots;
    RegisterAction<bit<32>, bit<32>, bit<32>>(partial_slots) partial_access = {
        void apply(inout bit<32> v, out bit<32> rv) {
            v = v + meta.partial_delta;  // 0 for the reader's ACK: a read
            rv = v;
        }
    };

    Register<bit<32>, bit<32>>(NETEC_SLOT_CELLS, SEQ_NONE) slot_seq;
    RegisterAction<bit<32>, bit<32>, bit<8>>(slot_seq) seq_check = {
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
    RegisterAction<bit<32>, bit<32>, bit<8>>(slot_seq) seq_release = {
        void apply(inout bit<32> v) { v = SEQ_NONE; }
    };

    Register<bit<16>, bit<32>>(NETEC_SLOT_CELLS, 0) slot_bits;
    RegisterAction<bit<16>, bit<32>, bit<16>>(slot_bits) bits_add = {
        void apply(inout bit<16> v, out bit<16> rv) { rv = v; v = v | meta.sender_bit; }
    };
    RegisterAction<bit<16>, bit<32>, bit<16>>(slot_bits) bits_restart = {
        void apply(inout bit<16> v, out bit<16> rv) { rv = 0; v = meta.sender_bit; }
    };

    Register<bit<8>, bit<32>>(NETEC_SLOT_CELLS, 0) slot_count;
    RegisterAction<bit<8>, bit<32>, bit<8>>(slot_count) count_add = {
        void apply(inout bit<8> v, out bit<8> rv) {
            if (v == meta.cfg.k_minus1) { v = 0; rv = 1; } else { v = v + 1; rv = 0; }
        }
    };
    RegisterAction<bit<8>, bit<32>, bit<8>>(slot_count) count_restart = {
        void apply(inout bit<8> v, out bit<8> rv) {
            if (meta.cfg.k_minus1 == 0) { v = 0; rv = 1; } else { v = 1; rv = 0; }
        }
    };

    // The reader's address and port: learnt from its SYN, read for every segment to it. One
    // action per register at one call site: Tofino places a register's actions in one stage,
    // which the reader's branch and the survivors' could not share.
    Register<bit<32>, bit<32>>(NETEC_TASKS, 0) reader_addr;
    RegisterAction<bit<32>, bit<32>, bit<32>>(reader_addr) reader_addr_access = {
        void apply(inout bit<32> v, out bit<32> rv) {
            if (meta.reader_syn == 1) {
                v = hdr.ipv4.src_addr;
            }
            rv = v;
        }
    };
    Register<bit<16>, bit<32>>(NETEC_TASKS, 0) reader_port;
    RegisterAction<bit<16>, bit<32>, bit<16>>(reader_port) reader_port_access = {
        void apply(inout bit<16> v, out bit<16> rv) {
            if (meta.reader_syn == 1) {
                v = hdr.tcp.src_port;
            }
            rv = v;
        }
    };
    Register<bit<16>, bit<32>>(NETEC_TASKS, 0) synack_bits;
    RegisterAction<bit<16>, bit<32>, bit<16>>(synack_bits) synack_clear = {
        void apply(inout bit<16> v) { v = 0; }
    };
    RegisterAction<bit<16>, bit<32>, bit<16>>(synack_bits) synack_add = {
        void apply(inout bit<16> v, out bit<16> rv) { v = v | meta.sender_bit; rv = v; }
    };

// One action per sum register, at one call site per pass (p4c-barefoot places a register's
// actions in one stage; four, chosen by complete and reset, were four tables it could not
// place together): overwrite on reset (the slot's first packet of a stripe: after a completed
// stripe the slot is released, so no clearing is needed), XOR otherwise, and return the new
// sum, which the register writes straight into the packet's payload word OUT. Only the
// completing packet's words leave as sums; the others' are dropped or, after the first pass,
// carried to the second unread (their NetEC checksum recomputed).
#define SUM_REGISTER(N, W)                                                                   \
    Register<bit<32>, bit<32>>(NETEC_SLOT_CELLS, 0) sum##N;                                  \
    RegisterAction<bit<32>, bit<32>, bit<32>>(sum##N) sum##N##_add = {                       \
        void apply(inout bit<32> v, out bit<32> rv) {                                        \
            if (meta.reset == 1) {                                                           \
                v = W;                                                                       \
            } else {                                                                         \
                v = v ^ W;                                                                   \
            }                                                                                \
            rv = v;                                                                          \
        }                                                                                    \
    };
#define SUM_APPLY(N, OUT) OUT = sum##N##_add.execute(meta.cell);
    SUM_REGISTER(0, meta.w0)  SUM_REGISTER(1, meta.w1)  SUM_REGISTER(2, meta.w2)
    SUM_REGISTER(3, meta.w3)  SUM_REGISTER(4, meta.w4)  SUM_REGISTER(5, meta.w5)
    SUM_REGISTER(6, meta.w6)  SUM_REGISTER(7, meta.w7)  SUM_REGISTER(8, meta.w0)
    SUM_REGISTER(9, meta.w1)  SUM_REGISTER(10, meta.w2) SUM_REGISTER(11, meta.w3)
    SUM_REGISTER(12, meta.w4) SUM_REGISTER(13, meta.w5) SUM_REGISTER(14, meta.w6)
    SUM_REGISTER(15, meta.w7)

    Counter<bit<32>, bit<8>>(8, CounterType_t.PACKETS) verdicts;  // DATA packets by verdict

    // ---- tables ------------------------------------------------------------------------------
    action from_survivor(bit<8> task, bit<8> slot_array, bit<8> sender, bit<32> vip_isn) {
        meta.role = ROLE_SURVIVOR;
        meta.task = task;
        meta.slot_array = slot_array;
        meta.sender = sender;
        meta.vip_addr = hdr.ipv4.dst_addr;
        meta.vip_port = hdr.tcp.dst_port;
        meta.vip_isn = vip_isn;
        // the bridge from action data (one source: copies from metadata need more per container)
        hdr.bridge.task = task;
        hdr.bridge.sender = sender;
        hdr.bridge.vip_isn = vip_isn;
    }
    table survivor_in {
        key = {
            hdr.ipv4.src_addr : exact; hdr.tcp.src_port : exact;
            hdr.ipv4.dst_addr : exact; hdr.tcp.dst_port : exact;
        }
        actions = { from_survivor; NoAction; }
        const default_action = NoAction();
        size = NETEC_SENDER_CELLS;
    }

    action from_reader(bit<8> task, bit<8> slot_array, bit<32> vip_isn) {
        meta.role = ROLE_READER;
        meta.task = task;
        meta.slot_array = slot_array;
        meta.vip_addr = hdr.ipv4.dst_addr;
        meta.vip_port = hdr.tcp.dst_port;
        meta.vip_isn = vip_isn;
        hdr.bridge.task = task;
        hdr.bridge.vip_isn = vip_isn;
    }
    table vip_in {
        key = { hdr.ipv4.dst_addr : exact; hdr.tcp.dst_port : exact; }
        actions = { from_reader; NoAction; }
        const default_action = NoAction();
        size = NETEC_TASKS;
    }

    action set_task(bit<16> k_mask, bit<8> k_minus1, bit<16> slot_mask, bit<32> far_mask,
                    bit<32> stripes, bit<32> last_seq, bit<16> last_len, bit<32> exposed) {
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
        meta.role = ROLE_NONE;
    }
    table task_cfg {
        key = { meta.task : exact; meta.slot_array : exact; }
        actions = { set_task; no_task; }
        const default_action = no_task();
        size = NETEC_TASKS;
    }

    action set_coeff(bit<10> log_a, bit<16> bit_s) {
        NETEC_SET_LOG_A(meta.log_coeff, log_a)
        meta.sender_bit = bit_s;
    }
    action no_coeff() {
        meta.sender_bit = 0;
    }
    table sender_coeff {
        key = { meta.task : exact; meta.sender : exact; }
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
    table l3_forward {
        key = { hdr.ipv4.dst_addr : lpm; }
        actions = { route; unroutable; }
        const default_action = unroutable();
        size = 1024;
    }

    AdmitData() admit;
    EbsnWindow() ebsn;
    // identity hashes: slot array ++ slot, the cell of a slot's registers; seq's low 16 bits
    Hash<bit<32>>(HashAlgorithm_t.IDENTITY) cell_of;
    Hash<bit<16>>(HashAlgorithm_t.IDENTITY) seq_low_of;
    ReaderAckCheck() ack_check;
    DuplicateCheck() dup_check;
    MultiplyPass() multiply;

    action drop_counted(bit<8> why) {
        verdicts.count(why);
        ig_dprsr_md.drop_ctl = 1;
    }

    apply {
        meta.role = ROLE_NONE;
        meta.netec_dirty = 0;
        meta.tcp_dirty = 0;
        meta.complete = 0;
        meta.reset = 0;
        hdr.bridge.setValid();
        hdr.bridge.to_reader = 0;
        meta.to_reader = 0;
        meta.reader_syn = 0;
        meta.started_raise = 0;
        meta.partial_delta = 0;
        hdr.bridge.synack = 0;
        hdr.bridge.synack_last = 0;
        hdr.bridge.task = 0;
        hdr.bridge.sender = 0;
        hdr.bridge.vip_isn = 0;
        // Tofino: no conditional expressions in actions, so every choice is an if
        if (hdr.netec.isValid()) {
            hdr.bridge.netec = 1;
        } else {
            hdr.bridge.netec = 0;
        }
        if (!hdr.ipv4.isValid()) {
            ig_dprsr_md.drop_ctl = 1;
            exit;
        }

        if (hdr.tcp.isValid()) {
            if (!survivor_in.apply().hit) {
                vip_in.apply();
            }
            if (meta.role != ROLE_NONE) {
                task_cfg.apply();
            }
            if (meta.role == ROLE_SURVIVOR) {
                sender_coeff.apply();
            }
        }
        if (meta.role != ROLE_NONE && hdr.netec.isValid()) {
            if (meta.netec_checked == 1 && !meta.netec_csum_ok) {
                // a task's NetEC packet, corrupt or sent wrong: its bytes never enter a sum
                // (other traffic is only forwarded: a payload that merely looks like a header
                // is not ours)
                ig_dprsr_md.drop_ctl = 1;
                exit;
            }
        }
        meta.first_pass = 0;
        meta.second_pass = 0;
        if (meta.role == ROLE_SURVIVOR) {
            if (hdr.pass.isValid()) {
                meta.second_pass = 1;
            } else if (hdr.netec.isValid() && hdr.netec.type == NETEC_DATA) {
                meta.first_pass = 1;
            }
        }
        // The reader's ACK, checked before it may raise ackSeq; ackSeq for it or a first pass.
        meta.ack_raise = 0;
        if (meta.role == ROLE_READER && hdr.netec.isValid()) {
            if (hdr.netec.type == NETEC_ACK) {
                ack_check.apply(hdr.netec, meta.cfg, meta.ack_bad);
                if (meta.ack_bad == 1) {
                    drop_counted(V_MISMATCH);
                    exit;
                }
                meta.ack_raise = 1;
            }
        }
        if (meta.first_pass == 1 || meta.ack_raise == 1) {
            meta.ack = ack_access.execute((bit<32>)meta.task);
        }
        // Multiply depends on nothing Admit and Track decide: it can run beside them. One
        // call site for both passes, so each lane's tables exist once.
        if (meta.first_pass == 1 || meta.second_pass == 1) {
            multiply.apply(hdr.lanes, meta.second_pass, meta.log_coeff,
                           meta.w0, meta.w1, meta.w2, meta.w3, meta.w4, meta.w5, meta.w6,
                           meta.w7);
        }

        if (meta.second_pass == 1) {
            // ---- second pass: multiply and add the second half ------------------------------
            // the classify tables found the task again: the cell is the first pass's
            meta.cell = cell_of.get({meta.slot_array, hdr.netec.slot[NETEC_SLOTS_LOG2 - 1:0]});
            meta.reset = hdr.pass.reset;
            if (hdr.pass.verdict == PASS_COMPLETE) {
                meta.complete = 1;
            } else {
                meta.complete = 0;
            }
            SUM_APPLY(8, hdr.lanes.q8.v) SUM_APPLY(9, hdr.lanes.q9.v)
            SUM_APPLY(10, hdr.lanes.q10.v) SUM_APPLY(11, hdr.lanes.q11.v)
            SUM_APPLY(12, hdr.lanes.q12.v) SUM_APPLY(13, hdr.lanes.q13.v)
            SUM_APPLY(14, hdr.lanes.q14.v) SUM_APPLY(15, hdr.lanes.q15.v)
            if (meta.complete == 0) {
                ig_dprsr_md.drop_ctl = 1;  // counted; its stripe is not complete yet
                exit;
            }
            seq_release.execute(meta.cell);  // the slot's next packet starts afresh
            hdr.pass.setInvalid();
            hdr.ethernet.ether_type = ETHERTYPE_IPV4;
            hdr.netec.type = NETEC_RESULT;
            hdr.netec.sender = 0;
            meta.netec_dirty = 1;
            hdr.bridge.to_reader = 1;
            meta.to_reader = 1;
        } else if (meta.first_pass == 1) {
            // ---- first pass: admit, track, multiply and add the first half ------------------
            meta.seq_low = seq_low_of.get({hdr.netec.seq});
            admit.apply(hdr.netec, meta.lanes_ok, meta.cfg, meta.ack, meta.seq_low,
                        meta.verdict);
            // one connection, one survivor (a condition reads a few bytes at most on Tofino)
            if (meta.sender_bit == 0 || hdr.netec.version != NETEC_VERSION) {
                meta.verdict = V_MISMATCH;
            }
            if (hdr.netec.reserved != 0 || hdr.netec.flags != 0) {
                meta.verdict = V_MISMATCH;
            }
            if (hdr.netec.task != meta.task || hdr.netec.slot_array != meta.slot_array
                    || hdr.netec.sender != meta.sender) {
                meta.verdict = V_MISMATCH;
            }
            if (meta.verdict != 0) {
                drop_counted(meta.verdict);
                exit;
            }
            // array ++ slot (Admit let only slot = seq mod S in), by the identity hash: a hash
            // unit reads the slices, where a move would slice the fields in the PHV
            meta.cell = cell_of.get({meta.slot_array, hdr.netec.slot[NETEC_SLOTS_LOG2 - 1:0]});
            meta.taken = seq_check.execute(meta.cell);
            if (meta.taken != SLOT_SAME) {
                meta.reset = 1;
            }
            if (meta.reset == 1) {
                meta.bits_before = bits_restart.execute(meta.cell);
            } else {
                meta.bits_before = bits_add.execute(meta.cell);
            }
            dup_check.apply(meta.bits_before, meta.sender_bit, meta.duplicate);
            if (meta.duplicate == 1) {
                drop_counted(V_DUPLICATE);
                exit;
            }
            if (meta.reset == 1) {
                meta.complete = count_restart.execute(meta.cell);
            } else {
                meta.complete = count_add.execute(meta.cell);
            }
            if (meta.complete == 1) {
                verdicts.count(V_COMPLETE);
            } else {
                verdicts.count(V_AGGREGATE);
            }
            if (meta.reset == 1 || meta.bits_before == 0) {
                meta.seq_plus1 = hdr.netec.seq + 1;
                meta.started_raise = 1;  // raised after the branches
            }
            // EBSN's partial slots, changed after the branches: one more when a free slot
            // starts a stripe, one fewer when one completes (k = 1: both, no change); a stale
            // stripe's slot taken over stays one
            if (meta.taken == SLOT_FREE) {
                meta.partial_delta = 1;
            }
            if (meta.complete == 1) {
                meta.partial_delta = meta.partial_delta - 1;
            }
            SUM_APPLY(0, hdr.lanes.q0.v) SUM_APPLY(1, hdr.lanes.q1.v)
            SUM_APPLY(2, hdr.lanes.q2.v) SUM_APPLY(3, hdr.lanes.q3.v)
            SUM_APPLY(4, hdr.lanes.q4.v) SUM_APPLY(5, hdr.lanes.q5.v)
            SUM_APPLY(6, hdr.lanes.q6.v) SUM_APPLY(7, hdr.lanes.q7.v)
            meta.netec_dirty = 1;  // a valid NetEC packet again when it comes back
            hdr.pass.setValid();
            if (meta.complete == 1) {
                hdr.pass.verdict = PASS_COMPLETE;
            } else {
                hdr.pass.verdict = PASS_AGGREGATE;
            }
            hdr.pass.reset = meta.reset;
            hdr.ethernet.ether_type = ETHERTYPE_NETEC_PASS;
            hdr.bridge.setInvalid();  // the recirculated packet is parsed by ingress again
            ig_tm_md.ucast_egress_port = RECIRC_PORT;
            ig_tm_md.bypass_egress = 1;
        } else if (meta.role == ROLE_SURVIVOR) {
            // ---- a survivor's TCP control segments ----------------------------------------
            if ((hdr.tcp.flags & TCP_SYN) != 0) {
                bit<16> answered = synack_add.execute((bit<32>)meta.task);
                hdr.bridge.synack = 1;
                if (answered == meta.cfg.k_mask) {
                    hdr.bridge.synack_last = 1;
                } else {
                    hdr.bridge.synack_last = 0;
                }
                hdr.bridge.to_reader = 1;
                meta.to_reader = 1;
            } else if (meta.sender == 0 || hdr.netec.isValid()) {
                hdr.bridge.to_reader = 1;
                meta.to_reader = 1;
            } else {
                ig_dprsr_md.drop_ctl = 1;
                exit;
            }
        } else if (meta.role == ROLE_READER) {
            // ---- the reader's segments: to every survivor ---------------------------------
            if ((hdr.tcp.flags & TCP_SYN) != 0) {
                meta.reader_syn = 1;  // learnt below, where the reader's address is read
                synack_clear.execute((bit<32>)meta.task);
            }
            ig_tm_md.mcast_grp_a = (bit<16>)meta.task + 1;
        }

        // EBSN: maxStarted raised by a stripe's first packet, the partial slots changed by a
        // stripe's first and last packets, both read for the reader's ACK
        if (meta.started_raise == 1 || meta.ack_raise == 1) {
            meta.started = started_access.execute((bit<32>)meta.task);
        }
        if (meta.partial_delta != 0 || meta.ack_raise == 1) {
            meta.partial = partial_access.execute((bit<32>)meta.task);
        }
        if (meta.ack_raise == 1) {
            ebsn.apply(meta.ack, meta.started, meta.partial, meta.cfg.exposed,
                       hdr.netec.window);
            meta.netec_dirty = 1;  // its window rewritten
        }
        if (meta.first_pass == 1) {
            exit;
        }
        if (meta.to_reader == 1 || meta.reader_syn == 1) {
            // to the reader (a reader's own SYN, going to every survivor, gets its address
            // here too: egress gives each copy its survivor's)
            hdr.ipv4.dst_addr = reader_addr_access.execute((bit<32>)meta.task);
            hdr.tcp.dst_port = reader_port_access.execute((bit<32>)meta.task);
            meta.tcp_dirty = 1;
        }
        if (meta.role == ROLE_READER) {
            exit;  // to every survivor (multicast group)
        }
        if (meta.to_reader == 1) {
            hdr.ipv4.src_addr = meta.vip_addr;
            hdr.tcp.src_port = meta.vip_port;
        }
        l3_forward.apply();
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
            // protocol: a computed 0 is sent as 0xFFFF (zeros_as_ones)
            hdr.netec.checksum = netec_csum.update({
                hdr.netec.version, hdr.netec.type, hdr.netec.task, hdr.netec.slot_array,
                hdr.netec.sender, hdr.netec.flags, hdr.netec.slot, hdr.netec.seq,
                hdr.netec.window, hdr.netec.payload_len, hdr.netec.reserved,
                NETEC_LANE_BYTES(hdr.lanes)}, true);
        }
        pkt.emit(hdr.bridge);
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.pass);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.tcp);
        pkt.emit(hdr.tcp_ts);
        pkt.emit(hdr.netec);
        pkt.emit(hdr.lanes);
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
    // survivor s of task t: its ISN minus the VIP's
    Register<bit<32>, bit<32>>(NETEC_SENDER_CELLS, 0) isn_delta;
    RegisterAction<bit<32>, bit<32>, bit<32>>(isn_delta) delta_learn = {
        void apply(inout bit<32> v, out bit<32> rv) {
            v = meta.isn_diff;  // a stateful ALU subtracts from its cell, not from a field
            rv = v;
        }
    };
    RegisterAction<bit<32>, bit<32>, bit<32>>(isn_delta) delta_read = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v; }
    };
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
            bit<32> idx = (bit<32>)(meta.task ++ meta.sender[NETEC_SENDERS_LOG2 - 1:0]);
            bit<32> delta = delta_read.execute(idx);
            if ((hdr.tcp.flags & TCP_ACK) != 0) {
                hdr.tcp.ack_no = hdr.tcp.ack_no + delta;
            }
            if (hdr.netec.isValid() && hdr.netec.type == NETEC_HELLO) {
                hdr.netec.sender = meta.sender;
                meta.netec_dirty = 1;  // the deparser sums it again from the residual
            }
            meta.tcp_dirty = 1;
        } else if (meta.to_reader == 1) {
            bit<32> idx = (bit<32>)(meta.task ++ meta.from_sender[NETEC_SENDERS_LOG2 - 1:0]);
            bit<32> delta;
            if (meta.synack == 1) {
                meta.isn_diff = hdr.tcp.seq_no - meta.vip_isn;
                delta = delta_learn.execute(idx);
                if (meta.synack_last == 0) {
                    eg_dprsr_md.drop_ctl = 1;
                    exit;
                }
            } else {
                delta = delta_read.execute(idx);
            }
            hdr.tcp.seq_no = hdr.tcp.seq_no - delta;
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
