// SPDX-License-Identifier: Apache-2.0
//
// vkpipe status: the one error type of the library.
//
//   vkp_status_t st = vkp_graph_load("model.json", &graph);
//   if (st) {
//     fprintf(stderr, "vkpipe: %s\n", vkp_status_message(st));
//     vkp_status_free(st);
//   }
//
// A status is NULL for success and a heap object otherwise. Whoever receives a
// non-NULL status owns it and must pass it on (returning it, possibly annotated)
// or free it. Statuses are not shared between threads, but different threads may
// create and free their own freely.
#ifndef VKPIPE_STATUS_H_
#define VKPIPE_STATUS_H_

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include "vkpipe/alloc.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define VKP_MUST_USE __attribute__((warn_unused_result))
#define VKP_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define VKP_MUST_USE
#define VKP_PRINTF(fmt, args)
#endif

// X(ENUM, "name"): every status code, in one list.
#define VKP_STATUS_CODE_LIST(X)          \
  X(OK, "ok")                            \
  X(INVALID_ARGUMENT, "invalid argument") \
  X(PARSE_ERROR, "parse error")          \
  X(NOT_FOUND, "not found")              \
  X(ALREADY_EXISTS, "already exists")    \
  X(OUT_OF_MEMORY, "out of memory")      \
  X(OUT_OF_RANGE, "out of range")        \
  X(UNSUPPORTED, "unsupported")          \
  X(IO_ERROR, "i/o error")               \
  X(UNAVAILABLE, "unavailable")          \
  X(DEVICE_LOST, "device lost")          \
  X(FAILED_PRECONDITION, "failed precondition") \
  X(EMPTY, "empty")                      \
  X(TIMEOUT, "timeout")                  \
  X(CANCELLED, "cancelled")              \
  X(DATA_LOSS, "data loss")              \
  X(INTERNAL, "internal error")

typedef enum vkp_status_code_t {
#define VKP__STATUS_ENUM(e, s) VKP_STATUS_##e,
  VKP_STATUS_CODE_LIST(VKP__STATUS_ENUM)
#undef VKP__STATUS_ENUM
  VKP_STATUS_CODE_COUNT
} vkp_status_code_t;

typedef struct vkp_status_s *vkp_status_t;

// Creates a status with `code` (not OK) and a printf-style message. Never
// returns NULL: on allocation failure it returns a static out-of-memory status
// (which vkp_status_free ignores).
vkp_status_t vkp_status_make(vkp_status_code_t code, const char *fmt, ...)
    VKP_PRINTF(2, 3) VKP_MUST_USE;
vkp_status_t vkp_status_makev(vkp_status_code_t code, const char *fmt,
                              va_list ap) VKP_PRINTF(2, 0) VKP_MUST_USE;

// Prepends context to `status` ("loading node 'x': <old message>") and returns
// it (consumed and returned). A NULL status stays NULL.
vkp_status_t vkp_status_annotate(vkp_status_t status, const char *fmt, ...)
    VKP_PRINTF(2, 3) VKP_MUST_USE;

// Joins two statuses (both consumed): the first failure keeps its code and the
// second's message is appended. Used when cleanup fails after a failure.
vkp_status_t vkp_status_join(vkp_status_t first, vkp_status_t second)
    VKP_MUST_USE;

// The code of `status`; VKP_STATUS_OK for NULL.
vkp_status_code_t vkp_status_code(const vkp_status_t status);

// The message (borrowed, valid until the status is freed); "ok" for NULL.
const char *vkp_status_message(const vkp_status_t status);

// Name of a code ("invalid argument"); "unknown" when out of range.
const char *vkp_status_code_name(vkp_status_code_t code);

// Frees `status` (NULL is fine).
void vkp_status_free(vkp_status_t status);

// True when `status` (borrowed) has `code`.
bool vkp_status_is(const vkp_status_t status, vkp_status_code_t code);

#ifdef __cplusplus
}
#endif

#endif  // VKPIPE_STATUS_H_
