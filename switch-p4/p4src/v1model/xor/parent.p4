// A child task's reader is its parent switch (docs/protocol.md "Partial sums", over datagrams):
// the reader attached it, which bound the task's reader address to the parent's VIP and filled
// this table. What the child sends its reader (a stripe's partial sum, a survivor's error
// HELLO) leaves as the parent's packet of the sender the partial sum is there: the parent's
// task, slot array and sender, and the slot in the parent's ring. Included by ../netec_xor.p4.
#ifndef NETEC_V1MODEL_XOR_PARENT_P4
#define NETEC_V1MODEL_XOR_PARENT_P4

control XorParent(in bit<8> task, out bit<1> attached, out bit<8> parent_task,
                  out bit<8> parent_array, out bit<8> parent_sender, out bit<16> slot_mask) {
    action as_parent(bit<8> p_task, bit<8> p_array, bit<8> p_sender, bit<16> p_slot_mask) {
        attached = 1;
        parent_task = p_task;
        parent_array = p_array;
        parent_sender = p_sender;
        slot_mask = p_slot_mask;
    }
    action unattached() {
        attached = 0;
        parent_task = 0;
        parent_array = 0;
        parent_sender = 0;
        slot_mask = 0;
    }
    table parent_of {
        key = { task : exact; }
        actions = { as_parent; unattached; }
        const default_action = unattached();
        size = NETEC_TASKS;
    }
    apply {
        parent_of.apply();
    }
}

#endif
