/*
 * inec_verbs.h - the RDMA verbs transport of the INEC engine (private to libnetec).
 *
 * libibverbs is dlopen'ed, so hosts without rdma-core load the engine and use TCP. A verbs
 * connection is one RC queue pair with its own CQ (all CQs of an engine share one completion
 * channel, whose fd sits in the engine's epoll set). It carries the same byte stream as a TCP
 * connection: SEND messages of up to one slot, received into pre-posted slots in order; the
 * engine reads and writes it through inec_verbs_read/inec_verbs_write exactly as it reads and
 * writes a socket, so every primitive runs unchanged on either transport. Completions are
 * what drive the engine's waits (recv completions make a connection readable, send completions
 * free a slot). A NIC with cross-channel WAIT or EC offload would replace this file's
 * completion handling, not the engine.
 */
#ifndef NETEC_INEC_VERBS_H
#define NETEC_INEC_VERBS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct inec_verbs;
struct inec_verbs_conn;

/* What two ends exchange (over the bootstrap socket) to connect their queue pairs. */
struct inec_verbs_addr {
  uint32_t qpn, psn, lid, mtu, link_layer;
  unsigned char gid[16];
};

/* Loads `library` (NULL: libibverbs.so.1) and opens `device` (NULL: the first) port 1.
 * NULL with the reason in why when there is no library, no device or no active port. */
struct inec_verbs *inec_verbs_open(const char *library, const char *device, char *why,
                                   size_t whylen);
void inec_verbs_close(struct inec_verbs *v);
/* "verbs (<device> port 1, <link layer>)" */
const char *inec_verbs_describe(const struct inec_verbs *v);
/* The completion channel's fd (non-blocking): readable when some CQ has new completions. */
int inec_verbs_channel_fd(const struct inec_verbs *v);
/* Takes every pending channel event and re-arms those CQs; call before polling conns. */
void inec_verbs_drain_events(struct inec_verbs *v);

/* A queue pair in INIT and its slots; *local gets what the peer needs. */
struct inec_verbs_conn *inec_verbs_conn_create(struct inec_verbs *v, struct inec_verbs_addr *local,
                                               char *err, size_t errlen);
/* To RTR and RTS against the peer, then posts every receive slot. 0 or -errno. */
int inec_verbs_conn_connect(struct inec_verbs_conn *c, const struct inec_verbs_addr *peer,
                            char *err, size_t errlen);
void inec_verbs_conn_destroy(struct inec_verbs_conn *c);

/* Stream I/O: bytes moved, -EAGAIN when nothing can move now, another -errno once the queue
 * pair failed. Never 0: the engine learns of a closed peer from the bootstrap socket. */
ssize_t inec_verbs_read(struct inec_verbs_conn *c, void *buf, size_t n);
ssize_t inec_verbs_write(struct inec_verbs_conn *c, const void *buf, size_t n);
/* Takes this conn's completions; returns how many (0: nothing new). */
int inec_verbs_poll(struct inec_verbs_conn *c);
int inec_verbs_readable(const struct inec_verbs_conn *c); /* data buffered, or failed */
int inec_verbs_writable(const struct inec_verbs_conn *c); /* a free send slot, or failed */
int inec_verbs_send_idle(const struct inec_verbs_conn *c); /* every send completed, or failed */
int inec_verbs_failed(const struct inec_verbs_conn *c);    /* 0, or the -errno it failed with */

#endif
