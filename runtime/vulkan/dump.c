// SPDX-License-Identifier: Apache-2.0
// The vulkan target's file output: `vkpipe inspect --dump` for vulkan blobs
// (per dispatch, its SPIR-V and the disassembly, plus a summary of buffers,
// bindings and grids) and the sources compile writes for options->dump_dir.
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/file.h"
#include "base/status_macros.h"
#include "codegen/spirv/compile.h"
#include "codegen/spirv/program.h"
#include "runtime/vulkan/target_vulkan.h"

// A dispatch name as a file name: anything outside [A-Za-z0-9_.-] becomes '_'
// (names come from the graph), cut to fit.
static void vkp__dump_file_name(char *out, size_t size, const char *name) {
  size_t i = 0;
  for (; name[i] && i + 1 < size; ++i) {
    char ch = name[i];
    bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
              (ch >= '0' && ch <= '9') || ch == '_' || ch == '-' || ch == '.';
    out[i] = ok ? ch : '_';
  }
  out[i] = '\0';
}

static vkp_status_t vkp__dump_file(const char *dir, int32_t index, const char *name,
                                   const char *ext, const void *data, size_t size) {
  char safe[96];
  vkp__dump_file_name(safe, sizeof safe, name);
  char *path = vkp__asprintf("%s/%03d_%s.%s", dir, (int)index, safe, ext);
  if (!path) return VKP_OOM("dump path");
  vkp_status_t st = vkp__write_file(path, data, size);
  vkp__free(path);
  return st;
}

vkp_status_t vkp__vulkan_dump_sources(const vkp_spirv_program_t *prog, const char *dir) {
  VKP_RETURN_IF_ERROR(vkp__dir_create(dir, 0777));
  vkp__spirv_compiler_t *compiler = NULL;
  VKP_RETURN_IF_ERROR(vkp__spirv_compiler_create(&compiler));
  vkp_status_t st = NULL;
  for (int32_t i = 0; i < prog->n_dispatches && !st; ++i) {
    const vkp_spirv_dispatch_t *d = &prog->dispatches[i];
    if (d->glsl) st = vkp__dump_file(dir, i, d->name, "comp", d->glsl, strlen(d->glsl));
    if (!st)
      st = vkp__dump_file(dir, i, d->name, "spv", d->code,
                          d->code_words * sizeof(uint32_t));
    char *text = NULL;
    if (!st) st = vkp__spirv_disassemble(compiler, d->code, d->code_words, &text);
    if (!st) st = vkp__dump_file(dir, i, d->name, "spvasm", text, strlen(text));
    vkp__free(text);
    if (st) st = vkp_status_annotate(st, "dumping dispatch %d '%s'", (int)i, d->name);
  }
  vkp__spirv_compiler_destroy(compiler);
  return st;
}

vkp_status_t vkp__vulkan_dump(const vkp_target_t *target, const vkp_graph_t *graph,
                              const void *blob, size_t blob_size, const char *dir) {
  (void)target;
  vkp_spirv_program_t *prog = NULL;
  vkp__spirv_compiler_t *compiler = NULL;
  VKP_RETURN_IF_ERROR(vkp_spirv_program_deserialize(blob, blob_size, &prog));
  vkp_status_t st = vkp__spirv_compiler_create(&compiler);
  char path[4096];
  snprintf(path, sizeof path, "%s/program.txt", dir);
  FILE *summary = st ? NULL : fopen(path, "w");
  if (!st && !summary)
    st = vkp_status_make(VKP_STATUS_IO_ERROR, "cannot create '%s': %s", path,
                         strerror(errno));
  if (summary) {
    fprintf(summary, "graph '%s': %d buffers, %d dispatches\n\nbuffers:\n", graph->name,
            (int)prog->n_buffers, (int)prog->n_dispatches);
    for (int32_t b = 0; b < prog->n_buffers; ++b) {
      const vkp_spirv_buffer_t *buf = &prog->buffers[b];
      const char *name = "";
      if (buf->kind == VKP_SPIRV_BUFFER_INPUT && buf->index >= 0 &&
          buf->index < graph->n_inputs)
        name = graph->values[graph->inputs[buf->index]].name;
      else if (buf->kind == VKP_SPIRV_BUFFER_OUTPUT && buf->index >= 0 &&
               buf->index < graph->n_outputs)
        name = graph->values[graph->outputs[buf->index]].name;
      else if ((buf->kind == VKP_SPIRV_BUFFER_CONSTANT ||
                buf->kind == VKP_SPIRV_BUFFER_CONSTANT_F16) && buf->index >= 0 &&
               buf->index < graph->n_values)
        name = graph->values[buf->index].name;
      fprintf(summary, "  %3d %-8s %-24s %12llu bytes\n", (int)b,
              vkp__spirv_buffer_kind_name(buf->kind), name, (unsigned long long)buf->size);
    }
    fprintf(summary, "\ndispatches:\n");
  }
  for (int32_t d = 0; !st && d < prog->n_dispatches; ++d) {
    const vkp_spirv_dispatch_t *disp = &prog->dispatches[d];
    fprintf(summary, "  %3d %-32s local %ux%ux%u groups %ux%ux%u bindings", (int)d,
            disp->name, disp->local_size[0], disp->local_size[1], disp->local_size[2],
            disp->groups[0], disp->groups[1], disp->groups[2]);
    for (int32_t k = 0; k < disp->n_bindings; ++k)
      fprintf(summary, " %d", (int)disp->bindings[k].buffer);
    fprintf(summary, "\n");
    snprintf(path, sizeof path, "%s/%03d.spv", dir, (int)d);
    st = vkp__write_file(path, disp->code, disp->code_words * sizeof(uint32_t));
    char *text = NULL;
    if (!st) st = vkp__spirv_disassemble(compiler, disp->code, disp->code_words, &text);
    if (!st) {
      snprintf(path, sizeof path, "%s/%03d.spvasm", dir, (int)d);
      st = vkp__write_file(path, text, strlen(text));
    }
    vkp__free(text);
  }
  if (summary && fclose(summary) != 0 && !st)
    st = vkp_status_make(VKP_STATUS_IO_ERROR, "cannot write the program summary");
  vkp__spirv_compiler_destroy(compiler);
  vkp_spirv_program_destroy(prog);
  return st;
}
