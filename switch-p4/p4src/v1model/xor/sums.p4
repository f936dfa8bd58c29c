// The datagram program's sums (v1model): one register per word of the payload half q
// (generated/halves.p4), a cell per slot and half. The packet that starts its stripe in the
// slot overwrites its cell, every other XORs into it, and each packet's word takes the new
// sum: only the completing packet's words leave, as the stripe's RESULT.
#ifndef NETEC_V1MODEL_XOR_SUMS_P4
#define NETEC_V1MODEL_XOR_SUMS_P4

#include "../../generated/halves.p4"

#if NETEC_XOR_HALF_WORDS != 32
#error "halves.p4 is generated for 32 words per half"
#endif

// CELL: slot array ++ slot ++ half; RESET: 1 when the packet starts its stripe in the slot.
control XorSums(inout half_t q, in bit<32> cell, in bit<8> reset) {
#define XOR_SUM_REGISTER(J) register<bit<32>>(NETEC_XOR_SUM_CELLS) sum##J;
    XOR_SUM_REGISTER(0)  XOR_SUM_REGISTER(1)  XOR_SUM_REGISTER(2)  XOR_SUM_REGISTER(3)
    XOR_SUM_REGISTER(4)  XOR_SUM_REGISTER(5)  XOR_SUM_REGISTER(6)  XOR_SUM_REGISTER(7)
    XOR_SUM_REGISTER(8)  XOR_SUM_REGISTER(9)  XOR_SUM_REGISTER(10) XOR_SUM_REGISTER(11)
    XOR_SUM_REGISTER(12) XOR_SUM_REGISTER(13) XOR_SUM_REGISTER(14) XOR_SUM_REGISTER(15)
    XOR_SUM_REGISTER(16) XOR_SUM_REGISTER(17) XOR_SUM_REGISTER(18) XOR_SUM_REGISTER(19)
    XOR_SUM_REGISTER(20) XOR_SUM_REGISTER(21) XOR_SUM_REGISTER(22) XOR_SUM_REGISTER(23)
    XOR_SUM_REGISTER(24) XOR_SUM_REGISTER(25) XOR_SUM_REGISTER(26) XOR_SUM_REGISTER(27)
    XOR_SUM_REGISTER(28) XOR_SUM_REGISTER(29) XOR_SUM_REGISTER(30) XOR_SUM_REGISTER(31)
    apply {
        bit<32> v;
#define XOR_SUM_WORD(J)                                                                       \
        sum##J.read(v, cell);                                                                 \
        if (reset == 1) { v = q.w##J.v; } else { v = v ^ q.w##J.v; }                          \
        sum##J.write(cell, v);                                                                \
        q.w##J.v = v;
        XOR_SUM_WORD(0)  XOR_SUM_WORD(1)  XOR_SUM_WORD(2)  XOR_SUM_WORD(3)
        XOR_SUM_WORD(4)  XOR_SUM_WORD(5)  XOR_SUM_WORD(6)  XOR_SUM_WORD(7)
        XOR_SUM_WORD(8)  XOR_SUM_WORD(9)  XOR_SUM_WORD(10) XOR_SUM_WORD(11)
        XOR_SUM_WORD(12) XOR_SUM_WORD(13) XOR_SUM_WORD(14) XOR_SUM_WORD(15)
        XOR_SUM_WORD(16) XOR_SUM_WORD(17) XOR_SUM_WORD(18) XOR_SUM_WORD(19)
        XOR_SUM_WORD(20) XOR_SUM_WORD(21) XOR_SUM_WORD(22) XOR_SUM_WORD(23)
        XOR_SUM_WORD(24) XOR_SUM_WORD(25) XOR_SUM_WORD(26) XOR_SUM_WORD(27)
        XOR_SUM_WORD(28) XOR_SUM_WORD(29) XOR_SUM_WORD(30) XOR_SUM_WORD(31)
    }
}

#endif
