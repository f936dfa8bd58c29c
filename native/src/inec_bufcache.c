/*
 * Op buffers an engine keeps for its next ops (inec_internal.h): a fresh buffer of a few
 * hundred KiB costs a page fault per 4 KiB on first touch, which was most of a small
 * repair's time. At most CACHE_BUFS buffers and CACHE_BYTES bytes are kept; the smallest
 * that fits is taken.
 */
#include <stdlib.h>

#include "inec_internal.h"

void *bufcache_take(inec_engine *e, size_t n, size_t *cap) {
  int best = -1;
  pthread_mutex_lock(&e->lock);
  for (int i = 0; i < e->ncache; i++)
    if (e->cache[i].cap >= n && (best < 0 || e->cache[i].cap < e->cache[best].cap)) best = i;
  void *p = NULL;
  if (best >= 0) {
    p = e->cache[best].p;
    *cap = e->cache[best].cap;
    e->cache_bytes -= *cap;
    e->cache[best] = e->cache[--e->ncache];
  }
  pthread_mutex_unlock(&e->lock);
  if (!p && (p = malloc(n))) *cap = n;
  return p;
}

void bufcache_give(inec_engine *e, void *p, size_t cap) {
  if (!p) return;
  pthread_mutex_lock(&e->lock);
  if (e->ncache < CACHE_BUFS && e->cache_bytes + cap <= CACHE_BYTES) {
    e->cache[e->ncache].p = p;
    e->cache[e->ncache++].cap = cap;
    e->cache_bytes += cap;
    p = NULL;
  }
  pthread_mutex_unlock(&e->lock);
  free(p);
}

/* Frees every kept buffer (the engine is going away). */
void bufcache_clear(inec_engine *e) {
  for (int i = 0; i < e->ncache; i++) free(e->cache[i].p);
  e->ncache = 0;
  e->cache_bytes = 0;
}
