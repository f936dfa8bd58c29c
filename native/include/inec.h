/*
 * inec.h - coherent in-network EC primitives (INEC, SC'20 §III), run by a progress engine.
 *
 * A primitive is posted once. The engine then, chunk by chunk and without any further call from
 * the poster, waits for the chunk from every input connection, calculates with ISA-L, and sends
 * the result (or stores it): the WAIT -> EC -> SEND chains the paper offloads to a SmartNIC.
 * Upstream rdma-core has no cross-channel WAIT nor EC offload verbs, so the chain runs in the
 * engine's thread, driven by completions: TCP readiness, or RDMA receive/send completions of
 * RC queue pairs (libibverbs is dlopen'ed; without a device the engine is TCP only). A NIC
 * with cross-channel WAIT and EC offload would take over the WAIT -> EC -> SEND chain below
 * this API, which would not change.
 * This file is self-contained: a C program can use it without Java.
 *
 * Primitives (the vertices of a repair graph):
 *   inec_ec_send      no inputs:  out = M x local             -> send    (PPR/ECPipe leaves)
 *   inec_recv_ec_send inputs:     out = XOR(inputs) + M x local -> send  (inner vertices)
 *   inec_recv_ec      no output:  out = M x inputs (EC) or XOR(inputs)   (the rebuilding node)
 * A plain send of a unit is inec_ec_send with a 1x1 identity matrix.
 *
 * Wire format on a connection: per chunk, a 16-byte header (magic "INEC", chunk index, rows,
 * bytes per row; big-endian u32 each) then rows x bytes. Each connection carries one stream,
 * primitives one after another. Over verbs the same bytes travel as RC SEND messages.
 *
 * Connections: give the engine a connected stream socket. inec_conn_open first exchanges a
 * hello on it (both ends call it): when both engines have an RDMA device and want it, the
 * hello carries their queue pairs' addresses and the stream moves to verbs, the socket
 * staying open only to tell when the peer leaves; otherwise the socket carries the stream.
 * inec_rendezvous.h pairs sockets with the streams of a graph.
 */
#ifndef NETEC_INEC_H
#define NETEC_INEC_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct inec_engine inec_engine;
typedef struct inec_conn inec_conn;

typedef enum { INEC_CALC_EC = 0, INEC_CALC_XOR = 1 } inec_calc_kind;

/* AUTO: verbs when both ends have a device, else TCP. */
typedef enum {
  INEC_TRANSPORT_AUTO = 0,
  INEC_TRANSPORT_TCP = 1,
  INEC_TRANSPORT_VERBS = 2
} inec_transport;

/* Engine options; a NULL pointer means every default. */
typedef struct {
  const char *verbs_library; /* NULL: libibverbs.so.1 (a test provider in tests) */
  const char *verbs_device;  /* NULL: the first device */
  int disable_verbs;         /* 1: TCP only */
} inec_options;

/* The calculator of a primitive (the paper's `calc`). */
typedef struct {
  inec_calc_kind kind;
  int rows;                    /* output rows (erased units being rebuilt), 1..16 */
  int cols;                    /* matrix columns: local units (send) or inputs (recv_ec) */
  const unsigned char *matrix; /* rows x cols GF(2^8) coefficients, row-major; EC only */
} inec_calc;

/* Sizes of one primitive (the paper's `mem`): every unit/stream is `len` bytes, moved in
 * `chunk`-byte pieces (64 KiB or less pipelines best). */
typedef struct {
  size_t len;
  size_t chunk;
} inec_shape;

/* Called once from the engine thread when a primitive ends: status 0, or a negative errno.
 * Posting copies the calculator, the pointer arrays and the connection lists; the unit and
 * output buffers themselves must stay valid until `done` is called. */
typedef void (*inec_done_fn)(void *arg, int status);

/* Starts an engine and its progress thread; NULL with the reason in err on failure. A missing
 * verbs library or device is no failure: the engine runs TCP only (see inec_engine_describe). */
inec_engine *inec_engine_create(const inec_options *opt, char *err, size_t errlen);

/* "tcp, verbs (mlx5_0 port 1, RoCE); ISA-L loaded", or why verbs are off. */
const char *inec_engine_describe(const inec_engine *e);
int inec_engine_has_verbs(const inec_engine *e);

/* Stops the thread, fails every primitive still running (-ECANCELED), closes connections. */
void inec_engine_destroy(inec_engine *e);

/* Hands a connected stream socket to the engine as a TCP connection, with no hello (it
 * becomes non-blocking, owned by e). */
inec_conn *inec_conn_from_fd(inec_engine *e, int fd);

/* Exchanges the hello on a connected socket (the peer calls it too), then hands the stream to
 * the engine over the transport both can use; blocks at most timeout_ms per step. NULL with
 * the reason in err (the caller still owns fd then). */
inec_conn *inec_conn_open(inec_engine *e, int fd, inec_transport want, int timeout_ms, char *err,
                          size_t errlen);

inec_transport inec_conn_transport(const inec_conn *c);

/* Stream bytes (headers included) received on c so far; any thread may ask. */
unsigned long long inec_conn_bytes_in(const inec_conn *c);

/* Closes c: a primitive still using it ends with -ECANCELED. Post nothing on c afterwards. */
void inec_conn_close(inec_engine *e, inec_conn *c);

/* out rows = matrix (rows x nlocal) x local units; sent on dst. */
int inec_ec_send(inec_engine *e, const inec_calc *calc, const unsigned char *const *local,
                 int nlocal, const inec_shape *shape, inec_conn *dst, inec_done_fn done,
                 void *arg);

/* Per chunk: waits for every src (each carrying calc->rows rows), XORs them, adds
 * matrix (rows x nlocal) x local units (nlocal may be 0), sends on dst. */
int inec_recv_ec_send(inec_engine *e, const inec_calc *calc, inec_conn *const *src, int nsrc,
                      const unsigned char *const *local, int nlocal, const inec_shape *shape,
                      inec_conn *dst, inec_done_fn done, void *arg);

/* Per chunk: waits for every src; EC: out = matrix (rows x nsrc) x inputs (each input one
 * row); XOR: out[r] = XOR of every input's row r. Writes out[0..rows-1], each len bytes. */
int inec_recv_ec(inec_engine *e, const inec_calc *calc, inec_conn *const *src, int nsrc,
                 unsigned char *const *out, const inec_shape *shape, inec_done_fn done,
                 void *arg);

#ifdef __cplusplus
}
#endif
#endif
