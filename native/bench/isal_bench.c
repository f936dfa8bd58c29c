/*
 * Raw ISA-L throughput, the baseline the Java benchmark compares our JNI coder against.
 * Usage: isal_bench K M CELL_BYTES SECONDS [ROUNDS]  (each figure: best of ROUNDS, default 3)
 * Prints: "encode <GB/s>" and "decode <GB/s>" (bytes of data in per second, as Hadoop counts:
 * k*cell per encode call, k*cell of survivors per decode call of one erasure).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "netec_isal.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double run(const struct netec_isal_api *isal, int k, int rows, unsigned char *tbl,
                  unsigned char **in, unsigned char **out, int len, double secs, int rounds) {
  double best = 0;
  for (int r = 0; r < rounds; r++) {
    long iters = 0;
    double t0 = now(), t;
    do {
      isal->ec_encode_data(len, k, rows, tbl, in, out);
      iters++;
      t = now();
    } while (t - t0 < secs);
    double gbs = (double)iters * k * len / (t - t0) / 1e9;
    if (gbs > best) best = gbs;
  }
  return best;
}

int main(int argc, char **argv) {
  if (argc != 5 && argc != 6) {
    fprintf(stderr, "usage: %s K M CELL_BYTES SECONDS [ROUNDS]\n", argv[0]);
    return 2;
  }
  int k = atoi(argv[1]), m = atoi(argv[2]), len = atoi(argv[3]);
  double secs = atof(argv[4]);
  int rounds = argc == 6 ? atoi(argv[5]) : 3;
  if (rounds < 1 || k < 1 || m < 1 || k + m > 32 || len < 1 || secs <= 0) {
    fprintf(stderr, "bad arguments\n");
    return 2;
  }
  char err[512];
  const struct netec_isal_api *isal = netec_isal_load(err, sizeof err, NULL);
  if (!isal) {
    fprintf(stderr, "%s\n", err);
    return 1;
  }
  int n = k + m;
  unsigned char a[32 * 32], sub[32 * 32], inv[32 * 32], dec[32 * 32];
  unsigned char *tbl = malloc(32 * k * m);
  unsigned char *buf[32];
  for (int i = 0; i < n; i++) {
    buf[i] = malloc(len);
    for (int j = 0; j < len; j++) buf[i][j] = (unsigned char)rand();
  }
  isal->gf_gen_cauchy1_matrix(a, n, k);
  isal->ec_init_tables(k, m, a + k * k, tbl);
  double enc = run(isal, k, m, tbl, buf, buf + k, len, secs, rounds);

  /* Decode unit 0 from units 1..k (one data erasure, the common HDFS case). */
  for (int r = 0; r < k; r++) memcpy(sub + r * k, a + (r + 1) * k, k);
  if (isal->gf_invert_matrix(sub, inv, k) != 0) {
    fprintf(stderr, "singular\n");
    return 1;
  }
  memcpy(dec, inv, k); /* row 0 of the inverse rebuilds data unit 0 */
  isal->ec_init_tables(k, 1, dec, tbl);
  double decode = run(isal, k, 1, tbl, buf + 1, buf, len, secs, rounds);
  printf("encode %.3f\ndecode %.3f\n", enc, decode);
  return 0;
}
