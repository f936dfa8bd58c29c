// The TCP program's sums (v1model): a sum pass multiplies its part q (4 words) by the sender's
// coefficient (MultiplyPass, generated/lanes.p4) and adds it into its part's cells, one
// register per word, a cell per slot and part. The packet that starts its stripe in the slot
// overwrites its cells, every other XORs into them, and each packet's word takes the new sum:
// only the completing packet's words leave, as the stripe's RESULT.
#ifndef NETEC_V1MODEL_TCP_SUMS_P4
#define NETEC_V1MODEL_TCP_SUMS_P4

#include "../../generated/lanes.p4"

// CELL: slot array ++ slot ++ part; RESET: 1 when the packet starts its stripe in the slot.
control MultiplySums(inout part_t q, in log_a_t log_coeff, in bit<32> cell, in bit<8> reset) {
    MultiplyPass() multiply;
    register<bit<32>>(NETEC_SUM_CELLS) sum0;
    register<bit<32>>(NETEC_SUM_CELLS) sum1;
    register<bit<32>>(NETEC_SUM_CELLS) sum2;
    register<bit<32>>(NETEC_SUM_CELLS) sum3;
    apply {
        multiply.apply(q, log_coeff);
        bit<32> s;
        sum0.read(s, cell); s = (reset == 1 ? 0 : s) ^ q.w0.v; sum0.write(cell, s); q.w0.v = s;
        sum1.read(s, cell); s = (reset == 1 ? 0 : s) ^ q.w1.v; sum1.write(cell, s); q.w1.v = s;
        sum2.read(s, cell); s = (reset == 1 ? 0 : s) ^ q.w2.v; sum2.write(cell, s); q.w2.v = s;
        sum3.read(s, cell); s = (reset == 1 ? 0 : s) ^ q.w3.v; sum3.write(cell, s); q.w3.v = s;
    }
}

#endif
