/*
 * JNI entry points of io.netec.hdfs.switchroute.wire.InternetChecksum. Ranges are checked
 * here: a bad call throws IllegalArgumentException and never reads outside a buffer.
 */
#include <jni.h>

#include "io_netec_hdfs_switchroute_wire_InternetChecksum.h"
#include "netec_checksum.h"

static void throw_iae(JNIEnv *env, const char *msg) {
  jclass c = (*env)->FindClass(env, "java/lang/IllegalArgumentException");
  if (c) (*env)->ThrowNew(env, c, msg);
}

JNIEXPORT jlong JNICALL Java_io_netec_hdfs_switchroute_wire_InternetChecksum_sumArray0(
    JNIEnv *env, jclass cls, jbyteArray b, jint from, jint to) {
  (void)cls;
  if (!b || from < 0 || to < from || to > (*env)->GetArrayLength(env, b)) {
    throw_iae(env, "range outside the array");
    return 0;
  }
  unsigned char *p = (*env)->GetPrimitiveArrayCritical(env, b, NULL);
  if (!p) return 0; /* OutOfMemoryError pending */
  uint64_t sum = netec_checksum_sum(p + from, (size_t)(to - from));
  (*env)->ReleasePrimitiveArrayCritical(env, b, p, JNI_ABORT);
  return (jlong)sum;
}

JNIEXPORT jlong JNICALL Java_io_netec_hdfs_switchroute_wire_InternetChecksum_sumDirect0(
    JNIEnv *env, jclass cls, jobject b, jint from, jint to) {
  (void)cls;
  unsigned char *p = b ? (*env)->GetDirectBufferAddress(env, b) : NULL;
  if (!p || from < 0 || to < from || to > (*env)->GetDirectBufferCapacity(env, b)) {
    throw_iae(env, "not a direct buffer, or range outside it");
    return 0;
  }
  return (jlong)netec_checksum_sum(p + from, (size_t)(to - from));
}
