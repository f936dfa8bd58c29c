/* See inec_harness.h. */
#define _GNU_SOURCE
#include "inec_harness.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "inec.h"

const char *const harness_scheme_names[3] = {"rs-star", "ppr-tree", "ecpipe-chain"};

unsigned char **harness_stripe(const struct netec_isal_api *isal, int k, int m, size_t len,
                               unsigned seed, unsigned char *enc) {
  unsigned char **u = malloc(sizeof *u * (size_t)(k + m));
  srand(seed);
  for (int i = 0; i < k + m; i++) {
    u[i] = malloc(len);
    if (i < k)
      for (size_t x = 0; x < len; x++) u[i][x] = (unsigned char)rand();
  }
  isal->gf_gen_cauchy1_matrix(enc, k + m, k);
  unsigned char *tbl = malloc(32 * (size_t)k * (size_t)m);
  isal->ec_init_tables(k, m, enc + k * k, tbl);
  isal->ec_encode_data((int)len, k, m, tbl, u, u + k);
  free(tbl);
  return u;
}

void harness_free_units(unsigned char **u, int n) {
  for (int i = 0; i < n; i++) free(u[i]);
  free(u);
}

/* rows x k: row r rebuilds erased[r] from units surv[0..k-1]. */
static void decode_rows(const struct netec_isal_api *isal, int k, const unsigned char *enc,
                        const int *surv, const int *erased, int rows, unsigned char *out) {
  unsigned char sub[32 * 32], inv[32 * 32];
  for (int r = 0; r < k; r++) memcpy(sub + r * k, enc + surv[r] * k, (size_t)k);
  isal->gf_invert_matrix(sub, inv, k);
  for (int r = 0; r < rows; r++)
    for (int j = 0; j < k; j++) {
      unsigned char acc = 0;
      for (int t = 0; t < k; t++) acc ^= isal->gf_mul(enc[erased[r] * k + t], inv[t * k + j]);
      out[r * k + j] = acc;
    }
}

int harness_tcp_pair(int fds[2]) {
  int l = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t alen = sizeof a;
  if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof a) || listen(l, 1) ||
      getsockname(l, (struct sockaddr *)&a, &alen)) {
    if (l >= 0) close(l);
    return -1;
  }
  fds[0] = socket(AF_INET, SOCK_STREAM, 0);
  if (fds[0] < 0 || connect(fds[0], (struct sockaddr *)&a, sizeof a)) {
    close(l);
    return -1;
  }
  fds[1] = accept(l, NULL, NULL);
  close(l);
  int one = 1;
  setsockopt(fds[0], IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fds[1] < 0 ? -1 : 0;
}

/* Vertex of survivor i's parent: 0 is the rebuilding node, i+1 is survivor i. */
static int parent_of(enum harness_scheme s, int i, int k) {
  if (s == HARNESS_STAR) return 0;
  if (s == HARNESS_PPR) return i == 0 ? 0 : (i - 1) / 2 + 1;
  return i == k - 1 ? 0 : i + 2;
}

/* What every vertex does, for either runner. */
struct vertex {
  int is_root;
  int nin;              /* inputs (children) */
  int in_fd[32];        /* receiving ends (root or survivor), in child order */
  int out_fd;           /* sending end (survivors) */
  const unsigned char *local; /* survivor's unit, or NULL */
  inec_calc calc;       /* EC over local (survivors) or over inputs (star root); XOR root */
  unsigned char matrix[16 * 32];
};

struct graph {
  int k, rows;
  struct vertex v[33];
  int parent[32], slot[32]; /* edge i: survivor i (vertex i+1) -> parent's input slot */
  int fds[64];
  int nfds;
};

static int build(const struct netec_isal_api *isal, struct graph *g, enum harness_scheme s,
                 int k, int m, unsigned char **units, const unsigned char *enc,
                 const int *erased, int rows) {
  int surv[32], n = 0;
  for (int i = 0; i < k + m && n < k; i++) {
    int lost = 0;
    for (int r = 0; r < rows; r++) lost |= erased[r] == i;
    if (!lost) surv[n++] = i;
  }
  unsigned char dec[16 * 32];
  decode_rows(isal, k, enc, surv, erased, rows, dec);
  memset(g, 0, sizeof *g);
  g->k = k;
  g->rows = rows;
  for (int i = 0; i < k; i++) {
    int fds[2];
    if (harness_tcp_pair(fds)) return -errno;
    g->fds[g->nfds++] = fds[0];
    g->fds[g->nfds++] = fds[1];
    struct vertex *child = &g->v[i + 1], *parent = &g->v[parent_of(s, i, k)];
    child->out_fd = fds[0];
    g->parent[i] = parent_of(s, i, k);
    g->slot[i] = parent->nin;
    parent->in_fd[parent->nin++] = fds[1];
  }
  g->v[0].is_root = 1;
  if (s == HARNESS_STAR) {
    g->v[0].calc = (inec_calc){INEC_CALC_EC, rows, k, g->v[0].matrix};
    memcpy(g->v[0].matrix, dec, (size_t)rows * k);
  } else {
    g->v[0].calc = (inec_calc){INEC_CALC_XOR, rows, 0, NULL};
  }
  for (int i = 0; i < k; i++) {
    struct vertex *v = &g->v[i + 1];
    v->local = units[surv[i]];
    if (s == HARNESS_STAR) { /* the unit itself: a 1x1 identity */
      v->matrix[0] = 1;
      v->calc = (inec_calc){INEC_CALC_EC, 1, 1, v->matrix};
    } else {
      for (int r = 0; r < rows; r++) v->matrix[r] = dec[r * k + i];
      v->calc = (inec_calc){INEC_CALC_EC, rows, 1, v->matrix};
    }
  }
  return 0;
}

static void close_all(struct graph *g) {
  for (int i = 0; i < g->nfds; i++) close(g->fds[i]);
}

/* ---- coherent: one INEC engine per vertex ------------------------------------------------ */

void harness_waiter_init(struct harness_waiter *w, int n) {
  pthread_mutex_init(&w->m, NULL);
  pthread_cond_init(&w->cv, NULL);
  w->left = n;
  w->errors = 0;
  w->status = 0;
}

void harness_done(void *arg, int status) {
  struct harness_waiter *w = arg;
  pthread_mutex_lock(&w->m);
  if (status) {
    w->errors++;
    w->status = status;
  }
  if (--w->left == 0) pthread_cond_broadcast(&w->cv); /* the waiter wants all of them */
  pthread_mutex_unlock(&w->m);
}

int harness_wait(struct harness_waiter *w, int secs) {
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

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

struct opener {
  inec_engine *e;
  int fd;
  inec_transport t;
  inec_conn *c;
  char err[256];
};

static void *open_main(void *arg) {
  struct opener *o = arg;
  o->c = inec_conn_open(o->e, o->fd, o->t, 10000, o->err, sizeof o->err);
  if (!o->c) close(o->fd);
  return NULL;
}

int harness_conn_pair(inec_engine *ea, int fda, inec_engine *eb, int fdb, inec_transport t,
                      inec_conn **ca, inec_conn **cb) {
  struct opener b = {eb, fdb, t, NULL, ""};
  pthread_t th;
  if (pthread_create(&th, NULL, open_main, &b)) return -EAGAIN;
  struct opener a = {ea, fda, t, NULL, ""};
  open_main(&a);
  pthread_join(th, NULL);
  *ca = a.c;
  *cb = b.c;
  if (!a.c || !b.c) fprintf(stderr, "conn open: %s%s\n", a.err, b.err);
  return a.c && b.c ? 0 : -ECONNREFUSED;
}

static int run_engines(struct graph *g, const struct harness_net *net, size_t len, size_t chunk,
                       unsigned char **out, int iterations, double *seconds) {
  int k = g->k, rc = 0;
  inec_engine *eng[33] = {0};
  inec_conn *in[33][32], *outc[33];
  char err[256];
  struct harness_waiter w;
  harness_waiter_init(&w, 0);
  double t0 = 0;
  for (int v = 0; v <= k; v++) {
    eng[v] = inec_engine_create(net ? net->opt : NULL, err, sizeof err);
    if (!eng[v]) {
      rc = -ENOMEM;
      goto out;
    }
  }
  for (int i = 0; i < k && !rc; i++) {
    int p = g->parent[i];
    if (!net) {
      outc[i + 1] = inec_conn_from_fd(eng[i + 1], dup(g->v[i + 1].out_fd));
      in[p][g->slot[i]] = inec_conn_from_fd(eng[p], dup(g->v[p].in_fd[g->slot[i]]));
    } else {
      rc = harness_conn_pair(eng[i + 1], dup(g->v[i + 1].out_fd), eng[p],
                             dup(g->v[p].in_fd[g->slot[i]]), net->transport, &outc[i + 1],
                             &in[p][g->slot[i]]);
    }
  }
  if (rc) goto out;
  inec_shape shape = {len, chunk};
  t0 = now();
  for (int it = 0; it < iterations && !rc; it++) {
    harness_waiter_init(&w, k + 1);
    /* the rebuilding node first, as in HDFS: it posts its receive, then asks the survivors */
    rc = inec_recv_ec(eng[0], &g->v[0].calc, in[0], g->v[0].nin, out, &shape, harness_done, &w);
    for (int v = 1; v <= k && !rc; v++) {
      struct vertex *x = &g->v[v];
      const unsigned char *local[1] = {x->local};
      rc = x->nin == 0
               ? inec_ec_send(eng[v], &x->calc, local, 1, &shape, outc[v], harness_done, &w)
               : inec_recv_ec_send(eng[v], &x->calc, in[v], x->nin, local, 1, &shape, outc[v],
                                   harness_done, &w);
    }
    if (rc) break;
    rc = harness_wait(&w, 120) ? -ETIMEDOUT : w.status;
  }
  if (seconds) *seconds = now() - t0;
out:
  for (int v = 0; v <= k; v++) inec_engine_destroy(eng[v]);
  return rc;
}

/* ---- incoherent: the application thread of each vertex recvs, calcs and sends ------------- */

struct app {
  const struct netec_isal_api *isal;
  struct vertex *v;
  size_t len, chunk;
  unsigned char **out;
  int iterations;
  pthread_barrier_t *barrier; /* one repair at a time, as the engine runner does */
  int status;
};

static int readn(int fd, unsigned char *p, size_t n) {
  while (n) {
    ssize_t r = read(fd, p, n);
    if (r <= 0) return r == 0 ? -EPIPE : -errno;
    p += r;
    n -= (size_t)r;
  }
  return 0;
}

static int writen(int fd, const unsigned char *p, size_t n) {
  while (n) {
    ssize_t w = write(fd, p, n);
    if (w < 0) return -errno;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

static int writevn(int fd, struct iovec *iov, int n) {
  while (n) {
    ssize_t w = writev(fd, iov, n);
    if (w < 0) return -errno;
    for (; n && (size_t)w >= iov->iov_len; n--, iov++) w -= (ssize_t)iov->iov_len;
    if (n) {
      iov->iov_base = (unsigned char *)iov->iov_base + w;
      iov->iov_len -= (size_t)w;
    }
  }
  return 0;
}

static void *app_main(void *arg) {
  struct app *a = arg;
  struct vertex *v = a->v;
  int rows = v->calc.rows;
  int ec_over_inputs = v->is_root && v->calc.kind == INEC_CALC_EC;
  int in_rows = ec_over_inputs ? 1 : rows;
  /* a leaf sending its unit as it is (1x1 identity) writes it from where it is, as the
   * engine does: the comparison is of the wait/calculate/send chain, not of a copy */
  int plain = !v->nin && !v->is_root && v->calc.kind == INEC_CALC_EC && rows == 1 &&
              v->calc.cols == 1 && v->calc.matrix[0] == 1;
  unsigned char *tbl = malloc(32 * 16 * 32);
  if (v->calc.kind == INEC_CALC_EC)
    a->isal->ec_init_tables(v->calc.cols, rows, (unsigned char *)v->calc.matrix, tbl);
  unsigned char *in = malloc((size_t)(v->nin ? v->nin : 1) * in_rows * a->chunk);
  unsigned char *msg = malloc(16 + (size_t)rows * a->chunk);
  size_t chunks = (a->len + a->chunk - 1) / a->chunk;
  for (size_t c = 0; c < chunks * (size_t)a->iterations; c++) {
    size_t cc = c % chunks; /* chunk of this iteration */
    if (cc == 0) pthread_barrier_wait(a->barrier); /* start of a repair */
    if (a->status) goto next;
    size_t n = a->len - cc * a->chunk < a->chunk ? a->len - cc * a->chunk : a->chunk;
    for (int i = 0; i < v->nin && !a->status; i++) {
      unsigned char hdr[16];
      a->status = readn(v->in_fd[i], hdr, 16);
      for (int r = 0; r < in_rows && !a->status; r++)
        a->status = readn(v->in_fd[i], in + ((size_t)i * in_rows + r) * a->chunk, n);
    }
    if (a->status) goto next;
    unsigned char *rowp[16];
    if (plain) goto send;
    for (int r = 0; r < rows; r++)
      rowp[r] = v->is_root ? a->out[r] + cc * a->chunk : msg + 16 + (size_t)r * n;
    if (ec_over_inputs) {
      unsigned char *ins[32];
      for (int i = 0; i < v->nin; i++) ins[i] = in + (size_t)i * a->chunk;
      a->isal->ec_encode_data((int)n, v->nin, rows, tbl, ins, rowp);
    } else {
      for (int r = 0; r < rows; r++) {
        memset(rowp[r], 0, n);
        for (int i = 0; i < v->nin; i++) {
          const unsigned char *src = in + ((size_t)i * in_rows + r) * a->chunk;
          for (size_t x = 0; x < n; x++) rowp[r][x] ^= src[x];
        }
      }
      if (v->local)
        a->isal->ec_encode_data_update((int)n, 1, rows, 0, tbl,
                                       (unsigned char *)v->local + cc * a->chunk, rowp);
    }
  send:
    if (!v->is_root) {
      uint32_t h[4] = {htonl(0x494e4543u), htonl((uint32_t)cc), htonl((uint32_t)rows),
                       htonl((uint32_t)n)};
      memcpy(msg, h, 16);
      if (plain) {
        struct iovec iov[2] = {{msg, 16}, {(void *)(v->local + cc * a->chunk), n}};
        a->status = writevn(v->out_fd, iov, 2);
      } else {
        a->status = writen(v->out_fd, msg, 16 + (size_t)rows * n);
      }
    }
  next:
    if (cc == chunks - 1) pthread_barrier_wait(a->barrier); /* end of a repair */
  }
  free(tbl);
  free(in);
  free(msg);
  return NULL;
}

static int run_threads(const struct netec_isal_api *isal, struct graph *g, size_t len,
                       size_t chunk, unsigned char **out, int iterations, double *seconds) {
  struct app apps[33];
  pthread_t th[33];
  pthread_barrier_t barrier;
  pthread_barrier_init(&barrier, NULL, (unsigned)g->k + 2); /* vertices and this thread */
  for (int v = 0; v <= g->k; v++) {
    apps[v] = (struct app){isal, &g->v[v], len, chunk, out, iterations, &barrier, 0};
    pthread_create(&th[v], NULL, app_main, &apps[v]);
  }
  double t0 = now();
  for (int it = 0; it < iterations; it++) {
    pthread_barrier_wait(&barrier); /* go */
    pthread_barrier_wait(&barrier); /* every vertex finished this repair */
  }
  if (seconds) *seconds = now() - t0;
  int rc = 0;
  for (int v = 0; v <= g->k; v++) {
    pthread_join(th[v], NULL);
    if (apps[v].status && !rc) rc = apps[v].status;
  }
  pthread_barrier_destroy(&barrier);
  return rc;
}

int harness_run(const struct netec_isal_api *isal, const struct harness_net *net,
                enum harness_scheme scheme, int coherent, int k, int m, unsigned char **units, const unsigned char *enc,
                const int *erased, int rows, size_t len, size_t chunk, unsigned char **out,
                int iterations, double *seconds) {
  struct graph *g = malloc(sizeof *g);
  int rc = build(isal, g, scheme, k, m, units, enc, erased, rows);
  if (!rc)
    rc = coherent ? run_engines(g, net, len, chunk, out, iterations, seconds)
                  : run_threads(isal, g, len, chunk, out, iterations, seconds);
  close_all(g);
  free(g);
  return rc;
}
