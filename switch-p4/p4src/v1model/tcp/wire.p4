// The TCP program's wire (v1model): its parser, the checksums BMv2 verifies and computes in
// controls of their own, and its deparser. Included by ../netec.p4 after its headers_t and
// metadata_t.
#ifndef NETEC_V1MODEL_TCP_WIRE_P4
#define NETEC_V1MODEL_TCP_WIRE_P4

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

#endif
