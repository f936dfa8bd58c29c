/*
 * The hello two engines exchange on a new socket before it carries chunk frames
 * (inec_internal.h), on the caller's thread with a deadline: magic and version, whether
 * verbs is offered, and the offering side's queue pair address. Both offer: the queue pairs
 * connect, one ready byte each way says both sides' receives are posted, and the socket stays
 * as the verbs connection's bootstrap socket. Otherwise the socket itself carries the stream.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

#include "inec_internal.h"

#define HELLO_MAGIC 0x494e4548u /* "INEH" */
#define HELLO 44                /* magic, version, verbs offered, qpn, psn, lid, mtu, link, gid */

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

inec_conn *conn_handshake(inec_engine *e, int fd, inec_transport want, int timeout_ms,
                          char *err, size_t errlen) {
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
