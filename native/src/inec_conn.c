/*
 * A connection's framed byte stream (inec_internal.h): the chunk frames an op reads from it
 * or sends on it, over a TCP socket or an RC queue pair (inec_verbs.c). Both transports carry
 * the same stream; conn_recv/conn_send/conn_interest are the only places that tell them
 * apart. A TCP connection is readable/writable by epoll on its socket; a verbs connection by
 * its completions (inec_loop.c polls them), and its bootstrap socket tells when the peer left.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "inec_internal.h"

/* Puts c on the engine's ready list: it can move without waiting for an epoll event. */
static void conn_schedule(inec_conn *c) {
  if (!c->in_ready && !c->broken) {
    c->in_ready = 1;
    c->ready_next = c->e->ready;
    c->e->ready = c;
  }
}

/* Says what the connection's op waits for: an epoll interest (TCP), or a place on the ready
 * list when the connection can already move (verbs data or slots at hand, a closed peer). */
void conn_interest(inec_conn *c) {
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

void conn_fail(inec_conn *c, int status) {
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

/* Reads what is missing of the reader's chunk frame; a whole chunk goes to op_received. */
void conn_read(inec_engine *e, inec_conn *c) {
  struct op *op = c->reader;
  while (op && c->reading) {
    size_t n = op_chunk_len(op, op->c);
    size_t body = (size_t)op->in_rows * n;
    /* One read for what is missing of the header and the rows: the rows arrive back to back,
     * each lands in its own chunk-sized slot of the calculator's input (no staging copy). A
     * bad header fails the connection, so rows read with it are never used. */
    struct iovec iov[MAX_ROWS + 1];
    int niov = 0;
    if (c->hdr_got < FRAME_HDR)
      iov[niov++] = (struct iovec){c->hdr + c->hdr_got, FRAME_HDR - c->hdr_got};
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
    if (c->hdr_got < FRAME_HDR) {
      size_t h = (size_t)r < FRAME_HDR - c->hdr_got ? (size_t)r : FRAME_HDR - c->hdr_got;
      c->hdr_got += h;
      r -= (ssize_t)h;
      if (c->hdr_got == FRAME_HDR &&
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
      op_received(e, op);
      return;
    }
  }
}

/* Sends what is left of the writer's chunk frame; a whole chunk goes to op_sent. */
void conn_write(inec_engine *e, inec_conn *c) {
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

/* The peer of c closed (or broke) its socket. */
void conn_hup(inec_engine *e, inec_conn *c) {
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

/* A connection over fd (made non-blocking), watched by the engine's epoll; NULL on failure. */
inec_conn *conn_add(inec_engine *e, int fd, inec_transport t, struct inec_verbs_conn *vc) {
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

void conn_free(inec_conn *c) {
  if (c->vc) inec_verbs_conn_destroy(c->vc);
  close(c->fd);
  free(c);
}
