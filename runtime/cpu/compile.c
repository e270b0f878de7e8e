// SPDX-License-Identifier: Apache-2.0
// Running the system C compiler and caching its shared objects.
#include "runtime/cpu/compile.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/file.h"
#include "base/status_macros.h"

extern char **environ;

static atomic_uint_fast64_t vkp__cache_hits, vkp__cache_misses;

void vkp_cpu_compile_stats(uint64_t *out_hits, uint64_t *out_misses) {
  if (out_hits) *out_hits = (uint64_t)atomic_load(&vkp__cache_hits);
  if (out_misses) *out_misses = (uint64_t)atomic_load(&vkp__cache_misses);
}

// Two independent 64-bit FNV-1a streams make the 128-bit key.
typedef struct vkp__hash_t {
  uint64_t a, b;
} vkp__hash_t;

static void vkp__hash_bytes(vkp__hash_t *h, const void *data, size_t n) {
  const unsigned char *p = data;
  for (size_t i = 0; i < n; ++i) {
    h->a = (h->a ^ p[i]) * 0x100000001b3ull;
    h->b = (h->b ^ (p[i] + 0x5bu)) * 0x100000001b3ull + 0x9e3779b97f4a7c15ull;
  }
  // A separator so that ("ab","c") and ("a","bc") differ.
  h->a = (h->a ^ 0xff) * 0x100000001b3ull;
  h->b = (h->b ^ 0xfe) * 0x100000001b3ull;
}

// Compiler output and compiled objects are read whole; past this they are
// not something a compiler made from one stage.
#define VKP__CPU_FILE_MAX ((size_t)1 << 30)

// The private cache used when the user's cannot be written: one directory
// per process, made on first need. Reported once on stderr, since a cache
// that silently never persists would look like a slow compiler.
static pthread_once_t vkp__fallback_once = PTHREAD_ONCE_INIT;
static char vkp__fallback_dir[4096];

static void vkp__fallback_make(void) {
  const char *tmp = getenv("TMPDIR");
  if (!tmp || !tmp[0]) tmp = "/tmp";
  snprintf(vkp__fallback_dir, sizeof vkp__fallback_dir, "%s/vkpipe-cache-XXXXXX", tmp);
  if (!mkdtemp(vkp__fallback_dir)) vkp__fallback_dir[0] = '\0';
}

// Makes a fresh work directory `*tmp` inside the cache `*dir`; when the cache
// cannot be created or written, switches *dir to the private fallback.
static vkp_status_t vkp__cache_workdir(char **dir, char **tmp) {
  vkp_status_t st = vkp__dir_create(*dir, 0700);
  if (!st && mkdtemp(*tmp)) return NULL;
  char *why = st ? vkp__strdup(vkp_status_message(st))
                 : vkp__asprintf("cannot create a directory in '%s': %s", *dir,
                                 strerror(errno));
  vkp_status_free(st);
  pthread_once(&vkp__fallback_once, vkp__fallback_make);
  vkp_status_t out = NULL;
  if (!vkp__fallback_dir[0]) {
    out = vkp_status_make(VKP_STATUS_IO_ERROR,
                          "the compile cache is not writable (%s), and no private "
                          "cache could be made in $TMPDIR or /tmp either",
                          why ? why : "out of memory");
  } else {
    static atomic_bool told;
    if (!atomic_exchange(&told, true))
      fprintf(stderr, "vkpipe: compile cache not writable (%s); using %s for this "
                      "run\n", why ? why : "?", vkp__fallback_dir);
    char *ndir = vkp__strdup(vkp__fallback_dir);
    char *ntmp = ndir ? vkp__asprintf("%s/tmp-XXXXXX", ndir) : NULL;
    if (!ntmp) {
      out = VKP_OOM("compile paths");
    } else if (!mkdtemp(ntmp)) {
      out = vkp_status_make(VKP_STATUS_IO_ERROR, "cannot create a directory in "
                            "'%s': %s", ndir, strerror(errno));
    }
    vkp__free(*dir);
    vkp__free(*tmp);
    *dir = ndir;
    *tmp = ntmp;
  }
  vkp__free(why);
  return out;
}

// argv for the compiler: $CC split on spaces, then `flags` split on spaces.
typedef struct vkp__argv_t {
  char *storage;
  char *argv[64];
  int argc;
} vkp__argv_t;

static vkp_status_t vkp__argv_build(vkp__argv_t *a, const char *cc,
                                    const char *flags) {
  a->storage = vkp__asprintf("%s %s", cc, flags);
  if (!a->storage) return VKP_OOM("compiler command");
  a->argc = 0;
  for (char *tok = strtok(a->storage, " "); tok; tok = strtok(NULL, " ")) {
    if (a->argc >= 63)
      return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT, "compiler command too long");
    a->argv[a->argc++] = tok;
  }
  a->argv[a->argc] = NULL;
  return NULL;
}

// Runs argv with stdout and stderr sent to `log_path`; *out_exit receives
// the exit status. A compiler that cannot be started is UNAVAILABLE.
static vkp_status_t vkp__run(char **argv, const char *log_path, int *out_exit) {
  posix_spawn_file_actions_t fa;
  if (posix_spawn_file_actions_init(&fa) != 0) return VKP_OOM("spawn actions");
  posix_spawn_file_actions_addopen(&fa, 1, log_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  pid_t pid;
  int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0)
    return vkp_status_make(VKP_STATUS_UNAVAILABLE,
                           "the cpu target needs a C compiler to build stages and "
                           "cannot run '%s' ($CC, default cc): %s (running an "
                           "already-built stage needs no compiler)",
                           argv[0], strerror(rc));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR)
      return vkp_status_make(VKP_STATUS_INTERNAL, "waitpid: %s", strerror(errno));
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
    return vkp_status_make(VKP_STATUS_UNAVAILABLE,
                           "the cpu target needs a C compiler to build stages and "
                           "cannot run '%s' ($CC, default cc) (running an "
                           "already-built stage needs no compiler)",
                           argv[0]);
  *out_exit = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return NULL;
}

static void vkp__remove_tree(const char *dir, const char *const *files, int n) {
  for (int i = 0; i < n; ++i) {
    char *p = vkp__asprintf("%s/%s", dir, files[i]);
    if (p) unlink(p);
    vkp__free(p);
  }
  rmdir(dir);
}

vkp_status_t vkp_cpu_compile(const char *source, size_t size,
                             const vkp_cpu_compile_config_t *config,
                             void **out_object, size_t *out_size,
                             char *out_key) {
  *out_object = NULL;
  *out_size = 0;
  const char *cc = getenv("CC");
  if (!cc || !cc[0]) cc = "cc";
  const char *march = config->march && config->march[0] ? config->march : "native";
  char *flags = vkp__asprintf(
      "-std=gnu11 -O3 -march=%s -fPIC -shared -fno-math-errno -fwrapv "
      "-ffp-contract=fast%s%s%s",
      march, config->threads > 1 ? " -pthread" : "",
      config->extra_flags ? " " : "", config->extra_flags ? config->extra_flags : "");
  char *dir = vkp__file_cache_dir(config->cache_dir);
  char *tmp = dir ? vkp__asprintf("%s/tmp-XXXXXX", dir) : NULL;
  vkp__argv_t version = {0}, compile = {0};
  char *log = NULL, *src_path = NULL, *so_path = NULL, *final = NULL;
  bool made_tmp = false;
  vkp_status_t st = NULL;
  if (!flags || !dir || !tmp) st = VKP_OOM("compile paths");
  if (!st) st = vkp__cache_workdir(&dir, &tmp);
  if (!st) {
    made_tmp = true;
    log = vkp__asprintf("%s/log.txt", tmp);
    src_path = vkp__asprintf("%s/stage.c", tmp);
    so_path = vkp__asprintf("%s/stage.so", tmp);
    if (!log || !src_path || !so_path) st = VKP_OOM("compile paths");
  }
  // The compiler's identity is part of the key.
  int code = 0;
  if (!st) st = vkp__argv_build(&version, cc, "--version");
  if (!st) st = vkp__run(version.argv, log, &code);
  vkp__hash_t h = {0xcbf29ce484222325ull, 0x84222325cbf29ce4ull};
  if (!st) {
    void *ident = NULL;
    size_t ident_size = 0;
    st = vkp__file_read(log, VKP__CPU_FILE_MAX, "compiler output", &ident, &ident_size);
    if (!st) vkp__hash_bytes(&h, ident, ident_size);
    vkp__free(ident);
  }
  if (!st) {
    vkp__hash_bytes(&h, cc, strlen(cc));
    vkp__hash_bytes(&h, flags, strlen(flags));
    vkp__hash_bytes(&h, source, size);
    snprintf(out_key, 33, "%016llx%016llx", (unsigned long long)h.a,
             (unsigned long long)h.b);
    final = vkp__asprintf("%s/%s.so", dir, out_key);
    if (!final) st = VKP_OOM("compile paths");
  }
  if (!st && access(final, R_OK) == 0) {
    st = vkp__file_read(final, VKP__CPU_FILE_MAX, "a compiled stage", out_object,
                        out_size);
    if (!st) atomic_fetch_add(&vkp__cache_hits, 1);
    else {  // unreadable cache entry: rebuild it below
      vkp_status_free(st);
      st = NULL;
    }
  }
  if (!st && !*out_object) {
    st = vkp__write_file(src_path, source, size);
    if (!st) st = vkp__argv_build(&compile, cc, flags);
    if (!st && compile.argc + 4 >= 64)
      st = vkp_status_make(VKP_STATUS_INVALID_ARGUMENT, "compiler command too long");
    if (!st) {  // paths as whole arguments: they may hold spaces
      compile.argv[compile.argc++] = (char *)"-o";
      compile.argv[compile.argc++] = so_path;
      compile.argv[compile.argc++] = src_path;
      compile.argv[compile.argc++] = (char *)"-lm";
      compile.argv[compile.argc] = NULL;
    }
    if (!st) st = vkp__run(compile.argv, log, &code);
    if (!st && code != 0) {
      void *text = NULL;
      size_t text_size = 0;
      vkp_status_t rst =
          vkp__file_read(log, VKP__CPU_FILE_MAX, "compiler output", &text, &text_size);
      vkp_status_free(rst);
      if (text && text_size > 2000) ((char *)text)[2000] = '\0';
      // The compiler inherits the process's limits: say so when there is one
      // (cc1 then dies of it, sometimes as an "internal compiler error").
      size_t limit = vkp__memory_limit();
      char limit_note[128] = "";
      if (limit)
        snprintf(limit_note, sizeof limit_note,
                 " under an address-space limit of %zu MiB (ulimit -v)", limit >> 20);
      st = vkp_status_make(VKP_STATUS_INTERNAL,
                           "'%s' failed (exit %d) compiling a generated stage%s:\n%s",
                           cc, code, limit_note, text ? (char *)text : "(no output)");
      vkp__free(text);
    }
    if (!st)
      st = vkp__file_read(so_path, VKP__CPU_FILE_MAX, "a compiled stage", out_object,
                          out_size);
    if (!st) {
      atomic_fetch_add(&vkp__cache_misses, 1);
      rename(so_path, final);  // best effort: a failed publish only costs a rebuild
    }
  }
  if (made_tmp) {
    static const char *const files[] = {"log.txt", "stage.c", "stage.so"};
    vkp__remove_tree(tmp, files, 3);
  }
  vkp__free(version.storage);
  vkp__free(compile.storage);
  vkp__free(flags);
  vkp__free(dir);
  vkp__free(tmp);
  vkp__free(log);
  vkp__free(src_path);
  vkp__free(so_path);
  vkp__free(final);
  if (st) {
    vkp__free(*out_object);
    *out_object = NULL;
    *out_size = 0;
  }
  return st;
}
