/*
 * A local harness for INEC repair graphs: builds the k survivors' and the rebuilding node's
 * vertices of one scheme, wires them over TCP loopback, and runs them either with one INEC
 * engine per vertex (coherent: primitives posted once) or with one application thread per
 * vertex that receives, calculates and sends itself (the incoherent baseline). Used by the
 * C tests and by bench/inec_bench.c.
 */
#ifndef NETEC_INEC_HARNESS_H
#define NETEC_INEC_HARNESS_H

#include <pthread.h>
#include <stddef.h>

#include "inec.h"
#include "netec_isal.h"

enum harness_scheme { HARNESS_STAR, HARNESS_PPR, HARNESS_CHAIN };

extern const char *const harness_scheme_names[3];

/* k+m units of len bytes (random data, parity with Hadoop's Cauchy matrix); enc receives the
 * (k+m) x k encode matrix. Free with harness_free_units. */
unsigned char **harness_stripe(const struct netec_isal_api *isal, int k, int m, size_t len,
                               unsigned seed, unsigned char *enc);
void harness_free_units(unsigned char **u, int n);

/* How engines connect: NULL means raw TCP sockets handed over with inec_conn_from_fd. */
struct harness_net {
  const inec_options *opt; /* engine options (e.g. a test verbs provider) */
  inec_transport transport;
};

/*
 * Rebuilds units erased[0..rows-1] into out[] (rows buffers of len bytes) through `scheme`,
 * `iterations` times over the same wiring; *seconds (if not NULL) gets the time of those runs,
 * setup excluded. coherent: INEC engines; else application threads.
 * Returns 0, or a negative errno / -ETIMEDOUT.
 */
int harness_run(const struct netec_isal_api *isal, const struct harness_net *net,
                enum harness_scheme scheme, int coherent,
                int k, int m, unsigned char **units, const unsigned char *enc,
                const int *erased, int rows, size_t len, size_t chunk, unsigned char **out,
                int iterations, double *seconds);

/* A connected TCP loopback pair (TCP_NODELAY on fds[0]): fds[0] connects to fds[1]. */
int harness_tcp_pair(int fds[2]);

/* Opens a (ea, fda) <-> (eb, fdb) connection with inec_conn_open on both ends at once. */
int harness_conn_pair(inec_engine *ea, int fda, inec_engine *eb, int fdb, inec_transport t,
                      inec_conn **ca, inec_conn **cb);

/* Waits for n inec_done_fn callbacks: pass harness_done and the waiter to each post. */
struct harness_waiter {
  pthread_mutex_t m;
  pthread_cond_t cv;
  int left, errors, status; /* status: the last non-zero one */
};
void harness_waiter_init(struct harness_waiter *w, int n);
void harness_done(void *waiter, int status);
/* 0 when every callback came, -1 after `secs` seconds. */
int harness_wait(struct harness_waiter *w, int secs);

#endif
