// Who sends a datagram program's packet, for which task (v1model): a survivor's agent, by its
// address and port, the VIP's, and the task, slot array and sender its header names; or the
// reader, by the VIP and task; or, for a child task (its partial sum a survivor of a parent
// task on another switch), the parent switch, by its VIP and port, the child's VIP and port,
// and the parent's task, slot array and the child's sender number there; and whether a
// reader's HELLO carries its task's secret. survivor_in and vip_in apply side by side, into
// fields of their own (a survivor's packets are addressed to the VIP too: survivor_in's hit
// decides); parent_in after vip_in, into the reader's fields (its hit decides). Included by
// ../netec_xor.p4.
#ifndef NETEC_V1MODEL_XOR_CLASSIFY_P4
#define NETEC_V1MODEL_XOR_CLASSIFY_P4

control XorClassify(in headers_t hdr, inout metadata_t meta) {
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
    // one agent may serve two senders of a task from one address; a packet naming another
    // task is not this survivor's
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
    // ACKS: 0 once the task is attached to a parent switch, whose ACKs come in by parent_in
    // (no one else's move it then)
    action from_reader(bit<8> task, bit<32> stripes, bit<32> exposed, bit<1> acks) {
        meta.reader = 1;
        meta.reader_acks = acks;
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
    // the parent's ACK copies to this child (docs/protocol.md "Partial sums", datagrams): the
    // child's reader ACKs, once their task and slot array are the child's. Keyed on the
    // parent's address, unlike vip_in, whose entry the attach rewrites to take no ACK: only
    // the parent the reader attached moves the child.
    action from_parent(bit<8> task, bit<8> slot_array, bit<32> stripes, bit<32> exposed) {
        meta.reader = 1;
        meta.parent = 1;
        meta.reader_acks = 1;
        meta.reader_task = task;
        meta.child_array = slot_array;
        meta.reader_stripes = stripes;
        meta.exposed = exposed;
    }
    table parent_in {
        key = {
            hdr.ipv4.src_addr : exact; hdr.udp.src_port : exact;
            hdr.ipv4.dst_addr : exact; hdr.udp.dst_port : exact;
            hdr.netec.task : exact; hdr.netec.slot_array : exact; hdr.netec.sender : exact;
        }
        actions = { from_parent; NoAction; }
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
    apply {
        if (hdr.netec.isValid()) {
            survivor_in.apply();
            vip_in.apply();
            parent_in.apply();
        }
        if (hdr.hello.isValid()) {
            reader_secret.apply();
        }
    }
}

#endif
