/* The verbs transport of the INEC engine: see inec_verbs.h. */
#include "inec_verbs.h"

#include <errno.h>
#include <stdio.h>

#if !__has_include(<infiniband/verbs.h>)
/* Built without rdma-core's headers (libibverbs-dev): the engine is TCP only. */
struct inec_verbs *inec_verbs_open(const char *library, const char *device, char *why,
                                   size_t whylen) {
  (void)library, (void)device;
  snprintf(why, whylen, "built without infiniband/verbs.h");
  return NULL;
}
void inec_verbs_close(struct inec_verbs *v) { (void)v; }
const char *inec_verbs_describe(const struct inec_verbs *v) { return (void)v, ""; }
int inec_verbs_channel_fd(const struct inec_verbs *v) { return (void)v, -1; }
void inec_verbs_drain_events(struct inec_verbs *v) { (void)v; }
struct inec_verbs_conn *inec_verbs_conn_create(struct inec_verbs *v, struct inec_verbs_addr *local,
                                               char *err, size_t errlen) {
  (void)v, (void)local;
  snprintf(err, errlen, "no verbs");
  return NULL;
}
int inec_verbs_conn_connect(struct inec_verbs_conn *c, const struct inec_verbs_addr *peer,
                            char *err, size_t errlen) {
  (void)c, (void)peer, (void)err, (void)errlen;
  return -ENOTSUP;
}
void inec_verbs_conn_destroy(struct inec_verbs_conn *c) { (void)c; }
ssize_t inec_verbs_read(struct inec_verbs_conn *c, void *buf, size_t n) {
  return (void)c, (void)buf, (void)n, -ENOTSUP;
}
ssize_t inec_verbs_write(struct inec_verbs_conn *c, const void *buf, size_t n) {
  return (void)c, (void)buf, (void)n, -ENOTSUP;
}
int inec_verbs_poll(struct inec_verbs_conn *c) { return (void)c, 0; }
int inec_verbs_readable(const struct inec_verbs_conn *c) { return (void)c, 1; }
int inec_verbs_writable(const struct inec_verbs_conn *c) { return (void)c, 1; }
int inec_verbs_send_idle(const struct inec_verbs_conn *c) { return (void)c, 1; }
int inec_verbs_failed(const struct inec_verbs_conn *c) { return (void)c, -ENOTSUP; }
#else

#include <dlfcn.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SLOTS 8               /* receive and send slots per connection */
#define SLOT_BYTES (64 * 1024) /* one SEND message at most */
#define PORT 1

/* The libibverbs functions we call, looked up once per engine. ibv_post_send, ibv_post_recv,
 * ibv_poll_cq and ibv_req_notify_cq are inline calls through the context's ops: no lookup. */
struct verbs_api {
  struct ibv_device **(*get_device_list)(int *);
  void (*free_device_list)(struct ibv_device **);
  const char *(*get_device_name)(struct ibv_device *);
  struct ibv_context *(*open_device)(struct ibv_device *);
  int (*close_device)(struct ibv_context *);
  int (*query_port)(struct ibv_context *, uint8_t, struct _compat_ibv_port_attr *);
  int (*query_gid)(struct ibv_context *, uint8_t, int, union ibv_gid *);
  struct ibv_pd *(*alloc_pd)(struct ibv_context *);
  int (*dealloc_pd)(struct ibv_pd *);
  struct ibv_mr *(*reg_mr)(struct ibv_pd *, void *, size_t, int);
  int (*dereg_mr)(struct ibv_mr *);
  struct ibv_comp_channel *(*create_comp_channel)(struct ibv_context *);
  int (*destroy_comp_channel)(struct ibv_comp_channel *);
  struct ibv_cq *(*create_cq)(struct ibv_context *, int, void *, struct ibv_comp_channel *, int);
  int (*destroy_cq)(struct ibv_cq *);
  int (*get_cq_event)(struct ibv_comp_channel *, struct ibv_cq **, void **);
  void (*ack_cq_events)(struct ibv_cq *, unsigned int);
  struct ibv_qp *(*create_qp)(struct ibv_pd *, struct ibv_qp_init_attr *);
  int (*modify_qp)(struct ibv_qp *, struct ibv_qp_attr *, int);
  int (*destroy_qp)(struct ibv_qp *);
};

struct inec_verbs {
  void *lib;
  struct verbs_api api;
  struct ibv_context *ctx;
  struct ibv_pd *pd;
  struct ibv_comp_channel *channel;
  struct ibv_port_attr port;
  union ibv_gid gid;
  char describe[128];
};

struct inec_verbs_conn {
  struct inec_verbs *v;
  struct ibv_cq *cq;
  struct ibv_qp *qp;
  struct ibv_mr *mr;
  unsigned char *mem; /* SLOTS receive slots, then SLOTS send slots */
  int rx_ring[SLOTS]; /* received slots in stream order */
  uint32_t rx_len[SLOTS];
  int rx_head, rx_count;
  size_t rx_off; /* bytes of the head slot already read */
  int tx_free[SLOTS];
  int tx_nfree;
  int failed;   /* -errno once a completion failed */
  uint32_t psn; /* our first send PSN, told to the peer */
};

static int load(struct inec_verbs *v, const char *library, char *why, size_t whylen) {
  const char *name = library ? library : "libibverbs.so.1";
  v->lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (!v->lib) {
    snprintf(why, whylen, "cannot load %s: %s", name, dlerror());
    return -1;
  }
#define SYM(field, sym)                                                    \
  do {                                                                     \
    *(void **)&v->api.field = dlsym(v->lib, sym);                          \
    if (!v->api.field) {                                                   \
      snprintf(why, whylen, "%s has no %s", name, sym);                   \
      return -1;                                                           \
    }                                                                      \
  } while (0)
  SYM(get_device_list, "ibv_get_device_list");
  SYM(free_device_list, "ibv_free_device_list");
  SYM(get_device_name, "ibv_get_device_name");
  SYM(open_device, "ibv_open_device");
  SYM(close_device, "ibv_close_device");
  SYM(query_port, "ibv_query_port");
  SYM(query_gid, "ibv_query_gid");
  SYM(alloc_pd, "ibv_alloc_pd");
  SYM(dealloc_pd, "ibv_dealloc_pd");
  SYM(reg_mr, "ibv_reg_mr");
  SYM(dereg_mr, "ibv_dereg_mr");
  SYM(create_comp_channel, "ibv_create_comp_channel");
  SYM(destroy_comp_channel, "ibv_destroy_comp_channel");
  SYM(create_cq, "ibv_create_cq");
  SYM(destroy_cq, "ibv_destroy_cq");
  SYM(get_cq_event, "ibv_get_cq_event");
  SYM(ack_cq_events, "ibv_ack_cq_events");
  SYM(create_qp, "ibv_create_qp");
  SYM(modify_qp, "ibv_modify_qp");
  SYM(destroy_qp, "ibv_destroy_qp");
#undef SYM
  return 0;
}

struct inec_verbs *inec_verbs_open(const char *library, const char *device, char *why,
                                   size_t whylen) {
  struct inec_verbs *v = calloc(1, sizeof *v);
  if (!v) {
    snprintf(why, whylen, "out of memory");
    return NULL;
  }
  if (load(v, library, why, whylen)) goto fail;
  int n = 0;
  struct ibv_device **list = v->api.get_device_list(&n);
  if (!list || n == 0) {
    snprintf(why, whylen, "no RDMA device (%s)", list ? "none listed" : strerror(errno));
    if (list) v->api.free_device_list(list);
    goto fail;
  }
  struct ibv_device *dev = NULL;
  for (int i = 0; i < n && !dev; i++)
    if (!device || strcmp(v->api.get_device_name(list[i]), device) == 0) dev = list[i];
  if (!dev) {
    snprintf(why, whylen, "no RDMA device named %s", device);
    v->api.free_device_list(list);
    goto fail;
  }
  char devname[64];
  snprintf(devname, sizeof devname, "%s", v->api.get_device_name(dev));
  v->ctx = v->api.open_device(dev);
  v->api.free_device_list(list);
  if (!v->ctx) {
    snprintf(why, whylen, "cannot open %s: %s", devname, strerror(errno));
    goto fail;
  }
  /* the exported ibv_query_port takes the old (prefix) layout of ibv_port_attr */
  memset(&v->port, 0, sizeof v->port);
  if (v->api.query_port(v->ctx, PORT, (struct _compat_ibv_port_attr *)&v->port) ||
      v->port.state != IBV_PORT_ACTIVE) {
    snprintf(why, whylen, "%s port %d is not active", devname, PORT);
    goto fail;
  }
  if (v->api.query_gid(v->ctx, PORT, 0, &v->gid)) memset(&v->gid, 0, sizeof v->gid);
  v->pd = v->api.alloc_pd(v->ctx);
  v->channel = v->pd ? v->api.create_comp_channel(v->ctx) : NULL;
  if (!v->channel) {
    snprintf(why, whylen, "cannot set up %s: %s", devname, strerror(errno));
    goto fail;
  }
  int flags = fcntl(v->channel->fd, F_GETFL);
  if (flags < 0 || fcntl(v->channel->fd, F_SETFL, flags | O_NONBLOCK) < 0) {
    snprintf(why, whylen, "completion channel: %s", strerror(errno));
    goto fail;
  }
  snprintf(v->describe, sizeof v->describe, "verbs (%s port %d, %s)", devname, PORT,
           v->port.link_layer == IBV_LINK_LAYER_ETHERNET ? "RoCE" : "InfiniBand");
  return v;
fail:
  inec_verbs_close(v);
  return NULL;
}

void inec_verbs_close(struct inec_verbs *v) {
  if (!v) return;
  if (v->channel) v->api.destroy_comp_channel(v->channel);
  if (v->pd) v->api.dealloc_pd(v->pd);
  if (v->ctx) v->api.close_device(v->ctx);
  if (v->lib) dlclose(v->lib);
  free(v);
}

const char *inec_verbs_describe(const struct inec_verbs *v) { return v->describe; }

int inec_verbs_channel_fd(const struct inec_verbs *v) { return v->channel->fd; }

void inec_verbs_drain_events(struct inec_verbs *v) {
  struct ibv_cq *cq;
  void *cq_ctx;
  while (v->api.get_cq_event(v->channel, &cq, &cq_ctx) == 0) {
    v->api.ack_cq_events(cq, 1);
    ibv_req_notify_cq(cq, 0); /* the engine polls every conn after this */
  }
}

static int post_recv(struct inec_verbs_conn *c, int slot) {
  struct ibv_sge sge = {.addr = (uintptr_t)(c->mem + (size_t)slot * SLOT_BYTES),
                        .length = SLOT_BYTES,
                        .lkey = c->mr->lkey};
  struct ibv_recv_wr wr = {.wr_id = (uint64_t)slot, .sg_list = &sge, .num_sge = 1};
  struct ibv_recv_wr *bad;
  return ibv_post_recv(c->qp, &wr, &bad);
}

struct inec_verbs_conn *inec_verbs_conn_create(struct inec_verbs *v, struct inec_verbs_addr *local,
                                               char *err, size_t errlen) {
  struct inec_verbs_conn *c = calloc(1, sizeof *c);
  if (!c) {
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  c->v = v;
  c->mem = aligned_alloc(4096, 2 * SLOTS * (size_t)SLOT_BYTES);
  c->cq = c->mem ? v->api.create_cq(v->ctx, 2 * SLOTS + 1, c, v->channel, 0) : NULL;
  c->mr = c->cq ? v->api.reg_mr(v->pd, c->mem, 2 * SLOTS * (size_t)SLOT_BYTES,
                                IBV_ACCESS_LOCAL_WRITE)
                : NULL;
  struct ibv_qp_init_attr qa = {.send_cq = c->cq,
                                .recv_cq = c->cq,
                                .cap = {.max_send_wr = SLOTS,
                                        .max_recv_wr = SLOTS,
                                        .max_send_sge = 1,
                                        .max_recv_sge = 1},
                                .qp_type = IBV_QPT_RC,
                                .sq_sig_all = 1};
  c->qp = c->mr ? v->api.create_qp(v->pd, &qa) : NULL;
  if (!c->qp) {
    snprintf(err, errlen, "cannot create a queue pair: %s", strerror(errno ? errno : ENOMEM));
    inec_verbs_conn_destroy(c);
    return NULL;
  }
  struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = PORT,
                          .qp_access_flags = 0};
  int rc = v->api.modify_qp(c->qp, &a,
                            IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
  if (rc || ibv_req_notify_cq(c->cq, 0)) {
    snprintf(err, errlen, "queue pair to INIT: %s", strerror(rc ? rc : errno));
    inec_verbs_conn_destroy(c);
    return NULL;
  }
  for (int i = 0; i < SLOTS; i++) c->tx_free[i] = SLOTS + i;
  c->tx_nfree = SLOTS;
  memset(local, 0, sizeof *local);
  local->qpn = c->qp->qp_num;
  c->psn = (uint32_t)(((uintptr_t)c >> 4) ^ c->qp->qp_num) & 0xffffff;
  local->psn = c->psn;
  local->lid = v->port.lid;
  local->mtu = v->port.active_mtu;
  local->link_layer = v->port.link_layer;
  memcpy(local->gid, v->gid.raw, 16);
  return c;
}

int inec_verbs_conn_connect(struct inec_verbs_conn *c, const struct inec_verbs_addr *peer,
                            char *err, size_t errlen) {
  struct inec_verbs *v = c->v;
  struct ibv_qp_attr a = {.qp_state = IBV_QPS_RTR,
                          .path_mtu = peer->mtu < v->port.active_mtu ? peer->mtu
                                                                     : v->port.active_mtu,
                          .dest_qp_num = peer->qpn,
                          .rq_psn = peer->psn,
                          .max_dest_rd_atomic = 1,
                          .min_rnr_timer = 12};
  a.ah_attr.dlid = (uint16_t)peer->lid;
  a.ah_attr.port_num = PORT;
  if (v->port.link_layer == IBV_LINK_LAYER_ETHERNET) { /* RoCE: routed by GID */
    a.ah_attr.is_global = 1;
    memcpy(a.ah_attr.grh.dgid.raw, peer->gid, 16);
    a.ah_attr.grh.hop_limit = 1;
    a.ah_attr.grh.sgid_index = 0;
  }
  int rc = v->api.modify_qp(c->qp, &a,
                            IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                                IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
  if (rc) {
    snprintf(err, errlen, "queue pair to RTR: %s", strerror(rc));
    return -rc;
  }
  /* rnr_retry 7 retries forever: a receiver that has not re-posted a slot yet is
   * back-pressure, as a full TCP window is, never an error */
  struct ibv_qp_attr s = {.qp_state = IBV_QPS_RTS, .timeout = 14, .retry_cnt = 7,
                          .rnr_retry = 7, .sq_psn = c->psn, .max_rd_atomic = 1};
  rc = v->api.modify_qp(c->qp, &s,
                        IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                            IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
  if (rc) {
    snprintf(err, errlen, "queue pair to RTS: %s", strerror(rc));
    return -rc;
  }
  for (int i = 0; i < SLOTS; i++) {
    rc = post_recv(c, i);
    if (rc) {
      snprintf(err, errlen, "posting receives: %s", strerror(rc));
      return -rc;
    }
  }
  return 0;
}

void inec_verbs_conn_destroy(struct inec_verbs_conn *c) {
  if (!c) return;
  struct verbs_api *api = &c->v->api;
  if (c->qp) api->destroy_qp(c->qp);
  if (c->mr) api->dereg_mr(c->mr);
  if (c->cq) api->destroy_cq(c->cq);
  free(c->mem);
  free(c);
}

int inec_verbs_poll(struct inec_verbs_conn *c) {
  struct ibv_wc wc[16];
  int total = 0, n;
  while ((n = ibv_poll_cq(c->cq, 16, wc)) > 0) {
    total += n;
    for (int i = 0; i < n; i++) {
      int slot = (int)wc[i].wr_id;
      if (wc[i].status != IBV_WC_SUCCESS) {
        if (!c->failed) c->failed = -EIO;
      } else if (slot < SLOTS) { /* a receive: next piece of the stream */
        int at = (c->rx_head + c->rx_count) % SLOTS;
        c->rx_ring[at] = slot;
        c->rx_len[slot] = wc[i].byte_len;
        c->rx_count++;
      } else {
        c->tx_free[c->tx_nfree++] = slot;
      }
    }
  }
  if (n < 0 && !c->failed) c->failed = -EIO;
  return total;
}

int inec_verbs_readable(const struct inec_verbs_conn *c) { return c->rx_count > 0 || c->failed; }

int inec_verbs_writable(const struct inec_verbs_conn *c) { return c->tx_nfree > 0 || c->failed; }

int inec_verbs_send_idle(const struct inec_verbs_conn *c) {
  return c->tx_nfree == SLOTS || c->failed;
}

int inec_verbs_failed(const struct inec_verbs_conn *c) { return c->failed; }

ssize_t inec_verbs_read(struct inec_verbs_conn *c, void *buf, size_t n) {
  if (c->rx_count == 0) return c->failed ? c->failed : -EAGAIN;
  int slot = c->rx_ring[c->rx_head];
  size_t avail = c->rx_len[slot] - c->rx_off;
  size_t take = n < avail ? n : avail;
  memcpy(buf, c->mem + (size_t)slot * SLOT_BYTES + c->rx_off, take);
  c->rx_off += take;
  if (c->rx_off == c->rx_len[slot]) { /* slot consumed: give it back to the receive queue */
    c->rx_off = 0;
    c->rx_head = (c->rx_head + 1) % SLOTS;
    c->rx_count--;
    if (post_recv(c, slot) && !c->failed) c->failed = -EIO;
  }
  return (ssize_t)take;
}

ssize_t inec_verbs_write(struct inec_verbs_conn *c, const void *buf, size_t n) {
  if (c->failed) return c->failed;
  if (c->tx_nfree == 0) return -EAGAIN;
  int slot = c->tx_free[--c->tx_nfree];
  size_t take = n < SLOT_BYTES ? n : SLOT_BYTES;
  unsigned char *p = c->mem + (size_t)slot * SLOT_BYTES;
  memcpy(p, buf, take);
  struct ibv_sge sge = {.addr = (uintptr_t)p, .length = (uint32_t)take, .lkey = c->mr->lkey};
  struct ibv_send_wr wr = {.wr_id = (uint64_t)slot,
                           .sg_list = &sge,
                           .num_sge = 1,
                           .opcode = IBV_WR_SEND,
                           .send_flags = IBV_SEND_SIGNALED};
  struct ibv_send_wr *bad;
  int rc = ibv_post_send(c->qp, &wr, &bad);
  if (rc) {
    c->tx_free[c->tx_nfree++] = slot;
    c->failed = -rc;
    return c->failed;
  }
  return (ssize_t)take;
}
#endif
