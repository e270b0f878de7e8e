// SPDX-License-Identifier: Apache-2.0
// Vulkan kernel emitter for attention (shaders/attention.comp): one
// invocation per query row, the batch offsets of every operand as affine
// functions of the batch index (broadcast dims contribute 0).
#include <stdio.h>

#include "codegen/spirv/glsl.h"
#include "codegen/spirv/kernels.h"

// Largest Dv the kernel takes: each invocation keeps a row of Dv floats.
#define VKP__ATT_MAX_DV 256

// `uint fname(uint b)`: element offset of batch b's matrix in `t` (its last
// `tail` dims are not batch dims) over the output batch shape.
static void vkp__batch_fn(vkp__sb_t *sb, const char *fname, const vkp_value_t *t,
                          int32_t tail, const vkp_value_t *y) {
  int32_t brank = y->rank - 2, tb = t->rank - tail;
  int64_t strides[VKP_MAX_RANK], coefs[VKP_MAX_RANK] = {0};
  vkp__spv_strides(t, strides);
  for (int32_t d = 0; d < brank; ++d) {
    int32_t td = d - (brank - tb);
    if (td >= 0 && t->shape[td] != 1) coefs[d] = strides[td];
  }
  vkp__spv_affine(sb, fname, brank, y->shape, coefs, 0);
}

// Row and column strides over [Lq, Lk] of a mask broadcasting to the scores.
static void vkp__mask_strides(const vkp_value_t *m, int64_t *rs, int64_t *cs) {
  int64_t st[VKP_MAX_RANK];
  vkp__spv_strides(m, st);
  *cs = m->rank >= 1 && m->shape[m->rank - 1] != 1 ? st[m->rank - 1] : 0;
  *rs = m->rank >= 2 && m->shape[m->rank - 2] != 1 ? st[m->rank - 2] : 0;
}

bool vkp__spv_check_attention(const vkp_graph_t *g, const vkp_node_t *n,
                              uint32_t loop_budget, char *reason, size_t reason_size) {
  const vkp_value_t *y = &g->values[n->outputs[0]];
  int64_t dv = y->shape[y->rank - 1];
  if (dv > VKP__ATT_MAX_DV) {
    snprintf(reason, reason_size,
             "attention with %lld value columns: the Vulkan kernel keeps a row "
             "of at most %d per invocation",
             (long long)dv, VKP__ATT_MAX_DV);
    return false;
  }
  // One invocation walks every key, and per key the query's D columns and
  // (up to twice) its DV accumulators; lavapipe's compiler cuts a shader's
  // loops at 65535 iterations ("lavapipe's loop limit" in README.md): 512
  // keys at D = DV = 64 gave wrong rows there, silently. No split over the
  // keys yet, so past the budget the node is refused.
  const vkp_value_t *kt = vkp__spv_input(g, n, 1);
  uint64_t d = (uint64_t)kt->shape[kt->rank - 2], lk = (uint64_t)kt->shape[kt->rank - 1];
  uint64_t iters = 2u * (uint64_t)dv + lk * (1u + d + 2u * (uint64_t)dv);
  char what[112];
  snprintf(what, sizeof what, "attention over %llu keys with %llu query and %lld value columns",
           (unsigned long long)lk, (unsigned long long)d, (long long)dv);
  return vkp__spv_within_loop_budget(iters, loop_budget, what, "the later keys would be lost",
                                     reason, reason_size);
}

vkp_status_t vkp__spv_emit_attention(vkp__emit_t *e, const vkp_node_t *n) {
  const vkp_graph_t *g = e->g;
  const vkp_value_t *q = vkp__spv_input(g, n, 0), *kt = vkp__spv_input(g, n, 1);
  const vkp_value_t *v = vkp__spv_input(g, n, 2), *m = vkp__spv_input(g, n, 3);
  const vkp_value_t *c = vkp__spv_input(g, n, 4), *y = &g->values[n->outputs[0]];
  int32_t brank = y->rank - 2;
  uint64_t batches = 1;
  for (int32_t d = 0; d < brank; ++d) batches *= (uint64_t)y->shape[d];
  uint64_t lq = (uint64_t)y->shape[brank], dv = (uint64_t)y->shape[brank + 1];
  vkp__sb_t *s = &e->body;
  vkp__spv_define_u(s, "ROWS", batches * lq);
  vkp__spv_define_u(s, "LQ", lq);
  vkp__spv_define_u(s, "LK", (uint64_t)kt->shape[kt->rank - 1]);
  vkp__spv_define_u(s, "D", (uint64_t)q->shape[q->rank - 1]);
  vkp__spv_define_u(s, "DV", dv);
  vkp__sb_append(s, "#define SCALE ");
  vkp__sb_float(s, vkp_node_float(n, "scale"));
  vkp__sb_append(s, "\n");
  vkp__batch_fn(&e->head, "vkp_q_batch", q, 2, y);
  vkp__batch_fn(&e->head, "vkp_k_batch", kt, 2, y);
  vkp__batch_fn(&e->head, "vkp_v_batch", v, 2, y);
  // Omitted inputs are not bound: the mask and condition take the next
  // bindings after V.
  int32_t next = 3;
  int64_t rs, cs;
  if (m) {
    vkp__sb_printf(s, "#define MASK IN%d\n", (int)next++);
    vkp__batch_fn(&e->head, "vkp_m_batch", m, 2, y);
    vkp__mask_strides(m, &rs, &cs);
    vkp__spv_define_u(s, "M_RS", (uint64_t)rs);
    vkp__spv_define_u(s, "M_CS", (uint64_t)cs);
  }
  if (c) {
    vkp__sb_printf(s, "#define COND IN%d\n", (int)next++);
    vkp__batch_fn(&e->head, "vkp_c_batch", c, 2, y);
    vkp__mask_strides(c, &rs, &cs);
    vkp__spv_define_u(s, "C_RS", (uint64_t)rs);
    vkp__spv_define_u(s, "C_CS", (uint64_t)cs);
    vkp__sb_append(s, "#define FILL ");
    vkp__sb_float(s, vkp_node_float(n, "fill"));
    vkp__sb_printf(s, "\n#define FILL_WHERE %s\n",
                   vkp_node_int(n, "fill_where") ? "true" : "false");
  }
  vkp__spv_grid_1d(e, batches * lq);
  vkp__spv_template(e, VKP__SHADER_attention);
  return NULL;
}
