// SPDX-License-Identifier: Apache-2.0
// A stand-in for the subset of Criterion the pipeline suite uses, for
// ThreadSanitizer builds only: Criterion itself cannot start under TSan
// ("Could not initialize inheritable arena", Snaipe/Criterion#274). Tests
// run one after another in one process, each under an alarm() of its
// .timeout; the first failed assertion prints and exits non-zero.
#ifndef VKPIPE_TESTS_PIPELINE_TSAN_CRITERION_H_
#define VKPIPE_TESTS_PIPELINE_TSAN_CRITERION_H_

#include <math.h>
#include <stdbool.h>
#include <string.h>

typedef struct shim_test_options_t {
  int reserved;
  double timeout;
} shim_test_options_t;

void shim_register(const char *suite, const char *name, void (*fn)(void),
                   const shim_test_options_t *options);
// Prints the failure (format and arguments, printf-style) and exits.
_Noreturn void shim_fail(const char *file, int line, const char *expr,
                         const char *fmt, ...);
void shim_log(const char *fmt, ...);

#define Test(suite, name, ...)                                              \
  static void suite##_##name##_impl(void);                                  \
  static const shim_test_options_t suite##_##name##_options = {0,           \
                                                               __VA_ARGS__}; \
  __attribute__((constructor)) static void suite##_##name##_register(void) { \
    shim_register(#suite, #name, suite##_##name##_impl,                     \
                  &suite##_##name##_options);                               \
  }                                                                         \
  static void suite##_##name##_impl(void)

#define SHIM_ASSERT_(cond, ...)                                     \
  do {                                                              \
    if (!(cond)) shim_fail(__FILE__, __LINE__, #cond, __VA_ARGS__); \
  } while (0)
#define cr_assert(...) SHIM_ASSERT_(__VA_ARGS__, "")
#define cr_assert_not(...) SHIM_ASSERT_(!(SHIM_FIRST_(__VA_ARGS__)), SHIM_REST_(__VA_ARGS__))
#define cr_assert_fail(...) shim_fail(__FILE__, __LINE__, "cr_assert_fail", __VA_ARGS__)
#define cr_assert_eq(a, ...) SHIM_ASSERT_((a) == SHIM_FIRST_(__VA_ARGS__), SHIM_REST_(__VA_ARGS__))
#define cr_assert_neq(a, ...) SHIM_ASSERT_((a) != SHIM_FIRST_(__VA_ARGS__), SHIM_REST_(__VA_ARGS__))
#define cr_assert_lt(a, ...) SHIM_ASSERT_((a) < SHIM_FIRST_(__VA_ARGS__), SHIM_REST_(__VA_ARGS__))
#define cr_assert_leq(a, ...) SHIM_ASSERT_((a) <= SHIM_FIRST_(__VA_ARGS__), SHIM_REST_(__VA_ARGS__))
#define cr_assert_gt(a, ...) SHIM_ASSERT_((a) > SHIM_FIRST_(__VA_ARGS__), SHIM_REST_(__VA_ARGS__))
#define cr_assert_geq(a, ...) SHIM_ASSERT_((a) >= SHIM_FIRST_(__VA_ARGS__), SHIM_REST_(__VA_ARGS__))
#define cr_assert_null(...) SHIM_ASSERT_(SHIM_FIRST_(__VA_ARGS__) == NULL, SHIM_REST_(__VA_ARGS__))
#define cr_assert_not_null(...) SHIM_ASSERT_(SHIM_FIRST_(__VA_ARGS__) != NULL, SHIM_REST_(__VA_ARGS__))
#define cr_assert_str_eq(a, ...) \
  SHIM_ASSERT_(strcmp((a), SHIM_FIRST_(__VA_ARGS__)) == 0, SHIM_REST_(__VA_ARGS__))
#define cr_assert_float_eq(a, b, ...) \
  SHIM_ASSERT_(fabs((double)(a) - (double)(b)) <= SHIM_FIRST_(__VA_ARGS__), SHIM_REST_(__VA_ARGS__))
#define cr_log_info(...) shim_log(__VA_ARGS__)
#define cr_skip_test(...) \
  do {                    \
    shim_log(__VA_ARGS__); \
    return;               \
  } while (0)

// First argument of a list, and the rest followed by "" so that a message
// is always there.
#define SHIM_FIRST_(...) SHIM_FIRST_IMPL_(__VA_ARGS__, 0)
#define SHIM_FIRST_IMPL_(first, ...) first
#define SHIM_REST_(...) SHIM_REST_IMPL_(__VA_ARGS__, "")
#define SHIM_REST_IMPL_(first, ...) __VA_ARGS__

#endif  // VKPIPE_TESTS_PIPELINE_TSAN_CRITERION_H_
