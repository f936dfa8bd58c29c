/* Resolves ISA-L at run time so a host without it still loads libnetec.so. */
#define _GNU_SOURCE
#include "netec_isal.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static struct netec_isal_api api;
static const struct netec_isal_api *loaded;
static char load_error[512];
static char load_path[512];
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* Debian's libisal2 ships libisal.so.2; libisal-dev adds the unversioned link. */
static const char *const candidates[] = {"libisal.so.2", "libisal.so"};

static void do_load(void) {
  void *h = NULL;
  const char *name = NULL;
  for (size_t i = 0; i < sizeof candidates / sizeof candidates[0] && !h; i++) {
    name = candidates[i];
    h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  }
  if (!h) {
    snprintf(load_error, sizeof load_error,
             "ISA-L not found (dlopen libisal.so.2: %s); install libisal2", dlerror());
    return;
  }
#define NETEC_SYM(f)                                                                   \
  do {                                                                                 \
    *(void **)&api.f = dlsym(h, #f);                                                   \
    if (!api.f) {                                                                      \
      snprintf(load_error, sizeof load_error, "%s lacks symbol %s", name, #f);         \
      return;                                                                          \
    }                                                                                  \
  } while (0)
  NETEC_SYM(ec_init_tables);
  NETEC_SYM(ec_encode_data);
  NETEC_SYM(ec_encode_data_update);
  NETEC_SYM(gf_gen_cauchy1_matrix);
  NETEC_SYM(gf_invert_matrix);
  NETEC_SYM(gf_mul);
#undef NETEC_SYM
  Dl_info info;
  if (dladdr(*(void **)&api.ec_encode_data, &info) && info.dli_fname) {
    snprintf(load_path, sizeof load_path, "%s", info.dli_fname);
  } else {
    snprintf(load_path, sizeof load_path, "%s", name);
  }
  loaded = &api;
}

const struct netec_isal_api *netec_isal_load(char *err, size_t errlen, const char **path) {
  pthread_once(&once, do_load);
  if (!loaded && err && errlen) {
    snprintf(err, errlen, "%s", load_error);
  }
  if (loaded && path) {
    *path = load_path;
  }
  return loaded;
}
