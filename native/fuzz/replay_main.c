/*
 * Replays inputs through a fuzz target without libFuzzer: the regression run of the fuzz
 * targets in ctest (any compiler). Arguments are files or directories of inputs; the kept
 * inputs live in fuzz/regressions/<target>/ (seeds, and every finding once fixed).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    perror(path);
    return 0;
  }
  static uint8_t buf[1 << 16];
  size_t n = fread(buf, 1, sizeof buf, f);
  fclose(f);
  LLVMFuzzerTestOneInput(buf, n); /* a failed property aborts */
  return 1;
}

int main(int argc, char **argv) {
  LLVMFuzzerInitialize(&argc, &argv);
  int replayed = 0;
  for (int i = 1; i < argc; i++) {
    struct stat st;
    if (stat(argv[i], &st)) {
      perror(argv[i]);
      return 1;
    }
    if (!S_ISDIR(st.st_mode)) {
      replayed += replay(argv[i]);
      continue;
    }
    DIR *d = opendir(argv[i]);
    for (struct dirent *e; d && (e = readdir(d));) {
      if (e->d_name[0] == '.') continue;
      char p[4096];
      snprintf(p, sizeof p, "%s/%s", argv[i], e->d_name);
      replayed += replay(p);
    }
    if (d) closedir(d);
  }
  printf("%s: %d inputs replayed\n", argv[0], replayed);
  return replayed ? 0 : 1;
}
