// SPDX-License-Identifier: Apache-2.0
#include "vkpipe/status.h"

#include <stdio.h>
#include <string.h>

#include "base/alloc.h"

struct vkp_status_s {
  vkp_status_code_t code;
  char *message;
};

// Returned when a status cannot be allocated; never freed.
static struct vkp_status_s vkp__status_oom = {
    .code = VKP_STATUS_OUT_OF_MEMORY,
    .message = "out of memory (while reporting an error)",
};

static const char *const vkp__status_names[] = {
#define VKP__STATUS_NAME(e, s) s,
    VKP_STATUS_CODE_LIST(VKP__STATUS_NAME)
#undef VKP__STATUS_NAME
};
_Static_assert(sizeof(vkp__status_names) / sizeof(vkp__status_names[0]) ==
                   VKP_STATUS_CODE_COUNT,
               "status name table out of sync");

const char *vkp_status_code_name(vkp_status_code_t code) {
  if ((unsigned)code >= VKP_STATUS_CODE_COUNT) return "unknown";
  return vkp__status_names[code];
}

vkp_status_t vkp_status_makev(vkp_status_code_t code, const char *fmt,
                              va_list ap) {
  if (code == VKP_STATUS_OK) code = VKP_STATUS_INTERNAL;
  struct vkp_status_s *st = vkp__malloc(sizeof(*st));
  if (!st) return &vkp__status_oom;
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  if (n < 0) n = 0;
  st->message = vkp__malloc((size_t)n + 1);
  if (!st->message) {
    vkp__free(st);
    return &vkp__status_oom;
  }
  vsnprintf(st->message, (size_t)n + 1, fmt, ap);
  st->code = code;
  return st;
}

vkp_status_t vkp_status_make(vkp_status_code_t code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vkp_status_t st = vkp_status_makev(code, fmt, ap);
  va_end(ap);
  return st;
}

vkp_status_t vkp_status_annotate(vkp_status_t status, const char *fmt, ...) {
  if (!status || status == &vkp__status_oom) return status;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) return status;
  size_t old = strlen(status->message);
  char *msg = vkp__malloc((size_t)n + 2 + old + 1);
  if (!msg) return status;  // keep the original message rather than lose it
  va_start(ap, fmt);
  vsnprintf(msg, (size_t)n + 1, fmt, ap);
  va_end(ap);
  memcpy(msg + n, ": ", 2);
  memcpy(msg + n + 2, status->message, old + 1);
  vkp__free(status->message);
  status->message = msg;
  return status;
}

vkp_status_t vkp_status_join(vkp_status_t first, vkp_status_t second) {
  if (!first) return second;
  if (!second) return first;
  if (first != &vkp__status_oom) {
    const char *a = first->message, *b = vkp_status_message(second);
    size_t na = strlen(a), nb = strlen(b);
    char *msg = vkp__malloc(na + 16 + nb + 1);
    if (msg) {
      memcpy(msg, a, na);
      memcpy(msg + na, "; then: ", 8);
      memcpy(msg + na + 8, b, nb + 1);
      vkp__free(first->message);
      first->message = msg;
    }
  }
  vkp_status_free(second);
  return first;
}

vkp_status_code_t vkp_status_code(const vkp_status_t status) {
  return status ? status->code : VKP_STATUS_OK;
}

const char *vkp_status_message(const vkp_status_t status) {
  return status ? status->message : "ok";
}

void vkp_status_free(vkp_status_t status) {
  if (!status || status == &vkp__status_oom) return;
  vkp__free(status->message);
  vkp__free(status);
}

bool vkp_status_is(const vkp_status_t status, vkp_status_code_t code) {
  return vkp_status_code(status) == code;
}
