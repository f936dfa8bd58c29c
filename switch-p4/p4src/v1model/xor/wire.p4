// The datagram XOR program's wire (v1model): its parser, the checksums BMv2 verifies and
// computes in controls of their own, and its deparser. Included by ../netec_xor.p4 after its
// headers_t and metadata_t.
#ifndef NETEC_V1MODEL_XOR_WIRE_P4
#define NETEC_V1MODEL_XOR_WIRE_P4

parser XorParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t std) {
    state start {
        meta.words_ok = 0;
        meta.csum_zero = 0;
        pkt.extract(hdr.ethernet);
        // a pass header only on a recirculated packet (from a front port it would let a peer
        // skip the first pass's admission: such a frame has no IPv4, dropped)
        transition select(std.instance_type, hdr.ethernet.ether_type) {
            (INSTANCE_TYPE_RECIRC, ETHERTYPE_SUM_FIRST): parse_pass;
            (INSTANCE_TYPE_RECIRC, ETHERTYPE_SUM_SECOND): parse_pass;
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
            (5, IP_PROTO_UDP): parse_udp;
            default: accept;
        }
    }
    state parse_udp {
        pkt.extract(hdr.udp);
        transition select(hdr.udp.length) {
            28 .. 0xFFFF: parse_netec;
            default: accept;
        }
    }
    state parse_netec {
        pkt.extract(hdr.netec);
        transition select(hdr.ethernet.ether_type, hdr.netec.type) {
            (ETHERTYPE_IPV4, NETEC_DATA): parse_first;
            (ETHERTYPE_IPV4, NETEC_HELLO): parse_hello;
            (ETHERTYPE_SUM_FIRST, NETEC_DATA): parse_sum_first;
            (ETHERTYPE_SUM_SECOND, NETEC_DATA): parse_sum_second;
            default: accept;
        }
    }
    state parse_hello {  // long enough to hold a secret: its first bytes, re-emitted as read
        transition select(hdr.netec.payload_len) {
            NETEC_HELLO_SECRET_END .. 0xFFFF: take_hello;
            default: accept;
        }
    }
    state take_hello {
        pkt.extract(hdr.hello);
        transition accept;
    }
    state parse_first {
        transition select(hdr.netec.payload_len) {
            NETEC_FIRST_CASES(c, words_done)
            default: accept;
        }
    }
    state parse_sum_first {
        transition select(hdr.netec.payload_len) {
            NETEC_FIRST_CASES(q, words_done)
            default: accept;
        }
    }
    state parse_sum_second {
        transition select(hdr.netec.payload_len) {
            NETEC_SECOND_CASES(q)
            default: accept;
        }
    }
#define WORD_STATE(X, J, NEXT)                                                                \
    state X##_##J {                                                                           \
        pkt.extract(hdr.X.w##J);                                                              \
        transition X##_##NEXT;                                                                \
    }
#define LAST_STATE(X, J)                                                                      \
    state X##_##J {                                                                           \
        pkt.extract(hdr.X.w##J);                                                              \
        transition X##_end;                                                                   \
    }
#define C_WORD(J, NEXT) WORD_STATE(c, J, NEXT)
#define C_LAST(J) LAST_STATE(c, J)
#define Q_WORD(J, NEXT) WORD_STATE(q, J, NEXT)
#define Q_LAST(J) LAST_STATE(q, J)
    NETEC_HALF_STATES(C_WORD, C_LAST)
    NETEC_HALF_STATES(Q_WORD, Q_LAST)
#define D_WORD(J, NEXT) WORD_STATE(d, J, NEXT)
#define D_LAST(J) LAST_STATE(d, J)
    NETEC_HALF_STATES(D_WORD, D_LAST)
    state d_end {
        transition words_done;
    }
    state c_end {
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_IPV4: first_rest;
            default: words_done;
        }
    }
    state first_rest {
        transition select(hdr.netec.payload_len) {
            NETEC_REST_CASES(d, words_done)
            default: accept;
        }
    }
    state q_end {
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_SUM_FIRST: sum_rest;
            ETHERTYPE_SUM_SECOND: c_0;
            default: words_done;
        }
    }
    state sum_rest {
        transition select(hdr.netec.payload_len) {
            NETEC_REST_CASES(c, words_done)
            default: accept;
        }
    }
    state words_done {
        meta.words_ok = 1;
        transition accept;
    }
}

// A first pass's DATA words or an ACK (header only) must sum to ones'-complement zero with
// their checksum (both encodings of a computed 0 pass); BMv2 sets checksum_error, ingress
// drops the packet. A HELLO's JSON is not judged (only its secret is read), as on Tofino;
// later passes are not judged.
control XorVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply {
        verify_checksum(hdr.netec.isValid() && hdr.ethernet.ether_type == ETHERTYPE_IPV4
                            && (meta.words_ok == 1
                                || (hdr.netec.type == NETEC_ACK && hdr.netec.payload_len == 0)),
            { hdr.netec.version, hdr.netec.type, hdr.netec.task, hdr.netec.slot_array,
              hdr.netec.sender, hdr.netec.flags, hdr.netec.slot, hdr.netec.seq,
              hdr.netec.window, hdr.netec.payload_len, hdr.netec.checksum,
              hdr.netec.reserved, NETEC_HALF_WORDS(hdr.c), NETEC_HALF_WORDS(hdr.q),
                NETEC_HALF_WORDS(hdr.d) },
            meta.csum_zero, HashAlgorithm.csum16);
    }
}

control XorComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply {
        update_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.total_len,
              hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.frag_offset, hdr.ipv4.ttl,
              hdr.ipv4.protocol, hdr.ipv4.src_addr, hdr.ipv4.dst_addr },
            hdr.ipv4.hdr_checksum, HashAlgorithm.csum16);
        // the RESULT: header (checksum as 0) and both halves; invalid words add nothing
        update_checksum(meta.result == 1,
            { hdr.netec.version, hdr.netec.type, hdr.netec.task, hdr.netec.slot_array,
              hdr.netec.sender, hdr.netec.flags, hdr.netec.slot, hdr.netec.seq,
              hdr.netec.window, hdr.netec.payload_len, 16w0, hdr.netec.reserved,
              NETEC_HALF_WORDS(hdr.c), NETEC_HALF_WORDS(hdr.q),
                NETEC_HALF_WORDS(hdr.d) },
            hdr.netec.checksum, HashAlgorithm.csum16);
    }
}

control XorDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.pass);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.udp);
        pkt.emit(hdr.netec);
        pkt.emit(hdr.hello);
        pkt.emit(hdr.c);  // c before q: the halves swap places every pass (halves.p4)
        pkt.emit(hdr.q);
        pkt.emit(hdr.d);
    }
}

#endif
