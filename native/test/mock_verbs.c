/*
 * mock_verbs.c - a test-only verbs provider: libinec_mockverbs.so exports the ibv_* functions
 * the INEC engine looks up in libibverbs, and fills the context ops (post_send, post_recv,
 * poll_cq, req_notify_cq) its inline calls go through. Queue pairs of every engine in the
 * process share this library's memory: an RC SEND is copied into the peer QP's next posted
 * receive, with completions on both CQs and events on armed completion channels, in order.
 *
 * It models what the engine relies on, and checks what it must get right: SGEs inside a
 * registered region with the right lkey, posting only in RTS (sends) and INIT..RTS
 * (receives), a message no longer than the receive slot, and a SEND with no receive posted
 * waiting for one (RNR retry forever), as a real RC QP with rnr_retry 7 does. Sending to a
 * destroyed QP completes with IBV_WC_RETRY_EXC_ERR. No device, no kernel: the same engine
 * code runs in tests that runs over a NIC.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <infiniband/verbs.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))
#define CQ_MAX 256

struct mock_cq {
  struct ibv_cq cq;
  struct ibv_wc wc[CQ_MAX];
  int head, count, armed;
};

struct msg {
  unsigned char *data;
  uint32_t len;
  uint64_t wr_id;
  int signaled;
  struct msg *next;
};

struct rwr {
  uint64_t wr_id;
  struct ibv_sge sge;
  struct rwr *next;
};

struct mock_qp {
  struct ibv_qp qp;
  uint32_t dest;
  int sig_all;
  struct msg *sendq, *sendq_tail;
  struct rwr *recvq, *recvq_tail;
  struct mock_qp *next;
};

struct mock_mr {
  struct ibv_mr mr;
  struct mock_mr *next;
};

struct chan_event {
  struct mock_cq *cq;
  struct chan_event *next;
};

struct mock_channel {
  struct ibv_comp_channel ch;
  struct chan_event *events, *tail;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct mock_qp *qps;
static struct mock_mr *mrs;
static uint32_t next_qpn = 0x100, next_key = 1;
static struct ibv_device device = {.name = "mockverbs0", .node_type = IBV_NODE_CA,
                                   .transport_type = IBV_TRANSPORT_IB};
static struct ibv_device *device_list[2] = {&device, NULL};

/* Bytes delivered by every SEND so far: tests prove traffic took the verbs path. */
EXPORT uint64_t mockverbs_bytes_delivered;

static struct mock_qp *find_qp(uint32_t qpn) {
  for (struct mock_qp *q = qps; q; q = q->next)
    if (q->qp.qp_num == qpn) return q;
  return NULL;
}

static int sge_ok(const struct ibv_sge *s) {
  for (struct mock_mr *m = mrs; m; m = m->next)
    if (m->mr.lkey == s->lkey && s->addr >= (uintptr_t)m->mr.addr &&
        s->addr + s->length <= (uintptr_t)m->mr.addr + m->mr.length)
      return 1;
  return 0;
}

static void cq_push(struct ibv_cq *ibcq, const struct ibv_wc *wc) {
  struct mock_cq *cq = (struct mock_cq *)ibcq;
  if (cq->count == CQ_MAX) abort(); /* a CQ overrun is a bug in the engine's sizing */
  cq->wc[(cq->head + cq->count++) % CQ_MAX] = *wc;
  if (cq->armed && cq->cq.channel) {
    cq->armed = 0;
    struct mock_channel *ch = (struct mock_channel *)cq->cq.channel;
    struct chan_event *ev = calloc(1, sizeof *ev);
    ev->cq = cq;
    if (ch->tail) ch->tail->next = ev; else ch->events = ev;
    ch->tail = ev;
    uint64_t one = 1;
    if (write(ch->ch.fd, &one, sizeof one) < 0) abort();
  }
}

static void complete_send(struct mock_qp *q, struct msg *m, enum ibv_wc_status st) {
  if (m->signaled || st != IBV_WC_SUCCESS) {
    struct ibv_wc wc = {.wr_id = m->wr_id, .status = st, .opcode = IBV_WC_SEND,
                        .qp_num = q->qp.qp_num};
    cq_push(q->qp.send_cq, &wc);
  }
  free(m->data);
  free(m);
}

/* Moves q's queued SENDs into its peer's posted receives. Caller holds the lock. */
static void deliver(struct mock_qp *q) {
  if (q->qp.state != IBV_QPS_RTS) return;
  struct mock_qp *p = find_qp(q->dest);
  while (q->sendq) {
    struct msg *m = q->sendq;
    if (!p || p->qp.state < IBV_QPS_RTR || p->dest != q->qp.qp_num) {
      q->sendq = m->next;
      complete_send(q, m, IBV_WC_RETRY_EXC_ERR); /* nobody answers: the QP fails */
      q->qp.state = IBV_QPS_ERR;
      continue;
    }
    struct rwr *r = p->recvq;
    if (!r) break; /* RNR: retried when the peer posts a receive */
    q->sendq = m->next;
    if (!q->sendq) q->sendq_tail = NULL;
    p->recvq = r->next;
    if (!p->recvq) p->recvq_tail = NULL;
    struct ibv_wc wc = {.wr_id = r->wr_id, .opcode = IBV_WC_RECV, .qp_num = p->qp.qp_num,
                        .src_qp = q->qp.qp_num};
    if (m->len > r->sge.length) {
      wc.status = IBV_WC_LOC_LEN_ERR;
      cq_push(p->qp.recv_cq, &wc);
      complete_send(q, m, IBV_WC_REM_INV_REQ_ERR);
    } else {
      memcpy((void *)(uintptr_t)r->sge.addr, m->data, m->len);
      wc.status = IBV_WC_SUCCESS;
      wc.byte_len = m->len;
      mockverbs_bytes_delivered += m->len;
      cq_push(p->qp.recv_cq, &wc);
      complete_send(q, m, IBV_WC_SUCCESS);
    }
    free(r);
  }
}

static int mock_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr, struct ibv_send_wr **bad) {
  struct mock_qp *q = (struct mock_qp *)ibqp;
  pthread_mutex_lock(&lock);
  int rc = 0;
  for (; wr; wr = wr->next) {
    if (q->qp.state != IBV_QPS_RTS || wr->opcode != IBV_WR_SEND || wr->num_sge < 0) {
      rc = EINVAL;
      break;
    }
    struct msg *m = calloc(1, sizeof *m);
    for (int i = 0; i < wr->num_sge; i++) m->len += wr->sg_list[i].length;
    m->data = malloc(m->len ? m->len : 1);
    uint32_t off = 0;
    for (int i = 0; i < wr->num_sge; i++) {
      if (!sge_ok(&wr->sg_list[i])) rc = EINVAL;
      else memcpy(m->data + off, (void *)(uintptr_t)wr->sg_list[i].addr, wr->sg_list[i].length);
      off += wr->sg_list[i].length;
    }
    if (rc) {
      free(m->data);
      free(m);
      break;
    }
    m->wr_id = wr->wr_id;
    m->signaled = q->sig_all || (wr->send_flags & IBV_SEND_SIGNALED);
    if (q->sendq_tail) q->sendq_tail->next = m; else q->sendq = m;
    q->sendq_tail = m;
  }
  if (rc) *bad = wr;
  deliver(q);
  pthread_mutex_unlock(&lock);
  return rc;
}

static int mock_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad) {
  struct mock_qp *q = (struct mock_qp *)ibqp;
  pthread_mutex_lock(&lock);
  int rc = 0;
  for (; wr; wr = wr->next) {
    if (q->qp.state < IBV_QPS_INIT || q->qp.state > IBV_QPS_RTS || wr->num_sge != 1 ||
        !sge_ok(wr->sg_list)) {
      rc = EINVAL;
      break;
    }
    struct rwr *r = calloc(1, sizeof *r);
    r->wr_id = wr->wr_id;
    r->sge = wr->sg_list[0];
    if (q->recvq_tail) q->recvq_tail->next = r; else q->recvq = r;
    q->recvq_tail = r;
  }
  if (rc) *bad = wr;
  for (struct mock_qp *s = qps; s; s = s->next)
    if (s->dest == q->qp.qp_num) deliver(s);
  pthread_mutex_unlock(&lock);
  return rc;
}

static int mock_poll_cq(struct ibv_cq *ibcq, int n, struct ibv_wc *wc) {
  struct mock_cq *cq = (struct mock_cq *)ibcq;
  pthread_mutex_lock(&lock);
  int got = 0;
  while (got < n && cq->count) {
    wc[got++] = cq->wc[cq->head];
    cq->head = (cq->head + 1) % CQ_MAX;
    cq->count--;
  }
  pthread_mutex_unlock(&lock);
  return got;
}

static int mock_req_notify_cq(struct ibv_cq *ibcq, int solicited_only) {
  (void)solicited_only;
  pthread_mutex_lock(&lock);
  ((struct mock_cq *)ibcq)->armed = 1;
  pthread_mutex_unlock(&lock);
  return 0;
}

EXPORT struct ibv_device **ibv_get_device_list(int *num) {
  if (num) *num = 1;
  return device_list;
}

EXPORT void ibv_free_device_list(struct ibv_device **list) { (void)list; }

EXPORT const char *ibv_get_device_name(struct ibv_device *d) { return d->name; }

EXPORT struct ibv_context *ibv_open_device(struct ibv_device *d) {
  struct ibv_context *ctx = calloc(1, sizeof *ctx);
  ctx->device = d;
  ctx->ops.post_send = mock_post_send;
  ctx->ops.post_recv = mock_post_recv;
  ctx->ops.poll_cq = mock_poll_cq;
  ctx->ops.req_notify_cq = mock_req_notify_cq;
  return ctx;
}

EXPORT int ibv_close_device(struct ibv_context *ctx) {
  free(ctx);
  return 0;
}

/* The exported symbol (a macro in verbs.h, hence the parentheses) takes the old prefix of
 * ibv_port_attr; fill only fields inside it. */
EXPORT int (ibv_query_port)(struct ibv_context *ctx, uint8_t port,
                            struct _compat_ibv_port_attr *out) {
  (void)ctx;
  if (port != 1) return EINVAL;
  struct ibv_port_attr *a = (struct ibv_port_attr *)out;
  a->state = IBV_PORT_ACTIVE;
  a->max_mtu = a->active_mtu = IBV_MTU_4096;
  a->lid = 1;
  a->link_layer = IBV_LINK_LAYER_INFINIBAND;
  return 0;
}

EXPORT int ibv_query_gid(struct ibv_context *ctx, uint8_t port, int index, union ibv_gid *gid) {
  (void)ctx, (void)port, (void)index;
  memset(gid, 0, sizeof *gid);
  return 0;
}

EXPORT struct ibv_pd *ibv_alloc_pd(struct ibv_context *ctx) {
  struct ibv_pd *pd = calloc(1, sizeof *pd);
  pd->context = ctx;
  return pd;
}

EXPORT int ibv_dealloc_pd(struct ibv_pd *pd) {
  free(pd);
  return 0;
}

/* verbs.h makes ibv_reg_mr a macro; the parentheses define the exported function. */
EXPORT struct ibv_mr *(ibv_reg_mr)(struct ibv_pd *pd, void *addr, size_t length, int access) {
  (void)access;
  struct mock_mr *m = calloc(1, sizeof *m);
  m->mr.context = pd->context;
  m->mr.pd = pd;
  m->mr.addr = addr;
  m->mr.length = length;
  pthread_mutex_lock(&lock);
  m->mr.lkey = m->mr.rkey = next_key++;
  m->next = mrs;
  mrs = m;
  pthread_mutex_unlock(&lock);
  return &m->mr;
}

EXPORT int ibv_dereg_mr(struct ibv_mr *mr) {
  pthread_mutex_lock(&lock);
  for (struct mock_mr **pp = &mrs; *pp; pp = &(*pp)->next)
    if (&(*pp)->mr == mr) {
      struct mock_mr *m = *pp;
      *pp = m->next;
      free(m);
      break;
    }
  pthread_mutex_unlock(&lock);
  return 0;
}

EXPORT struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *ctx) {
  struct mock_channel *ch = calloc(1, sizeof *ch);
  ch->ch.context = ctx;
  ch->ch.fd = eventfd(0, EFD_SEMAPHORE | EFD_CLOEXEC);
  return &ch->ch;
}

EXPORT int ibv_destroy_comp_channel(struct ibv_comp_channel *c) {
  struct mock_channel *ch = (struct mock_channel *)c;
  while (ch->events) {
    struct chan_event *ev = ch->events;
    ch->events = ev->next;
    free(ev);
  }
  close(ch->ch.fd);
  free(ch);
  return 0;
}

EXPORT struct ibv_cq *ibv_create_cq(struct ibv_context *ctx, int cqe, void *cq_context,
                                    struct ibv_comp_channel *channel, int vector) {
  (void)vector;
  if (cqe > CQ_MAX) {
    errno = EINVAL;
    return NULL;
  }
  struct mock_cq *cq = calloc(1, sizeof *cq);
  cq->cq.context = ctx;
  cq->cq.channel = channel;
  cq->cq.cq_context = cq_context;
  cq->cq.cqe = cqe;
  return &cq->cq;
}

EXPORT int ibv_destroy_cq(struct ibv_cq *ibcq) {
  pthread_mutex_lock(&lock);
  if (ibcq->channel) { /* drop its events not taken yet, as the kernel does */
    struct mock_channel *ch = (struct mock_channel *)ibcq->channel;
    struct chan_event **pp = &ch->events, *last = NULL;
    while (*pp) {
      if ((*pp)->cq == (struct mock_cq *)ibcq) {
        struct chan_event *ev = *pp;
        *pp = ev->next;
        free(ev);
        uint64_t v;
        if (read(ch->ch.fd, &v, sizeof v) < 0) { /* counted down with the event */
        }
      } else {
        last = *pp;
        pp = &(*pp)->next;
      }
    }
    ch->tail = last;
  }
  pthread_mutex_unlock(&lock);
  free(ibcq);
  return 0;
}

EXPORT int ibv_get_cq_event(struct ibv_comp_channel *c, struct ibv_cq **cq, void **cq_context) {
  struct mock_channel *ch = (struct mock_channel *)c;
  pthread_mutex_lock(&lock); /* the eventfd counts the queued events: read both under it */
  struct chan_event *ev = ch->events;
  uint64_t v;
  if (!ev || read(c->fd, &v, sizeof v) != sizeof v) {
    pthread_mutex_unlock(&lock);
    errno = EAGAIN;
    return -1;
  }
  ch->events = ev->next;
  if (!ch->events) ch->tail = NULL;
  pthread_mutex_unlock(&lock);
  *cq = &ev->cq->cq;
  *cq_context = ev->cq->cq.cq_context;
  free(ev);
  return 0;
}

EXPORT void ibv_ack_cq_events(struct ibv_cq *cq, unsigned int n) {
  (void)cq, (void)n;
}

EXPORT struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr) {
  if (attr->qp_type != IBV_QPT_RC || !attr->send_cq || !attr->recv_cq) {
    errno = EINVAL;
    return NULL;
  }
  struct mock_qp *q = calloc(1, sizeof *q);
  q->qp.context = pd->context;
  q->qp.pd = pd;
  q->qp.send_cq = attr->send_cq;
  q->qp.recv_cq = attr->recv_cq;
  q->qp.qp_type = IBV_QPT_RC;
  q->qp.state = IBV_QPS_RESET;
  q->sig_all = attr->sq_sig_all;
  pthread_mutex_lock(&lock);
  q->qp.qp_num = next_qpn++;
  q->next = qps;
  qps = q;
  pthread_mutex_unlock(&lock);
  return &q->qp;
}

EXPORT int ibv_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *a, int mask) {
  struct mock_qp *q = (struct mock_qp *)ibqp;
  if (!(mask & IBV_QP_STATE)) return EINVAL;
  pthread_mutex_lock(&lock);
  int rc = 0;
  enum ibv_qp_state from = q->qp.state, to = a->qp_state;
  if (to == IBV_QPS_INIT && from == IBV_QPS_RESET && (mask & IBV_QP_PORT)) {
  } else if (to == IBV_QPS_RTR && from == IBV_QPS_INIT && (mask & IBV_QP_DEST_QPN) &&
             (mask & IBV_QP_AV)) {
    q->dest = a->dest_qp_num;
  } else if (to == IBV_QPS_RTS && from == IBV_QPS_RTR) {
  } else if (to == IBV_QPS_ERR || to == IBV_QPS_RESET) {
  } else {
    rc = EINVAL;
  }
  if (!rc) q->qp.state = to;
  if (!rc && to == IBV_QPS_RTS) deliver(q);
  pthread_mutex_unlock(&lock);
  return rc;
}

EXPORT int ibv_destroy_qp(struct ibv_qp *ibqp) {
  struct mock_qp *q = (struct mock_qp *)ibqp;
  pthread_mutex_lock(&lock);
  for (struct mock_qp **pp = &qps; *pp; pp = &(*pp)->next)
    if (*pp == q) {
      *pp = q->next;
      break;
    }
  while (q->sendq) {
    struct msg *m = q->sendq;
    q->sendq = m->next;
    free(m->data);
    free(m);
  }
  while (q->recvq) {
    struct rwr *r = q->recvq;
    q->recvq = r->next;
    free(r);
  }
  pthread_mutex_unlock(&lock);
  free(q);
  return 0;
}
