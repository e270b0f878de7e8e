// SPDX-License-Identifier: Apache-2.0
// `vkpipe inspect --dump` for vulkan blobs: per dispatch, its SPIR-V and the
// disassembly, plus a summary of buffers, bindings and grids.
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/file.h"
#include "base/status_macros.h"
#include "codegen/spirv/compile.h"
#include "codegen/spirv/program.h"
#include "runtime/vulkan/target_vulkan.h"

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
      else if (buf->kind == VKP_SPIRV_BUFFER_CONSTANT && buf->index >= 0 &&
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
