// RFC 1624 eqn. 3: the ones'-complement checksum after one 16-bit word changed from old to new
// (egress rewrites a copy's sender, and the datagram program's window). The TNA programs sum
// the header again from a residual in their deparsers instead: a chain of adds in one action
// does not fit a Tofino stage.
#ifndef NETEC_V1MODEL_CSUM_REPLACE16_P4
#define NETEC_V1MODEL_CSUM_REPLACE16_P4

control CsumReplace16(inout bit<16> csum, in bit<16> old_word, in bit<16> new_word) {
    apply {
        bit<32> s = (bit<32>)(~csum) + (bit<32>)(~old_word) + (bit<32>)new_word;
        s = (s & 0xffff) + (s >> 16);
        s = (s & 0xffff) + (s >> 16);
        csum = ~(s[15:0]);
    }
}

#endif
