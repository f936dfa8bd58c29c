/*
 * INEC progress engine: see include/inec.h.
 *
 * One thread per engine runs epoll. Each posted primitive (an "op") works chunk by chunk:
 * it reads chunk c from every input connection (reading a connection only while its op is
 * waiting for that chunk, so the transport carries the back-pressure), calculates, then sends
 * chunk c on its output connection or stores it, and moves to chunk c+1. Posting threads only
 * enqueue.
 *
 * Transports: a connection is a TCP socket or an RC queue pair (inec_verbs.c). Both carry the
 * same framed byte stream; conn_recv/conn_send/conn_interest are the only places that tell
 * them apart. A TCP connection is readable/writable by epoll on its socket; a verbs connection
 * by its completions (the engine's completion channel is in the epoll set, every verbs
 * connection's CQ is polled after it fires), and its bootstrap socket tells when the peer left.
 */
#define _GNU_SOURCE
#include "inec.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/eventfd.h>
#include <sys/uio.h>
#include <unistd.h>

#include "inec_verbs.h"
#include "netec_isal.h"

#define INEC_MAGIC 0x494e4543u /* "INEC" */
#define HDR 16
#define MAX_ROWS 16
#define MAX_COLS 32
#define CACHE_BUFS 16               /* op buffers an engine keeps for the next ops */
#define CACHE_BYTES (64u << 20)     /* and their bytes at most */

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
  unsigned char hdr[HDR];
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
  unsigned char hdr[HDR];        /* the chunk header being sent */
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

/* epoll tags that are not connections */
static char wake_tag, verbs_tag;

static size_t chunk_len(const struct op *op, size_t c) {
  size_t left = op->len - c * op->chunk;
  return left < op->chunk ? left : op->chunk;
}

static void put32(unsigned char *p, uint32_t v) {
  v = htonl(v);
  memcpy(p, &v, 4);
}

static uint32_t get32(const unsigned char *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return ntohl(v);
}

static void conn_schedule(inec_conn *c) {
  if (!c->in_ready && !c->broken) {
    c->in_ready = 1;
    c->ready_next = c->e->ready;
    c->e->ready = c;
  }
}

/* Says what the connection's op waits for: an epoll interest (TCP), or a place on the ready
 * list when the connection can already move (verbs data or slots at hand, a closed peer). */
static void conn_interest(inec_conn *c) {
  if (c->broken) return;
  if (c->transport == INEC_TRANSPORT_VERBS) {
    if ((c->reading && (c->hup || inec_verbs_readable(c->vc))) ||
        (c->sending && inec_verbs_writable(c->vc)) ||
        (c->writer && c->writer->draining && inec_verbs_send_idle(c->vc)))
      conn_schedule(c);
    return;
  }
  /* TCP sockets are watched edge-triggered for both directions from the start: a connection
   * that begins to read or send tries at once (the data is often there already), and waits for
   * the next edge only after EAGAIN. No epoll_ctl per chunk. */
  if ((c->reading && (c->rx_ready || c->hup)) || (c->sending && c->tx_ready && !c->hup))
    conn_schedule(c);
}

static void op_finish(struct op *op, int status) {
  if (op->finished) return;
  op->finished = 1;
  for (int i = 0; i < op->nsrc; i++) {
    if (op->src[i]->reader != op) continue; /* refused at start: another op's connection */
    op->src[i]->reader = NULL;
    op->src[i]->reading = 0;
    conn_interest(op->src[i]);
  }
  if (op->dst && op->dst->writer == op) {
    op->dst->writer = NULL;
    op->dst->sending = 0;
    conn_interest(op->dst);
  }
  op->done(op->arg, status);
}

static void xor_into(unsigned char *dst, const unsigned char *src, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t a, b;
    memcpy(&a, dst + i, 8);
    memcpy(&b, src + i, 8);
    a ^= b;
    memcpy(dst + i, &a, 8);
  }
  for (; i < n; i++) dst[i] ^= src[i];
}

static void op_send_chunk(inec_engine *e, struct op *op);
static void op_chunk_begin(inec_engine *e, struct op *op);

/* The output rows of chunk c (n bytes each). */
static void op_rows(const struct op *op, size_t n, unsigned char **rowp) {
  for (int r = 0; r < op->rows; r++)
    rowp[r] = op->type == OP_RECV_EC ? op->out[r] + op->c * op->chunk : op->outbuf + (size_t)r * n;
}

/* Chunk c begins: its output rows start as the local units' share (zero without any), then
 * every input is read and what arrives is added while it is still in cache (op_accumulate):
 * the calculation overlaps the wait for the slowest input instead of following it. */
static void op_chunk_begin(inec_engine *e, struct op *op) {
  size_t n = chunk_len(op, op->c);
  op->have = 0;
  if (!op->passthrough) { /* passthrough: op_send_chunk sends the local units as they are */
    unsigned char *rowp[MAX_ROWS];
    op_rows(op, n, rowp);
    for (int r = 0; r < op->rows; r++) memset(rowp[r], 0, n);
    for (int j = 0; j < op->nlocal; j++) {
      e->isal->ec_encode_data_update((int)n, op->nlocal, op->rows, j, op->gftbls,
                                     (unsigned char *)op->local[j] + op->c * op->chunk, rowp);
    }
  }
  if (op->nsrc == 0) {
    op_send_chunk(e, op);
    return;
  }
  for (int i = 0; i < op->nsrc; i++) {
    op->src[i]->reading = 1;
    conn_interest(op->src[i]);
  }
}

/* Bytes [off, off + len) of input i's rows of chunk c have arrived: add them to the output
 * rows (EC over raw units: each input's column of the matrix; otherwise XOR, row by row). */
static void op_accumulate(inec_engine *e, struct op *op, int i, size_t off, size_t len) {
  size_t n = chunk_len(op, op->c);
  unsigned char *rowp[MAX_ROWS], *dst[MAX_ROWS];
  op_rows(op, n, rowp);
  const unsigned char *in = op->inbuf + (size_t)i * op->in_rows * op->chunk;
  while (len) {
    size_t row = off / n, at = off % n, piece = len < n - at ? len : n - at;
    unsigned char *src = (unsigned char *)in + row * op->chunk + at;
    if (op->type == OP_RECV_EC && op->kind == INEC_CALC_EC) {
      for (int r = 0; r < op->rows; r++) dst[r] = rowp[r] + at;
      e->isal->ec_encode_data_update((int)piece, op->nsrc, op->rows, i, op->gftbls, src, dst);
    } else {
      xor_into(rowp[row] + at, src, piece);
    }
    off += piece;
    len -= piece;
  }
}

/* Every input delivered chunk c: send it, or (stored) go on to the next chunk. */
static void op_chunk_done(inec_engine *e, struct op *op) {
  if (op->type != OP_RECV_EC) {
    op_send_chunk(e, op);
    return;
  }
  if (++op->c == op->nchunks) {
    op_finish(op, 0);
    return;
  }
  op_chunk_begin(e, op);
}

/* Hands chunk c to the output connection as one gathered write: header, then the rows. */
static void op_send_chunk(inec_engine *e, struct op *op) {
  (void)e;
  size_t n = chunk_len(op, op->c);
  put32(op->hdr, INEC_MAGIC);
  put32(op->hdr + 4, (uint32_t)op->c);
  put32(op->hdr + 8, (uint32_t)op->rows);
  put32(op->hdr + 12, (uint32_t)n);
  inec_conn *d = op->dst;
  d->siov[0] = (struct iovec){op->hdr, HDR};
  if (op->passthrough) {
    for (int r = 0; r < op->rows; r++)
      d->siov[1 + r] = (struct iovec){(void *)(op->local[r] + op->c * op->chunk), n};
    d->siov_n = 1 + op->rows;
  } else {
    d->siov[1] = (struct iovec){op->outbuf, (size_t)op->rows * n};
    d->siov_n = 2;
  }
  d->siov_i = 0;
  d->sending = 1;
  conn_interest(d);
}

/* The output connection took chunk c: next chunk, or done. */
static void op_sent(inec_engine *e, struct op *op) {
  if (++op->c == op->nchunks) {
    /* A queue pair drops the sends still queued when it is destroyed: over verbs the op is
     * done when every send completed, so its poster may close the connection at once. */
    if (op->dst->transport == INEC_TRANSPORT_VERBS && !inec_verbs_send_idle(op->dst->vc)) {
      op->draining = 1;
      conn_interest(op->dst);
      return;
    }
    op_finish(op, 0);
    return;
  }
  op_chunk_begin(e, op);
}

static void conn_fail(inec_conn *c, int status) {
  c->broken = 1;
  epoll_ctl(c->e->epfd, EPOLL_CTL_DEL, c->fd, NULL);
  if (c->reader) op_finish(c->reader, status);
  if (c->writer) op_finish(c->writer, status);
}

/* The transport seam: bytes moved into / out of the pieces in order, 0 at the end of the
 * stream, or -errno (-EAGAIN: later). TCP moves all pieces in one system call. */
static ssize_t verbs_readv(inec_conn *c, const struct iovec *iov, int n) {
  ssize_t total = 0;
  for (int i = 0; i < n; i++) {
    ssize_t r = inec_verbs_read(c->vc, iov[i].iov_base, iov[i].iov_len);
    if (r == -EAGAIN && c->hup && total == 0) { /* the peer left: what it sent is all */
      inec_verbs_poll(c->vc);
      r = inec_verbs_read(c->vc, iov[i].iov_base, iov[i].iov_len);
      if (r == -EAGAIN) r = 0;
    }
    if (r <= 0) return total ? total : r;
    total += r;
    if ((size_t)r < iov[i].iov_len) break;
  }
  return total;
}

static ssize_t conn_recv(inec_conn *c, const struct iovec *iov, int n) {
  if (c->transport == INEC_TRANSPORT_VERBS) return verbs_readv(c, iov, n);
  ssize_t r = readv(c->fd, iov, n);
  return r < 0 ? -errno : r;
}

static ssize_t conn_send(inec_conn *c, const struct iovec *iov, int n) {
  if (c->transport == INEC_TRANSPORT_VERBS) {
    ssize_t total = 0;
    for (int i = 0; i < n; i++) {
      ssize_t w = inec_verbs_write(c->vc, iov[i].iov_base, iov[i].iov_len);
      if (w < 0) return total ? total : w;
      total += w;
      if ((size_t)w < iov[i].iov_len) break;
    }
    return total;
  }
  struct msghdr m = {.msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)n};
  ssize_t w = sendmsg(c->fd, &m, MSG_NOSIGNAL); /* a gone peer is -EPIPE, not SIGPIPE */
  return w < 0 ? -errno : w;
}

static void conn_read(inec_engine *e, inec_conn *c) {
  struct op *op = c->reader;
  while (op && c->reading) {
    size_t n = chunk_len(op, op->c);
    size_t body = (size_t)op->in_rows * n;
    /* One read for what is missing of the header and the rows: the rows arrive back to back,
     * each lands in its own chunk-sized slot of the calculator's input (no staging copy). A
     * bad header fails the connection, so rows read with it are never used. */
    struct iovec iov[MAX_ROWS + 1];
    int niov = 0;
    if (c->hdr_got < HDR) iov[niov++] = (struct iovec){c->hdr + c->hdr_got, HDR - c->hdr_got};
    for (size_t got = c->body_got; got < body; got += n - got % n) {
      size_t row = got / n, in_row = got % n;
      iov[niov++] = (struct iovec){
          op->inbuf + ((size_t)c->src * op->in_rows + row) * op->chunk + in_row, n - in_row};
    }
    ssize_t r = conn_recv(c, iov, niov);
    if (r == 0) {
      conn_fail(c, -EPIPE);
      return;
    }
    if (r < 0) {
      if (r == -EAGAIN || r == -EWOULDBLOCK) {
        c->rx_ready = 0; /* until the next edge */
        return;
      }
      if (r == -EINTR) continue;
      conn_fail(c, (int)r);
      return;
    }
    __atomic_fetch_add(&c->bytes_in, (unsigned long long)r, __ATOMIC_RELAXED);
    if (c->hdr_got < HDR) {
      size_t h = (size_t)r < HDR - c->hdr_got ? (size_t)r : HDR - c->hdr_got;
      c->hdr_got += h;
      r -= (ssize_t)h;
      if (c->hdr_got == HDR &&
          (get32(c->hdr) != INEC_MAGIC || get32(c->hdr + 4) != op->c ||
           get32(c->hdr + 8) != (uint32_t)op->in_rows || get32(c->hdr + 12) != n)) {
        conn_fail(c, -EPROTO);
        return;
      }
    }
    if (r > 0) op_accumulate(e, op, c->src, c->body_got, (size_t)r);
    c->body_got += (size_t)r;
    if (c->body_got == body) {
      c->hdr_got = c->body_got = 0;
      c->reading = 0;
      conn_interest(c);
      if (++op->have == op->nsrc) op_chunk_done(e, op);
      return;
    }
  }
}

static void conn_write(inec_engine *e, inec_conn *c) {
  while (c->sending && c->siov_i < c->siov_n) {
    ssize_t w = conn_send(c, c->siov + c->siov_i, c->siov_n - c->siov_i);
    if (w < 0) {
      if (w == -EAGAIN || w == -EWOULDBLOCK) {
        c->tx_ready = 0; /* until the next edge */
        return;
      }
      if (w == -EINTR) continue;
      conn_fail(c, (int)w);
      return;
    }
    while (w > 0) { /* past the pieces sent whole, into the one sent in part */
      struct iovec *v = &c->siov[c->siov_i];
      size_t step = (size_t)w < v->iov_len ? (size_t)w : v->iov_len;
      v->iov_base = (unsigned char *)v->iov_base + step;
      v->iov_len -= step;
      w -= (ssize_t)step;
      if (v->iov_len == 0) c->siov_i++;
    }
  }
  if (c->sending) {
    c->sending = 0;
    conn_interest(c);
    if (c->writer) op_sent(e, c->writer);
  }
}

static void op_start(inec_engine *e, struct op *op) {
  for (int i = 0; i < op->nsrc; i++) {
    if (op->src[i]->reader || op->src[i]->broken) {
      op_finish(op, op->src[i]->broken ? -EPIPE : -EBUSY);
      return;
    }
    op->src[i]->reader = op;
    op->src[i]->src = i;
  }
  if (op->dst) {
    if (op->dst->writer || op->dst->broken || op->dst->hup) {
      op_finish(op, op->dst->writer ? -EBUSY : -EPIPE); /* a gone peer takes nothing more */
      return;
    }
    op->dst->writer = op;
  }
  op_chunk_begin(e, op);
}

/* Op buffers come from the engine's cache: a fresh buffer of a few hundred KiB costs a page
 * fault per 4 KiB on first touch, which was most of a small repair's time. */
static void *buf_take(inec_engine *e, size_t n, size_t *cap) {
  int best = -1;
  pthread_mutex_lock(&e->lock);
  for (int i = 0; i < e->ncache; i++)
    if (e->cache[i].cap >= n && (best < 0 || e->cache[i].cap < e->cache[best].cap)) best = i;
  void *p = NULL;
  if (best >= 0) {
    p = e->cache[best].p;
    *cap = e->cache[best].cap;
    e->cache_bytes -= *cap;
    e->cache[best] = e->cache[--e->ncache];
  }
  pthread_mutex_unlock(&e->lock);
  if (!p && (p = malloc(n))) *cap = n;
  return p;
}

static void buf_give(inec_engine *e, void *p, size_t cap) {
  if (!p) return;
  pthread_mutex_lock(&e->lock);
  if (e->ncache < CACHE_BUFS && e->cache_bytes + cap <= CACHE_BYTES) {
    e->cache[e->ncache].p = p;
    e->cache[e->ncache++].cap = cap;
    e->cache_bytes += cap;
    p = NULL;
  }
  pthread_mutex_unlock(&e->lock);
  free(p);
}

static void op_free(inec_engine *e, struct op *op) {
  free(op->gftbls);
  free(op->src);
  buf_give(e, op->inbuf, op->inbuf_cap);
  buf_give(e, op->outbuf, op->outbuf_cap);
  free(op);
}

/* The peer of c closed (or broke) its socket. */
static void conn_hup(inec_engine *e, inec_conn *c) {
  if (c->sending) {
    conn_fail(c, -EPIPE); /* nothing more can be sent */
    return;
  }
  /* What the peer sent may still be buffered, for this op or for one posted later (a sender
   * closes once its last op is done, maybe before the receiver posted the matching one):
   * stop polling the socket (HUP is level-triggered) and read from the ready list whenever
   * an op wants data; the buffered bytes, then the end of the stream (-EPIPE). */
  c->hup = 1;
  epoll_ctl(e->epfd, EPOLL_CTL_DEL, c->fd, NULL);
  conn_interest(c);
}

static void conn_free(inec_conn *c) {
  if (c->vc) inec_verbs_conn_destroy(c->vc);
  close(c->fd);
  free(c);
}

/* Frees the connections inec_conn_close marked, failing ops that still use them. */
static void close_marked(inec_engine *e) {
  pthread_mutex_lock(&e->lock);
  int any = e->closing;
  e->closing = 0;
  pthread_mutex_unlock(&e->lock);
  if (!any) return;
  for (inec_conn *c = e->ready, **pp = &e->ready; c; c = *pp) { /* off the ready list */
    if (c->closing) {
      *pp = c->ready_next;
      c->in_ready = 0;
    } else {
      pp = &c->ready_next;
    }
  }
  pthread_mutex_lock(&e->lock);
  inec_conn **pp = &e->conns;
  while (*pp) {
    inec_conn *c = *pp;
    if (!c->closing) {
      pp = &c->next;
      continue;
    }
    *pp = c->next;
    if (!c->broken) epoll_ctl(e->epfd, EPOLL_CTL_DEL, c->fd, NULL);
    c->broken = 1;
    if (c->reader) op_finish(c->reader, -ECANCELED);
    if (c->writer) op_finish(c->writer, -ECANCELED);
    c->next = e->dead; /* this round's epoll events may still point at it */
    e->dead = c;
  }
  pthread_mutex_unlock(&e->lock);
}

static void free_dead(inec_engine *e) {
  while (e->dead) {
    inec_conn *c = e->dead;
    e->dead = c->next;
    conn_free(c);
  }
}

/* Takes every verbs completion; connections that can now move go on the ready list. */
static void poll_verbs(inec_engine *e) {
  inec_verbs_drain_events(e->verbs);
  pthread_mutex_lock(&e->lock);
  for (inec_conn *c = e->conns; c; c = c->next) {
    if (c->transport != INEC_TRANSPORT_VERBS || c->broken || c->closing) continue;
    if (inec_verbs_poll(c->vc) > 0) conn_interest(c);
  }
  pthread_mutex_unlock(&e->lock);
}

static void *engine_main(void *arg) {
  inec_engine *e = arg;
  struct epoll_event evs[64];
  while (1) {
    /* Posters write the wake eventfd only while the thread sleeps (see wake_needed): a busy
     * engine picks new ops up on its next round without a system call on either side. */
    pthread_mutex_lock(&e->lock);
    e->sleeping = !e->pending && !e->closing && !e->stop && !e->ready;
    int timeout = e->sleeping ? 100 : 0;
    pthread_mutex_unlock(&e->lock);
    int n = epoll_wait(e->epfd, evs, 64, timeout);
    pthread_mutex_lock(&e->lock);
    e->sleeping = 0;
    int stop = e->stop;
    struct op *start = e->pending;
    e->pending = NULL;
    pthread_mutex_unlock(&e->lock);
    while (start) {
      struct op *op = start;
      start = op->next;
      op->next = e->ops;
      e->ops = op;
      op_start(e, op);
    }
    close_marked(e); /* after starting: an op posted before its conn's close fails cleanly */
    if (stop) break;
    for (int i = 0; i < n; i++) {
      if (evs[i].data.ptr == &wake_tag) continue; /* edge-triggered: nothing to drain */
      if (evs[i].data.ptr == &verbs_tag) continue; /* polled below, every round */
      inec_conn *c = evs[i].data.ptr;
      if (c->broken || c->hup || c->closing) continue;
      if (c->transport == INEC_TRANSPORT_VERBS) { /* the bootstrap socket: the peer left */
        conn_hup(e, c);
        continue;
      }
      if (evs[i].events & EPOLLIN) {
        c->rx_ready = 1;
        conn_read(e, c);
      }
      if (!c->broken && (evs[i].events & EPOLLOUT)) {
        c->tx_ready = 1;
        conn_write(e, c);
      }
      if (!c->broken && (evs[i].events & (EPOLLERR | EPOLLHUP))) conn_hup(e, c);
    }
    if (e->verbs) poll_verbs(e);
    while (e->ready) {
      inec_conn *c = e->ready;
      e->ready = c->ready_next;
      c->in_ready = 0;
      if (!c->broken && c->reading) conn_read(e, c); /* data, or EOF: fails the op */
      if (!c->broken && c->sending) conn_write(e, c);
      if (!c->broken && c->writer && c->writer->draining && inec_verbs_send_idle(c->vc))
        op_finish(c->writer, inec_verbs_failed(c->vc));
    }
    free_dead(e);
    /* free ops that finished */
    struct op **pp = &e->ops;
    while (*pp) {
      if ((*pp)->finished) {
        struct op *dead = *pp;
        *pp = dead->next;
        op_free(e, dead);
      } else {
        pp = &(*pp)->next;
      }
    }
  }
  return NULL;
}

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
  e->epfd = epoll_create1(EPOLL_CLOEXEC);
  e->wakefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  pthread_mutex_init(&e->lock, NULL);
  struct epoll_event ev = {.events = EPOLLIN | EPOLLET, .data.ptr = &wake_tag};
  struct epoll_event vev = {.events = EPOLLIN, .data.ptr = &verbs_tag};
  if (e->epfd < 0 || e->wakefd < 0 || epoll_ctl(e->epfd, EPOLL_CTL_ADD, e->wakefd, &ev) < 0 ||
      (e->verbs &&
       epoll_ctl(e->epfd, EPOLL_CTL_ADD, inec_verbs_channel_fd(e->verbs), &vev) < 0) ||
      pthread_create(&e->thread, NULL, engine_main, e) != 0) {
    snprintf(err, errlen, "cannot start engine: %s", strerror(errno));
    if (e->epfd >= 0) close(e->epfd);
    if (e->wakefd >= 0) close(e->wakefd);
    inec_verbs_close(e->verbs);
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

/* Under e->lock: whether the poster must wake the thread (once: the flag is taken). */
static int wake_needed(inec_engine *e) {
  int sleeping = e->sleeping;
  e->sleeping = 0;
  return sleeping;
}

static void wake(inec_engine *e) {
  uint64_t one = 1;
  if (write(e->wakefd, &one, sizeof one) < 0) { /* already awake */
  }
}

void inec_engine_destroy(inec_engine *e) {
  if (!e) return;
  pthread_mutex_lock(&e->lock);
  e->stop = 1;
  pthread_mutex_unlock(&e->lock);
  wake(e);
  pthread_join(e->thread, NULL);
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
  free_dead(e);
  for (int i = 0; i < e->ncache; i++) free(e->cache[i].p);
  close(e->epfd);
  close(e->wakefd);
  inec_verbs_close(e->verbs);
  pthread_mutex_destroy(&e->lock);
  free(e);
}

/* ---- connections ---------------------------------------------------------------------------- */

/* Blocking I/O of the handshake on a socket that may be non-blocking, within a deadline. */
static int hs_io(int fd, unsigned char *p, size_t n, int writing, int timeout_ms) {
  while (n) {
    struct pollfd pfd = {.fd = fd, .events = writing ? POLLOUT : POLLIN};
    int pr = poll(&pfd, 1, timeout_ms);
    if (pr == 0) return -ETIMEDOUT;
    if (pr < 0) {
      if (errno == EINTR) continue;
      return -errno;
    }
    ssize_t r = writing ? send(fd, p, n, MSG_NOSIGNAL) : read(fd, p, n);
    if (r == 0) return -EPIPE;
    if (r < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) continue;
      return -errno;
    }
    p += r;
    n -= (size_t)r;
  }
  return 0;
}

#define HELLO_MAGIC 0x494e4548u /* "INEH" */
#define HELLO 44                /* magic, version, verbs offered, qpn, psn, lid, mtu, link, gid */

static void hello_put(unsigned char *b, int offer, const struct inec_verbs_addr *a) {
  put32(b, HELLO_MAGIC);
  put32(b + 4, 1);
  put32(b + 8, (uint32_t)offer);
  put32(b + 12, a->qpn);
  put32(b + 16, a->psn);
  put32(b + 20, a->lid);
  put32(b + 24, a->mtu);
  put32(b + 28, a->link_layer);
  memcpy(b + 32, a->gid, 12); /* the GID's first 12 bytes here, the last 4 below */
}

static void hello_get(const unsigned char *b, struct inec_verbs_addr *a) {
  a->qpn = get32(b + 12);
  a->psn = get32(b + 16);
  a->lid = get32(b + 20);
  a->mtu = get32(b + 24);
  a->link_layer = get32(b + 28);
  memcpy(a->gid, b + 32, 12);
}

static inec_conn *conn_add(inec_engine *e, int fd, inec_transport t, struct inec_verbs_conn *vc) {
  inec_conn *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->fd = fd;
  c->e = e;
  c->transport = t;
  c->vc = vc;
  c->rx_ready = c->tx_ready = 1; /* until a first EAGAIN says otherwise */
  int flags = fcntl(fd, F_GETFL);
  /* TCP: both directions, edge-triggered (see conn_interest); verbs: the bootstrap socket
   * only reports the peer leaving */
  struct epoll_event ev = {.events = t == INEC_TRANSPORT_VERBS ? EPOLLIN | EPOLLRDHUP
                                                               : EPOLLIN | EPOLLOUT | EPOLLET,
                           .data.ptr = c};
  c->events = ev.events;
  if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0 ||
      epoll_ctl(e->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
    free(c);
    return NULL;
  }
  pthread_mutex_lock(&e->lock);
  c->next = e->conns;
  e->conns = c;
  pthread_mutex_unlock(&e->lock);
  return c;
}

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
  struct inec_verbs_addr mine = {0}, peer = {0};
  struct inec_verbs_conn *vc = NULL;
  if (want != INEC_TRANSPORT_TCP && e->verbs) {
    vc = inec_verbs_conn_create(e->verbs, &mine, err, errlen);
    if (!vc) return NULL;
  }
  unsigned char out[HELLO + 4], in[HELLO + 4];
  memset(out, 0, sizeof out);
  hello_put(out, vc != NULL, &mine);
  memcpy(out + HELLO, mine.gid + 12, 4);
  int rc = hs_io(fd, out, sizeof out, 1, timeout_ms);
  if (!rc) rc = hs_io(fd, in, sizeof in, 0, timeout_ms);
  if (rc) {
    snprintf(err, errlen, "handshake: %s", strerror(-rc));
    goto fail;
  }
  if (get32(in) != HELLO_MAGIC || get32(in + 4) != 1) {
    snprintf(err, errlen, "handshake: the peer is not an INEC engine (version 1)");
    goto fail;
  }
  hello_get(in, &peer);
  memcpy(peer.gid + 12, in + HELLO, 4);
  int verbs = vc && get32(in + 8) == 1;
  if (want == INEC_TRANSPORT_VERBS && !verbs) {
    snprintf(err, errlen, "verbs requested but the peer offers only TCP");
    goto fail;
  }
  if (!verbs) {
    inec_verbs_conn_destroy(vc);
    inec_conn *c = conn_add(e, fd, INEC_TRANSPORT_TCP, NULL);
    if (!c) snprintf(err, errlen, "cannot watch the socket: %s", strerror(errno));
    return c;
  }
  if (inec_verbs_conn_connect(vc, &peer, err, errlen)) goto fail;
  /* both sides' receives are posted before either sends: one byte each way says so */
  unsigned char ready = 'R', theirs = 0;
  rc = hs_io(fd, &ready, 1, 1, timeout_ms);
  if (!rc) rc = hs_io(fd, &theirs, 1, 0, timeout_ms);
  if (rc || theirs != 'R') {
    snprintf(err, errlen, "handshake: %s", rc ? strerror(-rc) : "bad ready byte");
    goto fail;
  }
  inec_conn *c = conn_add(e, fd, INEC_TRANSPORT_VERBS, vc);
  if (!c) {
    snprintf(err, errlen, "cannot watch the socket: %s", strerror(errno));
    goto fail;
  }
  return c;
fail:
  inec_verbs_conn_destroy(vc);
  return NULL;
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
  int w = wake_needed(e);
  pthread_mutex_unlock(&e->lock);
  if (w) wake(e);
}
/* Validates and builds an op; returns 0 and enqueues it, or a negative errno. */
static int post(inec_engine *e, enum op_type type, const inec_calc *calc,
                inec_conn *const *src, int nsrc, const unsigned char *const *local, int nlocal,
                unsigned char *const *out, const inec_shape *shape, inec_conn *dst,
                inec_done_fn done, void *arg) {
  if (!e || !calc || !shape || !done || calc->rows < 1 || calc->rows > MAX_ROWS ||
      nsrc < 0 || nsrc > MAX_COLS || nlocal < 0 || nlocal > MAX_COLS || shape->len == 0 ||
      shape->chunk == 0 || (nsrc && !src) || (nlocal && !local))
    return -EINVAL;
  int ec = calc->kind == INEC_CALC_EC;
  int cols = type == OP_RECV_EC ? nsrc : nlocal;
  if (ec && (!calc->matrix || calc->cols != cols || cols < 1)) return -EINVAL;
  /* XOR only where there is nothing local to multiply: the rebuilding node and forwarding */
  if (!ec && !(type == OP_RECV_EC || (type == OP_RECV_EC_SEND && nlocal == 0))) return -EINVAL;
  if ((ec || nlocal) && !e->isal) return -ENOTSUP;
  for (int i = 0; i < nsrc; i++)
    if (!src[i]) return -EINVAL;
  struct op *op = calloc(1, sizeof *op);
  if (!op) return -ENOMEM;
  op->type = type;
  op->kind = calc->kind;
  op->rows = calc->rows;
  op->cols = cols;
  if (nlocal) memcpy(op->local, local, (size_t)nlocal * sizeof *local);
  op->nlocal = nlocal;
  if (out) memcpy(op->out, out, (size_t)calc->rows * sizeof *out);
  op->dst = dst;
  op->len = shape->len;
  op->chunk = shape->chunk;
  op->nchunks = (shape->len + shape->chunk - 1) / shape->chunk;
  op->done = done;
  op->arg = arg;
  op->nsrc = nsrc;
  /* recv_ec with EC takes raw units (one row each); XOR inputs carry every row */
  op->in_rows = type == OP_RECV_EC && ec ? 1 : calc->rows;
  /* ec_send with an identity matrix (a plain send of units) sends them from where they are */
  op->passthrough = type == OP_EC_SEND && ec && op->rows == cols;
  for (int i = 0; op->passthrough && i < cols * cols; i++)
    op->passthrough = calc->matrix[i] == (i % (cols + 1) == 0);
  if (op->passthrough) ec = 0; /* no tables */
  op->src = calloc((size_t)nsrc + 1, sizeof *op->src);
  if (nsrc) op->inbuf = buf_take(e, (size_t)nsrc * op->in_rows * op->chunk, &op->inbuf_cap);
  if (type != OP_RECV_EC && !op->passthrough)
    op->outbuf = buf_take(e, (size_t)op->rows * op->chunk, &op->outbuf_cap);
  if (ec) op->gftbls = malloc(32 * (size_t)op->rows * (size_t)cols);
  if (!op->src || (nsrc && !op->inbuf) || (type != OP_RECV_EC && !op->passthrough && !op->outbuf) ||
      (ec && !op->gftbls)) {
    op_free(e, op);
    return -ENOMEM;
  }
  if (nsrc) memcpy(op->src, src, (size_t)nsrc * sizeof *src);
  if (ec) e->isal->ec_init_tables(cols, op->rows, (unsigned char *)calc->matrix, op->gftbls);
  pthread_mutex_lock(&e->lock);
  op->next = e->pending;
  e->pending = op;
  int w = wake_needed(e);
  pthread_mutex_unlock(&e->lock);
  if (w) wake(e);
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
