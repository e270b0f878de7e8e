// SPDX-License-Identifier: Apache-2.0
#define _GNU_SOURCE  // sched_getaffinity, CPU_COUNT
#include "base/file.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

static vkp_status_t vkp__not_regular(const char *path, const char *what,
                                     mode_t mode) {
  const char *kind = S_ISDIR(mode)    ? "a directory"
                     : S_ISFIFO(mode) ? "a pipe"
                     : S_ISSOCK(mode) ? "a socket"
                     : S_ISCHR(mode) || S_ISBLK(mode) ? "a device"
                                                      : "a special file";
  return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                         "'%s' is %s; expected %s (a regular file)", path, kind,
                         what);
}

vkp_status_t vkp__file_check_regular(const char *path, const char *what) {
  struct stat sb;
  if (stat(path, &sb) != 0)
    return vkp_status_make(VKP_STATUS_IO_ERROR, "cannot open '%s': %s", path,
                           strerror(errno));
  return S_ISREG(sb.st_mode) ? NULL : vkp__not_regular(path, what, sb.st_mode);
}

vkp_status_t vkp__file_read(const char *path, size_t max_size, const char *what,
                            void **out_data, size_t *out_size) {
  *out_data = NULL;
  *out_size = 0;
  // O_NONBLOCK: opening a FIFO must not wait for a writer before fstat
  // tells us what it is.
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return vkp_status_make(VKP_STATUS_IO_ERROR, "cannot open '%s': %s", path,
                           strerror(errno));
  struct stat sb;
  vkp_status_t st = NULL;
  char *buf = NULL;
  if (fstat(fd, &sb) != 0) {
    st = vkp_status_make(VKP_STATUS_IO_ERROR, "cannot stat '%s': %s", path,
                         strerror(errno));
  } else if (!S_ISREG(sb.st_mode)) {
    st = vkp__not_regular(path, what, sb.st_mode);
  } else if (sb.st_size < 0 || (uint64_t)sb.st_size > (uint64_t)max_size) {
    st = vkp_status_make(VKP_STATUS_OUT_OF_RANGE,
                         "'%s' is %lld bytes, more than the %zu bytes allowed "
                         "for %s",
                         path, (long long)sb.st_size, max_size, what);
  } else if (!(buf = vkp__malloc((size_t)sb.st_size + 1))) {
    st = vkp_status_make(VKP_STATUS_OUT_OF_MEMORY,
                         "out of memory reading '%s' (%lld bytes)", path,
                         (long long)sb.st_size);
  } else {
    size_t n = (size_t)sb.st_size, got = 0;
    while (got < n) {
      ssize_t r = read(fd, buf + got, n - got);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) {
        st = vkp_status_make(VKP_STATUS_IO_ERROR,
                             "cannot read '%s': %s", path,
                             r < 0 ? strerror(errno) : "it shrank while being read");
        break;
      }
      got += (size_t)r;
    }
  }
  close(fd);
  if (st) {
    vkp__free(buf);
    return st;
  }
  buf[sb.st_size] = '\0';
  *out_data = buf;
  *out_size = (size_t)sb.st_size;
  return NULL;
}

vkp_status_t vkp__dir_create(const char *path, unsigned mode) {
  char *dir = vkp__strdup(path);
  if (!dir) return VKP_OOM("a directory path");
  // Parents first; a parent that cannot be made shows in the last mkdir's
  // error, so only that one is reported.
  for (char *p = dir + 1; *p; ++p) {
    if (*p != '/') continue;
    *p = '\0';
    (void)mkdir(dir, (mode_t)mode);
    *p = '/';
  }
  vkp_status_t st = NULL;
  struct stat sb;
  if (mkdir(dir, (mode_t)mode) != 0 && errno != EEXIST)
    st = vkp_status_make(VKP_STATUS_IO_ERROR, "cannot create directory '%s': %s",
                         dir, strerror(errno));
  else if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
    st = vkp_status_make(VKP_STATUS_IO_ERROR, "'%s' is not a directory", dir);
  vkp__free(dir);
  return st;
}

vkp_status_t vkp__dir_create_parent(const char *file_path, unsigned mode) {
  const char *slash = strrchr(file_path, '/');
  if (!slash || slash == file_path) return NULL;
  char *dir = vkp__strdup(file_path);
  if (!dir) return VKP_OOM("a directory path");
  dir[slash - file_path] = '\0';
  vkp_status_t st = vkp__dir_create(dir, mode);
  vkp__free(dir);
  return st;
}

char *vkp__file_cache_dir(const char *configured) {
  if (configured && configured[0]) return vkp__strdup(configured);
  const char *xdg = getenv("XDG_CACHE_HOME");
  if (xdg && xdg[0]) return vkp__asprintf("%s/vkpipe", xdg);
  const char *home = getenv("HOME");
  if (home && home[0]) return vkp__asprintf("%s/.cache/vkpipe", home);
  return vkp__asprintf("/tmp/vkpipe-cache-%ld", (long)getuid());
}

bool vkp__file_name_is_safe(const char *name) {
  if (!name || !name[0] || name[0] == '.') return false;
  size_t i = 0;
  for (; name[i]; ++i) {
    char c = name[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
    if (!ok || i >= 255) return false;
  }
  return true;
}

int32_t vkp__host_cores(void) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    int n = CPU_COUNT(&set);
    if (n >= 1) return (int32_t)n;
  }
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  return online >= 1 && online <= 4096 ? (int32_t)online : 1;
}
