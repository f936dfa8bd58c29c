// Headers and metadata shared by the TNA program and its v1model twin.
#ifndef NETEC_HEADERS_P4
#define NETEC_HEADERS_P4

#include "config.p4"

const bit<16> ETHERTYPE_IPV4 = 0x0800;
const bit<8> IP_PROTO_TCP = 6;
// a macro, not a constant: the TCP program does not use it, and p4test warns of an unused one
#define IP_PROTO_UDP 8w17

// TCP flags
const bit<8> TCP_SYN = 0x02;
const bit<8> TCP_ACK = 0x10;

// NetEC (docs/protocol.md, version 2)
const bit<8> NETEC_VERSION = 3;
const bit<8> NETEC_DATA = 1;
const bit<8> NETEC_RESULT = 2;
const bit<8> NETEC_ACK = 3;
const bit<8> NETEC_HELLO = 4;
const bit<8> NETEC_READER = 0xFF;

header ethernet_h {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

header ipv4_h {
    bit<4>  version;
    bit<4>  ihl;
    bit<8>  diffserv;
    bit<16> total_len;
    bit<16> identification;
    bit<3>  flags;
    bit<13> frag_offset;
    bit<8>  ttl;
    bit<8>  protocol;
    bit<16> hdr_checksum;
    bit<32> src_addr;
    bit<32> dst_addr;
}

header tcp_h {
    bit<16> src_port;
    bit<16> dst_port;
    bit<32> seq_no;
    bit<32> ack_no;
    bit<4>  data_offset;
    bit<4>  res;
    bit<8>  flags;
    bit<16> window;
    bit<16> checksum;
    bit<16> urgent_ptr;
}

header udp_h {
    bit<16> src_port;
    bit<16> dst_port;
    bit<16> length;
    bit<16> checksum;  // 0 (none) on every datagram the switch rewrites: NetEC's own covers it
}

// The one TCP option layout the data plane parses through: 12 bytes (NOP, NOP, timestamps),
// what Linux sends on an established connection with timestamps on (data offset 8).
header tcp_ts_h {
    bit<96> opts;
}

header netec_h {
    bit<8>  version;
    bit<8>  type;
    bit<8>  task;
    bit<8>  slot_array;
    bit<8>  sender;
    bit<8>  flags;
    bit<16> slot;
    bit<32> seq;
    bit<16> window;
    bit<16> payload_len;
    bit<16> checksum;
    bit<16> reserved;
}

// The start of the reader's HELLO as a P4 switch reads it (docs/protocol.md "HELLO"): a reader
// writes its JSON beginning with {"role":"reader","secret":" (27 bytes) and then the task's
// secret, 32 lowercase hex digits, so the data plane finds the secret at a fixed offset and
// checks it against the task's reader_secret entry before the HELLO binds or reaches anyone.
// The prefix is extracted only to be emitted again (the secret's offset is what it fixes).
#define NETEC_HELLO_SECRET_END 59  // payload bytes up to the secret's last digit
header reader_hello_h {
    bit<216> prefix;
    bit<32>  s0;
    bit<32>  s1;
    bit<32>  s2;
    bit<32>  s3;
    bit<32>  s4;
    bit<32>  s5;
    bit<32>  s6;
    bit<32>  s7;
}

// The payload (generated/lanes.p4, halves.p4): whole words (docs/protocol.md), big-endian as the sum
// registers hold them.
header word_h {
    bit<32> v;
}

// Carried by a DATA packet of the TCP program (netec.p4) into its sum passes: what its first
// pass decided.
header netec_pass_h {
    bit<8>  k_minus1;  // the task's k - 1: the last sum pass counts the stripe's packets to k
    bit<8>  reset;     // 1: the packet starts the stripe in its slot: overwrite the sums
    bit<8>  starts;    // 1: ... in a free slot (EBSN's partial slots: one more)
}

#endif
