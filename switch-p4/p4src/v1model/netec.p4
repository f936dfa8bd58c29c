// NetEC data plane, v1model twin of p4src/tna/netec.p4 (BMv2 simple_switch).
//
// It is structured like the TNA program on purpose: every register is accessed once per pass
// (read-modify-write in one place, as a Tofino stateful ALU would), every table applies once
// per pass, and a DATA packet recirculates once to multiply the second half of its payload.
// docs/protocol.md (version 2) is what it implements; switch-p4/README.md describes the
// pipeline and its resources; model/pipeline.py is its executable model.
//
// Build: p4c-bm2-ss --arch v1model -I ../include -o netec.json --p4runtime-files netec.p4info.txtpb netec.p4
//        p4test --arch v1model netec.p4

#include <core.p4>
#include <v1model.p4>

#include "../include/headers.p4"
#include "../include/netec_logic.p4"
#include "../generated/lanes.p4"

// RFC 1624 eqn. 3: the ones'-complement checksum after one 16-bit word changed from old to
// new (egress rewrites a HELLO's sender). The TNA program sums it again from a residual in its
// deparser instead: a chain of adds in one action does not fit a Tofino stage.
control CsumReplace16(inout bit<16> csum, in bit<16> old_word, in bit<16> new_word) {
    apply {
        bit<32> s = (bit<32>)(~csum) + (bit<32>)(~old_word) + (bit<32>)new_word;
        s = (s & 0xffff) + (s >> 16);
        s = (s & 0xffff) + (s >> 16);
        csum = ~(s[15:0]);
    }
}

// The first pass puts this ethertype in front of the pass header, the second removes it.
const bit<16> ETHERTYPE_NETEC_PASS = 0x88B5;
// Every DATA packet leaves its first pass through this one port's queue (egress recirculates
// it before it is sent), so second passes come in the order of first passes, as through
// Tofino's recirculation port: the stripe's last packet reads the second half of the sums
// only after every earlier packet of the stripe added to it. (Each packet's own ingress port
// would put them in different egress queues, and BMv2 reorders those: a stripe completed
// without one survivor's second half, found by switch-p4/bmv2/bench.py.)
const bit<9> RECIRC_PORT = 68;
const bit<32> INSTANCE_TYPE_RECIRC = 4;  // BMv2 simple_switch: standard_metadata.instance_type

struct headers_t {
    ethernet_h ethernet;
    netec_pass_h pass;
    ipv4_h ipv4;
    tcp_h tcp;
    tcp_ts_h tcp_ts;
    netec_h netec;
    lanes_t lanes;
}

struct metadata_t {
    bit<16> tcp_len;       // TCP header + payload (the pseudo-header's length)
    bit<16> tcp_payload;   // TCP payload bytes
    bit<8>  lanes_ok;      // the payload was taken into lanes
    bit<16> csum_zero;     // 0: what a valid NetEC packet's whole sum complements to
    bit<8>  role;          // ROLE_*
    bit<8>  task;
    bit<8>  slot_array;
    bit<8>  sender;
    bit<32> vip_addr;
    bit<16> vip_port;
    bit<32> vip_isn;
    bit<8>  to_reader;     // egress: the packet goes to the task's reader
    bit<8>  synack;        // egress: a survivor's SYN-ACK (record its ISN)
    bit<8>  synack_last;   // egress: ... and the last of the task's: forward it
    bit<8>  recirculate;   // egress: send back for the second pass
    bit<8>  netec_dirty;   // deparse: recompute the NetEC checksum over header and lanes
    bit<8>  tcp_dirty;     // deparse: recompute the TCP checksum
    task_cfg_t cfg;
}

const bit<8> ROLE_NONE = 0;
const bit<8> ROLE_READER = 1;    // reader -> VIP
const bit<8> ROLE_SURVIVOR = 2;  // survivor agent -> VIP

parser NetecParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t std) {
    state start {
        meta.lanes_ok = 0;
        meta.csum_zero = 0;
        pkt.extract(hdr.ethernet);
        // a pass header only on a recirculated packet (Tofino: from the recirculation port;
        // BMv2 keeps the first ingress port, so its instance type says it): from a front port
        // it would let a peer skip the first pass's admission (such a frame has no IPv4: dropped)
        transition select(std.instance_type, hdr.ethernet.ether_type) {
            (INSTANCE_TYPE_RECIRC, ETHERTYPE_NETEC_PASS): parse_pass;
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
            (5, IP_PROTO_TCP): parse_tcp;
            default: accept;
        }
    }
    state parse_tcp {
        pkt.extract(hdr.tcp);
        meta.tcp_len = hdr.ipv4.total_len - 20;
        meta.tcp_payload = meta.tcp_len - ((bit<16>)hdr.tcp.data_offset << 2);
        transition select(hdr.tcp.data_offset) {
            5: parse_payload;
            8: parse_tcp_ts;
            default: accept;  // other options: forwarded, never read as NetEC
        }
    }
    state parse_tcp_ts {
        pkt.extract(hdr.tcp_ts);
        transition parse_payload;
    }
    state parse_payload {
        transition select(meta.tcp_payload) {
            0 .. 19: accept;
            default: parse_netec;
        }
    }
    state parse_netec {
        pkt.extract(hdr.netec);
        transition select(hdr.netec.payload_len) {
            NETEC_PAYLOAD_CASES(lanes_done)
            default: accept;  // a HELLO's JSON, a partial word: left as payload, never summed
        }
    }
    // The payload's states (lanes.p4), as on Tofino: one chain, entered where the payload's
    // words end with it.
#define WORD_STATE(J, NEXT)                                                                   \
    state parse_w##J {                                                                        \
        meta.lanes_ok = 1;                                                                    \
        pkt.extract(hdr.lanes.q##J);                                                          \
        transition NEXT;                                                                      \
    }
#define LAST_WORD_STATE(J, AFTER)                                                             \
    state parse_w##J {                                                                        \
        meta.lanes_ok = 1;                                                                    \
        pkt.extract(hdr.lanes.q##J);                                                          \
        transition AFTER;                                                                     \
    }
    NETEC_WORD_STATES(WORD_STATE, LAST_WORD_STATE, lanes_done)
#undef WORD_STATE
#undef LAST_WORD_STATE
    state lanes_done {
        transition accept;
    }
}

// A NetEC segment whose TCP checksum or NetEC checksum fails is dropped in ingress
// (standard_metadata's checksum_error): its payload must not enter a sum, and the
// ComputeChecksum control below recomputes checksums from scratch, which would otherwise hide
// the corruption.
control NetecVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply {
        verify_checksum_with_payload(hdr.netec.isValid(),
            { hdr.ipv4.src_addr, hdr.ipv4.dst_addr, 8w0, hdr.ipv4.protocol, meta.tcp_len,
              hdr.tcp.src_port, hdr.tcp.dst_port, hdr.tcp.seq_no, hdr.tcp.ack_no,
              hdr.tcp.data_offset, hdr.tcp.res, hdr.tcp.flags, hdr.tcp.window,
              hdr.tcp.urgent_ptr, hdr.tcp_ts.opts,
              hdr.netec.version, hdr.netec.type, hdr.netec.task, hdr.netec.slot_array,
              hdr.netec.sender, hdr.netec.flags, hdr.netec.slot, hdr.netec.seq,
              hdr.netec.window, hdr.netec.payload_len, hdr.netec.checksum,
              hdr.netec.reserved,
              NETEC_LANE_BYTES(hdr.lanes) },
            hdr.tcp.checksum, HashAlgorithm.csum16);
        // The NetEC checksum of a DATA packet or an ACK (header and lanes): a receiver drops a
        // packet that fails it (docs/protocol.md), also inside a valid TCP segment. The sum
        // includes the checksum field and is compared with 0, so both encodings of a computed
        // 0 (0 and 0xFFFF) pass; invalid lanes (outside the payload) add nothing. Only a
        // payload the parser took into lanes (or none) is judged, as on Tofino: a HELLO's JSON
        // of any other length is not read.
        verify_checksum(hdr.netec.isValid()
                            && (meta.lanes_ok == 1 || hdr.netec.payload_len == 0),
            { hdr.netec.version, hdr.netec.type, hdr.netec.task, hdr.netec.slot_array,
              hdr.netec.sender, hdr.netec.flags, hdr.netec.slot, hdr.netec.seq,
              hdr.netec.window, hdr.netec.payload_len, hdr.netec.checksum,
              hdr.netec.reserved,
              NETEC_LANE_BYTES(hdr.lanes) },
            meta.csum_zero, HashAlgorithm.csum16);
    }
}

control NetecIngress(inout headers_t hdr, inout metadata_t meta,
                     inout standard_metadata_t std) {
    // ---- state ---------------------------------------------------------------------------
    register<bit<32>>(NETEC_TASKS) ack_seq;             // reader's first missing stripe
    register<bit<32>>(NETEC_TASKS) max_started_plus1;   // highest stripe begun, + 1
    register<bit<32>>(NETEC_TASKS) partial_slots;       // slots holding partial sums
    register<bit<32>>(NETEC_SLOT_CELLS) slot_seq;       // stripe a slot holds
    register<bit<16>>(NETEC_SLOT_CELLS) slot_bits;      // progress tracker: senders counted
    register<bit<8>>(NETEC_SLOT_CELLS) slot_count;      // ... and how many (0 after the k-th)
    register<bit<32>>(NETEC_SLOT_CELLS) sum0;           // partial sums, 32-bit words:
    register<bit<32>>(NETEC_SLOT_CELLS) sum1;           // words 0..7 in the first pass,
    register<bit<32>>(NETEC_SLOT_CELLS) sum2;           // 8..15 in the second
    register<bit<32>>(NETEC_SLOT_CELLS) sum3;
    register<bit<32>>(NETEC_SLOT_CELLS) sum4;
    register<bit<32>>(NETEC_SLOT_CELLS) sum5;
    register<bit<32>>(NETEC_SLOT_CELLS) sum6;
    register<bit<32>>(NETEC_SLOT_CELLS) sum7;
    register<bit<32>>(NETEC_SLOT_CELLS) sum8;
    register<bit<32>>(NETEC_SLOT_CELLS) sum9;
    register<bit<32>>(NETEC_SLOT_CELLS) sum10;
    register<bit<32>>(NETEC_SLOT_CELLS) sum11;
    register<bit<32>>(NETEC_SLOT_CELLS) sum12;
    register<bit<32>>(NETEC_SLOT_CELLS) sum13;
    register<bit<32>>(NETEC_SLOT_CELLS) sum14;
    register<bit<32>>(NETEC_SLOT_CELLS) sum15;
    register<bit<32>>(NETEC_TASKS) reader_addr;         // learned from the reader's SYN
    register<bit<16>>(NETEC_TASKS) reader_port;
    register<bit<16>>(NETEC_TASKS) synack_bits;         // survivors that answered the SYN
    counter(8, CounterType.packets) verdicts;           // DATA packets by verdict

    // ---- tables --------------------------------------------------------------------------
    action from_reader(bit<8> task, bit<8> slot_array, bit<32> vip_isn) {
        meta.role = ROLE_READER;
        meta.task = task;
        meta.slot_array = slot_array;
        meta.vip_addr = hdr.ipv4.dst_addr;
        meta.vip_port = hdr.tcp.dst_port;
        meta.vip_isn = vip_isn;
    }
    table vip_in {
        key = { hdr.ipv4.dst_addr : exact; hdr.tcp.dst_port : exact; }
        actions = { from_reader; NoAction; }
        const default_action = NoAction();
        size = NETEC_TASKS;
    }

    action from_survivor(bit<8> task, bit<8> slot_array, bit<8> sender, bit<32> vip_isn) {
        meta.role = ROLE_SURVIVOR;
        meta.task = task;
        meta.slot_array = slot_array;
        meta.sender = sender;
        meta.vip_addr = hdr.ipv4.dst_addr;
        meta.vip_port = hdr.tcp.dst_port;
        meta.vip_isn = vip_isn;
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
        meta.role = ROLE_NONE;  // a VIP or survivor entry without its task: not NetEC
    }
    table task_cfg {
        key = { meta.task : exact; meta.slot_array : exact; }
        actions = { set_task; no_task; }
        const default_action = no_task();
        size = NETEC_TASKS;
    }

    log_a_t log_coeff;  // one copy per group of lanes, as on Tofino
    bit<16> sender_bit;
    action set_coeff(bit<10> log_a, bit<16> bit_s) {
        NETEC_SET_LOG_A(log_coeff, log_a)
        sender_bit = bit_s;  // 1 << sender: a table gives the one-hot bit (no variable shifts)
    }
    action no_coeff() {
        sender_bit = 0;
    }
    table sender_coeff {
        key = { meta.task : exact; meta.sender : exact; }
        actions = { set_coeff; no_coeff; }
        const default_action = no_coeff();
        size = NETEC_SENDER_CELLS;
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

    AdmitData() admit;
    EbsnWindow() ebsn;
    ReaderAckCheck() ack_check;
    DuplicateCheck() dup_check;
    MultiplyPass() multiply;

    // ---- the DATA path ---------------------------------------------------------------------
    // First pass: admit, track, multiply and add the first half; recirculate unless dropped.
    // Second pass: multiply and add the second half; the completing packet becomes RESULT.
    apply {
        bool ack_raise = false;      // the reader's ACK, checked: raises ackSeq, gets EBSN
        bit<32> ack = 0;             // ackSeq
        bool started_raise = false;  // a stripe's first packet: raises maxStarted + 1
        bit<32> partial_delta = 0;   // +1 a free slot starts a stripe, -1 a stripe completes
        meta.role = ROLE_NONE;
        meta.to_reader = 0;
        meta.synack = 0;
        meta.synack_last = 0;
        meta.recirculate = 0;
        meta.netec_dirty = 0;
        meta.tcp_dirty = 0;
        if (!hdr.ipv4.isValid()) {
            mark_to_drop(std);
            return;
        }
        if (hdr.tcp.isValid()) {
            // the survivors' segments are addressed to the VIP too: the 4-tuple decides first
            if (!survivor_in.apply().hit) {
                vip_in.apply();
            }
            if (meta.role != ROLE_NONE) {
                task_cfg.apply();
            }
        }
        if (meta.role != ROLE_NONE && std.checksum_error == 1) {
            // a task's segment that failed its TCP or NetEC checksum (other traffic is only
            // forwarded: a payload that merely looks like a NetEC header is none of ours)
            mark_to_drop(std);
            return;
        }
        bit<32> cell = 0;
        bool reader_syn = false;  // the reader's SYN: learn its address and port
        bool second_pass = meta.role == ROLE_SURVIVOR && hdr.pass.isValid();
        bool first_pass = meta.role == ROLE_SURVIVOR && !hdr.pass.isValid()
                          && hdr.netec.isValid() && hdr.netec.type == NETEC_DATA;
        NETEC_SET_LOG_A(log_coeff, GF_LOG_ZERO)
        sender_bit = 0;
        if (meta.role == ROLE_SURVIVOR) {
            sender_coeff.apply();
        }
        // The reader's ACK, checked before it may raise ackSeq (seq only grows); ackSeq read
        // for it or a first pass, at one place as on Tofino.
        if (meta.role == ROLE_READER && hdr.netec.isValid()) {
            if (hdr.netec.type == NETEC_ACK) {
                bit<1> ack_bad;
                ack_check.apply(hdr.netec, meta.cfg, ack_bad);
                if (ack_bad == 1) {
                    verdicts.count((bit<32>)V_MISMATCH);
                    mark_to_drop(std);
                    return;
                }
                ack_raise = true;
            }
        }
        if (first_pass || ack_raise) {
            ack_seq.read(ack, (bit<32>)meta.task);
            if (ack_raise && hdr.netec.seq > ack) {
                ack = hdr.netec.seq;
            }
            ack_seq.write((bit<32>)meta.task, ack);
        }
        // Multiply depends on nothing Admit and Track decide: it can run beside them. One
        // call site for both passes (the lanes it reads depend on the pass).
        bit<32> w0 = 0; bit<32> w1 = 0; bit<32> w2 = 0; bit<32> w3 = 0;
        bit<32> w4 = 0; bit<32> w5 = 0; bit<32> w6 = 0; bit<32> w7 = 0;
        if (first_pass || second_pass) {
            multiply.apply(hdr.lanes, second_pass ? 1w1 : 1w0, log_coeff,
                           w0, w1, w2, w3, w4, w5, w6, w7);
        }

        if (second_pass) {
            // ---- second pass of a DATA packet -----------------------------------------------
            // the classify tables found the task again: the cell is the first pass's
            cell = (bit<32>)(meta.slot_array ++ hdr.netec.slot[NETEC_SLOTS_LOG2 - 1:0]);
            // one read-modify-write per register, as on Tofino: overwrite (slot taken over),
            // accumulate, and hand the new sum to the packet (after a completed stripe the slot
            // is released, so its next packet overwrites: no clearing)
            bit<32> s;
            sum8.read(s, cell);  s = (hdr.pass.reset == 1 ? 0 : s) ^ w0;
            sum8.write(cell, s);  w0 = s;
            sum9.read(s, cell);  s = (hdr.pass.reset == 1 ? 0 : s) ^ w1;
            sum9.write(cell, s);  w1 = s;
            sum10.read(s, cell); s = (hdr.pass.reset == 1 ? 0 : s) ^ w2;
            sum10.write(cell, s); w2 = s;
            sum11.read(s, cell); s = (hdr.pass.reset == 1 ? 0 : s) ^ w3;
            sum11.write(cell, s); w3 = s;
            sum12.read(s, cell); s = (hdr.pass.reset == 1 ? 0 : s) ^ w4;
            sum12.write(cell, s); w4 = s;
            sum13.read(s, cell); s = (hdr.pass.reset == 1 ? 0 : s) ^ w5;
            sum13.write(cell, s); w5 = s;
            sum14.read(s, cell); s = (hdr.pass.reset == 1 ? 0 : s) ^ w6;
            sum14.write(cell, s); w6 = s;
            sum15.read(s, cell); s = (hdr.pass.reset == 1 ? 0 : s) ^ w7;
            sum15.write(cell, s); w7 = s;
            if (hdr.pass.verdict != PASS_COMPLETE) {
                mark_to_drop(std);  // counted; its stripe is not complete yet
                return;
            }
            // the stripe's slot is free again: the next packet for it starts afresh (a
            // retransmission after a lost RESULT is aggregated again from scratch)
            slot_seq.write(cell, SEQ_NONE);
            // The last packet of the stripe becomes the RESULT: the first half of the sums
            // rode in the payload since the first pass, the second half is written now.
            hdr.lanes.q8.v = w0;  hdr.lanes.q9.v = w1;  hdr.lanes.q10.v = w2;  hdr.lanes.q11.v = w3;
            hdr.lanes.q12.v = w4; hdr.lanes.q13.v = w5; hdr.lanes.q14.v = w6;  hdr.lanes.q15.v = w7;
            hdr.pass.setInvalid();
            hdr.ethernet.ether_type = ETHERTYPE_IPV4;
            hdr.netec.type = NETEC_RESULT;
            hdr.netec.sender = 0;  // row 0: this data plane rebuilds one row
            meta.netec_dirty = 1;
            meta.to_reader = 1;
        } else if (first_pass) {
            // ---- first pass of a DATA packet ------------------------------------------------
            bit<8> verdict;
            // seq's low 16 bits (Tofino takes them with an identity hash)
            admit.apply(hdr.netec, meta.lanes_ok, meta.cfg, ack, hdr.netec.seq[15:0], verdict);
            // one connection, one survivor (in conditions of a few bytes, as on Tofino)
            if (sender_bit == 0 || hdr.netec.version != NETEC_VERSION) {
                verdict = V_MISMATCH;
            }
            if (hdr.netec.reserved != 0 || hdr.netec.flags != 0) {
                verdict = V_MISMATCH;
            }
            if (hdr.netec.task != meta.task || hdr.netec.slot_array != meta.slot_array
                    || hdr.netec.sender != meta.sender) {
                verdict = V_MISMATCH;
            }
            if (verdict != 0) {
                verdicts.count((bit<32>)verdict);
                mark_to_drop(std);
                return;
            }
            // array ++ slot, as on Tofino (its identity hash): Admit let only slot = seq mod S in
            cell = (bit<32>)(meta.slot_array ++ hdr.netec.slot[NETEC_SLOTS_LOG2 - 1:0]);
            // Track: slot_seq, slot_bits and slot_count, one read-modify-write each (a Tofino
            // stateful ALU compares a cell with a value; it cannot test bits against a mask,
            // so the k-th sender is found by counting, the duplicate by the bits returned).
            // Within the window a slot that holds another stripe holds a stale one (a later
            // stripe with the same slot would be too far): take it over.
            bit<32> held;
            slot_seq.read(held, cell);
            bit<8> taken = held == hdr.netec.seq ? SLOT_SAME
                         : (held == SEQ_NONE ? SLOT_FREE : SLOT_STALE);
            bit<8> reset = taken != SLOT_SAME ? 8w1 : 8w0;
            slot_seq.write(cell, hdr.netec.seq);
            bit<16> bits;
            slot_bits.read(bits, cell);
            if (reset == 1) {
                bits = 0;
            }
            slot_bits.write(cell, bits | sender_bit);
            bit<1> duplicate;
            dup_check.apply(bits, sender_bit, duplicate);
            if (duplicate == 1) {
                verdicts.count((bit<32>)V_DUPLICATE);
                mark_to_drop(std);
                return;
            }
            bool fresh = bits == 0;
            bit<8> n;
            slot_count.read(n, cell);
            if (reset == 1) {
                n = 0;
            }
            bool complete = n == meta.cfg.k_minus1;
            slot_count.write(cell, complete ? 8w0 : n + 1);
            verdicts.count(complete ? (bit<32>)V_COMPLETE : (bit<32>)V_AGGREGATE);
            if (fresh) {
                started_raise = true;  // raised after the branches
            }
            // EBSN's partial slots, changed after the branches: one more when a free slot
            // starts a stripe, one fewer when one completes (k = 1: both, no change); a stale
            // stripe's slot taken over stays one
            if (taken == SLOT_FREE) {
                partial_delta = 1;
            }
            if (complete) {
                partial_delta = partial_delta - 1;
            }
            bit<32> s;
            sum0.read(s, cell); s = (reset == 1 ? 0 : s) ^ w0;
            sum0.write(cell, s); w0 = s;
            sum1.read(s, cell); s = (reset == 1 ? 0 : s) ^ w1;
            sum1.write(cell, s); w1 = s;
            sum2.read(s, cell); s = (reset == 1 ? 0 : s) ^ w2;
            sum2.write(cell, s); w2 = s;
            sum3.read(s, cell); s = (reset == 1 ? 0 : s) ^ w3;
            sum3.write(cell, s); w3 = s;
            sum4.read(s, cell); s = (reset == 1 ? 0 : s) ^ w4;
            sum4.write(cell, s); w4 = s;
            sum5.read(s, cell); s = (reset == 1 ? 0 : s) ^ w5;
            sum5.write(cell, s); w5 = s;
            sum6.read(s, cell); s = (reset == 1 ? 0 : s) ^ w6;
            sum6.write(cell, s); w6 = s;
            sum7.read(s, cell); s = (reset == 1 ? 0 : s) ^ w7;
            sum7.write(cell, s); w7 = s;
            // the new sums into the first half's words, as on Tofino (the registers write them):
            // the completing packet carries the first half of the stripe's sums, the others'
            // second passes never read them; still a valid NetEC packet in a valid segment when
            // it comes back for pass two
            hdr.lanes.q0.v = w0; hdr.lanes.q1.v = w1; hdr.lanes.q2.v = w2; hdr.lanes.q3.v = w3;
            hdr.lanes.q4.v = w4; hdr.lanes.q5.v = w5; hdr.lanes.q6.v = w6; hdr.lanes.q7.v = w7;
            meta.netec_dirty = 1;
            meta.tcp_dirty = 1;
            hdr.pass.setValid();
            hdr.pass.verdict = complete ? PASS_COMPLETE : PASS_AGGREGATE;
            hdr.pass.reset = reset;
            hdr.ethernet.ether_type = ETHERTYPE_NETEC_PASS;
            meta.recirculate = 1;
            std.egress_spec = RECIRC_PORT;
        } else if (meta.role == ROLE_SURVIVOR) {
            // ---- a survivor's TCP control segments ----------------------------------------
            if ((hdr.tcp.flags & TCP_SYN) != 0) {
                bit<16> answered;
                synack_bits.read(answered, (bit<32>)meta.task);
                answered = answered | sender_bit;
                synack_bits.write((bit<32>)meta.task, answered);
                meta.synack = 1;  // egress records its ISN, then drops all but the last
                meta.synack_last = answered == meta.cfg.k_mask ? 8w1 : 8w0;
                meta.to_reader = 1;
            } else if (meta.sender == 0 || hdr.netec.isValid()) {
                meta.to_reader = 1;  // sender 0 speaks for all (ACKs, FIN); errors pass
            } else {
                mark_to_drop(std);
                return;
            }
        } else if (meta.role == ROLE_READER) {
            // ---- the reader's segments: to every survivor ---------------------------------
            if ((hdr.tcp.flags & TCP_SYN) != 0) {
                reader_syn = true;  // learnt below, where the reader's address is read
                synack_bits.write((bit<32>)meta.task, 0);
            }
            std.mcast_grp = (bit<16>)meta.task + 1;  // replicas: one per survivor
            meta.tcp_dirty = 1;
        }

        // EBSN: maxStarted + 1 raised by a stripe's first packet, the partial slots changed by
        // a stripe's first and last packets, both read for the reader's ACK (window =
        // min(window, I - C)), each at one place as on Tofino
        bit<32> m = 0;
        if (started_raise || ack_raise) {
            max_started_plus1.read(m, (bit<32>)meta.task);
            if (started_raise && hdr.netec.seq + 1 > m) {
                m = hdr.netec.seq + 1;
            }
            max_started_plus1.write((bit<32>)meta.task, m);
        }
        bit<32> partial = 0;
        if (partial_delta != 0 || ack_raise) {
            partial_slots.read(partial, (bit<32>)meta.task);
            partial = partial + partial_delta;
            partial_slots.write((bit<32>)meta.task, partial);
        }
        if (ack_raise) {
            ebsn.apply(ack, m, partial, meta.cfg.exposed, hdr.netec.window);
            meta.netec_dirty = 1;  // its window rewritten
        }
        if (first_pass) {
            return;
        }
        if (meta.to_reader == 1 || reader_syn) {
            // the reader's address and port, learnt from its SYN and read for every segment to
            // it, at one place as on Tofino (a reader's own SYN, going to every survivor, gets
            // its address here too: egress gives each copy its survivor's)
            bit<32> raddr;
            bit<16> rport;
            reader_addr.read(raddr, (bit<32>)meta.task);
            reader_port.read(rport, (bit<32>)meta.task);
            if (reader_syn) {
                raddr = hdr.ipv4.src_addr;
                rport = hdr.tcp.src_port;
            }
            reader_addr.write((bit<32>)meta.task, raddr);
            reader_port.write((bit<32>)meta.task, rport);
            hdr.ipv4.dst_addr = raddr;
            hdr.tcp.dst_port = rport;
            meta.tcp_dirty = 1;
        }
        if (meta.role == ROLE_READER) {
            return;  // to every survivor (multicast group)
        }
        if (meta.to_reader == 1) {
            // to the reader, from the VIP; egress translates the sequence number
            hdr.ipv4.src_addr = meta.vip_addr;
            hdr.tcp.src_port = meta.vip_port;
        }
        l3_forward.apply();
    }
}

control NetecEgress(inout headers_t hdr, inout metadata_t meta,
                    inout standard_metadata_t std) {
    // survivor s of task t: its ISN minus the VIP's (what SEQ/ACK translation adds/subtracts)
    register<bit<32>>(NETEC_SENDER_CELLS) isn_delta;
    CsumReplace16() fix_netec_csum;

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
        key = { std.egress_rid : exact; }  // rid = task * NETEC_SENDERS + sender + 1
        actions = { to_survivor; NoAction; }
        const default_action = NoAction();
        size = NETEC_SENDER_CELLS;
    }

    apply {
        if (meta.recirculate == 1) {
            // Field list 0 is empty (p4c-bm2-ss warns that no field is tagged with it): the
            // pass header carries all the second pass needs, as on Tofino, where no metadata
            // survives recirculation.
            recirculate_preserving_field_list(0);
            return;
        }
        bit<32> idx = ((bit<32>)meta.task << NETEC_SENDERS_LOG2) + (bit<32>)meta.sender;
        if (std.egress_rid != 0 && replica.apply().hit) {
            // reader -> survivor s: its ACK numbers count in s's sequence space
            idx = ((bit<32>)meta.task << NETEC_SENDERS_LOG2) + (bit<32>)meta.sender;
            bit<32> delta;
            isn_delta.read(delta, idx);
            if ((hdr.tcp.flags & TCP_ACK) != 0) {
                hdr.tcp.ack_no = hdr.tcp.ack_no + delta;
            }
            if (hdr.netec.isValid() && hdr.netec.type == NETEC_HELLO) {
                // each survivor reads its own stream request out of the reader's HELLO
                bit<16> old_word = hdr.netec.sender ++ hdr.netec.flags;
                hdr.netec.sender = meta.sender;
                fix_netec_csum.apply(hdr.netec.checksum, old_word,
                                     hdr.netec.sender ++ hdr.netec.flags);
            }
            meta.tcp_dirty = 1;
        } else if (meta.to_reader == 1) {
            bit<32> delta;
            if (meta.synack == 1) {
                delta = hdr.tcp.seq_no - meta.vip_isn;
                isn_delta.write(idx, delta);
                if (meta.synack_last == 0) {
                    mark_to_drop(std);  // the reader gets one SYN-ACK: the last one
                    return;
                }
            } else {
                isn_delta.read(delta, idx);
            }
            hdr.tcp.seq_no = hdr.tcp.seq_no - delta;  // survivor s's space -> the VIP's
        }
    }
}

control NetecComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply {
        update_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.total_len,
              hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.frag_offset, hdr.ipv4.ttl,
              hdr.ipv4.protocol, hdr.ipv4.src_addr, hdr.ipv4.dst_addr },
            hdr.ipv4.hdr_checksum, HashAlgorithm.csum16);
        // NetEC checksum over the header (checksum field as 0) and the payload lanes;
        // lanes past the payload are invalid and trail, adding nothing.
        update_checksum(hdr.netec.isValid() && meta.netec_dirty == 1,
            { hdr.netec.version, hdr.netec.type, hdr.netec.task, hdr.netec.slot_array,
              hdr.netec.sender, hdr.netec.flags, hdr.netec.slot, hdr.netec.seq,
              hdr.netec.window, hdr.netec.payload_len, 16w0, hdr.netec.reserved,
              NETEC_LANE_BYTES(hdr.lanes) },
            hdr.netec.checksum, HashAlgorithm.csum16);
        // TCP: pseudo-header, header, options, NetEC header and lanes, then the unparsed
        // payload (a HELLO's JSON)
        update_checksum_with_payload(hdr.tcp.isValid() && meta.tcp_dirty == 1,
            { hdr.ipv4.src_addr, hdr.ipv4.dst_addr, 8w0, hdr.ipv4.protocol, meta.tcp_len,
              hdr.tcp.src_port, hdr.tcp.dst_port, hdr.tcp.seq_no, hdr.tcp.ack_no,
              hdr.tcp.data_offset, hdr.tcp.res, hdr.tcp.flags, hdr.tcp.window,
              hdr.tcp.urgent_ptr, hdr.tcp_ts.opts,
              hdr.netec.version, hdr.netec.type, hdr.netec.task, hdr.netec.slot_array,
              hdr.netec.sender, hdr.netec.flags, hdr.netec.slot, hdr.netec.seq,
              hdr.netec.window, hdr.netec.payload_len, hdr.netec.checksum,
              hdr.netec.reserved,
              NETEC_LANE_BYTES(hdr.lanes) },
            hdr.tcp.checksum, HashAlgorithm.csum16);
    }
}

control NetecDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.pass);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.tcp);
        pkt.emit(hdr.tcp_ts);
        pkt.emit(hdr.netec);
        pkt.emit(hdr.lanes);
    }
}

V1Switch(NetecParser(), NetecVerifyChecksum(), NetecIngress(), NetecEgress(),
         NetecComputeChecksum(), NetecDeparser()) main;
