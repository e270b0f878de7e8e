// SPDX-License-Identifier: Apache-2.0
// Vulkan kernels of the signal family: dft and stft on float32 data, one
// invocation per output bin summing its line directly (dft.comp), with
// roots of unity from exact integer arguments. The lines are described as
// strides, as the cpu generator's vkp_dft takes them (codegen/c/emit_signal.c).
// Also det (det.comp): one invocation per matrix of at most 16 x 16.
#include <stdio.h>

#include "codegen/spirv/kernels.h"

#define VKP__DET_MAX_M 16

// v: INNER, XA, XB, XS, CH, HAVE, YA, YB, YS.
static void vkp__define_lines(vkp__emit_t *e, uint64_t lines, const uint64_t *v, uint64_t n,
                              uint64_t n_out, bool inverse, bool window) {
  static const char *const names[9] = {"INNER", "XA", "XB", "XS", "CH",
                                       "HAVE", "YA", "YB", "YS"};
  vkp__spv_define_u(&e->body, "TOTAL", lines * n_out);
  vkp__spv_define_u(&e->body, "N", n);
  vkp__spv_define_u(&e->body, "N_OUT", n_out);
  for (int i = 0; i < 9; ++i) vkp__spv_define_u(&e->body, names[i], v[i]);
  vkp__sb_printf(&e->body, "#define SIGN %s\n#define SCALE %.17g\n", inverse ? "1.0" : "-1.0",
                 inverse ? 1.0 / (double)n : 1.0);
  if (window) vkp__sb_append(&e->body, "#define WINDOW 1\n");
  vkp__spv_grid_1d(e, lines * n_out);
  vkp__spv_template(e, VKP__SHADER_dft);
}

vkp_status_t vkp__spv_emit_dft(vkp__emit_t *e, const vkp_node_t *n) {
  const vkp_value_t *x = vkp__spv_input(e->g, n, 0);
  const vkp_value_t *y = &e->g->values[n->outputs[0]];
  int32_t axis = (int32_t)vkp_node_int(n, "axis");
  uint64_t len = (uint64_t)vkp_node_int(n, "length"), ch = (uint64_t)x->shape[x->rank - 1];
  uint64_t l_in = (uint64_t)x->shape[axis], n_out = (uint64_t)y->shape[axis];
  uint64_t outer = 1, inner = 1;
  for (int32_t d = 0; d < x->rank - 1; ++d) {
    if (d < axis) outer *= (uint64_t)x->shape[d];
    if (d > axis) inner *= (uint64_t)x->shape[d];
  }
  uint64_t v[9] = {inner, l_in * inner * ch, ch, inner * ch, ch,
                   l_in < len ? l_in : len, n_out * inner * 2, 2, inner * 2};
  vkp__define_lines(e, outer * inner, v, len, n_out, vkp_node_int(n, "inverse") != 0, false);
  return NULL;
}

vkp_status_t vkp__spv_emit_stft(vkp__emit_t *e, const vkp_node_t *n) {
  const vkp_value_t *x = vkp__spv_input(e->g, n, 0);
  const vkp_value_t *y = &e->g->values[n->outputs[0]];
  uint64_t len = (uint64_t)vkp_node_int(n, "frame_length");
  uint64_t step = (uint64_t)vkp_node_int(n, "frame_step"), ch = (uint64_t)x->shape[2];
  uint64_t frames = (uint64_t)y->shape[1], bins = (uint64_t)y->shape[2];
  uint64_t v[9] = {frames, (uint64_t)x->shape[1] * ch, step * ch, ch, ch, len,
                   frames * bins * 2, bins * 2, 2};
  vkp__define_lines(e, (uint64_t)x->shape[0] * frames, v, len, bins, false,
                    n->n_inputs > 1 && n->inputs[1] >= 0);
  return NULL;
}

bool vkp__spv_check_signal(const vkp_graph_t *g, const vkp_node_t *n,
                           uint32_t loop_budget, char *reason, size_t reason_size) {
  const vkp_value_t *x = vkp__spv_input(g, n, 0);
  uint64_t line;
  if (n->op == VKP_OP_STFT) {
    line = (uint64_t)vkp_node_int(n, "frame_length");
  } else {
    int32_t axis = (int32_t)vkp_node_int(n, "axis");
    uint64_t len = (uint64_t)vkp_node_int(n, "length");
    uint64_t l_in = axis >= 0 && axis < x->rank ? (uint64_t)x->shape[axis] : 0;
    line = l_in < len ? l_in : len;
  }
  char what[96];
  snprintf(what, sizeof what, "%s over lines of %llu samples", vkp_op_name(n->op),
           (unsigned long long)line);
  return vkp__spv_within_loop_budget(line, loop_budget, what,
                                     "the rest of the line would be left out", reason,
                                     reason_size);
}

bool vkp__spv_check_det(const vkp_graph_t *g, const vkp_node_t *n,
                        uint32_t loop_budget, char *reason, size_t reason_size) {
  const vkp_value_t *x = vkp__spv_input(g, n, 0);
  int64_t m = x->shape[x->rank - 1];
  if (m >= 1 && m <= VKP__DET_MAX_M) return true;
  snprintf(reason, reason_size,
           "det of %lld x %lld matrices: the Vulkan kernel factorises 1 x 1 to %d x %d "
           "ones in registers",
           (long long)m, (long long)m, VKP__DET_MAX_M, VKP__DET_MAX_M);
  return false;
}

vkp_status_t vkp__spv_emit_det(vkp__emit_t *e, const vkp_node_t *n) {
  const vkp_value_t *y = &e->g->values[n->outputs[0]];
  const vkp_value_t *x = vkp__spv_input(e->g, n, 0);
  vkp__spv_define_u(&e->body, "TOTAL", vkp__spv_numel(y));
  vkp__spv_define_u(&e->body, "M", (uint64_t)x->shape[x->rank - 1]);
  vkp__spv_grid_1d(e, vkp__spv_numel(y));
  vkp__spv_template(e, VKP__SHADER_det);
  return NULL;
}
