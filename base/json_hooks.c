// SPDX-License-Identifier: Apache-2.0
#include "base/json_hooks.h"

#include <cjson/cJSON.h>
#include <pthread.h>

#include "base/alloc.h"
#include "base/status_macros.h"

static _Thread_local bool vkp__json_oom_flag;

static void *vkp__json_malloc(size_t size) {
  void *p = vkp__malloc(size);
  if (!p) vkp__json_oom_flag = true;
  return p;
}

static void vkp__json_free(void *ptr) { vkp__free(ptr); }

static pthread_once_t vkp__json_hooks_once = PTHREAD_ONCE_INIT;

static void vkp__json_install_hooks(void) {
  cJSON_Hooks hooks = {.malloc_fn = vkp__json_malloc,
                       .free_fn = vkp__json_free};
  cJSON_InitHooks(&hooks);
}

void vkp__json_init_hooks(void) {
  pthread_once(&vkp__json_hooks_once, vkp__json_install_hooks);
  vkp__json_oom_flag = false;
}

bool vkp__json_oom(void) { return vkp__json_oom_flag; }

vkp_status_t vkp__json_print(cJSON *root, bool ok, const char *what, char **out_text) {
  char *text = ok ? cJSON_Print(root) : NULL;  // allocated through vkp__malloc
  cJSON_Delete(root);
  if (!text) return VKP_OOM(what);
  *out_text = text;
  return NULL;
}
