// SPDX-License-Identifier: Apache-2.0
// Vulkan kernels of the selection family: cum_sum (one invocation per row
// along the axis, in the data's type), arg_max / arg_min (one invocation per
// output element, int64 indices) and top_k (one invocation per input
// element, which finds its rank; one dispatch per output: the values, then
// the int64 indices) and the two losses (loss.comp).
#include <stdio.h>
#include <string.h>

#include "codegen/spirv/kernels.h"

// [OUTER, L, INNER] around `axis` of x.
static void vkp__split_axis(const vkp_value_t *x, int64_t axis, uint64_t *outer,
                            uint64_t *inner) {
  *outer = *inner = 1;
  for (int32_t d = 0; d < axis; ++d) *outer *= (uint64_t)x->shape[d];
  for (int32_t d = (int32_t)axis + 1; d < x->rank; ++d) *inner *= (uint64_t)x->shape[d];
}

// IN_T and VKP_ISNAN for the data x (NaN only exists in float data).
static void vkp__define_data_type(vkp__sb_t *sb, const vkp_value_t *x) {
  vkp__sb_printf(sb, "#define IN_T %s\n", vkp__spv_value_type(x->dtype));
  vkp__sb_append(sb, x->dtype == VKP_DTYPE_FLOAT32 ? "#define VKP_ISNAN(x) isnan(x)\n"
                                                   : "#define VKP_ISNAN(x) false\n");
}

vkp_status_t vkp__spv_emit_cum_sum(vkp__emit_t *e, const vkp_node_t *n) {
  const vkp_value_t *x = vkp__spv_input(e->g, n, 0);
  uint64_t outer, inner;
  vkp__split_axis(x, vkp_node_int(n, "axis"), &outer, &inner);
  vkp__spv_define_u(&e->body, "ROWS", outer * inner);
  vkp__spv_define_u(&e->body, "L", (uint64_t)x->shape[vkp_node_int(n, "axis")]);
  vkp__spv_define_u(&e->body, "INNER", inner);
  if (vkp_node_int(n, "reverse")) vkp__sb_append(&e->body, "#define REVERSE 1\n");
  if (vkp_node_int(n, "exclusive")) vkp__sb_append(&e->body, "#define EXCLUSIVE 1\n");
  vkp__spv_grid_1d(e, outer * inner);
  vkp__spv_template(e, VKP__SHADER_cum_sum);
  return NULL;
}

bool vkp__spv_check_cum_sum(const vkp_graph_t *g, const vkp_node_t *n,
                            uint32_t loop_budget, char *reason, size_t reason_size) {
  const vkp_value_t *x = vkp__spv_input(g, n, 0);
  int64_t axis = vkp_node_int(n, "axis");
  // One invocation walks the whole axis; lavapipe's compiler ends its loop
  // after 65535 iterations (the rest of the axis came out zero on an axis of
  // 70,000): see "lavapipe's loop limit" in README.md.
  uint64_t len = axis >= 0 && axis < x->rank ? (uint64_t)x->shape[axis] : 0;
  if (!loop_budget || len < loop_budget) return true;
  snprintf(reason, reason_size,
           "cum_sum along an axis of %llu: one invocation of the Vulkan kernel walks the "
           "whole axis, and lavapipe's compiler cuts a shader's loops at %u iterations "
           "(the rest of the axis would be zero)",
           (unsigned long long)len, loop_budget);
  return false;
}

vkp_status_t vkp__spv_emit_arg(vkp__emit_t *e, const vkp_node_t *n) {
  const vkp_value_t *x = vkp__spv_input(e->g, n, 0);
  const vkp_value_t *y = &e->g->values[n->outputs[0]];
  int64_t axis = vkp_node_int(n, "axis");
  uint64_t outer, inner;
  vkp__split_axis(x, axis, &outer, &inner);
  vkp__spv_define_u(&e->body, "TOTAL", vkp__spv_numel(y));
  vkp__spv_define_u(&e->body, "L", (uint64_t)x->shape[axis]);
  vkp__spv_define_u(&e->body, "INNER", inner);
  vkp__spv_define_i(&e->body, "WANT", n->op == VKP_OP_ARG_MAX ? 1 : -1);
  vkp__spv_define_i(&e->body, "LAST", vkp_node_int(n, "select_last_index"));
  vkp__define_data_type(&e->body, x);
  vkp__spv_grid_1d(e, vkp__spv_numel(y));
  vkp__spv_template(e, VKP__SHADER_arg);
  return NULL;
}

vkp_status_t vkp__spv_emit_top_k(vkp__emit_t *e, const vkp_node_t *n) {
  const vkp_value_t *x = vkp__spv_input(e->g, n, 0);
  int64_t axis = vkp_node_int(n, "axis");
  uint64_t outer, inner;
  vkp__split_axis(x, axis, &outer, &inner);
  vkp__spv_define_u(&e->body, "TOTAL", vkp__spv_numel(x));
  vkp__spv_define_u(&e->body, "L", (uint64_t)x->shape[axis]);
  vkp__spv_define_u(&e->body, "K", (uint64_t)vkp_node_int(n, "k"));
  vkp__spv_define_u(&e->body, "INNER", inner);
  vkp__spv_define_i(&e->body, "LARGEST", vkp_node_int(n, "largest"));
  vkp__spv_define_i(&e->body, "VALUES", e->part == 0);
  vkp__define_data_type(&e->body, x);
  vkp__spv_grid_1d(e, vkp__spv_numel(x));
  vkp__spv_template(e, VKP__SHADER_top_k);
  return NULL;
}

bool vkp__spv_check_loss(const vkp_graph_t *g, const vkp_node_t *n,
                         uint32_t loop_budget, char *reason, size_t reason_size) {
  const vkp_value_t *x = vkp__spv_input(g, n, 0), *labels = vkp__spv_input(g, n, 1);
  const char *reduction = vkp_node_string(n, "reduction");
  bool reduce = !reduction || strcmp(reduction, "none") != 0;
  uint64_t c = x->rank > 1 ? (uint64_t)x->shape[1] : 1;
  // Each position's loss loops over the classes twice under softmax. On
  // lavapipe those loops count against the budget once they are long (200
  // positions of 1000 classes came out 80% off, 20,000 of 64 97% off) and
  // not while they are short (20,000 positions of 32 classes, 30,000 of 16
  // and 60,000 of 3 were exact): up to 32 classes only the positions count.
  uint64_t per = n->op == VKP_OP_SOFTMAX_CROSS_ENTROPY_LOSS && c > 32 ? 1 + 2 * c : 1;
  uint64_t iters = reduce ? vkp__spv_numel(labels) * per : per;
  char what[128];
  snprintf(what, sizeof what, "%s over %llu positions of %llu classes%s", vkp_op_name(n->op),
           (unsigned long long)vkp__spv_numel(labels), (unsigned long long)c,
           reduce ? ", reduced" : "");
  return vkp__spv_within_loop_budget(iters, loop_budget, what,
                                     "the loss would leave positions out", reason,
                                     reason_size);
}

// negative_log_likelihood_loss and softmax_cross_entropy_loss (loss.comp):
// part 0 the loss (one invocation per position with reduction "none", else
// a single invocation summing every position: a loss is a small tail of a
// graph), part 1 softmax's log_softmax(X).
vkp_status_t vkp__spv_emit_loss(vkp__emit_t *e, const vkp_node_t *n) {
  const vkp_value_t *x = vkp__spv_input(e->g, n, 0), *labels = vkp__spv_input(e->g, n, 1);
  const char *reduction = vkp_node_string(n, "reduction");
  uint64_t positions = vkp__spv_numel(labels), xtotal = vkp__spv_numel(x);
  uint64_t c = (uint64_t)x->shape[1], d = c && x->shape[0] ? xtotal / c / (uint64_t)x->shape[0] : 1;
  vkp__sb_t *sb = &e->body;
  vkp__spv_define_u(sb, "C", c);
  vkp__spv_define_u(sb, "D", d ? d : 1);
  vkp__spv_define_u(sb, "POSITIONS", positions);
  vkp__spv_define_u(sb, "XTOTAL", xtotal);
  vkp__spv_define_i(sb, "LABEL64", labels->dtype == VKP_DTYPE_INT64);
  vkp__spv_define_i(sb, "SOFTMAX", n->op == VKP_OP_SOFTMAX_CROSS_ENTROPY_LOSS);
  vkp__spv_define_i(sb, "HAS_WEIGHT", vkp__spv_input(e->g, n, 2) != NULL);
  const vkp_attr_t *ignore = vkp_node_attr(n, "ignore_index");
  // An ignore_index outside int range matches no label the kernel reads.
  if (ignore && ignore->i > INT32_MIN && ignore->i <= INT32_MAX)
    vkp__spv_define_i(sb, "IGNORE_INDEX", ignore->i);
  vkp__spv_define_i(sb, "LOG_PROB", e->part == 1);
  vkp__spv_define_i(sb, "REDUCE_NONE", strcmp(reduction, "none") == 0);
  vkp__spv_define_i(sb, "REDUCE_MEAN", strcmp(reduction, "mean") == 0);
  uint64_t grid = e->part == 1 ? xtotal : strcmp(reduction, "none") == 0 ? positions : 1;
  vkp__spv_grid_1d(e, grid);
  vkp__spv_template(e, VKP__SHADER_loss);
  return NULL;
}
