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

struct waiter {
  pthread_mutex_t m;
  pthread_cond_t cv;
  int left, errors, status;
};

static void waiter_init(struct waiter *w, int n) {
  pthread_mutex_init(&w->m, NULL);
  pthread_cond_init(&w->cv, NULL);
  w->left = n;
  w->errors = 0;
  w->status = 0;
}

static void done_cb(void *arg, int status) {
  struct waiter *w = arg;
  pthread_mutex_lock(&w->m);
  if (status) {
    w->errors++;
    w->status = status;
  }
  w->left--;
  pthread_cond_broadcast(&w->cv);
  pthread_mutex_unlock(&w->m);
}

/* 0 when every op ended, -1 after `secs` seconds */
static int waiter_wait(struct waiter *w, int secs) {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  t.tv_sec += secs;
  pthread_mutex_lock(&w->m);
  int rc = 0;
  while (w->left > 0 && rc == 0) rc = pthread_cond_timedwait(&w->cv, &w->m, &t);
  int left = w->left;
  pthread_mutex_unlock(&w->m);
  return left == 0 ? 0 : -1;
}

/* A connected TCP loopback pair: fds[0] connects to fds[1]. */
static int tcp_pair(int fds[2]) {
  int l = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t alen = sizeof a;
  if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof a) || listen(l, 1) ||
      getsockname(l, (struct sockaddr *)&a, &alen))
    return -1;
  fds[0] = socket(AF_INET, SOCK_STREAM, 0);
  if (connect(fds[0], (struct sockaddr *)&a, sizeof a)) return -1;
  fds[1] = accept(l, NULL, NULL);
  close(l);
  return fds[1] < 0 ? -1 : 0;
}

/* k+m units of len bytes: random data, parity by ISA-L with Hadoop's Cauchy matrix. */
static unsigned char **stripe(int k, int m, size_t len, unsigned seed, unsigned char *enc) {
  unsigned char **u = malloc(sizeof *u * (k + m));
  srand(seed);
  for (int i = 0; i < k + m; i++) {
    u[i] = malloc(len);
    if (i < k)
      for (size_t x = 0; x < len; x++) u[i][x] = (unsigned char)rand();
  }
  isal->gf_gen_cauchy1_matrix(enc, k + m, k);
  unsigned char *tbl = malloc(32 * k * m);
  isal->ec_init_tables(k, m, enc + k * k, tbl);
  isal->ec_encode_data((int)len, k, m, tbl, u, u + k);
  free(tbl);
  return u;
}

/* rows x k: row r rebuilds erased[r] from units surv[0..k-1]. */
static void decode_rows(int k, const unsigned char *enc, const int *surv, const int *erased,
                        int rows, unsigned char *out) {
  unsigned char sub[32 * 32], inv[32 * 32];
  for (int r = 0; r < k; r++) memcpy(sub + r * k, enc + surv[r] * k, k);
  isal->gf_invert_matrix(sub, inv, k);
  for (int r = 0; r < rows; r++)
    for (int j = 0; j < k; j++) {
      unsigned char acc = 0;
      for (int t = 0; t < k; t++) acc ^= isal->gf_mul(enc[erased[r] * k + t], inv[t * k + j]);
      out[r * k + j] = acc;
    }
}

enum scheme { STAR, PPR, CHAIN };
static const char *names[] = {"rs-star", "ppr-tree", "ecpipe-chain"};

/* Vertex of survivor i's parent: 0 is the rebuilding node, i+1 is survivor i. */
static int parent_of(enum scheme s, int i, int k) {
  if (s == STAR) return 0;
  if (s == PPR) return i == 0 ? 0 : (i - 1) / 2 + 1;
  return i == k - 1 ? 0 : i + 2;
}

static int run(enum scheme s, int k, int m, const int *erased, int rows, size_t len,
               size_t chunk) {
  unsigned char enc[32 * 32], dec[16 * 32];
  unsigned char **u = stripe(k, m, len, (unsigned)(k * 131 + rows * 7 + s), enc);
  int surv[32], n = 0;
  for (int i = 0; i < k + m && n < k; i++) {
    int lost = 0;
    for (int r = 0; r < rows; r++) lost |= erased[r] == i;
    if (!lost) surv[n++] = i;
  }
  decode_rows(k, enc, surv, erased, rows, dec);
  char err[256];
  inec_engine *eng[33];
  for (int v = 0; v <= k; v++) {
    eng[v] = inec_engine_create(err, sizeof err);
    CHECK(eng[v], "engine: %s", err);
  }
  inec_conn *up[32], *down[32]; /* survivor i's sending end, and its parent's receiving end */
  for (int i = 0; i < k; i++) {
    int fds[2];
    CHECK(tcp_pair(fds) == 0, "tcp pair");
    up[i] = inec_conn_from_fd(eng[i + 1], fds[0]);
    down[i] = inec_conn_from_fd(eng[parent_of(s, i, k)], fds[1]);
    CHECK(up[i] && down[i], "conn");
  }
  unsigned char *out[16];
  for (int r = 0; r < rows; r++) out[r] = calloc(1, len);
  struct waiter w;
  waiter_init(&w, k + 1);
  inec_shape shape = {.len = len, .chunk = chunk};
  unsigned char one = 1;
  for (int i = 0; i < k; i++) {
    const unsigned char *local[1] = {u[surv[i]]};
    unsigned char col[16];
    for (int r = 0; r < rows; r++) col[r] = dec[r * k + i];
    inec_conn *kids[32];
    int nk = 0;
    for (int j = 0; j < k; j++)
      if (parent_of(s, j, k) == i + 1) kids[nk++] = down[j];
    int rc;
    if (s == STAR) { /* send the unit itself: a 1x1 identity */
      inec_calc c = {INEC_CALC_EC, 1, 1, &one};
      rc = inec_ec_send(eng[i + 1], &c, local, 1, &shape, up[i], done_cb, &w);
    } else if (nk == 0) {
      inec_calc c = {INEC_CALC_EC, rows, 1, col};
      rc = inec_ec_send(eng[i + 1], &c, local, 1, &shape, up[i], done_cb, &w);
    } else {
      inec_calc c = {INEC_CALC_EC, rows, 1, col};
      rc = inec_recv_ec_send(eng[i + 1], &c, kids, nk, local, 1, &shape, up[i], done_cb, &w);
    }
    CHECK(rc == 0, "post survivor %d: %d", i, rc);
  }
  inec_conn *root_in[32];
  int nr = 0;
  for (int i = 0; i < k; i++)
    if (parent_of(s, i, k) == 0) root_in[nr++] = down[i];
  inec_calc rc_calc = s == STAR ? (inec_calc){INEC_CALC_EC, rows, k, dec}
                                : (inec_calc){INEC_CALC_XOR, rows, 0, NULL};
  CHECK(inec_recv_ec(eng[0], &rc_calc, root_in, nr, out, &shape, done_cb, &w) == 0, "post root");
  CHECK(waiter_wait(&w, 60) == 0, "%s k=%d: ops did not finish", names[s], k);
  CHECK(w.errors == 0, "%s k=%d: an op failed with %d", names[s], k, w.status);
  for (int r = 0; r < rows; r++)
    CHECK(memcmp(out[r], u[erased[r]], len) == 0, "%s RS(%d,%d) chunk %zu: unit %d differs",
          names[s], k, m, chunk, erased[r]);
  for (int v = 0; v <= k; v++) inec_engine_destroy(eng[v]);
  for (int r = 0; r < rows; r++) free(out[r]);
  for (int i = 0; i < k + m; i++) free(u[i]);
  free(u);
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
  CHECK(tcp_pair(a) == 0 && tcp_pair(b) == 0, "tcp pair");
  inec_conn *in[2] = {inec_conn_from_fd(e, a[1]), inec_conn_from_fd(e, b[1])};
  struct waiter w;
  waiter_init(&w, 1);
  CHECK(inec_recv_ec(e, &x, in, 2, out, &shape, done_cb, &w) == 0, "post");
  unsigned char junk[16] = "not an inec hdr";
  CHECK(write(a[0], junk, sizeof junk) == sizeof junk, "write");
  CHECK(waiter_wait(&w, 10) == 0 && w.status == -EPROTO, "malformed frame: %d", w.status);

  int c[2];
  CHECK(tcp_pair(c) == 0, "tcp pair");
  inec_conn *in2[1] = {inec_conn_from_fd(e, c[1])};
  waiter_init(&w, 1);
  CHECK(inec_recv_ec(e, &x, in2, 1, out, &shape, done_cb, &w) == 0, "post");
  close(c[0]); /* the sender dies before sending anything */
  CHECK(waiter_wait(&w, 10) == 0 && w.status == -EPIPE, "early disconnect: %d", w.status);

  CHECK(inec_recv_ec(e, NULL, in2, 1, out, &shape, done_cb, &w) == -EINVAL, "NULL calc");
  inec_calc bad = {INEC_CALC_EC, 1, 3, NULL};
  CHECK(inec_recv_ec(e, &bad, in2, 1, out, &shape, done_cb, &w) == -EINVAL, "EC without matrix");
  inec_shape empty = {.len = 0, .chunk = 4096};
  CHECK(inec_recv_ec(e, &x, in2, 1, out, &empty, done_cb, &w) == -EINVAL, "empty shape");
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
    for (int s = STAR; s <= CHAIN; s++) {
      size_t chunks[2] = {4096, 65536};
      for (int ci = 0; ci < 2; ci++) {
        if (run((enum scheme)s, k, m, one, 1, len, chunks[ci])) passed++; else failed++;
        if (run((enum scheme)s, k, m, many, m, len, chunks[ci])) passed++; else failed++;
      }
    }
  }
  if (faults()) passed++; else failed++;
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
