// NetEC data plane, v1model twin of p4src/tna/netec.p4 (BMv2 simple_switch).
//
// It is structured like the TNA program on purpose: every register is accessed once per pass
// (read-modify-write in one place, as a Tofino stateful ALU would), every table applies once
// per pass, and a DATA packet takes the same passes: pass 1 admits and tracks it, one sum
// pass per part of its payload multiplies and sums that part, rotating the payload on the
// wire by it (generated/lanes.p4); the last pass counts the stripe's packets and the k-th
// leaves as the RESULT. What v1model does
// differently: it has one deparser, after egress, so a DATA packet recirculates from egress
// (through one port's queue, as through Tofino's recirculation port), and checksums are
// verified and computed in their own controls. docs/protocol.md (version 3) is what it
// implements; switch-p4/README.md describes the pipeline; netec_p4/model/pipeline.py is its
// executable model.
//
// Build: p4c-bm2-ss --arch v1model -o netec.json --p4runtime-files netec.p4info.txtpb netec.p4
//        p4test --arch v1model netec.p4

#include <core.p4>
#include <v1model.p4>

#include "../include/headers.p4"
#include "../include/netec_logic.p4"
#include "../generated/lanes.p4"

#if NETEC_PASS_BYTES != 16
#error "lanes.p4 is generated for parts of 4 words"
#endif

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

// Every DATA packet leaves its passes through this one port's queue (egress recirculates it
// before it is sent), so each pass comes in the order of first passes, as through Tofino's
// recirculation port: the stripe's last packet sums only after every earlier packet of the
// stripe did. (Each packet's own ingress port would put them in different egress queues, and
// BMv2 reorders those: a stripe completed without one survivor's part, found by
// switch-p4/netec_p4/bmv2/bench.py.)
const bit<9> RECIRC_PORT = 68;
// A recirculated DATA packet's ethertype, in front of its pass header (read only on a
// recirculated packet).
const bit<16> ETHERTYPE_NETEC_PASS = 0x88B5;
const bit<32> INSTANCE_TYPE_RECIRC = 4;  // BMv2 simple_switch: standard_metadata.instance_type

struct headers_t {
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

struct metadata_t {
    bit<16> tcp_len;       // TCP header + payload (the pseudo-header's length)
    bit<16> tcp_payload;   // TCP payload bytes
    bit<8>  words_ok;      // the payload was taken into the halves
    bit<2>  part;          // the part a sum pass adds (parser, by ethertype)
    bit<1>  last_pass;     // ... its last: the payload ends in this part (parser)
    bit<16> csum_zero;     // 0: what a valid NetEC packet's whole sum complements to
    bit<8>  role;          // ROLE_*
    bit<1>  no_cfg;        // task_cfg missed: a classified packet of no task (dropped)
    bit<8>  task;
    bit<8>  slot_array;
    bit<8>  sender;
    bit<32> vip_isn;
    bit<16> synack_bit;    // the connection's sender bit, from survivor_in
    bit<8>  to_reader;     // egress: the packet goes to the task's reader
    bit<8>  synack;        // egress: a survivor's SYN-ACK (record its ISN)
    bit<8>  synack_last;   // egress: ... and the last of the task's: forward it
    bit<8>  recirculate;   // egress: send back for the next pass
    bit<8>  netec_dirty;   // deparse: recompute the NetEC checksum over header and words
    bit<8>  tcp_dirty;     // deparse: recompute the TCP checksum
    bit<1>  secret_ok;     // reader_secret: the HELLO carries its task's secret
    bit<1>  has_payload;   // tcp_payload: the segment carries bytes past its headers
    // the reader's branch, as in the TNA program: its flags, reader_flags' answers, the proof
    bit<1>  syn;
    bit<1>  hello;
    bit<1>  syn_bare;
    bit<1>  may_bind;
    bit<1>  hello_no_secret;
    bit<1>  payload_no_secret;
    bit<8>  proven;
    bit<1>  ack_bad;
    bit<1>  hello_room;    // ... and room for a NetEC header and a HELLO's secret
    task_cfg_t cfg;
}

const bit<8> ROLE_NONE = 0;
const bit<8> ROLE_READER = 1;    // reader -> VIP
const bit<8> ROLE_SURVIVOR = 2;  // survivor agent -> VIP

parser NetecParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t std) {
    state start {
        meta.words_ok = 0;
        meta.part = 0;
        meta.last_pass = 0;
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
    // again as read (a segment shorter than them is a parser error: no secret)
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
    // The payload's states (lanes.p4), as on Tofino: one chain a header, entered where its
    // words end with it.
    state parse_first {  // c <- the first words, d <- the rest
        transition select(hdr.netec.payload_len) {
            NETEC_FIRST_CASES(words_done)
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
        transition CHAIN##_##NEXT;                                                            \
    }
#define LAST_STATE(CHAIN, X, J)                                                               \
    state CHAIN##_##J {                                                                       \
        pkt.extract(hdr.X.w##J);                                                              \
        transition CHAIN##_end;                                                               \
    }
    NETEC_PAYLOAD_STATES(WORD_STATE, LAST_STATE)
    // pass 1: c's words, then d's if any
    // (after the words: payload_len's low byte, the entry having held it to 64 at most)
    state c_end {
        transition select(hdr.netec.payload_len[7:0]) {
            NETEC_FIRST_REST_CASES(words_done)
            default: accept;
        }
    }
    state d_end {
        transition words_done;
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
    state words_done {
        meta.words_ok = 1;
        transition accept;
    }
}

// A front port's NetEC segment whose TCP checksum or NetEC checksum fails is dropped in
// ingress (standard_metadata's checksum_error): its payload must not enter a sum, and the
// ComputeChecksum control below recomputes checksums from scratch, which would otherwise hide
// the corruption. A sum pass's words are its sums: not judged again (as on Tofino).
control NetecVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply {
        verify_checksum_with_payload(hdr.netec.isValid() && !hdr.pass.isValid(),
            { hdr.ipv4.src_addr, hdr.ipv4.dst_addr, 8w0, hdr.ipv4.protocol, meta.tcp_len,
              hdr.tcp.src_port, hdr.tcp.dst_port, hdr.tcp.seq_no, hdr.tcp.ack_no,
              hdr.tcp.data_offset, hdr.tcp.res, hdr.tcp.flags, hdr.tcp.window,
              hdr.tcp.urgent_ptr, hdr.tcp_ts.opts,
              hdr.netec.version, hdr.netec.type, hdr.netec.task, hdr.netec.slot_array,
              hdr.netec.sender, hdr.netec.flags, hdr.netec.slot, hdr.netec.seq,
              hdr.netec.window, hdr.netec.payload_len, hdr.netec.checksum,
              hdr.netec.reserved,
              hdr.hello, NETEC_PAYLOAD_WORDS(hdr.c, hdr.q, hdr.d) },
            hdr.tcp.checksum, HashAlgorithm.csum16);
        // The NetEC checksum (header and words): a receiver drops a packet that fails it
        // (docs/protocol.md), also inside a valid TCP segment. The sum includes the checksum
        // field and is compared with 0, so both encodings of a computed 0 (0 and 0xFFFF)
        // pass; invalid words (outside the payload) add nothing. Only a payload the parser
        // took into words (or none) is judged, as on Tofino: a HELLO's JSON of any other
        // length is not read.
        verify_checksum(hdr.netec.isValid() && !hdr.pass.isValid() && meta.words_ok == 1,
            { hdr.netec.version, hdr.netec.type, hdr.netec.task, hdr.netec.slot_array,
              hdr.netec.sender, hdr.netec.flags, hdr.netec.slot, hdr.netec.seq,
              hdr.netec.window, hdr.netec.payload_len, hdr.netec.checksum,
              hdr.netec.reserved,
              NETEC_PAYLOAD_WORDS(hdr.c, hdr.q, hdr.d) },
            meta.csum_zero, HashAlgorithm.csum16);
    }
}

control NetecIngress(inout headers_t hdr, inout metadata_t meta,
                     inout standard_metadata_t std) {
    // ---- state ---------------------------------------------------------------------------
    register<bit<32>>(NETEC_TASKS) ack_seq;             // reader's first missing stripe
    register<bit<32>>(NETEC_TASKS) max_started_plus1;   // highest stripe begun, + 1
    register<bit<32>>(NETEC_TASKS) slot_starts;         // stripes started in a free slot
    register<bit<32>>(NETEC_TASKS) slot_completes;      // stripes completed
    register<bit<32>>(NETEC_SLOT_CELLS) slot_seq;       // stripe a slot holds
    register<bit<16>>(NETEC_SLOT_CELLS) slot_bits;      // progress tracker: senders admitted
    register<bit<64>>(NETEC_SLOT_CELLS) slot_count;     // seq (low 32) and its packets summed
    register<bit<32>>(NETEC_SUM_CELLS) sum0;            // partial sums of part q's words, a
    register<bit<32>>(NETEC_SUM_CELLS) sum1;            // cell per slot and part
    register<bit<32>>(NETEC_SUM_CELLS) sum2;
    register<bit<32>>(NETEC_SUM_CELLS) sum3;
    register<bit<32>>(NETEC_TASKS) reader_addr;         // learned from the reader's SYN
    register<bit<16>>(NETEC_TASKS) reader_port;
    register<bit<16>>(NETEC_TASKS) synack_bits;         // survivors that answered the SYN
    // 1 once the reader's HELLO carried the task's secret: its segments with a payload reach
    // the survivors only from then on, and no later SYN rebinds the VIP
    register<bit<8>>(NETEC_TASKS) reader_proven;
    counter(8, CounterType.packets) verdicts;           // DATA packets by verdict

    // ---- tables --------------------------------------------------------------------------
    action from_survivor(bit<8> task, bit<8> slot_array, bit<8> sender, bit<32> vip_isn,
                         bit<16> sender_bit) {
        meta.role = ROLE_SURVIVOR;
        meta.task = task;
        meta.slot_array = slot_array;
        meta.sender = sender;
        meta.vip_isn = vip_isn;
        meta.synack_bit = sender_bit;  // its SYN-ACK's bit (sender_coeff needs a NetEC header)
    }
    action not_survivor() {
        meta.role = ROLE_NONE;
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

    // The reader's segment, decided as the TNA program decides it, by the same entries
    // (netec_logic.p4): its flags before the proof, then a verdict after it.
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
    }
    action drop_counted(bit<8> why) {
        verdicts.count((bit<32>)why);
        mark_to_drop(std);
    }
    action drop_uncounted() {
        mark_to_drop(std);
    }
    action to_survivors() {
        std.mcast_grp = (bit<16>)meta.task + 1;  // replicas: one per survivor
    }
    action ack_to_survivors() {
        meta.netec_dirty = 1;  // its window rewritten
        std.mcast_grp = (bit<16>)meta.task + 1;
    }
    table reader_ack_verdict {
        key = { meta.proven : ternary; meta.ack_bad : ternary; meta.words_ok : ternary; }
        actions = { drop_counted; ack_to_survivors; }
        const default_action = ack_to_survivors();
        const entries = {
            READER_ACK_VERDICT_ENTRIES
        }
    }
    table reader_verdict {
        key = { meta.proven : ternary; meta.syn : ternary; meta.hello_no_secret : ternary;
                meta.payload_no_secret : ternary; }
        actions = { drop_counted; drop_uncounted; to_survivors; }
        const default_action = to_survivors();
        const entries = {
            READER_VERDICT_ENTRIES
        }
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

    // whether a segment carries a payload, and room for a HELLO's secret, as the TNA program
    // finds them (a table of ranges: Tofino's parser cannot subtract)
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
    }

    action from_reader(bit<8> task, bit<8> slot_array, bit<32> vip_isn) {
        meta.role = ROLE_READER;
        meta.task = task;
        meta.slot_array = slot_array;
        meta.vip_isn = vip_isn;
    }
    table vip_in {
        key = { hdr.ipv4.dst_addr : exact; hdr.tcp.dst_port : exact; }
        actions = { from_reader; NoAction; }
        const default_action = NoAction();
        size = NETEC_TASKS;
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

    log_a_t log_coeff;  // one copy per group of lanes, as on Tofino
    bit<16> sender_bit;
    action set_coeff(bit<10> log_a, bit<16> bit_s) {
        NETEC_SET_LOG_A(log_coeff, log_a)
        sender_bit = bit_s;  // 1 << sender: a table gives the one-hot bit (no variable shifts)
    }
    action no_coeff() {
        NETEC_SET_LOG_A(log_coeff, GF_LOG_ZERO)
        sender_bit = 0;
    }
    // keyed on the header's task and sender (a first pass holds them to the connection's; a
    // sum pass then needs no classify before its multiply)
    table sender_coeff {
        key = { hdr.netec.task : exact; hdr.netec.sender : exact; }
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
    // one route table per call site, as on Tofino; the control plane fills all three alike
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

    apply {
        meta.to_reader = 0;
        meta.synack = 0;
        meta.synack_last = 0;
        meta.recirculate = 0;
        meta.netec_dirty = 0;
        meta.tcp_dirty = 0;
        meta.no_cfg = 0;
        meta.secret_ok = 0;
        meta.role = ROLE_NONE;
        if (!hdr.ipv4.isValid()) {
            mark_to_drop(std);
            return;
        }

        // ---- classify: who sends, for which task -----------------------------------------
        if (hdr.tcp.isValid()) {
            // the survivors' segments are addressed to the VIP too: the 4-tuple decides first
            if (!survivor_in.apply().hit) {
                vip_in.apply();
            }
        }
        meta.has_payload = 0;
        meta.hello_room = 0;
        if (hdr.tcp.isValid()) {
            tcp_payload.apply();
        }
        bit<1> frag = 0;
        if (hdr.ipv4.flags[0:0] == 1 || hdr.ipv4.frag_offset != 0) {
            frag = 1;
        }
        if (hdr.hello.isValid() && meta.hello_room == 1 && frag == 0) {
            reader_secret.apply();
        }
        meta.syn = 0;
        if (hdr.tcp.isValid() && (hdr.tcp.flags & TCP_SYN) != 0) {
            meta.syn = 1;
        }
        meta.hello = 0;
        if (hdr.netec.isValid() && hdr.netec.type == NETEC_HELLO) {
            meta.hello = 1;
        }
        reader_flags.apply();
        if (meta.role != ROLE_NONE) {
            task_cfg.apply();
        }
        NETEC_SET_LOG_A(log_coeff, GF_LOG_ZERO)
        sender_bit = 0;
        if (hdr.netec.isValid()) {
            sender_coeff.apply();
        }

        // ---- what the packet is ----------------------------------------------------------
        bool sum_pass = hdr.pass.isValid();
        bool last_pass = sum_pass && meta.last_pass == 1;
        bool first_pass = false;
        bool reader_ack = false;
        bit<32> ack_in = 0;       // the reader's sound ACK's seq raises ackSeq; 0 reads it
        bit<32> started_op = 0;   // sum pass 0: maxStarted + 1 raised to seq + 1
        bit<32> starts_inc = 0;   // sum pass 0: a stripe started in a free slot
        if (sum_pass) {
            if (meta.part == 0) {
                started_op = hdr.netec.seq + 1;
                starts_inc = (bit<32>)hdr.pass.starts;
            }
        } else if (meta.role == ROLE_SURVIVOR && hdr.netec.isValid()
                   && hdr.netec.type == NETEC_DATA) {
            first_pass = true;
        } else if (meta.role == ROLE_READER && hdr.netec.isValid()
                   && hdr.netec.type == NETEC_ACK) {
            reader_ack = true;
            if (hdr.netec.sender == NETEC_READER && meta.words_ok == 1
                    && std.checksum_error == 0) {
                ack_in = hdr.netec.seq;
            }
        }

        // ---- the registers every branch reads first, each at one place as on Tofino --------
        // the cell of the packet's slot (array ++ slot) and of its part's sums
        bit<32> cell = (bit<32>)(hdr.netec.slot_array ++ hdr.netec.slot[NETEC_SLOTS_LOG2 - 1:0]);
        bit<32> sum_cell = (bit<32>)(hdr.netec.slot_array ++ hdr.netec.slot[NETEC_SLOTS_LOG2 - 1:0]
                                     ++ meta.part);
        bool complete = false;
        bool k_one = false;  // k = 1: every packet completes its stripe
        if (last_pass) {
            // the stripe's packets summed (a count another stripe left restarts); the k-th
            // marks the cell free
            bit<64> c;
            slot_count.read(c, cell);
            bit<32> cseq = c[31:0];
            bit<32> n = c[63:32];
            if (cseq == hdr.netec.seq) {
                if (n == (bit<32>)hdr.pass.k_minus1) {
                    cseq = SEQ_NONE;
                    complete = true;
                }
                n = n + 1;
            } else {
                cseq = hdr.netec.seq;
                n = 1;
            }
            slot_count.write(cell, n ++ cseq);
            k_one = hdr.pass.k_minus1 == 0;
        }
        bit<32> ack = 0;
        if (first_pass || reader_ack) {
            // ackSeq only grows, never past the task's stripes (Tofino keeps the bound in the
            // register's other half)
            ack_seq.read(ack, (bit<32>)meta.task);
            if (ack_in > ack && meta.cfg.stripes >= ack_in) {
                ack = ack_in;
            }
            ack_seq.write((bit<32>)meta.task, ack);
        }
        bit<32> started = 0;
        bit<32> starts = 0;
        bit<32> completes = 0;
        if (sum_pass || reader_ack) {
            // EBSN's counters: pass 2 raises maxStarted + 1 and adds a stripe started in a
            // free slot, the last pass adds a completed one, the reader's ACK reads them
            max_started_plus1.read(started, (bit<32>)meta.task);
            if (started_op > started) {
                started = started_op;
            }
            max_started_plus1.write((bit<32>)meta.task, started);
            slot_starts.read(starts, (bit<32>)meta.task);
            starts = starts + starts_inc;
            slot_starts.write((bit<32>)meta.task, starts);
            slot_completes.read(completes, (bit<32>)meta.task);
            if (complete || k_one) {
                completes = completes + 1;
            }
            slot_completes.write((bit<32>)meta.task, completes);
        }

        if (sum_pass) {
            // ---- a sum pass: part q times the coefficient into its part's cells -------------
            multiply.apply(hdr.q, log_coeff);
            // one read-modify-write per register, as on Tofino: overwrite when the packet
            // starts its stripe in the slot, accumulate otherwise, and hand the new sum to the
            // packet's word
            bit<32> s;
            sum0.read(s, sum_cell); s = (hdr.pass.reset == 1 ? 0 : s) ^ hdr.q.w0.v;
            sum0.write(sum_cell, s); hdr.q.w0.v = s;
            sum1.read(s, sum_cell); s = (hdr.pass.reset == 1 ? 0 : s) ^ hdr.q.w1.v;
            sum1.write(sum_cell, s); hdr.q.w1.v = s;
            sum2.read(s, sum_cell); s = (hdr.pass.reset == 1 ? 0 : s) ^ hdr.q.w2.v;
            sum2.write(sum_cell, s); hdr.q.w2.v = s;
            sum3.read(s, sum_cell); s = (hdr.pass.reset == 1 ? 0 : s) ^ hdr.q.w3.v;
            sum3.write(sum_cell, s); hdr.q.w3.v = s;
            if (!last_pass) {
                hdr.netec.reserved = hdr.netec.reserved + 1;  // the next part
                meta.recirculate = 1;
                std.egress_spec = RECIRC_PORT;
            } else if (!complete && !k_one) {
                drop_counted(V_AGGREGATE);  // its stripe is not complete yet
            } else {
                verdicts.count((bit<32>)V_COMPLETE);
                // the stripe's RESULT, from the VIP to the reader; its slot is free again (a
                // retransmission after a lost RESULT is aggregated again from scratch)
                slot_seq.write(cell, SEQ_NONE);
                bit<32> raddr;
                bit<16> rport;
                reader_addr.read(raddr, (bit<32>)hdr.netec.task);
                reader_port.read(rport, (bit<32>)hdr.netec.task);
                hdr.pass.setInvalid();
                hdr.ethernet.ether_type = ETHERTYPE_IPV4;
                hdr.netec.type = NETEC_RESULT;
                hdr.netec.sender = 0;  // row 0: this data plane rebuilds one row
                hdr.netec.reserved = 0;
                hdr.ipv4.src_addr = hdr.ipv4.dst_addr;  // the VIP
                hdr.tcp.src_port = hdr.tcp.dst_port;
                hdr.ipv4.dst_addr = raddr;
                hdr.tcp.dst_port = rport;
                meta.netec_dirty = 1;
                meta.tcp_dirty = 1;
                meta.to_reader = 1;  // egress translates the sequence number
                l3_to_reader.apply();
            }
        } else if (meta.role != ROLE_NONE && meta.no_cfg == 1) {
            mark_to_drop(std);  // a task being removed
        } else if (meta.role != ROLE_NONE && std.checksum_error == 1) {
            // a task's segment that failed its TCP or NetEC checksum (other traffic is only
            // forwarded: a payload that merely looks like a NetEC header is none of ours)
            mark_to_drop(std);
        } else if (first_pass) {
            // ---- pass 1: admit and track ------------------------------------------------------
            bit<8> verdict;
            // seq's low 16 bits (Tofino takes them with an identity hash)
            admit.apply(hdr.netec, meta.words_ok, meta.cfg, ack, hdr.netec.seq[15:0], verdict);
            // one connection, one survivor (flags side by side on Tofino)
            bool bad_header = hdr.netec.version != NETEC_VERSION || hdr.netec.reserved != 0
                              || hdr.netec.flags != 0;
            bool bad_ids = hdr.netec.task != meta.task || hdr.netec.slot_array != meta.slot_array
                           || hdr.netec.sender != meta.sender;
            if (bad_header || bad_ids || sender_bit == 0) {
                verdict = V_MISMATCH;
            }
            if (verdict != 0) {
                drop_counted(verdict);
            } else {
                // Track: slot_seq and slot_bits, one read-modify-write each. Within the window
                // a slot that holds another stripe holds a stale one (a later stripe with the
                // same slot would be too far): take it over.
                bit<32> held;
                slot_seq.read(held, cell);
                bit<8> taken = held == hdr.netec.seq ? SLOT_SAME
                             : (held == SEQ_NONE ? SLOT_FREE : SLOT_STALE);
                slot_seq.write(cell, hdr.netec.seq);
                bit<16> bits;
                slot_bits.read(bits, cell);
                bit<16> dup = taken == SLOT_SAME ? bits & sender_bit : 0;
                slot_bits.write(cell, (taken == SLOT_SAME ? bits : 0) | sender_bit);
                hdr.pass.setValid();
                hdr.pass.reset = taken == SLOT_SAME ? 8w0 : 8w1;
                hdr.pass.starts = taken == SLOT_FREE ? 8w1 : 8w0;
                if (dup != 0) {
                    drop_counted(V_DUPLICATE);
                } else {
                    // counted (AGGREGATE or COMPLETE) in its last pass
                    hdr.pass.k_minus1 = meta.cfg.k_minus1;
                    hdr.ethernet.ether_type = ETHERTYPE_NETEC_PASS;
                    hdr.netec.reserved = 1;  // sum pass 0
                    meta.recirculate = 1;
                    std.egress_spec = RECIRC_PORT;
                }
            }
        } else if (meta.role == ROLE_SURVIVOR) {
            // ---- a survivor's TCP control segments: to the reader, from the VIP --------------
            bit<32> raddr;
            bit<16> rport;
            reader_addr.read(raddr, (bit<32>)meta.task);
            reader_port.read(rport, (bit<32>)meta.task);
            if ((hdr.tcp.flags & TCP_SYN) != 0) {
                bit<16> answered;
                synack_bits.read(answered, (bit<32>)meta.task);
                answered = answered | meta.synack_bit;
                synack_bits.write((bit<32>)meta.task, answered);
                meta.synack = 1;  // egress records its ISN, then drops all but the last
                meta.synack_last = answered == meta.cfg.k_mask ? 8w1 : 8w0;
                meta.to_reader = 1;
            } else if (meta.sender == 0 || hdr.netec.isValid()) {
                meta.to_reader = 1;  // sender 0 speaks for all (ACKs, FIN); errors pass
            } else {
                mark_to_drop(std);
            }
            hdr.ipv4.src_addr = hdr.ipv4.dst_addr;  // the VIP
            hdr.tcp.src_port = hdr.tcp.dst_port;
            hdr.ipv4.dst_addr = raddr;
            hdr.tcp.dst_port = rport;
            meta.tcp_dirty = 1;
            l3_agent_to_reader.apply();
        } else if (meta.role == ROLE_READER && frag == 1) {
            mark_to_drop(std);  // a fragment to a VIP: its payload is judged only whole
        } else if (meta.role == ROLE_READER) {
            // ---- the reader's segments: to every survivor (egress: addresses, SEQ/ACK) -------
            // The reader proves itself with its HELLO's secret (reader_secret). Until then only
            // its handshake and segments without a payload reach the survivors, and a SYN
            // (re)binds the VIP; the proving HELLO binds it to its own source, and from then on
            // nothing rebinds it and SYNs are dropped; a HELLO without the secret never passes.
            // One access to reader_proven for every reader segment, as on Tofino.
            // (the TNA program reads the proof before the branches, for its stages)
            reader_proven.read(meta.proven, (bit<32>)meta.task);
            if (meta.secret_ok == 1) {
                reader_proven.write((bit<32>)meta.task, 1);
            }
            if (reader_ack) {
                ack_check.apply(hdr.netec, meta.cfg, meta.ack_bad);
                ebsn.apply(ack, started, starts - completes, meta.cfg.exposed,
                           hdr.netec.window);
                // an ACK before the proof reaches no survivor (ackSeq has moved, as on
                // Tofino, where it is read before the proof for every first pass)
                reader_ack_verdict.apply();
            } else {
                if (meta.proven == 0 && meta.syn_bare == 1) {
                    synack_bits.write((bit<32>)meta.task, 0);
                }
                if (meta.proven == 0 && meta.may_bind == 1) {
                    reader_addr.write((bit<32>)meta.task, hdr.ipv4.src_addr);
                    reader_port.write((bit<32>)meta.task, hdr.tcp.src_port);
                }
                reader_verdict.apply();
            }
        } else {
            l3_forward.apply();  // not a task's: forwarded as it is
        }
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
            // pass header carries all the next pass needs, as on Tofino, where no metadata
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
        // NetEC checksum over the header (checksum field as 0) and the payload words;
        // words outside the payload are invalid, adding nothing.
        update_checksum(hdr.netec.isValid() && meta.netec_dirty == 1,
            { hdr.netec.version, hdr.netec.type, hdr.netec.task, hdr.netec.slot_array,
              hdr.netec.sender, hdr.netec.flags, hdr.netec.slot, hdr.netec.seq,
              hdr.netec.window, hdr.netec.payload_len, 16w0, hdr.netec.reserved,
              NETEC_PAYLOAD_WORDS(hdr.c, hdr.q, hdr.d) },
            hdr.netec.checksum, HashAlgorithm.csum16);
        // TCP: pseudo-header, header, options, NetEC header and words, then the unparsed
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
              hdr.hello, NETEC_PAYLOAD_WORDS(hdr.c, hdr.q, hdr.d) },
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
        pkt.emit(hdr.hello);
        pkt.emit(hdr.c);  // c before q: a sum pass rotates the payload by its part (lanes.p4)
        pkt.emit(hdr.q);
        pkt.emit(hdr.d);
    }
}

V1Switch(NetecParser(), NetecVerifyChecksum(), NetecIngress(), NetecEgress(),
         NetecComputeChecksum(), NetecDeparser()) main;
