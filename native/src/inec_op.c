/*
 * An op's state machine (inec_internal.h). A posted primitive works chunk by chunk: chunk c
 * begins (its rows start as the local units' share), every input connection is asked for
 * chunk c and what arrives is added in, then chunk c is sent on the output connection or
 * stored, and the op moves to chunk c+1. Connections (inec_conn.c) call back into it as bytes
 * arrive and as sends complete; it never touches a socket itself.
 */
#include <errno.h>
#include <stdlib.h>

#include "inec_internal.h"

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

/* The output rows of chunk c (n bytes each). */
static void op_rows(const struct op *op, size_t n, unsigned char **rowp) {
  for (int r = 0; r < op->rows; r++)
    rowp[r] = op->type == OP_RECV_EC ? op->out[r] + op->c * op->chunk : op->outbuf + (size_t)r * n;
}

/* Hands chunk c to the output connection as one gathered write: header, then the rows. */
static void op_send_chunk(struct op *op) {
  size_t n = op_chunk_len(op, op->c);
  put32(op->hdr, INEC_MAGIC);
  put32(op->hdr + 4, (uint32_t)op->c);
  put32(op->hdr + 8, (uint32_t)op->rows);
  put32(op->hdr + 12, (uint32_t)n);
  inec_conn *d = op->dst;
  d->siov[0] = (struct iovec){op->hdr, FRAME_HDR};
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

/* Chunk c begins: its output rows start as the local units' share (zero without any), then
 * every input is read and what arrives is added while it is still in cache (op_accumulate):
 * the calculation overlaps the wait for the slowest input instead of following it. */
static void op_chunk_begin(inec_engine *e, struct op *op) {
  size_t n = op_chunk_len(op, op->c);
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
    op_send_chunk(op);
    return;
  }
  for (int i = 0; i < op->nsrc; i++) {
    op->src[i]->reading = 1;
    conn_interest(op->src[i]);
  }
}

/* Bytes [off, off + len) of input i's rows of chunk c have arrived: add them to the output
 * rows (EC over raw units: each input's column of the matrix; otherwise XOR, row by row). */
void op_accumulate(inec_engine *e, struct op *op, int i, size_t off, size_t len) {
  size_t n = op_chunk_len(op, op->c);
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

/* One input delivered all of chunk c; once every input has: send it, or (stored) go on to
 * the next chunk. */
void op_received(inec_engine *e, struct op *op) {
  if (++op->have < op->nsrc) return;
  if (op->type != OP_RECV_EC) {
    op_send_chunk(op);
    return;
  }
  if (++op->c == op->nchunks) {
    op_finish(op, 0);
    return;
  }
  op_chunk_begin(e, op);
}

/* The output connection took chunk c: next chunk, or done. */
void op_sent(inec_engine *e, struct op *op) {
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

/* Claims the op's connections (one reader and one writer each at a time) and begins chunk 0. */
void op_start(inec_engine *e, struct op *op) {
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

/* Releases the op's connections and tells its poster (once). */
void op_finish(struct op *op, int status) {
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

/* Validates and builds an op (the poster's thread); NULL with *status a negative errno. */
struct op *op_new(inec_engine *e, enum op_type type, const inec_calc *calc,
                  inec_conn *const *src, int nsrc, const unsigned char *const *local, int nlocal,
                  unsigned char *const *out, const inec_shape *shape, inec_conn *dst,
                  inec_done_fn done, void *arg, int *status) {
  *status = -EINVAL;
  if (!calc || !shape || !done || calc->rows < 1 || calc->rows > MAX_ROWS || nsrc < 0 ||
      nsrc > MAX_COLS || nlocal < 0 || nlocal > MAX_COLS || shape->len == 0 ||
      shape->chunk == 0 || (nsrc && !src) || (nlocal && !local))
    return NULL;
  int ec = calc->kind == INEC_CALC_EC;
  int cols = type == OP_RECV_EC ? nsrc : nlocal;
  if (ec && (!calc->matrix || calc->cols != cols || cols < 1)) return NULL;
  /* XOR only where there is nothing local to multiply: the rebuilding node and forwarding */
  if (!ec && !(type == OP_RECV_EC || (type == OP_RECV_EC_SEND && nlocal == 0))) return NULL;
  if ((ec || nlocal) && !e->isal) {
    *status = -ENOTSUP;
    return NULL;
  }
  for (int i = 0; i < nsrc; i++)
    if (!src[i]) return NULL;
  *status = -ENOMEM;
  struct op *op = calloc(1, sizeof *op);
  if (!op) return NULL;
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
  if (nsrc) op->inbuf = bufcache_take(e, (size_t)nsrc * op->in_rows * op->chunk, &op->inbuf_cap);
  if (type != OP_RECV_EC && !op->passthrough)
    op->outbuf = bufcache_take(e, (size_t)op->rows * op->chunk, &op->outbuf_cap);
  if (ec) op->gftbls = malloc(32 * (size_t)op->rows * (size_t)cols);
  if (!op->src || (nsrc && !op->inbuf) || (type != OP_RECV_EC && !op->passthrough && !op->outbuf) ||
      (ec && !op->gftbls)) {
    op_free(e, op);
    return NULL;
  }
  if (nsrc) memcpy(op->src, src, (size_t)nsrc * sizeof *src);
  if (ec) e->isal->ec_init_tables(cols, op->rows, (unsigned char *)calc->matrix, op->gftbls);
  *status = 0;
  return op;
}

void op_free(inec_engine *e, struct op *op) {
  free(op->gftbls);
  free(op->src);
  bufcache_give(e, op->inbuf, op->inbuf_cap);
  bufcache_give(e, op->outbuf, op->outbuf_cap);
  free(op);
}
