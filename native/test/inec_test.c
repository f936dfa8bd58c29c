/*
 * Tests of the INEC engine: every repair scheme (RS star, PPR tree, ECPipe chain) for RS(3,2),
 * (6,3), (10,4), one and several erased units, between k+1 engines over TCP loopback and over
 * RDMA verbs (the test provider libinec_mockverbs.so, whose byte counter proves the traffic
 * took that path), checked byte for byte against ISA-L's encoding; the transport handshake
 * (auto falls back to TCP when one end has no device); the rendezvous of tagged sockets;
 * early disconnects, malformed frames and bad arguments end in errors, never crashes; frames
 * that arrive a few bytes at a time are summed as they arrive, to the same bytes.
 * Ends with "N passed, N failed".
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dlfcn.h>
#include <stdint.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "inec.h"
#include "inec_harness.h"
#include "inec_rendezvous.h"
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
#ifndef MOCK_VERBS_PATH /* built without rdma-core's headers: main() says so and fails */
#define MOCK_VERBS_PATH "(not built: install libibverbs-dev, see scripts/setup.sh)"
#endif
static const inec_options mock = {.verbs_library = MOCK_VERBS_PATH};
static const struct harness_net over_verbs = {&mock, INEC_TRANSPORT_VERBS};
static const char *net_name(const struct harness_net *net) {
  return net ? (net->transport == INEC_TRANSPORT_VERBS ? "verbs" : "tcp+hello") : "tcp";
}

/* Bytes the test provider delivered so far. main() holds it loaded, so engines that dlopen
 * and dlclose it share this one copy and its counter. */
static uint64_t *delivered;
static uint64_t verbs_bytes(void) { return __atomic_load_n(delivered, __ATOMIC_SEQ_CST); }

static int run(const struct harness_net *net, enum harness_scheme s, int coherent, int k, int m,
               const int *erased, int rows, size_t len, size_t chunk) {
  unsigned char enc[32 * 32];
  unsigned char **u = harness_stripe(isal, k, m, len, (unsigned)(k * 131 + rows * 7 + s), enc);
  unsigned char *out[16];
  for (int r = 0; r < rows; r++) out[r] = calloc(1, len);
  uint64_t before = verbs_bytes();
  int rc = harness_run(isal, net, s, coherent, k, m, u, enc, erased, rows, len, chunk, out, 2,
                       NULL);
  CHECK(rc == 0, "%s (%s, %s) RS(%d,%d): %d", harness_scheme_names[s],
        coherent ? "engine" : "threads", net_name(net), k, m, rc);
  /* over verbs, every survivor's stream (2 iterations, at least a unit each) went through it */
  if (net && net->transport == INEC_TRANSPORT_VERBS)
    CHECK(verbs_bytes() - before >= 2 * (uint64_t)k * len, "%s RS(%d,%d): verbs moved %llu",
          harness_scheme_names[s], k, m, (unsigned long long)(verbs_bytes() - before));
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
  inec_engine *e = inec_engine_create(NULL, err, sizeof err);
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

/* ---- trickle: frames that arrive a few bytes at a time ----------------------------------- */

struct trickle_sender {
  int fd;
  const unsigned char *rows[4]; /* each len bytes */
  int nrows;
  size_t len, chunk;
  unsigned seed;
};

/* Writes the frames of every chunk in pieces of 1..300 bytes, pausing now and then, so the
 * engine sees headers split, rows split and row boundaries inside one read. */
static void *trickle_main(void *arg) {
  struct trickle_sender *t = arg;
  for (size_t c = 0; c * t->chunk < t->len; c++) {
    size_t n = t->len - c * t->chunk < t->chunk ? t->len - c * t->chunk : t->chunk;
    size_t fl = 16 + (size_t)t->nrows * n;
    unsigned char *f = malloc(fl);
    uint32_t h[4] = {htonl(0x494e4543u), htonl((uint32_t)c), htonl((uint32_t)t->nrows),
                     htonl((uint32_t)n)};
    memcpy(f, h, 16);
    for (int r = 0; r < t->nrows; r++) memcpy(f + 16 + (size_t)r * n, t->rows[r] + c * t->chunk, n);
    for (size_t off = 0; off < fl;) {
      size_t piece = 1 + (size_t)rand_r(&t->seed) % 300;
      if (piece > fl - off) piece = fl - off;
      ssize_t w = write(t->fd, f + off, piece);
      if (w <= 0) break;
      off += (size_t)w;
      if (rand_r(&t->seed) % 8 == 0) usleep(200);
    }
    free(f);
  }
  return NULL;
}

/* recv_ec over two trickling inputs, EC (2 x 2 matrix over raw units) and XOR (3 rows each):
 * the sums the engine adds as bytes arrive equal those computed at once. */
static int trickle(void) {
  char err[256];
  inec_engine *e = inec_engine_create(NULL, err, sizeof err);
  CHECK(e, "engine: %s", err);
  size_t len = 10000, chunk = 4096; /* 3 chunks, the last short */
  unsigned seed = 7;
  for (int xor = 0; xor <= 1; xor++) {
    int rows = xor ? 3 : 2, in_rows = xor ? 3 : 1;
    unsigned char *unit[2][3], *out[3], *want[3];
    unsigned char matrix[2 * 2] = {0x1d, 0x8e, 0x03, 0xf4};
    for (int i = 0; i < 2; i++)
      for (int r = 0; r < in_rows; r++) {
        unit[i][r] = malloc(len);
        for (size_t x = 0; x < len; x++) unit[i][r][x] = (unsigned char)rand_r(&seed);
      }
    for (int r = 0; r < rows; r++) {
      out[r] = calloc(1, len);
      want[r] = malloc(len);
      for (size_t x = 0; x < len; x++)
        want[r][x] = xor ? unit[0][r][x] ^ unit[1][r][x]
                         : isal->gf_mul(matrix[r * 2], unit[0][0][x]) ^
                               isal->gf_mul(matrix[r * 2 + 1], unit[1][0][x]);
    }
    int p[2][2];
    inec_conn *in[2];
    struct trickle_sender t[2];
    pthread_t th[2];
    for (int i = 0; i < 2; i++) {
      CHECK(harness_tcp_pair(p[i]) == 0, "tcp pair");
      in[i] = inec_conn_from_fd(e, p[i][1]);
      t[i] = (struct trickle_sender){p[i][0], {0}, in_rows, len, chunk, 11u + (unsigned)i};
      for (int r = 0; r < in_rows; r++) t[i].rows[r] = unit[i][r];
    }
    inec_calc calc = xor ? (inec_calc){INEC_CALC_XOR, rows, 0, NULL}
                         : (inec_calc){INEC_CALC_EC, rows, 2, matrix};
    inec_shape shape = {len, chunk};
    struct harness_waiter w;
    harness_waiter_init(&w, 1);
    CHECK(inec_recv_ec(e, &calc, in, 2, out, &shape, harness_done, &w) == 0, "post");
    for (int i = 0; i < 2; i++) pthread_create(&th[i], NULL, trickle_main, &t[i]);
    for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
    CHECK(harness_wait(&w, 20) == 0 && w.status == 0, "trickle %s: %d", xor ? "xor" : "ec",
          w.status);
    for (int r = 0; r < rows; r++)
      CHECK(memcmp(out[r], want[r], len) == 0, "trickle %s: row %d differs", xor ? "xor" : "ec", r);
    for (int i = 0; i < 2; i++) {
      inec_conn_close(e, in[i]);
      close(p[i][0]);
      for (int r = 0; r < in_rows; r++) free(unit[i][r]);
    }
    for (int r = 0; r < rows; r++) {
      free(out[r]);
      free(want[r]);
    }
  }
  inec_engine_destroy(e);
  return 1;
}

/* auto picks verbs when both ends have a device, TCP when one has not; verbs demanded from a
 * peer without it is an error on both ends. */
static int handshake(void) {
  char err[256];
  inec_options tcp_only = {.disable_verbs = 1};
  inec_engine *v1 = inec_engine_create(&mock, err, sizeof err);
  inec_engine *v2 = inec_engine_create(&mock, err, sizeof err);
  inec_engine *t = inec_engine_create(&tcp_only, err, sizeof err);
  CHECK(v1 && v2 && t, "engines: %s", err);
  CHECK(inec_engine_has_verbs(v1) && !inec_engine_has_verbs(t), "verbs: %s / %s",
        inec_engine_describe(v1), inec_engine_describe(t));
  CHECK(strstr(inec_engine_describe(v1), "mockverbs0"), "%s", inec_engine_describe(v1));
  int fds[2];
  inec_conn *a, *b;
  CHECK(harness_tcp_pair(fds) == 0, "pair");
  CHECK(harness_conn_pair(v1, fds[0], v2, fds[1], INEC_TRANSPORT_AUTO, &a, &b) == 0, "auto");
  CHECK(inec_conn_transport(a) == INEC_TRANSPORT_VERBS &&
        inec_conn_transport(b) == INEC_TRANSPORT_VERBS, "auto between two devices: verbs");
  CHECK(harness_tcp_pair(fds) == 0, "pair");
  CHECK(harness_conn_pair(v1, fds[0], t, fds[1], INEC_TRANSPORT_AUTO, &a, &b) == 0, "auto");
  CHECK(inec_conn_transport(a) == INEC_TRANSPORT_TCP && inec_conn_transport(b) == INEC_TRANSPORT_TCP,
        "auto with one device: tcp");
  /* a sender posts on its verbs conn, then its peer's engine closes the conn mid-stream */
  CHECK(harness_tcp_pair(fds) == 0, "pair");
  CHECK(harness_conn_pair(v1, fds[0], v2, fds[1], INEC_TRANSPORT_VERBS, &a, &b) == 0, "verbs");
  size_t len = 8 << 20;
  unsigned char *unit = calloc(1, len), *out[1] = {malloc(len)};
  unsigned char one = 1;
  inec_calc id = {INEC_CALC_EC, 1, 1, &one};
  inec_calc x = {INEC_CALC_XOR, 1, 0, NULL};
  inec_shape shape = {len, 65536};
  const unsigned char *local[1] = {unit};
  struct harness_waiter ws, wr;
  harness_waiter_init(&ws, 1);
  harness_waiter_init(&wr, 1);
  CHECK(inec_ec_send(v1, &id, local, 1, &shape, a, harness_done, &ws) == 0, "post send");
  CHECK(inec_recv_ec(v2, &x, &b, 1, out, &shape, harness_done, &wr) == 0, "post recv");
  inec_conn_close(v2, b);
  CHECK(harness_wait(&wr, 10) == 0 && wr.status == -ECANCELED, "closed receiver: %d", wr.status);
  CHECK(harness_wait(&ws, 10) == 0 && ws.status < 0, "sender to a closed peer: %d", ws.status);
  /* A sender that closes its conn the moment its op is done (as a participant does) loses
   * nothing: over verbs the op ends only when every SEND completed. 1 MiB is more than the
   * receiver's pre-posted slots, so the sender cannot finish before the receiver reads. */
  CHECK(harness_tcp_pair(fds) == 0, "pair");
  CHECK(harness_conn_pair(v1, fds[0], v2, fds[1], INEC_TRANSPORT_VERBS, &a, &b) == 0, "verbs");
  for (size_t i = 0; i < len; i++) unit[i] = (unsigned char)(i * 7 + 3);
  inec_shape mib = {1 << 20, 65536};
  harness_waiter_init(&ws, 1);
  harness_waiter_init(&wr, 1);
  CHECK(inec_ec_send(v1, &id, local, 1, &mib, a, harness_done, &ws) == 0, "post send");
  int early = harness_wait(&ws, 1) == 0;
  if (early) inec_conn_close(v1, a); /* what a poster does once its op is done */
  CHECK(inec_recv_ec(v2, &x, &b, 1, out, &mib, harness_done, &wr) == 0, "post recv");
  if (!early) {
    CHECK(harness_wait(&ws, 10) == 0 && ws.status == 0, "send: %d", ws.status);
    inec_conn_close(v1, a);
  }
  CHECK(harness_wait(&wr, 10) == 0 && wr.status == 0, "recv after the sender closed: %d",
        wr.status);
  CHECK(memcmp(out[0], unit, mib.len) == 0, "received bytes differ");
  CHECK(!early, "the send was done before its data was received");
  /* The sender's op is done and its conn closed before the receiver posts: the receiver's
   * engine has seen the peer leave while idle; the data it holds is still delivered. */
  for (int tr = INEC_TRANSPORT_TCP; tr <= INEC_TRANSPORT_VERBS; tr++) {
    CHECK(harness_tcp_pair(fds) == 0, "pair");
    CHECK(harness_conn_pair(v1, fds[0], v2, fds[1], (inec_transport)tr, &a, &b) == 0, "conn");
    inec_shape small = {200000, 65536}; /* within the receiver's slots / socket buffer */
    harness_waiter_init(&ws, 1);
    harness_waiter_init(&wr, 1);
    CHECK(inec_ec_send(v1, &id, local, 1, &small, a, harness_done, &ws) == 0, "post send");
    CHECK(harness_wait(&ws, 10) == 0 && ws.status == 0, "send: %d", ws.status);
    inec_conn_close(v1, a);
    usleep(300000); /* the receiver's engine notices the close */
    CHECK(inec_recv_ec(v2, &x, &b, 1, out, &small, harness_done, &wr) == 0, "post recv");
    CHECK(harness_wait(&wr, 10) == 0 && wr.status == 0, "%s: recv after the sender left: %d",
          tr == INEC_TRANSPORT_TCP ? "tcp" : "verbs", wr.status);
    CHECK(memcmp(out[0], unit, small.len) == 0, "received bytes differ");
    /* and the stream is over: one more op gets the end of the stream */
    harness_waiter_init(&wr, 1);
    CHECK(inec_recv_ec(v2, &x, &b, 1, out, &small, harness_done, &wr) == 0, "post recv");
    CHECK(harness_wait(&wr, 10) == 0 && wr.status == -EPIPE, "past the end: %d", wr.status);
  }
  /* A frame that is not what the receiver's op expects (2 rows where it waits for 1) ends
   * the receiver's op with -EPROTO, over either transport. */
  for (int tr = INEC_TRANSPORT_TCP; tr <= INEC_TRANSPORT_VERBS; tr++) {
    CHECK(harness_tcp_pair(fds) == 0, "pair");
    CHECK(harness_conn_pair(v1, fds[0], v2, fds[1], (inec_transport)tr, &a, &b) == 0, "conn");
    unsigned char two[2] = {1, 1};
    inec_calc rows2 = {INEC_CALC_EC, 2, 1, two};
    inec_shape small = {100000, 65536};
    harness_waiter_init(&ws, 1);
    harness_waiter_init(&wr, 1);
    CHECK(inec_ec_send(v1, &rows2, local, 1, &small, a, harness_done, &ws) == 0, "post send");
    CHECK(inec_recv_ec(v2, &x, &b, 1, out, &small, harness_done, &wr) == 0, "post recv");
    CHECK(harness_wait(&wr, 10) == 0 && wr.status == -EPROTO, "%s: mismatched frame: %d",
          tr == INEC_TRANSPORT_TCP ? "tcp" : "verbs", wr.status);
    inec_conn_close(v2, b);
    CHECK(harness_wait(&ws, 10) == 0, "the sender's op ends too");
    inec_conn_close(v1, a);
  }
  /* verbs demanded of a TCP-only peer */
  CHECK(harness_tcp_pair(fds) == 0, "pair");
  CHECK(harness_conn_pair(v1, fds[0], t, fds[1], INEC_TRANSPORT_VERBS, &a, &b) != 0,
        "verbs with a TCP-only peer must fail");
  inec_engine_destroy(v1);
  inec_engine_destroy(v2);
  inec_engine_destroy(t);
  free(unit);
  free(out[0]);
  return 1;
}

/* Tagged sockets find their taker; an unknown tag times out; junk is dropped. */
static int rendezvous(void) {
  char err[256];
  inec_listener *l = inec_listen("127.0.0.1", 0, err, sizeof err);
  CHECK(l, "listen: %s", err);
  unsigned char t1[16], t2[16], t3[16];
  memset(t1, 1, 16);
  memset(t2, 2, 16);
  memset(t3, 3, 16);
  int d2 = inec_dial("127.0.0.1", inec_listener_port(l), t2, 2000, err, sizeof err);
  int d1 = inec_dial("127.0.0.1", inec_listener_port(l), t1, 2000, err, sizeof err);
  CHECK(d1 >= 0 && d2 >= 0, "dial: %s", err);
  int a1 = inec_listener_take(l, t1, 5000), a2 = inec_listener_take(l, t2, 5000);
  CHECK(a1 >= 0 && a2 >= 0, "take: %d %d", a1, a2);
  CHECK(write(d1, "x", 1) == 1, "write");
  char c = 0;
  for (int i = 0; i < 100 && read(a1, &c, 1) != 1; i++) usleep(10000);
  CHECK(c == 'x', "the socket of tag 1 is the one dialed with tag 1");
  CHECK(inec_listener_take(l, t3, 200) == -ETIMEDOUT, "unknown tag");
  int bad = inec_dial("127.0.0.1", 1, t1, 2000, err, sizeof err);
  CHECK(bad < 0 && strstr(err, "cannot connect"), "dial to a closed port: %s", err);
  close(d1);
  close(d2);
  close(a1);
  close(a2);
  inec_listener_close(l);
  return 1;
}

/* Dials host:port and sends n bytes of intro (0: nothing); the fd, or -1. */
static int raw_dial(int port, const unsigned char *intro, size_t n) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) ||
      (n && write(fd, intro, n) != (ssize_t)n)) {
    if (fd >= 0) close(fd);
    return -1;
  }
  return fd;
}

/* A flood of tagged sockets nobody takes, and of connections that never send their tag, holds
 * at most the listener's bounds (the oldest make room), and a real dialer is still taken. */
static int rendezvous_bounds(void) {
  char err[256];
  inec_listener *l = inec_listen("127.0.0.1", 0, err, sizeof err);
  CHECK(l, "listen: %s", err);
  int port = inec_listener_port(l);
  struct rlimit rl; /* about 3000 sockets on both ends */
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 4096 && rl.rlim_max >= 4096) {
    rl.rlim_cur = 4096;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
  enum { TAGGED = INEC_LISTENER_MAX_PARKED + 200, SILENT = INEC_LISTENER_MAX_PENDING + 100 };
  static int fds[TAGGED + SILENT];
  int nfds = 0;
  unsigned char intro[4 + INEC_TAG_BYTES];
  memcpy(intro, "INET", 4);
  for (int i = 0; i < TAGGED; i++) {
    memset(intro + 4, 0, INEC_TAG_BYTES);
    memcpy(intro + 4, &i, sizeof i); /* a tag nobody will take */
    fds[nfds] = raw_dial(port, intro, sizeof intro);
    CHECK(fds[nfds] >= 0, "flood dial %d", i);
    nfds++;
  }
  int parked = 0;
  unsigned long long evicted = 0;
  for (int i = 0; i < 200 && evicted < 200; i++) {
    usleep(10000);
    inec_listener_stats(l, NULL, &parked, &evicted);
  }
  CHECK(parked <= INEC_LISTENER_MAX_PARKED && evicted >= 200,
        "parked %d (at most %d), evicted %llu", parked, INEC_LISTENER_MAX_PARKED, evicted);
  for (int i = 0; i < SILENT; i++) {
    fds[nfds] = raw_dial(port, NULL, 0);
    CHECK(fds[nfds] >= 0, "silent dial %d", i);
    nfds++;
  }
  usleep(200000);
  int pending = 0;
  inec_listener_stats(l, &pending, &parked, NULL);
  CHECK(pending <= INEC_LISTENER_MAX_PENDING, "pending %d", pending);
  unsigned char tag[INEC_TAG_BYTES];
  memset(tag, 0x5a, sizeof tag);
  int d = inec_dial("127.0.0.1", port, tag, 2000, err, sizeof err);
  CHECK(d >= 0, "dial: %s", err);
  int a = inec_listener_take(l, tag, 3000);
  CHECK(a >= 0, "a real dialer is taken despite the flood: %d", a);
  close(a);
  close(d);
  for (int i = 0; i < nfds; i++) close(fds[i]);
  inec_listener_close(l);
  return 1;
}

int main(void) {
  char err[512];
  void *provider = dlopen(MOCK_VERBS_PATH, RTLD_NOW);
  delivered = provider ? dlsym(provider, "mockverbs_bytes_delivered") : NULL;
  if (!delivered) {
    fprintf(stderr, "test verbs provider %s: %s\n", MOCK_VERBS_PATH, dlerror());
    return 1;
  }
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
        if (run(NULL, (enum harness_scheme)s, 1, k, m, one, 1, len, chunks[ci])) passed++; else failed++;
        if (run(NULL, (enum harness_scheme)s, 1, k, m, many, m, len, chunks[ci])) passed++; else failed++;
        if (run(&over_verbs, (enum harness_scheme)s, 1, k, m, one, 1, len, chunks[ci])) passed++; else failed++;
        if (run(&over_verbs, (enum harness_scheme)s, 1, k, m, many, m, len, chunks[ci])) passed++; else failed++;
      }
      /* the incoherent baseline of the benchmark computes the same bytes */
      if (run(NULL, (enum harness_scheme)s, 0, k, m, many, m, len, 65536)) passed++; else failed++;
    }
  }
  if (faults()) passed++; else failed++;
  if (trickle()) passed++; else failed++;
  if (handshake()) passed++; else failed++;
  if (rendezvous()) passed++; else failed++;
  if (rendezvous_bounds()) passed++; else failed++;
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
