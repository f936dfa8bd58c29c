/*
 * libFuzzer target: the INEC engine's stream frames, as a peer sends them.
 *
 * Input: 4 bytes of shape (rows 1..4, length 1..2048, chunk 1..256), then the bytes a sender
 * writes on one stream. A real engine posts recv-ec (XOR, one input) on a socketpair fed with
 * those bytes, then the stream ends. A reference reader here walks the same bytes by the wire
 * rules (16-byte header: "INEC", chunk number, rows, chunk length; then rows x length bytes).
 * What must hold for any input: the engine finishes (no hang), ASan/UBSan see nothing, and it
 * succeeds exactly when the reference reader finds every chunk, with every output byte equal
 * to what the frames carried. Anything else aborts (a finding).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fuzz_engine.h"

struct done {
  pthread_mutex_t lock;
  pthread_cond_t cv;
  int finished, status;
};

static void on_done(void *arg, int status) {
  struct done *d = arg;
  pthread_mutex_lock(&d->lock);
  d->finished = 1;
  d->status = status;
  pthread_cond_signal(&d->cv);
  pthread_mutex_unlock(&d->lock);
}

static uint32_t get32(const uint8_t *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return ntohl(v);
}

/* The wire rules: 1 if the stream carries every chunk, filling want[r]. */
static int reference(const uint8_t *s, size_t n, int rows, size_t len, size_t chunk,
                     uint8_t **want) {
  size_t at = 0;
  for (size_t c = 0; c * chunk < len; c++) {
    size_t cl = len - c * chunk < chunk ? len - c * chunk : chunk;
    if (n - at < 16) return 0;
    if (memcmp(s + at, "INEC", 4) || get32(s + at + 4) != c || get32(s + at + 8) != (uint32_t)rows ||
        get32(s + at + 12) != cl)
      return 0;
    at += 16;
    if (n - at < (size_t)rows * cl) return 0;
    for (int r = 0; r < rows; r++) memcpy(want[r] + c * chunk, s + at + (size_t)r * cl, cl);
    at += (size_t)rows * cl;
  }
  return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 4) return 0;
  int rows = 1 + data[0] % 4;
  size_t len = 1 + ((size_t)data[1] << 8 | data[2]) % 2048;
  size_t chunk = 1 + data[3];
  const uint8_t *stream = data + 4;
  size_t n = size - 4;
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) abort();
  /* the whole stream fits the socket's buffer: write it, then end it */
  size_t off = 0;
  while (off < n) {
    ssize_t w = write(sv[1], stream + off, n - off);
    if (w <= 0) abort();
    off += (size_t)w;
  }
  close(sv[1]);
  inec_conn *c = inec_conn_from_fd(engine, sv[0]);
  if (!c) abort();
  uint8_t *out[4], *want[4];
  for (int r = 0; r < rows; r++) {
    out[r] = calloc(1, len);
    want[r] = calloc(1, len);
  }
  struct done d = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0};
  inec_calc calc = {.kind = INEC_CALC_XOR, .rows = rows, .cols = 1, .matrix = NULL};
  inec_shape shape = {.len = len, .chunk = chunk};
  if (inec_recv_ec(engine, &calc, &c, 1, out, &shape, on_done, &d)) abort();
  pthread_mutex_lock(&d.lock);
  while (!d.finished) pthread_cond_wait(&d.cv, &d.lock);
  pthread_mutex_unlock(&d.lock);
  int ok = reference(stream, n, rows, len, chunk, want);
  if (ok != (d.status == 0)) {
    fprintf(stderr, "engine status %d, reference says the stream is %s\n", d.status,
            ok ? "complete" : "not complete");
    abort();
  }
  if (ok)
    for (int r = 0; r < rows; r++)
      if (memcmp(out[r], want[r], len)) {
        fprintf(stderr, "row %d differs from what the frames carried\n", r);
        abort();
      }
  if (!ok && d.status != -EPROTO && d.status != -EPIPE) {
    fprintf(stderr, "unexpected status %d\n", d.status);
    abort();
  }
  inec_conn_close(engine, c);
  for (int r = 0; r < rows; r++) {
    free(out[r]);
    free(want[r]);
  }
  return 0;
}
