// SPDX-License-Identifier: Apache-2.0
#define _GNU_SOURCE  // dl_iterate_phdr, RTLD_NODELETE
#include "base/sanitizer.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define VKP__ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define VKP__ASAN 1
#endif

#ifdef VKP__ASAN
#include <dlfcn.h>
#include <link.h>
#include <stddef.h>

static int vkp__pin_object(struct dl_phdr_info *info, size_t size, void *user) {
  (void)size;
  (void)user;
  // The extra reference is the point: it is never dropped.
  if (info->dlpi_name && info->dlpi_name[0])
    (void)dlopen(info->dlpi_name, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
  return 0;
}

void vkp__keep_libraries_mapped(void) { dl_iterate_phdr(vkp__pin_object, NULL); }
#else
void vkp__keep_libraries_mapped(void) {}
#endif
