/*
 * libFuzzer target: the hello a peer sends when a stream opens (inec_conn_open), which picks
 * the transport. The input is what the peer sends; the stream then ends. What must hold: no
 * hang, nothing ASan/UBSan see, and a connection comes back exactly when the input starts with
 * a whole version-1 hello ("INEH", version 1: this engine has no verbs device, so TCP whatever
 * the peer offers); otherwise NULL with a reason.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fuzz_engine.h"

#define HELLO_BYTES 48 /* 44 + the GID's last 4 */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 4096) return 0;
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) abort();
  if (size && write(sv[1], data, size) != (ssize_t)size) abort();
  shutdown(sv[1], SHUT_WR);
  char err[256] = "";
  inec_transport want = size && (data[size - 1] & 1) ? INEC_TRANSPORT_TCP : INEC_TRANSPORT_AUTO;
  inec_conn *c = inec_conn_open(engine, sv[0], want, 1000, err, sizeof err);
  uint32_t magic = 0, version = 0;
  if (size >= 8) {
    memcpy(&magic, data, 4);
    memcpy(&version, data + 4, 4);
  }
  int valid = size >= HELLO_BYTES && ntohl(magic) == 0x494e4548u && ntohl(version) == 1;
  if ((c != NULL) != valid) {
    fprintf(stderr, "conn %p for a %s hello (%zu bytes): %s\n", (void *)c,
            valid ? "valid" : "invalid", size, err);
    abort();
  }
  if (c) {
    if (inec_conn_transport(c) != INEC_TRANSPORT_TCP) abort();
    inec_conn_close(engine, c); /* the engine closes the socket */
  } else {
    if (!err[0]) abort(); /* a refusal always says why */
    close(sv[0]);
  }
  close(sv[1]);
  return 0;
}
