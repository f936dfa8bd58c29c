/*
 * INEC progress engine: the public API of include/inec.h. The engine's jobs live in their own
 * files (inec_internal.h lists them): ops (inec_op.c), connections (inec_conn.c), the hello
 * (inec_handshake.c), the engine thread (inec_loop.c), the op buffer cache (inec_bufcache.c).
 *
 * One thread per engine runs epoll. Each posted primitive (an "op") works chunk by chunk:
 * it reads chunk c from every input connection (reading a connection only while its op is
 * waiting for that chunk, so the transport carries the back-pressure), calculates, then sends
 * chunk c on its output connection or stores it, and moves to chunk c+1. Posting threads only
 * enqueue.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "inec_internal.h"

inec_engine *inec_engine_create(const inec_options *opt, char *err, size_t errlen) {
  inec_engine *e = calloc(1, sizeof *e);
  if (!e) {
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  char why[512] = "";
  e->isal = netec_isal_load(why, sizeof why, NULL); /* NULL: XOR only, EC posts fail */
  if (opt && opt->disable_verbs) {
    snprintf(e->verbs_why, sizeof e->verbs_why, "verbs disabled");
  } else {
    e->verbs = inec_verbs_open(opt ? opt->verbs_library : NULL, opt ? opt->verbs_device : NULL,
                               e->verbs_why, sizeof e->verbs_why);
  }
  pthread_mutex_init(&e->lock, NULL);
  e->epfd = epoll_create1(EPOLL_CLOEXEC);
  int rc = e->epfd < 0 ? -errno : 0;
  e->wakefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (!rc && e->wakefd < 0) rc = -errno;
  if (!rc) rc = loop_start(e);
  if (rc) {
    snprintf(err, errlen, "cannot start engine: %s", strerror(-rc));
    if (e->epfd >= 0) close(e->epfd);
    if (e->wakefd >= 0) close(e->wakefd);
    inec_verbs_close(e->verbs);
    pthread_mutex_destroy(&e->lock);
    free(e);
    return NULL;
  }
  snprintf(e->describe, sizeof e->describe, "tcp, %s; ISA-L %s",
           e->verbs ? inec_verbs_describe(e->verbs) : e->verbs_why,
           e->isal ? "loaded" : "missing (XOR only)");
  return e;
}

const char *inec_engine_describe(const inec_engine *e) { return e->describe; }

int inec_engine_has_verbs(const inec_engine *e) { return e->verbs != NULL; }

void inec_engine_destroy(inec_engine *e) {
  if (!e) return;
  loop_stop(e);
  for (struct op *op = e->ops; op;) {
    struct op *next = op->next;
    op_finish(op, -ECANCELED);
    op_free(e, op);
    op = next;
  }
  for (inec_conn *c = e->conns; c;) {
    inec_conn *next = c->next;
    conn_free(c);
    c = next;
  }
  loop_free_dead(e);
  bufcache_clear(e);
  close(e->epfd);
  close(e->wakefd);
  inec_verbs_close(e->verbs);
  pthread_mutex_destroy(&e->lock);
  free(e);
}

/* ---- connections ---------------------------------------------------------------------------- */

inec_conn *inec_conn_from_fd(inec_engine *e, int fd) {
  return conn_add(e, fd, INEC_TRANSPORT_TCP, NULL);
}

inec_conn *inec_conn_open(inec_engine *e, int fd, inec_transport want, int timeout_ms, char *err,
                          size_t errlen) {
  if (!e || fd < 0 || want < INEC_TRANSPORT_AUTO || want > INEC_TRANSPORT_VERBS) {
    snprintf(err, errlen, "bad arguments");
    return NULL;
  }
  if (want == INEC_TRANSPORT_VERBS && !e->verbs) {
    snprintf(err, errlen, "verbs requested but unavailable: %s", e->verbs_why);
    return NULL;
  }
  return conn_handshake(e, fd, want, timeout_ms, err, errlen);
}

inec_transport inec_conn_transport(const inec_conn *c) { return c->transport; }

unsigned long long inec_conn_bytes_in(const inec_conn *c) {
  return __atomic_load_n(&c->bytes_in, __ATOMIC_RELAXED);
}

void inec_conn_close(inec_engine *e, inec_conn *c) {
  if (!e || !c) return;
  pthread_mutex_lock(&e->lock);
  c->closing = 1;
  e->closing = 1;
  int w = loop_wake_needed(e);
  pthread_mutex_unlock(&e->lock);
  if (w) loop_wake(e);
}

/* ---- primitives ----------------------------------------------------------------------------- */

/* Builds an op and hands it to the engine thread; 0, or a negative errno. */
static int post(inec_engine *e, enum op_type type, const inec_calc *calc,
                inec_conn *const *src, int nsrc, const unsigned char *const *local, int nlocal,
                unsigned char *const *out, const inec_shape *shape, inec_conn *dst,
                inec_done_fn done, void *arg) {
  if (!e) return -EINVAL;
  int status;
  struct op *op = op_new(e, type, calc, src, nsrc, local, nlocal, out, shape, dst, done, arg,
                         &status);
  if (!op) return status;
  pthread_mutex_lock(&e->lock);
  op->next = e->pending;
  e->pending = op;
  int w = loop_wake_needed(e);
  pthread_mutex_unlock(&e->lock);
  if (w) loop_wake(e);
  return 0;
}

int inec_ec_send(inec_engine *e, const inec_calc *calc, const unsigned char *const *local,
                 int nlocal, const inec_shape *shape, inec_conn *dst, inec_done_fn done,
                 void *arg) {
  if (!dst || nlocal < 1) return -EINVAL;
  return post(e, OP_EC_SEND, calc, NULL, 0, local, nlocal, NULL, shape, dst, done, arg);
}

int inec_recv_ec_send(inec_engine *e, const inec_calc *calc, inec_conn *const *src, int nsrc,
                      const unsigned char *const *local, int nlocal, const inec_shape *shape,
                      inec_conn *dst, inec_done_fn done, void *arg) {
  if (!dst || nsrc < 1) return -EINVAL;
  if (nlocal == 0 && calc) {
    /* pure forwarding of XORed inputs: the EC calculator has nothing to multiply */
    inec_calc x = *calc;
    x.kind = INEC_CALC_XOR;
    x.matrix = NULL;
    x.cols = 0;
    return post(e, OP_RECV_EC_SEND, &x, src, nsrc, NULL, 0, NULL, shape, dst, done, arg);
  }
  return post(e, OP_RECV_EC_SEND, calc, src, nsrc, local, nlocal, NULL, shape, dst, done, arg);
}

int inec_recv_ec(inec_engine *e, const inec_calc *calc, inec_conn *const *src, int nsrc,
                 unsigned char *const *out, const inec_shape *shape, inec_done_fn done,
                 void *arg) {
  if (!out || nsrc < 1) return -EINVAL;
  return post(e, OP_RECV_EC, calc, src, nsrc, NULL, 0, out, shape, NULL, done, arg);
}
