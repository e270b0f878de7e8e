// SPDX-License-Identifier: Apache-2.0
// Runs a fuzz target once over every file of the folders (or files) named on
// the command line: the corpus replay the suite runs with any compiler, so
// every input a fuzzer ever kept or found stays a regression test.
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/alloc.h"
#include "base/file.h"
#include "tests/fuzz/fuzz.h"

static int vkp__replay_file(const char *path) {
  void *buf = NULL;
  size_t n = 0;
  vkp_status_t st = vkp__file_read(path, (size_t)1 << 30, "a fuzz input", &buf, &n);
  if (st) {
    fprintf(stderr, "fuzz_replay: %s\n", vkp_status_message(st));
    vkp_status_free(st);
    return 1;
  }
  LLVMFuzzerTestOneInput(buf, n);
  vkp__free(buf);
  return 0;
}

int main(int argc, char **argv) {
  int files = 0, bad = 0;
  for (int i = 1; i < argc; ++i) {
    struct stat sb;
    if (stat(argv[i], &sb) != 0) {
      fprintf(stderr, "fuzz_replay: no %s\n", argv[i]);
      return 1;
    }
    if (!S_ISDIR(sb.st_mode)) {
      bad += vkp__replay_file(argv[i]);
      ++files;
      continue;
    }
    DIR *d = opendir(argv[i]);
    for (struct dirent *e; d && (e = readdir(d));) {
      if (e->d_name[0] == '.') continue;
      char path[4096];
      snprintf(path, sizeof path, "%s/%s", argv[i], e->d_name);
      bad += vkp__replay_file(path);
      ++files;
    }
    if (d) closedir(d);
  }
  printf("fuzz_replay: %d inputs, no crash\n", files);
  return bad != 0 || files == 0;
}
