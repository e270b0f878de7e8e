// SPDX-License-Identifier: Apache-2.0
// vkp_graph_load: picks the reader from the file's content, not its name.
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/file.h"
#include "base/status_macros.h"
#include "graph/graph_internal.h"
#include "graph/readers.h"

vkp_status_t vkp_graph_load(const char *path, vkp_graph_t **out_graph) {
  return vkp_graph_load_with_options(path, NULL, out_graph);
}

vkp_status_t vkp_graph_load_with_options(const char *path,
                                         const vkp_graph_load_options_t *options,
                                         vkp_graph_t **out_graph) {
  const vkp_allocator_t *allocator = options ? options->allocator : NULL;
  VKP_RETURN_IF_ERROR(vkp__allocator_check(allocator, "loading a graph"));
  VKP__ALLOCATOR_SCOPE(allocator);
  *out_graph = NULL;
  VKP_RETURN_IF_ERROR(vkp__file_check_regular(path, "a model"));
  FILE *f = fopen(path, "rb");
  if (!f)
    return vkp_status_make(VKP_STATUS_IO_ERROR, "cannot open '%s': %s", path,
                           strerror(errno));
  unsigned char head[64];
  size_t n = fread(head, 1, sizeof head, f);
  fclose(f);
  size_t i = 0;
  // UTF-8 byte order mark, then whitespace.
  if (n >= 3 && head[0] == 0xEF && head[1] == 0xBB && head[2] == 0xBF) i = 3;
  while (i < n && (head[i] == ' ' || head[i] == '\t' || head[i] == '\n' ||
                   head[i] == '\r'))
    ++i;
  if (n == 0)
    return vkp_status_make(VKP_STATUS_PARSE_ERROR, "'%s' is empty", path);
  if (i < n && head[i] == '{')
    return vkp__graph_load_json_file(path, options, out_graph);
  // An ONNX ModelProto starts with a protobuf tag; field 1 (ir_version,
  // varint) is 0x08 in every exporter we know, but any valid tag is accepted
  // and the ONNX reader reports what is wrong.
  return vkp__graph_load_onnx_file(path, options, out_graph);
}
