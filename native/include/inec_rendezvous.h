/*
 * inec_rendezvous.h - pairs the sockets of a repair graph with its streams.
 *
 * Each edge of a graph is a stream from a sender to a receiver, named by a 16-byte tag the
 * planner makes up (random, so a tag is also a capability: only who was told it can join).
 * The receiver's listener accepts connections and reads each one's tag; the receiver takes
 * the socket of a tag when it posts its primitive; the sender dials with the tag. Both then
 * pass the socket to inec_conn_open. Unclaimed sockets are closed after a minute, sockets
 * that send no tag within ten seconds sooner. What peers can hold is bounded: at most
 * INEC_LISTENER_MAX_PENDING connections without their tag and INEC_LISTENER_MAX_PARKED tagged
 * sockets nobody took; a new one makes room by closing the oldest. An accept that fails (out of
 * file descriptors) pauses the listener for 100 ms instead of spinning.
 */
#ifndef NETEC_INEC_RENDEZVOUS_H
#define NETEC_INEC_RENDEZVOUS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define INEC_TAG_BYTES 16
#define INEC_LISTENER_MAX_PENDING 256
#define INEC_LISTENER_MAX_PARKED 1024

typedef struct inec_listener inec_listener;

/* Listens on host:port (host NULL: every address; port 0: any free port). NULL with the
 * reason in err. */
inec_listener *inec_listen(const char *host, int port, char *err, size_t errlen);
int inec_listener_port(const inec_listener *l);
/* The socket whose dialer sent tag, waiting at most timeout_ms: an fd, or -ETIMEDOUT. */
int inec_listener_take(inec_listener *l, const unsigned char *tag, int timeout_ms);
void inec_listener_close(inec_listener *l);
/* Connections waiting for their tag, tagged sockets not taken, and sockets closed so far to
 * make room or because nobody took them. Any pointer may be NULL. */
void inec_listener_stats(inec_listener *l, int *pending, int *parked,
                         unsigned long long *evicted);

/* Connects to host:port and sends tag: an fd, or -errno with the reason in err. */
int inec_dial(const char *host, int port, const unsigned char *tag, int timeout_ms, char *err,
              size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
