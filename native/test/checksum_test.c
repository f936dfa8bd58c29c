/*
 * netec_checksum_sum against RFC 1071's definition (big-endian 16-bit words, end-around carry)
 * on every length to 300, at every alignment to 16, and on large buffers of random bytes, all
 * ones (carries everywhere) and zeros.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "netec_checksum.h"

/* RFC 1071 §4.1, words in network order: the checksum field's value. */
static unsigned reference(const unsigned char *p, size_t n) {
  unsigned long long sum = 0;
  for (size_t i = 0; i < n; i += 2) sum += (unsigned)p[i] << 8 | (i + 1 < n ? p[i + 1] : 0);
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return ~(unsigned)sum & 0xffff;
}

/* What InternetChecksum.finish does with an unfolded little-endian sum. */
static unsigned finish(unsigned long long sum) {
  sum = (sum & 0xffffffffULL) + (sum >> 32);
  sum = (sum & 0xffffffffULL) + (sum >> 32);
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  unsigned s = (unsigned)sum;
  return ~(((s & 0xff) << 8) | (s >> 8)) & 0xffff;
}

static int failures;

static void check(const unsigned char *p, size_t n, const char *what) {
  unsigned want = reference(p, n), got = finish(netec_checksum_sum(p, n));
  if (want != got) {
    fprintf(stderr, "FAIL %s: %zu bytes at %p: %04x, want %04x\n", what, n, (const void *)p, got,
            want);
    failures++;
  }
}

int main(void) {
  enum { BIG = 1 << 20 };
  unsigned char *buf = malloc(BIG + 64);
  if (!buf) return 1;
  srand(1071);
  for (int fill = 0; fill < 3; fill++) {
    for (size_t i = 0; i < BIG + 64; i++)
      buf[i] = fill == 0 ? (unsigned char)rand() : fill == 1 ? 0xff : 0;
    for (size_t off = 0; off < 16; off++)
      for (size_t n = 0; n <= 300; n++) check(buf + off, n, "short");
    for (size_t n = BIG - 7; n <= BIG + 1; n++) check(buf + (n & 15), n, "long");
  }
  if (!failures) printf("checksum: every length, alignment and fill matches RFC 1071\n");
  free(buf);
  return failures ? 1 : 0;
}
