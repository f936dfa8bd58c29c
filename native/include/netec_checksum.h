/*
 * RFC 1071 ones'-complement sum, the NetEC packet checksum (docs/protocol.md), as one flat
 * function: the caller folds and complements, so that sums of pieces of one packet add up.
 */
#ifndef NETEC_CHECKSUM_H
#define NETEC_CHECKSUM_H

#include <stddef.h>
#include <stdint.h>

/*
 * The unfolded sum of the n bytes at p as little-endian 16-bit words (an odd last byte padded
 * with zero), counted from p: the same value modulo 2^16 - 1 as
 * io.netec.hdfs.switchroute.wire.InternetChecksum.sum, nonzero unless every byte is zero, and
 * below 2^62 for any n below 2^32.
 */
uint64_t netec_checksum_sum(const unsigned char *p, size_t n);

#endif
