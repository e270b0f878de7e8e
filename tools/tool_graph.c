// SPDX-License-Identifier: Apache-2.0
// Describing a graph for people: the `vkpipe check` summary.
#include <string.h>

#include "tools/tool.h"

const char *vkp_tool_format_bytes(size_t bytes, char *buf, size_t size) {
  static const char *const units[] = {"KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024) {
    snprintf(buf, size, "%zu B", bytes);
    return buf;
  }
  double v = (double)bytes / 1024.0;
  int u = 0;
  while (v >= 1024.0 && u < 3) {
    v /= 1024.0;
    ++u;
  }
  snprintf(buf, size, "%.1f %s", v, units[u]);
  return buf;
}

// "[4, 3]" or, for a bounded value, "[<=4, 3]".
const char *vkp_tool_value_shape(const vkp_value_t *v, char *buf, size_t size) {
  size_t used = 0;
  buf[0] = '\0';
  for (int32_t d = 0; d < v->rank && used + 1 < size; ++d) {
    int w = snprintf(buf + used, size - used, "%s%s%lld", d ? ", " : "[",
                     v->bounded && d == v->bounded_axis ? "<=" : "",
                     (long long)v->shape[d]);
    if (w < 0) break;
    used += (size_t)w;
  }
  if (used + 1 < size) snprintf(buf + used, size - used, v->rank ? "]" : "[]");
  return buf;
}

static void vkp__print_value(FILE *out, const vkp_value_t *v, int width) {
  char shape[200];
  fprintf(out, "  %-*s %s %s\n", width, v->name, vkp_dtype_name(v->dtype),
          vkp_tool_value_shape(v, shape, sizeof shape));
}

void vkp_tool_print_graph_summary(FILE *out, const char *path,
                                  const vkp_graph_t *g) {
  int width = 8;
  for (int32_t i = 0; i < g->n_inputs; ++i) {
    int n = (int)strlen(g->values[g->inputs[i]].name);
    if (n > width) width = n;
  }
  for (int32_t i = 0; i < g->n_outputs; ++i) {
    int n = (int)strlen(g->values[g->outputs[i]].name);
    if (n > width) width = n;
  }
  fprintf(out, "%s: graph '%s' is valid\n", path, g->name);
  fprintf(out, "inputs: %d\n", (int)g->n_inputs);
  for (int32_t i = 0; i < g->n_inputs; ++i)
    vkp__print_value(out, &g->values[g->inputs[i]], width);
  fprintf(out, "outputs: %d\n", (int)g->n_outputs);
  for (int32_t i = 0; i < g->n_outputs; ++i)
    vkp__print_value(out, &g->values[g->outputs[i]], width);

  fprintf(out, "nodes: %d\n", (int)g->n_nodes);
  int32_t counts[VKP_OP_COUNT] = {0};
  for (int32_t i = 0; i < g->n_nodes; ++i) counts[g->nodes[i].op]++;
  // Most frequent first; ties in op table order.
  for (;;) {
    int best = -1;
    for (int op = 0; op < VKP_OP_COUNT; ++op)
      if (counts[op] > 0 && (best < 0 || counts[op] > counts[best])) best = op;
    if (best < 0) break;
    fprintf(out, "  %-16s %d\n", vkp_op_name((vkp_op_t)best), (int)counts[best]);
    counts[best] = 0;
  }

  size_t params = 0, n_constants = 0;
  for (int32_t i = 0; i < g->n_values; ++i) {
    const vkp_value_t *v = &g->values[i];
    if (v->kind != VKP_VALUE_CONSTANT) continue;
    ++n_constants;
    size_t elem = vkp_dtype_size(v->dtype);
    params += elem ? v->nbytes / elem : 0;
  }
  size_t bytes = vkp_graph_constant_bytes(g);
  char human[32];
  fprintf(out, "parameters: %zu in %zu constants, %zu bytes (%s)\n", params,
          n_constants, bytes, vkp_tool_format_bytes(bytes, human, sizeof human));
}
