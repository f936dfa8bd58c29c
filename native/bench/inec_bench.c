/*
 * EC-Bench-style decode benchmark of the INEC engine (the paper's §IV-B decode figures, on TCP
 * loopback): RS star, PPR tree and ECPipe chain at RS(6,3), one unit rebuilt, unit sizes
 * 4 KiB..16 MiB moved in chunks of at most 64 KiB; latency and bandwidth of the coherent
 * engine (primitives posted once) against the incoherent baseline (each vertex's application
 * thread receives, calculates and sends itself), measured in the same run over the same wiring.
 * Usage: inec_bench [seconds per measurement, default 0.5]
 */
#include <stdio.h>
#include <stdlib.h>

#include "inec_harness.h"

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
    for (size_t len = 4096; len <= (16u << 20); len *= 4) {
      unsigned char enc[32 * 32];
      unsigned char **u = harness_stripe(isal, k, m, len, 1, enc);
      unsigned char *out[1] = {malloc(len)};
      size_t chunk = len < 65536 ? len : 65536;
      double lat[2];
      for (int coherent = 1; coherent >= 0; coherent--) {
        /* size the run to the budget from one timed iteration */
        double one = 0, secs = 0;
        int rc = harness_run(isal, NULL, (enum harness_scheme)s, coherent, k, m, u, enc, erased, 1,
                             len, chunk, out, 1, &one);
        int iters = one > 0 ? (int)(budget / one) : 1;
        if (iters < 3) iters = 3;
        if (iters > 2000) iters = 2000;
        if (!rc)
          rc = harness_run(isal, NULL, (enum harness_scheme)s, coherent, k, m, u, enc, erased, 1, len,
                           chunk, out, iters, &secs);
        if (rc) {
          fprintf(stderr, "%s failed: %d\n", harness_scheme_names[s], rc);
          return 1;
        }
        lat[coherent] = secs / iters;
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
