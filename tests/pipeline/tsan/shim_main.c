// SPDX-License-Identifier: Apache-2.0
// The runner of the Criterion stand-in (tsan/criterion/criterion.h).
#include <criterion/criterion.h>

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define SHIM_MAX_TESTS 64

typedef struct shim_test_t {
  const char *suite, *name;
  void (*fn)(void);
  double timeout;
} shim_test_t;

static shim_test_t shim_tests[SHIM_MAX_TESTS];
static int shim_count;
static const shim_test_t *shim_current;

void shim_register(const char *suite, const char *name, void (*fn)(void),
                   const shim_test_options_t *options) {
  if (shim_count == SHIM_MAX_TESTS) {
    fprintf(stderr, "shim: too many tests\n");
    _exit(2);
  }
  shim_tests[shim_count++] = (shim_test_t){suite, name, fn, options->timeout};
}

void shim_fail(const char *file, int line, const char *expr, const char *fmt, ...) {
  fprintf(stderr, "[FAIL] %s::%s: %s:%d: %s: ", shim_current ? shim_current->suite : "?",
          shim_current ? shim_current->name : "?", file, line, expr);
  va_list ap;
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  fflush(stderr);
  _exit(1);
}

void shim_log(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("[----] ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

int main(int argc, char **argv) {
  for (int i = 0; i < shim_count; ++i) {
    shim_current = &shim_tests[i];
    if (argc > 1 && !strstr(shim_current->name, argv[1])) continue;
    fprintf(stderr, "[RUN ] %s::%s\n", shim_current->suite, shim_current->name);
    signal(SIGALRM, SIG_DFL);
    alarm(shim_current->timeout > 0 ? (unsigned)shim_current->timeout + 1 : 0);
    shim_current->fn();
    alarm(0);
    fprintf(stderr, "[PASS] %s::%s\n", shim_current->suite, shim_current->name);
  }
  return 0;
}
