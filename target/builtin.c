// SPDX-License-Identifier: Apache-2.0
// The default registry: every built-in target, from the list CMake generates
// (each target's folder declares itself there; nothing here names one).
#include "target/builtin.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/status_macros.h"

#define VKP__DECLARE_BUILTIN(name)                                       \
  vkp_status_t vkp_target_##name##_register(vkp_registry_t *registry); \
  extern const vkp_target_vtable_t vkp__target_##name##_vtable;
#include "vkpipe_builtin_targets.inc"
#undef VKP__DECLARE_BUILTIN

static const struct {
  const char *name;
  vkp_status_t (*fn)(vkp_registry_t *);
  const vkp_target_vtable_t *vtable;
} vkp__builtins[] = {
#define VKP__DECLARE_BUILTIN(name) \
  {#name, vkp_target_##name##_register, &vkp__target_##name##_vtable},
#include "vkpipe_builtin_targets.inc"
#undef VKP__DECLARE_BUILTIN
    {NULL, NULL, NULL},
};

const vkp_target_vtable_t *vkp__builtin_target_vtable(int32_t index) {
  int32_t n = (int32_t)(sizeof vkp__builtins / sizeof vkp__builtins[0]) - 1;
  return index >= 0 && index < n ? vkp__builtins[index].vtable : NULL;
}

// Whether builtin `i` is the target `name`.
static bool vkp__builtin_is(int i, const char *name) {
  return strcmp(vkp__builtins[i].name, name) == 0;
}

vkp_status_t vkp_registry_create_builtin(const char *const *names, int32_t n_names,
                                         vkp_registry_t **out_registry) {
  *out_registry = NULL;
  for (int32_t k = 0; k < n_names; ++k) {
    bool known = false;
    for (int i = 0; vkp__builtins[i].fn && !known; ++i) known = vkp__builtin_is(i, names[k]);
    if (!known) {
      char list[256] = "";
      size_t u = 0;
      for (int i = 0; vkp__builtins[i].fn && u < sizeof list; ++i) {
        int w = snprintf(list + u, sizeof list - u, "%s%s", i ? ", " : "",
                         vkp__builtins[i].name);
        if (w < 0) break;
        u += (size_t)w;
      }
      return vkp_status_make(VKP_STATUS_NOT_FOUND,
                             "no built-in target '%s' (built-in: %s)", names[k], list);
    }
  }
  vkp_registry_t *r = NULL;
  VKP_RETURN_IF_ERROR(vkp_registry_create(&r));
  for (int i = 0; vkp__builtins[i].fn; ++i) {
    bool wanted = false;
    for (int32_t k = 0; k < n_names && !wanted; ++k) wanted = vkp__builtin_is(i, names[k]);
    if (!wanted) continue;
    vkp_status_t st = vkp__builtins[i].fn(r);
    if (st) {
      vkp_registry_destroy(r);
      return st;
    }
  }
  *out_registry = r;
  return NULL;
}

vkp_status_t vkp_registry_create_default(vkp_registry_t **out_registry) {
  return vkp_registry_create_default_with_allocator(NULL, out_registry);
}

vkp_status_t vkp_registry_create_default_with_allocator(const vkp_allocator_t *allocator,
                                                        vkp_registry_t **out_registry) {
  *out_registry = NULL;
  VKP_RETURN_IF_ERROR(vkp__allocator_check(allocator, "target registry"));
  VKP__ALLOCATOR_SCOPE(allocator);  // the targets' state too
  vkp_registry_t *r = NULL;
  VKP_RETURN_IF_ERROR(vkp_registry_create(&r));
  for (int i = 0; vkp__builtins[i].fn; ++i) {
    vkp_status_t st = vkp__builtins[i].fn(r);
    if (st) {
      vkp_registry_destroy(r);
      return st;
    }
  }
  *out_registry = r;
  return NULL;
}
