// Who sends a TCP program's segment, for which task (v1model): a survivor's connection, by its
// 4-tuple (survivor_in: the survivors' segments are addressed to the VIP too, so the 4-tuple
// decides first), or else the reader's, by the VIP (vip_in); the task's configuration
// (task_cfg) and the sender's coefficient (sender_coeff); whether the segment carries a payload,
// a fragment or a HELLO with its task's secret, and what a reader's segment may do before its
// proof is read (reader_flags, the TNA program's entries: netec_logic.p4). A sum pass is
// classified too: its 4-tuple is its survivor's, and its multiply needs the coefficient.
// Included by ../netec.p4.
#ifndef NETEC_V1MODEL_TCP_CLASSIFY_P4
#define NETEC_V1MODEL_TCP_CLASSIFY_P4

// LOG_COEFF, HEADER_SENDER_BIT: the log of the coefficient and the one-hot bit of the sender
// the NetEC header names.
control NetecClassify(in headers_t hdr, inout metadata_t meta, out log_a_t log_coeff,
                      out bit<16> header_sender_bit) {
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

    // The reader's segment, decided as the TNA program decides it, by the same entries
    // (netec_logic.p4): its flags before the proof (then a verdict after it, ../netec.p4).
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

    action set_coeff(bit<10> log_a, bit<16> bit_s) {
        NETEC_SET_LOG_A(log_coeff, log_a)
        header_sender_bit = bit_s;  // 1 << sender: a table gives it (no variable shifts)
    }
    action no_coeff() {
        NETEC_SET_LOG_A(log_coeff, GF_LOG_ZERO)
        header_sender_bit = 0;
    }
    // keyed on the header's task and sender (a first pass holds them to the connection's; a
    // sum pass then needs no classify before its multiply)
    table sender_coeff {
        key = { hdr.netec.task : exact; hdr.netec.sender : exact; }
        actions = { set_coeff; no_coeff; }
        const default_action = no_coeff();
        size = NETEC_SENDER_CELLS;
    }

    apply {
        meta.no_cfg = 0;
        meta.secret_ok = 0;
        meta.role = ROLE_NONE;
        if (hdr.tcp.isValid()) {
            if (!survivor_in.apply().hit) {
                vip_in.apply();
            }
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
        if (hdr.hello.isValid() && meta.hello_room == 1 && meta.frag == 0) {
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
        header_sender_bit = 0;
        if (hdr.netec.isValid()) {
            sender_coeff.apply();
        }
    }
}

#endif
