// IPv4 forwarding by longest prefix: traffic of no task, and a task's packets rewritten to its
// reader. One table per use, as on Tofino, where each is applied at a call site of its own;
// the control plane fills all three alike (netec_p4/control/backends.py route_entries).
#ifndef NETEC_V1MODEL_FORWARD_P4
#define NETEC_V1MODEL_FORWARD_P4

#include <v1model.p4>
#include "../../include/headers.p4"

const bit<2> ROUTE_TRANSIT = 1;          // not a task's: forwarded as it is
const bit<2> ROUTE_RESULT = 2;           // a stripe's RESULT, from the VIP to the reader
const bit<2> ROUTE_AGENT_TO_READER = 3;  // a survivor's packet, from the VIP to the reader

control Forward(in bit<2> use, inout ipv4_h ipv4, inout ethernet_h ethernet,
                inout standard_metadata_t std) {
    action route(bit<9> port, bit<48> dmac) {
        std.egress_spec = port;
        ethernet.dst_addr = dmac;
    }
    action unroutable() {
        mark_to_drop(std);
    }
    table l3_forward {
        key = { ipv4.dst_addr : lpm; }
        actions = { route; unroutable; }
        const default_action = unroutable();
        size = 1024;
    }
    table l3_to_reader {
        key = { ipv4.dst_addr : lpm; }
        actions = { route; unroutable; }
        const default_action = unroutable();
        size = 1024;
    }
    table l3_agent_to_reader {
        key = { ipv4.dst_addr : lpm; }
        actions = { route; unroutable; }
        const default_action = unroutable();
        size = 1024;
    }
    apply {
        if (use == ROUTE_TRANSIT) {
            l3_forward.apply();
        } else if (use == ROUTE_RESULT) {
            l3_to_reader.apply();
        } else if (use == ROUTE_AGENT_TO_READER) {
            l3_agent_to_reader.apply();
        }
    }
}

#endif
