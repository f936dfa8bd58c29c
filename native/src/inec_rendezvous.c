/* See include/inec_rendezvous.h. */
#include "inec_rendezvous.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define TAG_MAGIC "INET"
#define INTRO (4 + INEC_TAG_BYTES)
/* What peers can hold (each a bound on sockets, none on threads): connections whose tag has not
 * arrived, and tagged sockets nobody took yet. When either is full the oldest makes room: a
 * real dialer sends its tag at once and is taken within seconds, so only a flood ages out. */
#define MAX_PENDING INEC_LISTENER_MAX_PENDING
#define MAX_PARKED INEC_LISTENER_MAX_PARKED
#define INTRO_MS 10000
#define PARK_MS 60000
#define ACCEPT_PAUSE_MS 100 /* after a failing accept (out of fds): no busy loop */

struct pending { /* accepted, tag not complete yet */
  int fd;
  size_t got;
  unsigned char buf[INTRO];
  long long since;
};

struct parked {
  int fd;
  unsigned char tag[INEC_TAG_BYTES];
  long long since;
  struct parked *next;
};

struct inec_listener {
  int fd, port, stop;
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t cv;
  struct parked *parked; /* newest first (guarded by lock) */
  int nparked;           /* guarded by lock */
  struct pending pend[MAX_PENDING];
  int npend;
  unsigned long long evicted; /* closed to make room or unclaimed (guarded by lock) */
  long long accept_pause_until;
};

static long long now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000LL + t.tv_nsec / 1000000;
}

static void park(inec_listener *l, struct pending *p) {
  struct parked *k = malloc(sizeof *k);
  if (!k) {
    close(p->fd);
    return;
  }
  k->fd = p->fd;
  memcpy(k->tag, p->buf + 4, INEC_TAG_BYTES);
  k->since = now_ms();
  pthread_mutex_lock(&l->lock);
  if (l->nparked >= MAX_PARKED) { /* the oldest is the last */
    struct parked **pp = &l->parked;
    while ((*pp)->next) pp = &(*pp)->next;
    close((*pp)->fd);
    free(*pp);
    *pp = NULL;
    l->nparked--;
    l->evicted++;
  }
  k->next = l->parked;
  l->parked = k;
  l->nparked++;
  pthread_cond_broadcast(&l->cv);
  pthread_mutex_unlock(&l->lock);
}

/* Drops pending connection i (its slot takes the last one's). */
static void unpend(inec_listener *l, int i) {
  close(l->pend[i].fd);
  l->pend[i] = l->pend[--l->npend];
}

static void *listener_main(void *arg) {
  inec_listener *l = arg;
  struct pollfd pfd[MAX_PENDING + 1];
  while (!__atomic_load_n(&l->stop, __ATOMIC_ACQUIRE)) {
    long long t0 = now_ms();
    pfd[0] = (struct pollfd){.fd = l->fd, .events = t0 >= l->accept_pause_until ? POLLIN : 0};
    for (int i = 0; i < l->npend; i++) pfd[i + 1] = (struct pollfd){.fd = l->pend[i].fd, .events = POLLIN};
    int n = poll(pfd, (nfds_t)l->npend + 1, 100);
    long long t = now_ms();
    int accepting = n > 0 && (pfd[0].revents & POLLIN);
    /* backwards: a slot that leaves takes the last one's, already seen, so pend[j] stays
     * pfd[j + 1] for every j still to come */
    for (int i = l->npend - 1; i >= 0; i--) {
      struct pending *p = &l->pend[i];
      int done = 0, bad = 0;
      if (n > 0 && (pfd[i + 1].revents & (POLLIN | POLLHUP | POLLERR))) {
        ssize_t r = read(p->fd, p->buf + p->got, INTRO - p->got);
        if (r > 0) p->got += (size_t)r;
        else if (r == 0 || (errno != EAGAIN && errno != EINTR)) bad = 1;
        if (p->got == INTRO) {
          if (memcmp(p->buf, TAG_MAGIC, 4) == 0) done = 1;
          else bad = 1;
        }
      }
      if (!done && !bad && t - p->since > INTRO_MS) bad = 1;
      if (done) {
        park(l, p);
        l->pend[i] = l->pend[--l->npend];
      } else if (bad) {
        unpend(l, i);
      }
    }
    while (accepting) {
      int fd = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR && errno != ECONNABORTED)
          l->accept_pause_until = t + ACCEPT_PAUSE_MS; /* EMFILE, ENFILE, ENOBUFS... */
        break;
      }
      if (l->npend == MAX_PENDING) { /* the oldest makes room */
        int oldest = 0;
        for (int i = 1; i < l->npend; i++)
          if (l->pend[i].since < l->pend[oldest].since) oldest = i;
        unpend(l, oldest);
        pthread_mutex_lock(&l->lock);
        l->evicted++;
        pthread_mutex_unlock(&l->lock);
      }
      l->pend[l->npend++] = (struct pending){.fd = fd, .since = t};
    }
    pthread_mutex_lock(&l->lock); /* unclaimed sockets expire */
    for (struct parked **pp = &l->parked; *pp;) {
      if (t - (*pp)->since > PARK_MS) {
        struct parked *k = *pp;
        *pp = k->next;
        close(k->fd);
        free(k);
        l->nparked--;
        l->evicted++;
      } else {
        pp = &(*pp)->next;
      }
    }
    pthread_mutex_unlock(&l->lock);
  }
  return NULL;
}

void inec_listener_stats(inec_listener *l, int *pending, int *parked,
                         unsigned long long *evicted) {
  pthread_mutex_lock(&l->lock);
  if (pending) *pending = __atomic_load_n(&l->npend, __ATOMIC_RELAXED);
  if (parked) *parked = l->nparked;
  if (evicted) *evicted = l->evicted;
  pthread_mutex_unlock(&l->lock);
}

static int resolve(const char *host, int port, struct sockaddr_storage *ss, socklen_t *len,
                   int passive, char *err, size_t errlen) {
  struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                           .ai_flags = passive ? AI_PASSIVE : 0};
  struct addrinfo *res = NULL;
  char ps[16];
  snprintf(ps, sizeof ps, "%d", port);
  int rc = getaddrinfo(host, ps, &hints, &res);
  if (rc || !res) {
    snprintf(err, errlen, "cannot resolve %s: %s", host ? host : "*", gai_strerror(rc));
    return -EINVAL;
  }
  memcpy(ss, res->ai_addr, res->ai_addrlen);
  *len = res->ai_addrlen;
  freeaddrinfo(res);
  return 0;
}

inec_listener *inec_listen(const char *host, int port, char *err, size_t errlen) {
  struct sockaddr_storage ss;
  socklen_t len;
  if (resolve(host, port, &ss, &len, 1, err, errlen)) return NULL;
  inec_listener *l = calloc(1, sizeof *l);
  if (!l) {
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  l->fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  int one = 1;
  if (l->fd >= 0) setsockopt(l->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (l->fd < 0 || bind(l->fd, (struct sockaddr *)&ss, len) || listen(l->fd, 128) ||
      getsockname(l->fd, (struct sockaddr *)&ss, &len)) {
    snprintf(err, errlen, "cannot listen on %s:%d: %s", host ? host : "*", port, strerror(errno));
    if (l->fd >= 0) close(l->fd);
    free(l);
    return NULL;
  }
  l->port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                           : ((struct sockaddr_in *)&ss)->sin_port);
  pthread_mutex_init(&l->lock, NULL);
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&l->cv, &ca);
  pthread_condattr_destroy(&ca);
  if (pthread_create(&l->thread, NULL, listener_main, l)) {
    snprintf(err, errlen, "cannot start the listener thread");
    close(l->fd);
    free(l);
    return NULL;
  }
  return l;
}

int inec_listener_port(const inec_listener *l) { return l->port; }

int inec_listener_take(inec_listener *l, const unsigned char *tag, int timeout_ms) {
  struct timespec until;
  clock_gettime(CLOCK_MONOTONIC, &until);
  until.tv_sec += timeout_ms / 1000;
  until.tv_nsec += (timeout_ms % 1000) * 1000000L;
  if (until.tv_nsec >= 1000000000L) {
    until.tv_sec++;
    until.tv_nsec -= 1000000000L;
  }
  pthread_mutex_lock(&l->lock);
  int fd = -ETIMEDOUT;
  while (1) {
    for (struct parked **pp = &l->parked; *pp; pp = &(*pp)->next)
      if (memcmp((*pp)->tag, tag, INEC_TAG_BYTES) == 0) {
        struct parked *k = *pp;
        *pp = k->next;
        fd = k->fd;
        free(k);
        l->nparked--;
        break;
      }
    if (fd >= 0 || pthread_cond_timedwait(&l->cv, &l->lock, &until) == ETIMEDOUT) break;
  }
  pthread_mutex_unlock(&l->lock);
  return fd;
}

void inec_listener_close(inec_listener *l) {
  if (!l) return;
  __atomic_store_n(&l->stop, 1, __ATOMIC_RELEASE);
  pthread_join(l->thread, NULL);
  close(l->fd);
  for (int i = 0; i < l->npend; i++) close(l->pend[i].fd);
  while (l->parked) {
    struct parked *k = l->parked;
    l->parked = k->next;
    close(k->fd);
    free(k);
  }
  pthread_mutex_destroy(&l->lock);
  pthread_cond_destroy(&l->cv);
  free(l);
}

int inec_dial(const char *host, int port, const unsigned char *tag, int timeout_ms, char *err,
              size_t errlen) {
  struct sockaddr_storage ss;
  socklen_t len;
  if (resolve(host, port, &ss, &len, 0, err, errlen)) return -EINVAL;
  int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) {
    snprintf(err, errlen, "socket: %s", strerror(errno));
    return -errno;
  }
  int rc = connect(fd, (struct sockaddr *)&ss, len) ? -errno : 0;
  if (rc == -EINPROGRESS) {
    struct pollfd p = {.fd = fd, .events = POLLOUT};
    int soerr = 0;
    socklen_t sl = sizeof soerr;
    int pr = poll(&p, 1, timeout_ms);
    rc = pr == 0 ? -ETIMEDOUT : pr < 0 ? -errno : 0;
    if (!rc && getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) == 0 && soerr) rc = -soerr;
  }
  unsigned char intro[INTRO];
  memcpy(intro, TAG_MAGIC, 4);
  memcpy(intro + 4, tag, INEC_TAG_BYTES);
  /* 20 bytes into a fresh socket's empty send buffer: one send does it */
  if (!rc && send(fd, intro, INTRO, MSG_NOSIGNAL) != INTRO) rc = -(errno ? errno : EIO);
  if (rc) {
    snprintf(err, errlen, "cannot connect to %s:%d: %s", host, port, strerror(-rc));
    close(fd);
    return rc;
  }
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}
