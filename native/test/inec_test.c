/*
 * Tests of the INEC engine: every repair scheme (RS star, PPR tree, ECPipe chain) for RS(3,2),
 * (6,3), (10,4), one and several erased units, over TCP loopback between k+1 engines, checked
 * byte for byte against ISA-L's encoding; early disconnects, malformed frames and bad
 * arguments end in errors, never crashes. Ends with "N passed, N failed".
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "inec.h"
#include "inec_harness.h"
#include "netec_isal.h"

static const struct netec_isal_api *isal;
static int passed, failed;

#define CHECK(cond, ...)                 \
  do {                                   \
    if (!(cond)) {                       \
      fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);      \
      fprintf(stderr, "\n");             \
      return 0;                          \
    }                                    \
  } while (0)

/* One scheme, coherent (engines) or not (application threads): bytes must be ISA-L's. */
static int run(enum harness_scheme s, int coherent, int k, int m, const int *erased, int rows,
               size_t len, size_t chunk) {
  unsigned char enc[32 * 32];
  unsigned char **u = harness_stripe(isal, k, m, len, (unsigned)(k * 131 + rows * 7 + s), enc);
  unsigned char *out[16];
  for (int r = 0; r < rows; r++) out[r] = calloc(1, len);
  int rc = harness_run(isal, s, coherent, k, m, u, enc, erased, rows, len, chunk, out, 2, NULL);
  CHECK(rc == 0, "%s (%s) RS(%d,%d): %d", harness_scheme_names[s],
        coherent ? "engine" : "threads", k, m, rc);
  for (int r = 0; r < rows; r++)
    CHECK(memcmp(out[r], u[erased[r]], len) == 0, "%s RS(%d,%d) chunk %zu: unit %d differs",
          harness_scheme_names[s], k, m, chunk, erased[r]);
  for (int r = 0; r < rows; r++) free(out[r]);
  harness_free_units(u, k + m);
  return 1;
}

/* A survivor that disconnects, and one that sends a malformed frame: errors, not crashes. */
static int faults(void) {
  char err[256];
  inec_engine *e = inec_engine_create(err, sizeof err);
  CHECK(e, "engine: %s", err);
  unsigned char *out[1] = {malloc(100000)};
  inec_shape shape = {.len = 100000, .chunk = 4096};
  inec_calc x = {INEC_CALC_XOR, 1, 0, NULL};
  int a[2], b[2];
  CHECK(harness_tcp_pair(a) == 0 && harness_tcp_pair(b) == 0, "tcp pair");
  inec_conn *in[2] = {inec_conn_from_fd(e, a[1]), inec_conn_from_fd(e, b[1])};
  struct harness_waiter w;
  harness_waiter_init(&w, 1);
  CHECK(inec_recv_ec(e, &x, in, 2, out, &shape, harness_done, &w) == 0, "post");
  unsigned char junk[16] = "not an inec hdr";
  CHECK(write(a[0], junk, sizeof junk) == sizeof junk, "write");
  CHECK(harness_wait(&w, 10) == 0 && w.status == -EPROTO, "malformed frame: %d", w.status);

  int c[2];
  CHECK(harness_tcp_pair(c) == 0, "tcp pair");
  inec_conn *in2[1] = {inec_conn_from_fd(e, c[1])};
  harness_waiter_init(&w, 1);
  CHECK(inec_recv_ec(e, &x, in2, 1, out, &shape, harness_done, &w) == 0, "post");
  close(c[0]); /* the sender dies before sending anything */
  CHECK(harness_wait(&w, 10) == 0 && w.status == -EPIPE, "early disconnect: %d", w.status);

  CHECK(inec_recv_ec(e, NULL, in2, 1, out, &shape, harness_done, &w) == -EINVAL, "NULL calc");
  inec_calc bad = {INEC_CALC_EC, 1, 3, NULL};
  CHECK(inec_recv_ec(e, &bad, in2, 1, out, &shape, harness_done, &w) == -EINVAL, "EC without matrix");
  inec_shape empty = {.len = 0, .chunk = 4096};
  CHECK(inec_recv_ec(e, &x, in2, 1, out, &empty, harness_done, &w) == -EINVAL, "empty shape");
  inec_engine_destroy(e);
  close(a[0]);
  close(b[0]);
  free(out[0]);
  return 1;
}

int main(void) {
  char err[512];
  isal = netec_isal_load(err, sizeof err, NULL);
  if (!isal) {
    fprintf(stderr, "ISA-L unavailable: %s\n", err);
    return 1;
  }
  int shapes[3][2] = {{3, 2}, {6, 3}, {10, 4}};
  size_t len = 3 * 65536 + 1234;
  for (int si = 0; si < 3; si++) {
    int k = shapes[si][0], m = shapes[si][1];
    int one[1] = {0};
    int many[4] = {k + m - 1, 1, k, 0}; /* parity first: any order */
    for (int s = HARNESS_STAR; s <= HARNESS_CHAIN; s++) {
      size_t chunks[2] = {4096, 65536};
      for (int ci = 0; ci < 2; ci++) {
        if (run((enum harness_scheme)s, 1, k, m, one, 1, len, chunks[ci])) passed++; else failed++;
        if (run((enum harness_scheme)s, 1, k, m, many, m, len, chunks[ci])) passed++; else failed++;
      }
      /* the incoherent baseline of the benchmark computes the same bytes */
      if (run((enum harness_scheme)s, 0, k, m, many, m, len, 65536)) passed++; else failed++;
    }
  }
  if (faults()) passed++; else failed++;
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
