/*
 * The engine thread (inec_internal.h): one per engine, running epoll. Each round it starts
 * the ops posted since the last, frees the connections closed, moves the connections epoll
 * names, polls verbs completions, runs the ready list (connections that can move without an
 * event) and frees the ops that finished. Posting threads wake it through an eventfd only
 * while it sleeps.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "inec_internal.h"

/* epoll tags that are not connections */
static char wake_tag, verbs_tag;

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

void loop_free_dead(inec_engine *e) {
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
    /* Posters write the wake eventfd only while the thread sleeps (see loop_wake_needed): a
     * busy engine picks new ops up on its next round without a system call on either side. */
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
    loop_free_dead(e);
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

int loop_start(inec_engine *e) {
  struct epoll_event ev = {.events = EPOLLIN | EPOLLET, .data.ptr = &wake_tag};
  struct epoll_event vev = {.events = EPOLLIN, .data.ptr = &verbs_tag};
  if (epoll_ctl(e->epfd, EPOLL_CTL_ADD, e->wakefd, &ev) < 0 ||
      (e->verbs &&
       epoll_ctl(e->epfd, EPOLL_CTL_ADD, inec_verbs_channel_fd(e->verbs), &vev) < 0))
    return errno ? -errno : -EINVAL;
  int rc = pthread_create(&e->thread, NULL, engine_main, e);
  return rc ? -rc : 0;
}

void loop_stop(inec_engine *e) {
  pthread_mutex_lock(&e->lock);
  e->stop = 1;
  pthread_mutex_unlock(&e->lock);
  loop_wake(e);
  pthread_join(e->thread, NULL);
}

int loop_wake_needed(inec_engine *e) {
  int sleeping = e->sleeping;
  e->sleeping = 0; /* once: the flag is taken */
  return sleeping;
}

void loop_wake(inec_engine *e) {
  uint64_t one = 1;
  if (write(e->wakefd, &one, sizeof one) < 0) { /* already awake */
  }
}
