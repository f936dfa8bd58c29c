/*
 * inec_internal.h - the INEC engine's state and the seams between its files (private to
 * libnetec; the public API is include/inec.h).
 *
 * One job per file:
 *   inec_engine.c     the public API: engines, connections, posting the three primitives
 *   inec_op.c         an op's state machine: chunk by chunk, read, calculate, send or store
 *   inec_conn.c       a connection's framed byte stream over TCP or verbs, and its failures
 *   inec_handshake.c  the hello two engines exchange on a new socket (and verbs' bootstrap)
 *   inec_loop.c       the engine thread: epoll, the ready list, waking, closing, freeing
 *   inec_bufcache.c   op buffers kept for the next ops
 *   inec_verbs.c      the RDMA verbs transport (inec_verbs.h)
 *   inec_rendezvous.c how a repair's vertices find each other (include/inec_rendezvous.h)
 *
 * Threads: posting threads only enqueue (under lock); everything else runs on the engine
 * thread. A field says which guards it.
 */
#ifndef NETEC_INEC_INTERNAL_H
#define NETEC_INEC_INTERNAL_H

#include <arpa/inet.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "inec.h"
#include "inec_verbs.h"
#include "netec_isal.h"

#define INEC_MAGIC 0x494e4543u /* "INEC": each chunk's frame */
#define FRAME_HDR 16           /* magic, chunk index, rows, bytes per row */
#define MAX_ROWS 16
#define MAX_COLS 32
#define CACHE_BUFS 16           /* op buffers an engine keeps for the next ops */
#define CACHE_BYTES (64u << 20) /* and their bytes at most */

enum op_type { OP_EC_SEND, OP_RECV_EC_SEND, OP_RECV_EC };

struct op;

struct inec_conn {
  int fd; /* the socket (TCP) or the bootstrap socket (verbs) */
  inec_engine *e;
  inec_transport transport;
  struct inec_verbs_conn *vc; /* verbs only */
  struct op *reader; /* op reading this connection, or NULL */
  int src;           /* its index among the op's inputs */
  struct op *writer; /* op sending on this connection, or NULL */
  unsigned char hdr[FRAME_HDR];
  size_t hdr_got;
  size_t body_got;
  int reading; /* waiting for the op's current chunk */
  struct iovec siov[MAX_ROWS + 1]; /* the chunk being sent: header, then rows */
  int siov_i, siov_n;               /* next piece, pieces; siov_i < siov_n while sending */
  int sending;
  int rx_ready, tx_ready; /* TCP: no EAGAIN since the last edge (reading/sending may move) */
  uint32_t events; /* registered epoll interest (verbs: the bootstrap socket) */
  int broken;
  int hup;       /* peer closed: no longer polled; buffered data is drained from `ready` */
  int in_ready;
  int closing; /* inec_conn_close was called: freed by the engine thread */
  unsigned long long bytes_in; /* stream bytes received (atomic: read by other threads) */
  struct inec_conn *ready_next;
  struct inec_conn *next;
};

struct op {
  enum op_type type;
  inec_calc_kind kind;
  int rows, cols;
  unsigned char *gftbls; /* ISA-L tables of the matrix (EC), or NULL */
  const unsigned char *local[MAX_COLS]; /* copied at post: callers' arrays may be temporary */
  int nlocal;
  inec_conn **src;
  int nsrc;
  unsigned char *out[MAX_ROWS];
  inec_conn *dst;
  size_t len, chunk, nchunks, c; /* c: chunk being worked on */
  int have;                      /* inputs that delivered chunk c */
  int in_rows;                   /* rows each input carries */
  unsigned char *inbuf;          /* nsrc x in_rows x chunk */
  unsigned char *outbuf;         /* rows x chunk; NULL when the rows are the local units */
  size_t inbuf_cap, outbuf_cap;  /* their sizes as allocated (they go back to the cache) */
  int passthrough;               /* identity matrix over the local units: send them as they are */
  unsigned char hdr[FRAME_HDR];  /* the chunk header being sent */
  inec_done_fn done;
  void *arg;
  int finished;
  int draining; /* every chunk handed to a verbs conn: waiting for their send completions */
  struct op *next;
};

struct inec_engine {
  int epfd, wakefd;
  pthread_t thread;
  pthread_mutex_t lock;
  struct op *pending; /* posted, not started (guarded by lock) */
  struct op *ops;     /* started (engine thread only) */
  inec_conn *conns;   /* all connections (guarded by lock) */
  inec_conn *ready;   /* connections that can move now without an epoll event (engine thread) */
  int stop;
  int closing;        /* some conn waits to be closed (guarded by lock) */
  int sleeping;       /* the thread is (about to be) in epoll_wait with nothing to start */
  inec_conn *dead;    /* closed this round; freed at its end (epoll may still name them) */
  const struct netec_isal_api *isal;
  struct { void *p; size_t cap; } cache[CACHE_BUFS]; /* freed op buffers (guarded by lock) */
  int ncache;
  size_t cache_bytes;
  struct inec_verbs *verbs; /* NULL: TCP only */
  char verbs_why[256];      /* why not, when verbs is NULL */
  char describe[384];
};

static inline void put32(unsigned char *p, uint32_t v) {
  v = htonl(v);
  memcpy(p, &v, 4);
}

static inline uint32_t get32(const unsigned char *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return ntohl(v);
}

/* Bytes of chunk c of each row: the chunk size, but for the last chunk. */
static inline size_t op_chunk_len(const struct op *op, size_t c) {
  size_t left = op->len - c * op->chunk;
  return left < op->chunk ? left : op->chunk;
}

/* inec_op.c (engine thread, but op_new and op_free) */
struct op *op_new(inec_engine *e, enum op_type type, const inec_calc *calc,
                  inec_conn *const *src, int nsrc, const unsigned char *const *local, int nlocal,
                  unsigned char *const *out, const inec_shape *shape, inec_conn *dst,
                  inec_done_fn done, void *arg, int *status);
void op_start(inec_engine *e, struct op *op);
void op_accumulate(inec_engine *e, struct op *op, int i, size_t off, size_t len);
void op_received(inec_engine *e, struct op *op);
void op_sent(inec_engine *e, struct op *op);
void op_finish(struct op *op, int status);
void op_free(inec_engine *e, struct op *op);

/* inec_conn.c (engine thread, but conn_add and conn_free) */
inec_conn *conn_add(inec_engine *e, int fd, inec_transport t, struct inec_verbs_conn *vc);
void conn_interest(inec_conn *c);
void conn_read(inec_engine *e, inec_conn *c);
void conn_write(inec_engine *e, inec_conn *c);
void conn_hup(inec_engine *e, inec_conn *c);
void conn_fail(inec_conn *c, int status);
void conn_free(inec_conn *c);

/* inec_handshake.c (the caller's thread) */
inec_conn *conn_handshake(inec_engine *e, int fd, inec_transport want, int timeout_ms,
                          char *err, size_t errlen);

/* inec_loop.c */
int loop_start(inec_engine *e);  /* 0, or -errno; the engine's fds are open */
void loop_stop(inec_engine *e);  /* returns once the thread has ended */
int loop_wake_needed(inec_engine *e); /* under e->lock: the poster must call loop_wake */
void loop_wake(inec_engine *e);
void loop_free_dead(inec_engine *e);

/* inec_bufcache.c (any thread) */
void *bufcache_take(inec_engine *e, size_t n, size_t *cap);
void bufcache_give(inec_engine *e, void *p, size_t cap);
void bufcache_clear(inec_engine *e);

#endif
