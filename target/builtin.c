// SPDX-License-Identifier: Apache-2.0
// The default registry: every built-in target, from the list CMake generates
// (each target's folder declares itself there; nothing here names one).
#include "vkpipe/target.h"

#include "base/status_macros.h"

#define VKP__DECLARE_BUILTIN(fn) vkp_status_t fn(vkp_registry_t *registry);
#include "vkpipe_builtin_targets.inc"
#undef VKP__DECLARE_BUILTIN

static vkp_status_t (*const vkp__builtins[])(vkp_registry_t *) = {
#define VKP__DECLARE_BUILTIN(fn) fn,
#include "vkpipe_builtin_targets.inc"
#undef VKP__DECLARE_BUILTIN
    NULL,
};

vkp_status_t vkp_registry_create_default(vkp_registry_t **out_registry) {
  vkp_registry_t *r = NULL;
  VKP_RETURN_IF_ERROR(vkp_registry_create(&r));
  for (int i = 0; vkp__builtins[i]; ++i) {
    vkp_status_t st = vkp__builtins[i](r);
    if (st) {
      vkp_registry_destroy(r);
      return st;
    }
  }
  *out_registry = r;
  return NULL;
}
