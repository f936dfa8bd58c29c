// The constants, headers and metadata of the datagram XOR program (v1model). Included by
// ../netec_xor.p4.
#ifndef NETEC_V1MODEL_XOR_TYPES_P4
#define NETEC_V1MODEL_XOR_TYPES_P4

#include "../../include/headers.p4"
#include "../../include/netec_logic.p4"
#include "../../generated/halves.p4"

const bit<16> ETHERTYPE_SUM_FIRST = 0x88B5;   // pass 2: sum the first half
const bit<16> ETHERTYPE_SUM_SECOND = 0x88B6;  // pass 3: sum the second half
const bit<9> RECIRC_PORT = 68;
const bit<32> INSTANCE_TYPE_RECIRC = 4;  // BMv2 simple_switch: standard_metadata.instance_type
const bit<16> HALF_BYTES = 128;

header netec_xpass_h {
    bit<8> k_minus1;  // the task's k - 1: the last pass counts the stripe's packets to k
    bit<8> reset;
}

struct headers_t {
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

struct metadata_t {
    bit<8>  words_ok;
    bit<16> csum_zero;      // 0: what a valid NetEC packet's whole sum complements to
    bit<1>  survivor;       // survivor_in and vip_in apply side by side, into fields of their own
    bit<8>  task;
    bit<8>  slot_array;
    task_cfg_t cfg;
    bit<1>  reader;
    bit<1>  secret_ok;      // reader_secret: the HELLO carries its task's secret
    bit<8>  reader_task;
    bit<1>  parent;         // parent_in: the reader is this child task's parent switch
    bit<1>  reader_acks;    // vip_in: the task takes its reader's ACKs there (not attached)
    bit<8>  child_array;    // ... the child task's slot array
    bit<8>  counter_task;   // egress: whose EBSN counters (a partial sum leaves as its parent's)
    bit<32> reader_stripes;
    bit<16> sender_bit;
    bit<8>  recirculate;    // egress: back for the next pass
    bit<8>  result;         // deparse: the RESULT's checksum over header and words
    bit<8>  ebsn;           // egress: a copy of the reader's ACK (EBSN window)
    bit<8>  counters;       // egress: EBSN's counters (a first pass, or a reader's ACK)
    bit<32> started_op;     // ... maxStarted + 1 raised to this (0: read)
    bit<32> starts_inc;     // ... stripes started in a free slot: + this
    bit<32> completes_inc;  // ... stripes completed: + this
    bit<32> ack;
    bit<32> exposed;
}

#endif
