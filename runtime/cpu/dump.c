// SPDX-License-Identifier: Apache-2.0
// `vkpipe inspect --dump` for cpu blobs: the generated C source, and the
// shared object it was compiled into.
#include <stdio.h>
#include <string.h>

#include "base/file.h"
#include "base/status_macros.h"
#include "runtime/cpu/target_cpu.h"

static vkp_status_t vkp__cpu_dump_file(const char *dir, const char *name,
                                       const void *data, size_t size) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  return vkp__write_file(path, data, size);
}

vkp_status_t vkp__cpu_dump(const vkp_target_t *target, const vkp_graph_t *graph,
                           const void *blob, size_t blob_size, const char *dir) {
  (void)target;
  vkp_cpu_blob_header_t h;
  if (blob_size < sizeof h)
    return vkp_status_make(VKP_STATUS_DATA_LOSS, "cpu blob of %zu bytes is too short",
                           blob_size);
  memcpy(&h, blob, sizeof h);
  if (memcmp(h.magic, VKP_CPU_BLOB_MAGIC, 8) != 0 || h.header_size != sizeof h ||
      h.n_constants < 0)
    return vkp_status_make(VKP_STATUS_DATA_LOSS, "not a cpu blob (bad magic or header)");
  size_t rest = blob_size - sizeof h;
  size_t cbytes = (size_t)h.n_constants * sizeof(int32_t);
  if (cbytes > rest || h.source_size > rest - cbytes ||
      h.object_size != rest - cbytes - h.source_size)
    return vkp_status_make(VKP_STATUS_DATA_LOSS,
                           "cpu blob sizes do not add up (%zu bytes after the header)",
                           rest);
  const char *source = (const char *)blob + sizeof h + cbytes;
  const char *object = source + h.source_size;
  char name[256];
  snprintf(name, sizeof name, "%s.c", graph->name);
  VKP_RETURN_IF_ERROR(vkp__cpu_dump_file(dir, name, source, (size_t)h.source_size));
  snprintf(name, sizeof name, "%s.so", graph->name);
  return vkp__cpu_dump_file(dir, name, object, (size_t)h.object_size);
}
