/*
 * JNI entry points of io.netec.hdfs.codec.IsalNative. Every argument is checked here: a bad
 * call throws IllegalArgumentException and never reads or writes outside a buffer.
 */
#include <jni.h>
#include <string.h>

#include "io_netec_hdfs_codec_IsalNative.h"
#include "netec_isal.h"

#define MAX_UNITS 256

static const struct netec_isal_api *isal;

static void throw_iae(JNIEnv *env, const char *msg) {
  jclass c = (*env)->FindClass(env, "java/lang/IllegalArgumentException");
  if (c) (*env)->ThrowNew(env, c, msg);
}

static void throw_ise(JNIEnv *env, const char *msg) {
  jclass c = (*env)->FindClass(env, "java/lang/IllegalStateException");
  if (c) (*env)->ThrowNew(env, c, msg);
}

JNIEXPORT jstring JNICALL Java_io_netec_hdfs_codec_IsalNative_load0(JNIEnv *env, jclass cls) {
  (void)cls;
  char err[512];
  const char *path = NULL;
  char msg[600];
  isal = netec_isal_load(err, sizeof err, &path);
  if (!isal) return (*env)->NewStringUTF(env, err);
  snprintf(msg, sizeof msg, "ok:%s", path);
  return (*env)->NewStringUTF(env, msg);
}

static int check_shape(JNIEnv *env, jint len, jint k, jint rows) {
  if (!isal) {
    throw_ise(env, "ISA-L is not loaded");
    return 0;
  }
  if (len < 0 || k < 1 || rows < 1 || k > MAX_UNITS || rows > MAX_UNITS) {
    throw_iae(env, "invalid len, k or rows");
    return 0;
  }
  return 1;
}

static unsigned char *tables_address(JNIEnv *env, jobject gftbls, jint k, jint rows) {
  unsigned char *t = (*env)->GetDirectBufferAddress(env, gftbls);
  if (!t || (*env)->GetDirectBufferCapacity(env, gftbls) < (jlong)32 * k * rows) {
    throw_iae(env, "gftbls must be a direct buffer of 32*k*rows bytes");
    return NULL;
  }
  return t;
}

JNIEXPORT void JNICALL Java_io_netec_hdfs_codec_IsalNative_initTables0(
    JNIEnv *env, jclass cls, jint k, jint rows, jbyteArray matrix, jobject gftbls) {
  (void)cls;
  if (!check_shape(env, 0, k, rows)) return;
  if ((*env)->GetArrayLength(env, matrix) != k * rows) {
    throw_iae(env, "matrix must have k*rows entries");
    return;
  }
  unsigned char *t = tables_address(env, gftbls, k, rows);
  if (!t) return;
  unsigned char a[MAX_UNITS * 16];
  if (k * rows > (jint)sizeof a) {
    throw_iae(env, "matrix too large");
    return;
  }
  (*env)->GetByteArrayRegion(env, matrix, 0, k * rows, (jbyte *)a);
  isal->ec_init_tables(k, rows, a, t);
}

/* Resolves n direct buffers at positions pos[i] with len bytes each into ptrs. */
static int direct_ptrs(JNIEnv *env, jobjectArray bufs, jintArray pos, jint n, jint len,
                       unsigned char **ptrs) {
  if ((*env)->GetArrayLength(env, bufs) < n || (*env)->GetArrayLength(env, pos) < n) {
    throw_iae(env, "too few buffers");
    return 0;
  }
  jint p[MAX_UNITS];
  (*env)->GetIntArrayRegion(env, pos, 0, n, p);
  for (jint i = 0; i < n; i++) {
    jobject b = (*env)->GetObjectArrayElement(env, bufs, i);
    unsigned char *addr = b ? (*env)->GetDirectBufferAddress(env, b) : NULL;
    jlong cap = b ? (*env)->GetDirectBufferCapacity(env, b) : -1;
    if (b) (*env)->DeleteLocalRef(env, b);
    if (!addr || p[i] < 0 || (jlong)p[i] + len > cap) {
      throw_iae(env, "buffer is null, not direct, or too short");
      return 0;
    }
    ptrs[i] = addr + p[i];
  }
  return 1;
}

JNIEXPORT void JNICALL Java_io_netec_hdfs_codec_IsalNative_encodeBuffers0(
    JNIEnv *env, jclass cls, jint len, jint k, jint rows, jobject gftbls, jobjectArray in,
    jintArray inPos, jobjectArray out, jintArray outPos) {
  (void)cls;
  if (!check_shape(env, len, k, rows)) return;
  unsigned char *t = tables_address(env, gftbls, k, rows);
  unsigned char *src[MAX_UNITS], *dst[MAX_UNITS];
  if (!t || !direct_ptrs(env, in, inPos, k, len, src) ||
      !direct_ptrs(env, out, outPos, rows, len, dst))
    return;
  if (len > 0) isal->ec_encode_data(len, k, rows, t, src, dst);
}

/*
 * Pins n arrays for a critical section; ptrs[i] = arrays[i] + offs[i]. Returns how many were
 * pinned (n on success). Only critical JNI calls may follow until unpin_arrays.
 */
static jint pin_arrays(JNIEnv *env, jbyteArray *arrs, const jint *offs, jint n,
                       unsigned char **ptrs) {
  jint pinned = 0;
  for (; pinned < n; pinned++) {
    unsigned char *a = (*env)->GetPrimitiveArrayCritical(env, arrs[pinned], NULL);
    if (!a) break;
    ptrs[pinned] = a + offs[pinned];
  }
  return pinned;
}

/* Releases what pin_arrays pinned; the first `inputs` arrays were only read (JNI_ABORT). */
static void unpin_arrays(JNIEnv *env, jbyteArray *arrs, const jint *offs, unsigned char **ptrs,
                         jint pinned, jint inputs) {
  for (jint i = pinned - 1; i >= 0; i--) {
    (*env)->ReleasePrimitiveArrayCritical(env, arrs[i], ptrs[i] - offs[i],
                                          i < inputs ? JNI_ABORT : 0);
  }
}

JNIEXPORT void JNICALL Java_io_netec_hdfs_codec_IsalNative_encodeArrays0(
    JNIEnv *env, jclass cls, jint len, jint k, jint rows, jobject gftbls, jobjectArray in,
    jintArray inOff, jobjectArray out, jintArray outOff) {
  (void)cls;
  if (!check_shape(env, len, k, rows)) return;
  unsigned char *t = tables_address(env, gftbls, k, rows);
  if (!t) return;
  if ((*env)->GetArrayLength(env, in) < k || (*env)->GetArrayLength(env, inOff) < k ||
      (*env)->GetArrayLength(env, out) < rows || (*env)->GetArrayLength(env, outOff) < rows) {
    throw_iae(env, "too few arrays");
    return;
  }
  /* Every non-critical JNI call happens before the first array is pinned. */
  jbyteArray arrs[2 * MAX_UNITS];
  jint offs[2 * MAX_UNITS];
  jint n = k + rows;
  (*env)->GetIntArrayRegion(env, inOff, 0, k, offs);
  (*env)->GetIntArrayRegion(env, outOff, 0, rows, offs + k);
  for (jint i = 0; i < n; i++) {
    arrs[i] = (*env)->GetObjectArrayElement(env, i < k ? in : out, i < k ? i : i - k);
    if (!arrs[i] || offs[i] < 0 ||
        (jlong)offs[i] + len > (*env)->GetArrayLength(env, arrs[i])) {
      throw_iae(env, "array is null or too short");
      return;
    }
  }
  unsigned char *ptrs[2 * MAX_UNITS];
  jint pinned = pin_arrays(env, arrs, offs, n, ptrs);
  if (pinned == n && len > 0) isal->ec_encode_data(len, k, rows, t, ptrs, ptrs + k);
  unpin_arrays(env, arrs, offs, ptrs, pinned, k);
  if (pinned != n) throw_ise(env, "cannot pin arrays");
}

/*
 * ISA-L ec_encode_data_update: out[r] ^= M[r][vec_i] * src for every row r, into heap arrays;
 * the source is a heap array (src, from srcOff) or, when src is NULL, direct memory at srcAddr
 * (its bounds already checked).
 */
static void update_into_arrays(JNIEnv *env, jint len, jint k, jint rows, jint vecI,
                               jobject gftbls, jbyteArray src, jint srcOff,
                               unsigned char *srcAddr, jobjectArray out, jintArray outOff) {
  if (!check_shape(env, len, k, rows)) return;
  if (vecI < 0 || vecI >= k) {
    throw_iae(env, "vec_i outside 0..k-1");
    return;
  }
  unsigned char *t = tables_address(env, gftbls, k, rows);
  if (!t) return;
  if ((src && (srcOff < 0 || (jlong)srcOff + len > (*env)->GetArrayLength(env, src))) ||
      (*env)->GetArrayLength(env, out) < rows || (*env)->GetArrayLength(env, outOff) < rows) {
    throw_iae(env, "source too short or too few outputs");
    return;
  }
  /* a heap source is pinned first (read only, released with JNI_ABORT), the outputs after */
  jint in = src ? 1 : 0;
  jbyteArray arrs[MAX_UNITS + 1];
  jint offs[MAX_UNITS + 1];
  arrs[0] = src;
  offs[0] = srcOff;
  (*env)->GetIntArrayRegion(env, outOff, 0, rows, offs + in);
  for (jint r = 0; r < rows; r++) {
    arrs[r + in] = (*env)->GetObjectArrayElement(env, out, r);
    if (!arrs[r + in] || offs[r + in] < 0 ||
        (jlong)offs[r + in] + len > (*env)->GetArrayLength(env, arrs[r + in])) {
      throw_iae(env, "output is null or too short");
      return;
    }
  }
  unsigned char *ptrs[MAX_UNITS + 1];
  jint n = rows + in;
  jint pinned = pin_arrays(env, arrs, offs, n, ptrs);
  if (pinned == n && len > 0)
    isal->ec_encode_data_update(len, k, rows, vecI, t, in ? ptrs[0] : srcAddr, ptrs + in);
  unpin_arrays(env, arrs, offs, ptrs, pinned, in);
  if (pinned != n) throw_ise(env, "cannot pin arrays");
}

JNIEXPORT void JNICALL Java_io_netec_hdfs_codec_IsalNative_updateArrays0(
    JNIEnv *env, jclass cls, jint len, jint k, jint rows, jint vecI, jobject gftbls,
    jbyteArray src, jint srcOff, jobjectArray out, jintArray outOff) {
  (void)cls;
  if (!src) {
    throw_iae(env, "source too short or too few outputs");
    return;
  }
  update_into_arrays(env, len, k, rows, vecI, gftbls, src, srcOff, NULL, out, outOff);
}

/* As updateArrays0, the source in a direct buffer at an absolute position. */
JNIEXPORT void JNICALL Java_io_netec_hdfs_codec_IsalNative_updateFromDirect0(
    JNIEnv *env, jclass cls, jint len, jint k, jint rows, jint vecI, jobject gftbls,
    jobject src, jint srcPos, jobjectArray out, jintArray outOff) {
  (void)cls;
  unsigned char *addr = src ? (*env)->GetDirectBufferAddress(env, src) : NULL;
  if (!addr || srcPos < 0 || len < 0 ||
      (jlong)srcPos + len > (*env)->GetDirectBufferCapacity(env, src)) {
    throw_iae(env, "source is null, not direct, or too short");
    return;
  }
  update_into_arrays(env, len, k, rows, vecI, gftbls, NULL, 0, addr + srcPos, out, outOff);
}

/*
 * The fingerprint's lanes (io.netec.hdfs.codec.Fingerprint): for c in 0..n-1,
 * lane[r] ^= M[r][col0 + c] * src[c*len .. (c+1)*len) for every row r, the lanes being rows
 * runs of laneStride bytes in one direct buffer, each written from laneOffset. The source is a
 * heap array (src, from srcPos) or a direct buffer (srcDirect, from srcPos). One call for up to
 * k chunks: the JNI crossing is paid once per batch, not per 4 KiB.
 */
JNIEXPORT void JNICALL Java_io_netec_hdfs_codec_IsalNative_lanesUpdate0(
    JNIEnv *env, jclass cls, jint len, jint n, jint k, jint rows, jint col0, jobject gftbls,
    jbyteArray src, jobject srcDirect, jint srcPos, jobject lanes, jint laneStride,
    jint laneOffset) {
  (void)cls;
  if (!check_shape(env, len, k, rows)) return;
  if (n < 1 || col0 < 0 || (jlong)col0 + n > k || laneStride < 1 || laneOffset < 0 ||
      (jlong)laneOffset + len > laneStride || srcPos < 0 || (src == NULL) == (srcDirect == NULL)) {
    throw_iae(env, "bad chunk, column, lane or source arguments");
    return;
  }
  unsigned char *t = tables_address(env, gftbls, k, rows);
  if (!t) return;
  unsigned char *base = (*env)->GetDirectBufferAddress(env, lanes);
  if (!base || (jlong)laneStride * rows > (*env)->GetDirectBufferCapacity(env, lanes)) {
    throw_iae(env, "lanes are not a direct buffer of rows * laneStride bytes");
    return;
  }
  jlong need = (jlong)srcPos + (jlong)len * n;
  unsigned char *from;
  if (src) {
    if (need > (*env)->GetArrayLength(env, src)) {
      throw_iae(env, "source array too short");
      return;
    }
    from = (*env)->GetPrimitiveArrayCritical(env, src, NULL);
    if (!from) {
      throw_ise(env, "cannot pin the source array");
      return;
    }
  } else {
    from = (*env)->GetDirectBufferAddress(env, srcDirect);
    if (!from || need > (*env)->GetDirectBufferCapacity(env, srcDirect)) {
      throw_iae(env, "source is not a direct buffer or too short");
      return;
    }
  }
  unsigned char *out[MAX_UNITS];
  for (jint r = 0; r < rows; r++) out[r] = base + (size_t)r * laneStride + laneOffset;
  for (jint c = 0; c < n; c++)
    isal->ec_encode_data_update(len, k, rows, col0 + c, t, from + srcPos + (size_t)c * len, out);
  if (src) (*env)->ReleasePrimitiveArrayCritical(env, src, from, JNI_ABORT);
}
