// The constants, headers and metadata of the TCP program (v1model). Included by ../netec.p4.
#ifndef NETEC_V1MODEL_TCP_TYPES_P4
#define NETEC_V1MODEL_TCP_TYPES_P4

#include "../../include/headers.p4"
#include "../../include/netec_logic.p4"
#include "../../generated/lanes.p4"

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
    bit<1>  frag;          // an IP fragment: a reader's is dropped (a payload is judged whole)
    task_cfg_t cfg;
}

const bit<8> ROLE_NONE = 0;
const bit<8> ROLE_READER = 1;    // reader -> VIP
const bit<8> ROLE_SURVIVOR = 2;  // survivor agent -> VIP

#endif
