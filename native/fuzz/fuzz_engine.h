/* What every fuzz target of the INEC engine starts with: one engine, TCP only, for the whole
 * run (LLVMFuzzerInitialize), so each input costs a socketpair, not an engine. */
#ifndef NETEC_FUZZ_ENGINE_H
#define NETEC_FUZZ_ENGINE_H

#include <stdio.h>
#include <stdlib.h>

#include "inec.h"

static inec_engine *engine;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  char err[256];
  inec_options opt = {.disable_verbs = 1};
  engine = inec_engine_create(&opt, err, sizeof err);
  if (!engine) {
    fprintf(stderr, "engine: %s\n", err);
    abort();
  }
  return 0;
}

#endif
