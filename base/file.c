// SPDX-License-Identifier: Apache-2.0
#include "base/file.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/status_macros.h"

vkp_status_t vkp__write_file(const char *path, const void *data, size_t size) {
  FILE *f = fopen(path, "wb");
  if (!f)
    return vkp_status_make(VKP_STATUS_IO_ERROR, "cannot create '%s': %s", path,
                           strerror(errno));
  bool ok = size == 0 || fwrite(data, 1, size, f) == size;
  int saved = errno;
  if (fclose(f) != 0 && ok) {
    ok = false;
    saved = errno;
  }
  return ok ? NULL
            : vkp_status_make(VKP_STATUS_IO_ERROR, "cannot write '%s': %s", path,
                              strerror(saved));
}

vkp_status_t vkp__write_text_line(const char *path, const char *text) {
  size_t n = strlen(text);
  char *line = vkp__malloc(n + 1);
  if (!line) return VKP_OOM("the text to write");
  memcpy(line, text, n);
  line[n] = '\n';
  vkp_status_t st = vkp__write_file(path, line, n + 1);
  vkp__free(line);
  return st;
}
