// SPDX-License-Identifier: Apache-2.0
// Vulkan kernels of the padding and resampling family, one invocation per
// output element: pad, tile, expand, depth_to_space and space_to_depth
// through the index maps of graph/resample.h (remap.comp; the maps become
// GLSL constant arrays), resize with per-dim tap tables (resize.comp) and
// trilu (trilu.comp), eye_like (eye_like.comp), grid_sample over 2-D images
// (grid_sample.comp, graph/sample.h's coordinate rules in float).
#include <stdio.h>

#include "base/alloc.h"
#include "base/status_macros.h"
#include "codegen/spirv/glsl.h"
#include "codegen/spirv/kernels.h"
#include "graph/resample.h"
#include "graph/sample.h"

static void vkp__int_array(vkp__sb_t *sb, const char *name, const int64_t *v, int64_t n) {
  vkp__sb_printf(sb, "const int %s[%lld] = int[%lld](", name, (long long)n, (long long)n);
  for (int64_t i = 0; i < n; ++i)
    vkp__sb_printf(sb, "%s%lld", i ? (i % 16 ? ", " : ",\n    ") : "", (long long)v[i]);
  vkp__sb_append(sb, ");\n");
}

vkp_status_t vkp__spv_emit_remap(vkp__emit_t *e, const vkp_node_t *n) {
  const vkp_value_t *x = vkp__spv_input(e->g, n, 0);
  const vkp_value_t *y = &e->g->values[n->outputs[0]];
  vkp__remap_t plan;
  VKP_RETURN_IF_ERROR(vkp__remap_plan(n, x->rank, x->shape, &plan));
  vkp__sb_t *h = &e->head;
  for (int32_t d = 0; d < plan.rank; ++d) {
    if (!plan.map[d] || plan.shape[d] == 0) continue;
    int64_t *v = vkp__calloc((size_t)plan.shape[d], sizeof *v);
    if (!v) {
      vkp__remap_deinit(&plan);
      return vkp_status_make(VKP_STATUS_OUT_OF_MEMORY, "remap table");
    }
    for (int64_t i = 0; i < plan.shape[d]; ++i) v[i] = plan.map[d][i];
    char name[16];
    snprintf(name, sizeof name, "RM%d", (int)d);
    vkp__int_array(h, name, v, plan.shape[d]);
    vkp__free(v);
  }
  // Dims are peeled from the last; an index of -1 in any map is the fill.
  vkp__sb_append(h, "int vkp_remap_src(uint o) {\n  uint r = o;\n  int src = 0, m;\n");
  for (int32_t d = plan.rank - 1; d >= 0; --d) {
    if (plan.shape[d] == 1 && !plan.map[d]) continue;
    vkp__sb_printf(h, "  { uint i = r %% %lluu; r /= %lluu;\n",
                   (unsigned long long)plan.shape[d], (unsigned long long)plan.shape[d]);
    if (plan.map[d])
      vkp__sb_printf(h, "    m = RM%d[i]; if (m < 0) return -1;\n", (int)d);
    else
      vkp__sb_append(h, "    m = int(i);\n");
    vkp__sb_printf(h, "    src += m * %lld; }\n", (long long)plan.stride[d]);
  }
  vkp__sb_append(h, "  return src;\n}\n");
  vkp__spv_define_u(&e->body, "TOTAL", vkp__spv_numel(y));
  vkp__sb_append(&e->body, "#define FILL ");
  vkp__sb_float(&e->body, plan.fill);
  vkp__sb_append(&e->body, "\n");
  vkp__remap_deinit(&plan);
  vkp__spv_grid_1d(e, vkp__spv_numel(y));
  vkp__spv_template(e, VKP__SHADER_remap);
  return NULL;
}

vkp_status_t vkp__spv_emit_resize(vkp__emit_t *e, const vkp_node_t *n) {
  const vkp_value_t *x = vkp__spv_input(e->g, n, 0);
  const vkp_value_t *y = &e->g->values[n->outputs[0]];
  vkp__sb_t *h = &e->head;
  int32_t rank = x->rank;
  int64_t strides[VKP_MAX_RANK];
  vkp__spv_strides(x, strides);
  bool identity[VKP_MAX_RANK], any_outside[VKP_MAX_RANK];
  int32_t width[VKP_MAX_RANK];
  vkp_status_t st = NULL;
  for (int32_t d = 0; d < rank && !st; ++d) {
    width[d] = vkp__resize_width(n, d);
    int64_t len = y->shape[d], total = len * width[d];
    int64_t *idx = vkp__calloc((size_t)(total ? total : 1), sizeof *idx);
    double *w = vkp__calloc((size_t)(total ? total : 1), sizeof *w);
    int64_t *outside = vkp__calloc((size_t)(len ? len : 1), sizeof *outside);
    if (!idx || !w || !outside) {
      st = vkp_status_make(VKP_STATUS_OUT_OF_MEMORY, "resize tables");
    } else {
      identity[d] = width[d] == 1 && len == x->shape[d];
      any_outside[d] = false;
      for (int64_t o = 0; o < len; ++o) {
        bool out_of_roi;
        vkp__resize_taps(n, d, x->shape[d], len, o, idx + o * width[d], w + o * width[d],
                         &out_of_roi);
        outside[o] = out_of_roi;
        any_outside[d] |= out_of_roi;
        identity[d] &= idx[o * width[d]] == o && w[o * width[d]] == 1.0 && !out_of_roi;
      }
      char name[16];
      if (!identity[d] && total) {
        snprintf(name, sizeof name, "RI%d", (int)d);
        vkp__int_array(h, name, idx, total);
        vkp__sb_printf(h, "const float RW%d[%lld] = float[%lld](", (int)d, (long long)total,
                       (long long)total);
        for (int64_t i = 0; i < total; ++i) {
          vkp__sb_append(h, i ? (i % 8 ? ", " : ",\n    ") : "");
          vkp__sb_float(h, w[i]);
        }
        vkp__sb_append(h, ");\n");
      }
      if (any_outside[d]) {
        snprintf(name, sizeof name, "RO%d", (int)d);
        vkp__int_array(h, name, outside, len);
      }
    }
    vkp__free(idx);
    vkp__free(w);
    vkp__free(outside);
  }
  VKP_RETURN_IF_ERROR(st);
  vkp__sb_append(h, "float vkp_resize_value(uint o) {\n  uint r = o;\n");
  for (int32_t d = rank - 1; d >= 0; --d)
    vkp__sb_printf(h, "  uint p%d = r %% %lluu; r /= %lluu;\n", (int)d,
                   (unsigned long long)y->shape[d], (unsigned long long)y->shape[d]);
  for (int32_t d = 0; d < rank; ++d)
    if (any_outside[d]) {
      vkp__sb_printf(h, "  if (RO%d[p%d] != 0) return ", (int)d, (int)d);
      vkp__sb_float(h, vkp_node_float(n, "extrapolation_value"));
      vkp__sb_append(h, ";\n");
    }
  // One loop per resampled dim over its taps; identity dims add p * stride.
  vkp__sb_append(h, "  float acc = 0.0;\n  uint s_ = 0u;\n  float w_ = 1.0;\n");
  const char *prev_s = "s_", *prev_w = "w_";
  char sname[VKP_MAX_RANK][16], wname[VKP_MAX_RANK][16];
  int32_t loops = 0;
  for (int32_t d = 0; d < rank; ++d) {
    snprintf(sname[d], sizeof sname[d], "s%d", (int)d);
    snprintf(wname[d], sizeof wname[d], "w%d", (int)d);
    if (identity[d]) {
      vkp__sb_printf(h, "  uint s%d = %s + p%d * %lluu;\n  float w%d = %s;\n", (int)d, prev_s,
                     (int)d, (unsigned long long)strides[d], (int)d, prev_w);
    } else {
      vkp__sb_printf(h,
                     "  for (uint t%d = 0u; t%d < %du; ++t%d) {\n"
                     "  uint k%d = p%d * %du + t%d;\n"
                     "  uint s%d = %s + uint(RI%d[k%d]) * %lluu;\n"
                     "  float w%d = %s * RW%d[k%d];\n",
                     (int)d, (int)d, (int)width[d], (int)d, (int)d, (int)d, (int)width[d],
                     (int)d, (int)d, prev_s, (int)d, (int)d,
                     (unsigned long long)strides[d], (int)d, prev_w, (int)d, (int)d);
      ++loops;
    }
    prev_s = sname[d];
    prev_w = wname[d];
  }
  vkp__sb_printf(h, "  acc += %s * IN0[%s];\n", rank ? prev_w : "w_", rank ? prev_s : "s_");
  for (int32_t i = 0; i < loops; ++i) vkp__sb_append(h, "  }\n");
  vkp__sb_append(h, "  return acc;\n}\n");
  vkp__spv_define_u(&e->body, "TOTAL", vkp__spv_numel(y));
  vkp__spv_grid_1d(e, vkp__spv_numel(y));
  vkp__spv_template(e, VKP__SHADER_resize);
  return NULL;
}

// The tap tables become GLSL constant arrays: past these sizes the shader
// grows beyond what is sensible to compile (a very small antialiased scale,
// a huge output).
#define VKP__RESIZE_MAX_TAPS 64
#define VKP__RESIZE_MAX_TABLE 65536

bool vkp__spv_check_resize(const vkp_graph_t *g, const vkp_node_t *n,
                           uint32_t loop_budget, char *reason, size_t reason_size) {
  const vkp_value_t *y = &g->values[n->outputs[0]];
  for (int32_t d = 0; d < y->rank; ++d) {
    int32_t width = vkp__resize_width(n, d);
    if (width > VKP__RESIZE_MAX_TAPS || y->shape[d] * width > VKP__RESIZE_MAX_TABLE) {
      snprintf(reason, reason_size,
               "resize of dim %d to %lld takes %d taps each; the Vulkan kernel's "
               "tables hold at most %d taps and %d entries per dim",
               (int)d, (long long)y->shape[d], (int)width, VKP__RESIZE_MAX_TAPS,
               VKP__RESIZE_MAX_TABLE);
      return false;
    }
  }
  return true;
}

// The same limit for the index maps of remap.comp.
bool vkp__spv_check_remap(const vkp_graph_t *g, const vkp_node_t *n,
                          uint32_t loop_budget, char *reason, size_t reason_size) {
  const vkp_value_t *y = &g->values[n->outputs[0]];
  if (n->op != VKP_OP_PAD && n->op != VKP_OP_TILE) return true;
  for (int32_t d = 0; d < y->rank; ++d)
    if (y->shape[d] > VKP__RESIZE_MAX_TABLE) {
      snprintf(reason, reason_size,
               "%s to %lld along dim %d: the Vulkan kernel's index tables hold at most "
               "%d entries per dim",
               vkp_op_name(n->op), (long long)y->shape[d], (int)d, VKP__RESIZE_MAX_TABLE);
      return false;
    }
  return true;
}

vkp_status_t vkp__spv_emit_trilu(vkp__emit_t *e, const vkp_node_t *n) {
  const vkp_value_t *x = vkp__spv_input(e->g, n, 0);
  vkp__spv_define_u(&e->body, "TOTAL", vkp__spv_numel(x));
  vkp__spv_define_u(&e->body, "ROWS", (uint64_t)x->shape[x->rank - 2]);
  vkp__spv_define_u(&e->body, "COLS", (uint64_t)x->shape[x->rank - 1]);
  vkp__spv_define_i(&e->body, "UPPER", vkp_node_int(n, "upper"));
  int64_t k = vkp_node_int(n, "k");
  // K outside int range acts as any value beyond the matrix.
  int64_t limit = x->shape[x->rank - 2] + x->shape[x->rank - 1] + 1;
  vkp__spv_define_i(&e->body, "K", k > limit ? limit : (k < -limit ? -limit : k));
  vkp__spv_grid_1d(e, vkp__spv_numel(x));
  vkp__spv_template(e, VKP__SHADER_trilu);
  return NULL;
}

// eye_like: ones on diagonal K of a ROWS x COLS matrix of the output's
// dtype; the input only gives the shape (its binding is never read).
vkp_status_t vkp__spv_emit_eye_like(vkp__emit_t *e, const vkp_node_t *n) {
  const vkp_value_t *y = &e->g->values[n->outputs[0]];
  vkp__spv_define_u(&e->body, "TOTAL", vkp__spv_numel(y));
  vkp__spv_define_u(&e->body, "COLS", (uint64_t)y->shape[1]);
  int64_t k = vkp_node_int(n, "k");
  int64_t limit = y->shape[0] + y->shape[1] + 1;
  vkp__spv_define_i(&e->body, "K", k > limit ? limit : (k < -limit ? -limit : k));
  vkp__spv_grid_1d(e, vkp__spv_numel(y));
  vkp__spv_template(e, VKP__SHADER_eye_like);
  return NULL;
}

bool vkp__spv_check_grid_sample(const vkp_graph_t *g, const vkp_node_t *n,
                                uint32_t loop_budget, char *reason, size_t reason_size) {
  const vkp_value_t *x = vkp__spv_input(g, n, 0);
  if (x->rank != 4) {
    snprintf(reason, reason_size,
             "grid_sample over %d spatial dims: the Vulkan kernel samples 2-D images",
             (int)x->rank - 2);
    return false;
  }
  return true;
}

vkp_status_t vkp__spv_emit_grid_sample(vkp__emit_t *e, const vkp_node_t *n) {
  const vkp_value_t *x = vkp__spv_input(e->g, n, 0);
  const vkp_value_t *y = &e->g->values[n->outputs[0]];
  vkp__grid_params_t p;
  VKP_RETURN_IF_ERROR(vkp__grid_sample_params(n, &p));
  vkp__spv_define_u(&e->body, "TOTAL", vkp__spv_numel(y));
  vkp__spv_define_u(&e->body, "C", (uint64_t)x->shape[1]);
  vkp__spv_define_u(&e->body, "H", (uint64_t)x->shape[2]);
  vkp__spv_define_u(&e->body, "W", (uint64_t)x->shape[3]);
  vkp__spv_define_u(&e->body, "OH", (uint64_t)y->shape[2]);
  vkp__spv_define_u(&e->body, "OW", (uint64_t)y->shape[3]);
  vkp__spv_define_i(&e->body, "MODE", p.mode);
  vkp__spv_define_i(&e->body, "PADDING", p.padding);
  vkp__spv_define_i(&e->body, "ALIGN", p.align_corners);
  vkp__spv_grid_1d(e, vkp__spv_numel(y));
  vkp__spv_template(e, VKP__SHADER_grid_sample);
  return NULL;
}
