/*
 * netec_isal.h - ISA-L erasure-code functions, resolved at run time with dlopen.
 *
 * The plugin ships one .so that must load on hosts with and without ISA-L: we never link
 * libisal, we look its functions up once and every caller checks netec_isal_load() first.
 * Signatures are ISA-L 2.x's (erasure_code.h).
 */
#ifndef NETEC_ISAL_H
#define NETEC_ISAL_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct netec_isal_api {
  void (*ec_init_tables)(int k, int rows, unsigned char *a, unsigned char *gftbls);
  void (*ec_encode_data)(int len, int k, int rows, unsigned char *gftbls, unsigned char **data,
                         unsigned char **coding);
  void (*ec_encode_data_update)(int len, int k, int rows, int vec_i, unsigned char *gftbls,
                                unsigned char *data, unsigned char **coding);
  void (*gf_gen_cauchy1_matrix)(unsigned char *a, int m, int k);
  int (*gf_invert_matrix)(unsigned char *in, unsigned char *out, const int n);
  unsigned char (*gf_mul)(unsigned char a, unsigned char b);
};

/*
 * Loads ISA-L once (thread-safe). Returns the API, or NULL with the reason in err.
 * path (may be NULL) receives the file that was loaded.
 */
const struct netec_isal_api *netec_isal_load(char *err, size_t errlen, const char **path);

#ifdef __cplusplus
}
#endif
#endif
