// SPDX-License-Identifier: Apache-2.0
// Placeholder until the ONNX reader lands (issue 3).
#include "base/status_macros.h"
#include "graph/readers.h"

vkp_status_t vkp__graph_load_onnx_file(const char *path,
                                       vkp_graph_t **out_graph) {
  *out_graph = NULL;
  return vkp_status_make(VKP_STATUS_UNSUPPORTED,
                         "'%s' is not a JSON graph, and ONNX import is not "
                         "built yet",
                         path);
}
