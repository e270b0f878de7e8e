// SPDX-License-Identifier: Apache-2.0
#include "tests/runtime/vulkan/vk_test_util.h"

#include <criterion/criterion.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/test_support.h"

void vkp_vk_test_pin_vulkan_libraries(void) {
  // The loader unloads the driver and the layer at vkDestroyInstance, after
  // which LeakSanitizer cannot name them in its reports; pinning them lets
  // lsan.supp suppress their own leaks by library name.
  static const char *const libs[] = {"libvulkan_lvp.so",
                                     "libVkLayer_khronos_validation.so"};
  for (size_t i = 0; i < sizeof libs / sizeof libs[0]; ++i)
    (void)dlopen(libs[i], RTLD_NOW | RTLD_NODELETE);
}

vkp_vk_device_t *vkp_vk_test_device(bool force_copies) {
  vkp_vk_test_pin_vulkan_libraries();
  vkp_vk_device_options_t opts = {.validation = 1, .force_copies = force_copies};
  vkp_vk_device_t *dev = NULL;
  VKP_TEST_OK(vkp_vk_device_create(&opts, &dev));
  cr_assert(dev->validation);
  return dev;
}

void vkp_vk_test_device_done(vkp_vk_device_t *device) {
  vkp_vk_device_destroy(device);
  cr_assert_eq(vkp_vk_validation_message_count(), 0,
               "%llu Vulkan validation message(s), see stderr",
               (unsigned long long)vkp_vk_validation_message_count());
}

uint32_t *vkp_vk_test_compile(const char *glsl, size_t *out_words) {
  // glslc as a subprocess: Debian 12's libshaderc.so expects another glslang
  // than the one glslang-dev ships, and crashes when linked against it.
  char src[] = "/tmp/vkp_test_XXXXXX";
  int fd = mkstemp(src);
  cr_assert_geq(fd, 0);
  FILE *f = fdopen(fd, "w");
  cr_assert_not_null(f);
  fputs(glsl, f);
  fclose(f);
  char spv[64], cmd[256];
  snprintf(spv, sizeof spv, "%s.spv", src);
  snprintf(cmd, sizeof cmd,
           "glslc -fshader-stage=compute --target-env=vulkan1.2 -O -o %s %s", spv, src);
  int rc = system(cmd);
  remove(src);
  cr_assert_eq(rc, 0, "glslc failed on:\n%s", glsl);
  size_t size = 0;
  uint32_t *words = (uint32_t *)vkp_test_read_file(spv, &size);
  cr_assert_not_null(words, "cannot read %s", spv);
  cr_assert(size > 0 && size % 4 == 0);
  remove(spv);
  *out_words = size / 4;
  return words;
}

char *vkp_vk_test_binary_glsl(const char *expr, uint32_t n, uint32_t local_size) {
  char *s = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&s, &len);
  cr_assert_not_null(f);
  fprintf(f,
          "#version 450\n"
          "layout(local_size_x = %u) in;\n"
          "layout(set = 0, binding = 0) readonly buffer A { float a[]; };\n"
          "layout(set = 0, binding = 1) readonly buffer B { float b[]; };\n"
          "layout(set = 0, binding = 2) writeonly buffer Y { float y[]; };\n"
          "void main() {\n"
          "  uint i = gl_WorkGroupID.x * %uu + gl_LocalInvocationID.x;\n"
          "  if (i < %uu) y[i] = %s;\n"
          "}\n",
          local_size, local_size, n, expr);
  fclose(f);
  return s;
}

void vkp_vk_test_glsl_dispatch(vkp_spirv_dispatch_t *d, const char *name, const char *glsl,
                               uint32_t local, uint32_t groups, int32_t n_bindings) {
  memset(d, 0, sizeof *d);
  d->name = strdup(name);
  d->code = vkp_vk_test_compile(glsl, &d->code_words);
  d->local_size[0] = local;
  d->local_size[1] = d->local_size[2] = 1;
  d->groups[0] = groups;
  d->groups[1] = d->groups[2] = 1;
  d->n_bindings = n_bindings;
  d->bindings = calloc((size_t)n_bindings, sizeof *d->bindings);
  cr_assert_not_null(d->bindings);
}

void vkp_vk_test_dispatch(vkp_spirv_dispatch_t *d, const char *name,
                          const char *expr, uint32_t n, uint32_t local, int32_t a,
                          int32_t b, int32_t y) {
  char *glsl = vkp_vk_test_binary_glsl(expr, n, local);
  vkp_vk_test_glsl_dispatch(d, name, glsl, local, (n + local - 1) / local, 3);
  free(glsl);
  int32_t bufs[3] = {a, b, y};
  for (int j = 0; j < 3; ++j)
    d->bindings[j] = (vkp_spirv_binding_t){.buffer = bufs[j], .offset = 0,
                                           .range = (uint64_t)n * 4};
}

void vkp_vk_test_program_free(vkp_spirv_program_t *p) {
  for (int32_t d = 0; d < p->n_dispatches; ++d) {
    free(p->dispatches[d].name);
    free(p->dispatches[d].code);
    free(p->dispatches[d].bindings);
  }
}
