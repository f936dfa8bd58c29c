/*
 * EC-Bench-style decode benchmark of the INEC engine (the paper's §IV-B decode figures, on TCP
 * loopback): RS star, PPR tree and ECPipe chain at RS(6,3), one unit rebuilt, unit sizes
 * 4 KiB..16 MiB moved in chunks of at most 64 KiB; latency and bandwidth of the coherent
 * engine (primitives posted once) against the incoherent baseline (each vertex's application
 * thread receives, calculates and sends itself), measured in the same run over the same wiring.
 * Each cell is the best of 5 rounds per side, the sides alternating, and checks the rebuilt
 * unit against the lost one.
 * Usage: inec_bench [seconds per cell and side, default 0.5] [scheme: rs-star|ppr-tree|ecpipe-chain]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inec_harness.h"

#define ROUNDS 5

int main(int argc, char **argv) {
  double budget = argc > 1 ? atof(argv[1]) : 0.5;
  char err[512];
  const struct netec_isal_api *isal = netec_isal_load(err, sizeof err, NULL);
  if (!isal) {
    fprintf(stderr, "ISA-L unavailable: %s\n", err);
    return 1;
  }
  int k = 6, m = 3, erased[1] = {0};
  printf("# INEC decode over TCP loopback, RS(%d,%d), one unit rebuilt, chunk <= 64 KiB\n\n", k, m);
  printf("| scheme | unit | INEC latency (us) | baseline latency (us) | INEC MB/s | baseline MB/s | INEC/baseline |\n");
  printf("|---|---|---|---|---|---|---|\n");
  for (int s = HARNESS_STAR; s <= HARNESS_CHAIN; s++) {
    if (argc > 2 && strcmp(argv[2], harness_scheme_names[s])) continue;
    for (size_t len = 4096; len <= (16u << 20); len *= 4) {
      unsigned char enc[32 * 32];
      unsigned char **u = harness_stripe(isal, k, m, len, 1, enc);
      unsigned char *out[1] = {malloc(len)};
      size_t chunk = len < 65536 ? len : 65536;
      /* Best of ROUNDS, the two runners alternating: on 2 shared cores one long measurement
       * per side mostly measures what else the machine did meanwhile. */
      double lat[2] = {0, 0};
      int iters[2];
      for (int coherent = 1; coherent >= 0; coherent--) {
        /* size each round to its share of the budget from one timed iteration */
        double one = 0;
        int rc = harness_run(isal, NULL, (enum harness_scheme)s, coherent, k, m, u, enc, erased, 1,
                             len, chunk, out, 1, &one);
        if (rc) {
          fprintf(stderr, "%s failed: %d\n", harness_scheme_names[s], rc);
          return 1;
        }
        iters[coherent] = one > 0 ? (int)(budget / ROUNDS / one) : 1;
        if (iters[coherent] < 3) iters[coherent] = 3;
        if (iters[coherent] > 2000) iters[coherent] = 2000;
      }
      for (int round = 0; round < ROUNDS; round++) {
        for (int coherent = 1; coherent >= 0; coherent--) {
          double secs = 0;
          int rc = harness_run(isal, NULL, (enum harness_scheme)s, coherent, k, m, u, enc, erased,
                               1, len, chunk, out, iters[coherent], &secs);
          if (!rc && memcmp(out[0], u[erased[0]], len)) rc = -EILSEQ; /* rebuilt != lost */
          if (rc) {
            fprintf(stderr, "%s failed: %d\n", harness_scheme_names[s], rc);
            return 1;
          }
          double l = secs / iters[coherent];
          if (round == 0 || l < lat[coherent]) lat[coherent] = l;
        }
      }
      printf("| %s | %zu KiB | %.0f | %.0f | %.0f | %.0f | %.2fx |\n", harness_scheme_names[s],
             len >> 10, lat[1] * 1e6, lat[0] * 1e6, len / lat[1] / 1e6, len / lat[0] / 1e6,
             lat[0] / lat[1]);
      free(out[0]);
      harness_free_units(u, k + m);
    }
  }
  return 0;
}
