/*
 * JNI entry points of io.netec.hdfs.inecroute.InecNative: the INEC engine, its rendezvous and
 * its primitives for Java. Handles are pointers as jlong. A posted primitive gets a completion
 * record that Java awaits; the record is shared by the engine's done callback and Java, and
 * freed by whichever lets go last, so Java may give up on an op that has not ended yet.
 * Buffers are direct ByteBuffers: Java keeps them reachable until the op's completion.
 */
#include <errno.h>
#include <jni.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "inec.h"
#include "inec_rendezvous.h"
#include "io_netec_hdfs_inecroute_InecNative.h"

#define MAX_IO 32
#define HELLO_MS 30000

static void throw_io(JNIEnv *env, const char *msg) {
  jclass c = (*env)->FindClass(env, "java/io/IOException");
  if (c) (*env)->ThrowNew(env, c, msg);
}

static void throw_iae(JNIEnv *env, const char *msg) {
  jclass c = (*env)->FindClass(env, "java/lang/IllegalArgumentException");
  if (c) (*env)->ThrowNew(env, c, msg);
}

static inec_engine *E(jlong h) { return (inec_engine *)(intptr_t)h; }

JNIEXPORT jlong JNICALL Java_io_netec_hdfs_inecroute_InecNative_engineCreate(
    JNIEnv *env, jclass cls, jstring verbsLibrary, jboolean disableVerbs) {
  (void)cls;
  const char *lib = verbsLibrary ? (*env)->GetStringUTFChars(env, verbsLibrary, NULL) : NULL;
  inec_options opt = {.verbs_library = lib, .disable_verbs = disableVerbs ? 1 : 0};
  char err[256];
  inec_engine *e = inec_engine_create(&opt, err, sizeof err);
  if (lib) (*env)->ReleaseStringUTFChars(env, verbsLibrary, lib);
  if (!e) throw_io(env, err);
  return (jlong)(intptr_t)e;
}

JNIEXPORT jstring JNICALL Java_io_netec_hdfs_inecroute_InecNative_engineDescribe(JNIEnv *env,
                                                                                  jclass cls,
                                                                                  jlong e) {
  (void)cls;
  return (*env)->NewStringUTF(env, inec_engine_describe(E(e)));
}

JNIEXPORT void JNICALL Java_io_netec_hdfs_inecroute_InecNative_engineDestroy(JNIEnv *env,
                                                                             jclass cls, jlong e) {
  (void)env, (void)cls;
  inec_engine_destroy(E(e));
}

JNIEXPORT jlong JNICALL Java_io_netec_hdfs_inecroute_InecNative_listen(JNIEnv *env, jclass cls,
                                                                       jstring host, jint port) {
  (void)cls;
  const char *h = host ? (*env)->GetStringUTFChars(env, host, NULL) : NULL;
  char err[256];
  inec_listener *l = inec_listen(h, port, err, sizeof err);
  if (h) (*env)->ReleaseStringUTFChars(env, host, h);
  if (!l) throw_io(env, err);
  return (jlong)(intptr_t)l;
}

JNIEXPORT jint JNICALL Java_io_netec_hdfs_inecroute_InecNative_listenerPort(JNIEnv *env,
                                                                            jclass cls, jlong l) {
  (void)env, (void)cls;
  return inec_listener_port((inec_listener *)(intptr_t)l);
}

JNIEXPORT void JNICALL Java_io_netec_hdfs_inecroute_InecNative_listenerClose(JNIEnv *env,
                                                                             jclass cls, jlong l) {
  (void)env, (void)cls;
  inec_listener_close((inec_listener *)(intptr_t)l);
}

static int get_tag(JNIEnv *env, jbyteArray tag, unsigned char *out) {
  if (!tag || (*env)->GetArrayLength(env, tag) != INEC_TAG_BYTES) {
    throw_iae(env, "a stream tag has 16 bytes");
    return 0;
  }
  (*env)->GetByteArrayRegion(env, tag, 0, INEC_TAG_BYTES, (jbyte *)out);
  return 1;
}

static jlong open_conn(JNIEnv *env, inec_engine *e, int fd, jint transport, jint timeoutMs,
                       const char *what) {
  char err[256], msg[400];
  inec_conn *c = inec_conn_open(e, fd, (inec_transport)transport, timeoutMs, err, sizeof err);
  if (!c) {
    close(fd);
    snprintf(msg, sizeof msg, "%s: %s", what, err);
    throw_io(env, msg);
    return 0;
  }
  return (jlong)(intptr_t)c;
}

JNIEXPORT jlong JNICALL Java_io_netec_hdfs_inecroute_InecNative_take(JNIEnv *env, jclass cls,
                                                                     jlong e, jlong l,
                                                                     jbyteArray tag,
                                                                     jint transport,
                                                                     jint timeoutMs) {
  (void)cls;
  unsigned char t[INEC_TAG_BYTES];
  if (!get_tag(env, tag, t)) return 0;
  int fd = inec_listener_take((inec_listener *)(intptr_t)l, t, timeoutMs);
  if (fd < 0) return 0; /* nobody yet: Java decides whether to wait longer */
  /* the dialer sent its tag and is in its hello now: give it the usual handshake time */
  return open_conn(env, E(e), fd, transport, HELLO_MS, "input stream");
}

JNIEXPORT jlong JNICALL Java_io_netec_hdfs_inecroute_InecNative_dial(JNIEnv *env, jclass cls,
                                                                     jlong e, jstring host,
                                                                     jint port, jbyteArray tag,
                                                                     jint transport,
                                                                     jint timeoutMs) {
  (void)cls;
  unsigned char t[INEC_TAG_BYTES];
  if (!get_tag(env, tag, t)) return 0;
  if (!host) {
    throw_iae(env, "no host");
    return 0;
  }
  const char *h = (*env)->GetStringUTFChars(env, host, NULL);
  char err[256];
  int fd = inec_dial(h, port, t, timeoutMs, err, sizeof err);
  (*env)->ReleaseStringUTFChars(env, host, h);
  if (fd < 0) {
    throw_io(env, err);
    return 0;
  }
  return open_conn(env, E(e), fd, transport, timeoutMs, "output stream");
}

JNIEXPORT jint JNICALL Java_io_netec_hdfs_inecroute_InecNative_connTransport(JNIEnv *env,
                                                                             jclass cls, jlong c) {
  (void)env, (void)cls;
  return inec_conn_transport((inec_conn *)(intptr_t)c);
}

JNIEXPORT jlong JNICALL Java_io_netec_hdfs_inecroute_InecNative_connBytesIn(JNIEnv *env,
                                                                            jclass cls, jlong c) {
  (void)env, (void)cls;
  return (jlong)inec_conn_bytes_in((inec_conn *)(intptr_t)c);
}

JNIEXPORT void JNICALL Java_io_netec_hdfs_inecroute_InecNative_connClose(JNIEnv *env, jclass cls,
                                                                         jlong e, jlong c) {
  (void)env, (void)cls;
  inec_conn_close(E(e), (inec_conn *)(intptr_t)c);
}

/* ---- primitives ---------------------------------------------------------------------------- */

struct completion {
  pthread_mutex_t m;
  pthread_cond_t cv;
  int done, status, refs;
};

static void release(struct completion *c) {
  pthread_mutex_lock(&c->m);
  int left = --c->refs;
  pthread_mutex_unlock(&c->m);
  if (left == 0) {
    pthread_mutex_destroy(&c->m);
    pthread_cond_destroy(&c->cv);
    free(c);
  }
}

static void on_done(void *arg, int status) {
  struct completion *c = arg;
  pthread_mutex_lock(&c->m);
  c->done = 1;
  c->status = status;
  pthread_cond_broadcast(&c->cv);
  pthread_mutex_unlock(&c->m);
  release(c);
}

/* Addresses of n direct buffers of at least len bytes each; 0 (with an exception) if not. */
static int addresses(JNIEnv *env, jobjectArray bufs, int n, jlong len, unsigned char **out) {
  for (int i = 0; i < n; i++) {
    jobject b = (*env)->GetObjectArrayElement(env, bufs, i);
    out[i] = b ? (*env)->GetDirectBufferAddress(env, b) : NULL;
    jlong cap = b ? (*env)->GetDirectBufferCapacity(env, b) : -1;
    if (b) (*env)->DeleteLocalRef(env, b);
    if (!out[i] || cap < len) {
      throw_iae(env, "buffers must be direct and hold the primitive's length");
      return 0;
    }
  }
  return 1;
}

JNIEXPORT jlong JNICALL Java_io_netec_hdfs_inecroute_InecNative_post(
    JNIEnv *env, jclass cls, jlong e, jint type, jint calcKind, jbyteArray matrix, jint rows,
    jint cols, jlongArray src, jobjectArray local, jobjectArray out, jlong len, jint chunk,
    jlong dst) {
  (void)cls;
  int nsrc = src ? (*env)->GetArrayLength(env, src) : 0;
  int nlocal = local ? (*env)->GetArrayLength(env, local) : 0;
  int nout = out ? (*env)->GetArrayLength(env, out) : 0;
  int mlen = matrix ? (*env)->GetArrayLength(env, matrix) : 0;
  if (nsrc > MAX_IO || nlocal > MAX_IO || nout > MAX_IO || rows < 1 || rows > 16 || cols < 0 ||
      len <= 0 || chunk <= 0 || (matrix && mlen != rows * cols)) {
    throw_iae(env, "bad primitive shape");
    return 0;
  }
  inec_conn *srcs[MAX_IO];
  jlong s[MAX_IO];
  if (nsrc) (*env)->GetLongArrayRegion(env, src, 0, nsrc, s);
  for (int i = 0; i < nsrc; i++) srcs[i] = (inec_conn *)(intptr_t)s[i];
  unsigned char *locals[MAX_IO], *outs[MAX_IO], m[16 * MAX_IO];
  if (!addresses(env, local, nlocal, len, locals) || !addresses(env, out, nout, len, outs))
    return 0;
  if (matrix) (*env)->GetByteArrayRegion(env, matrix, 0, mlen, (jbyte *)m);
  inec_calc calc = {(inec_calc_kind)calcKind, rows, cols, matrix ? m : NULL};
  inec_shape shape = {(size_t)len, (size_t)chunk};
  struct completion *c = calloc(1, sizeof *c);
  if (!c) {
    throw_io(env, "out of memory");
    return 0;
  }
  pthread_mutex_init(&c->m, NULL);
  pthread_cond_init(&c->cv, NULL);
  c->refs = 2; /* the engine's callback and Java */
  inec_conn *d = (inec_conn *)(intptr_t)dst;
  const unsigned char *const *lp = (const unsigned char *const *)locals;
  int rc;
  switch (type) {
    case 0:
      rc = inec_ec_send(E(e), &calc, lp, nlocal, &shape, d, on_done, c);
      break;
    case 1:
      rc = inec_recv_ec_send(E(e), &calc, srcs, nsrc, lp, nlocal, &shape, d, on_done, c);
      break;
    case 2:
      if (nout != rows) rc = -EINVAL;
      else rc = inec_recv_ec(E(e), &calc, srcs, nsrc, outs, &shape, on_done, c);
      break;
    default:
      rc = -EINVAL;
  }
  if (rc) {
    pthread_mutex_destroy(&c->m);
    pthread_cond_destroy(&c->cv);
    free(c);
    char msg[128];
    snprintf(msg, sizeof msg, "cannot post the primitive: %s", strerror(-rc));
    throw_io(env, msg);
    return 0;
  }
  return (jlong)(intptr_t)c;
}

/* The op's status (0 or -errno) once it ended, or 1 if it still runs after timeoutMs. */
JNIEXPORT jint JNICALL Java_io_netec_hdfs_inecroute_InecNative_await(JNIEnv *env, jclass cls,
                                                                     jlong op, jlong timeoutMs) {
  (void)env, (void)cls;
  struct completion *c = (struct completion *)(intptr_t)op;
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  t.tv_sec += timeoutMs / 1000;
  t.tv_nsec += (timeoutMs % 1000) * 1000000L;
  if (t.tv_nsec >= 1000000000L) {
    t.tv_sec++;
    t.tv_nsec -= 1000000000L;
  }
  pthread_mutex_lock(&c->m);
  while (!c->done && pthread_cond_timedwait(&c->cv, &c->m, &t) == 0) {
  }
  int r = c->done ? c->status : 1;
  pthread_mutex_unlock(&c->m);
  return r;
}

JNIEXPORT void JNICALL Java_io_netec_hdfs_inecroute_InecNative_opRelease(JNIEnv *env, jclass cls,
                                                                         jlong op) {
  (void)env, (void)cls;
  release((struct completion *)(intptr_t)op);
}
