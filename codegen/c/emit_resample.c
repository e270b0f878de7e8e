// SPDX-License-Identifier: Apache-2.0
// C kernel emitters of the padding and resampling family: pad, tile,
// expand, depth_to_space and space_to_depth as one gather through index
// maps (vkp_remap, any dtype: elements move as 1-, 2-, 4- or 8-byte words),
// resize (vkp_resize_f32, float32) with per-dim tap tables, and the plain
// loops of trilu and eye_like. The maps and taps come from graph/resample.h,
// the plans the reference kernels run, written into the code as static
// tables.
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/scalar.h"
#include "base/status_macros.h"
#include "codegen/c/emit.h"
#include "codegen/c/emit_internal.h"
#include "graph/resample.h"

static void vkp__emit_i32_table(vkp__sb_t *sb, const char *name, const int32_t *v,
                                int64_t n) {
  vkp__sb_printf(sb, "  static const int32_t %s[%lld] = {", name, (long long)(n ? n : 1));
  for (int64_t i = 0; i < n; ++i)
    vkp__sb_printf(sb, "%s%d", i % 16 ? ", " : (i ? ",\n      " : ""), (int)v[i]);
  vkp__sb_append(sb, n ? "};\n" : "0};\n");
}

// The plan with rank >= 1 (a scalar is one element of shape [1]).
static vkp_status_t vkp__plan(const vkp__c_kernel_t *k, vkp__remap_t *plan) {
  const vkp_value_t *x = vkp__c_in(k, 0);
  VKP_RETURN_IF_ERROR(vkp__remap_plan(k->node, x->rank, x->shape, plan));
  if (plan->rank == 0) {
    plan->rank = 1;
    plan->shape[0] = 1;
    plan->stride[0] = 0;
  }
  return NULL;
}

vkp_status_t vkp__c_emit_remap(vkp__c_kernel_t *k) {
  const vkp_value_t *y = vkp__c_out(k);
  vkp__remap_t plan;
  VKP_RETURN_IF_ERROR(vkp__plan(k, &plan));
  vkp__sb_t *sb = k->body;
  unsigned char fill[8] = {0};
  vkp__scalar_set_f(y->dtype, fill, 0, plan.fill);
  vkp__sb_append(sb, "  static const unsigned char vkp_fill[8] = {");
  for (int i = 0; i < 8; ++i) vkp__sb_printf(sb, "%s%u", i ? ", " : "", (unsigned)fill[i]);
  vkp__sb_append(sb, "};\n");
  for (int32_t d = 0; d < plan.rank; ++d) {
    if (!plan.map[d]) continue;
    char name[24];  // "vkp_map" and any int
    snprintf(name, sizeof name, "vkp_map%d", (int)d);
    vkp__emit_i32_table(sb, name, plan.map[d], plan.shape[d]);
  }
  if (vkp__c_bounded(k)) {
    // A pad that leaves the varying axis as it is (graph/bounded.h): the
    // output's shape and the input's strides at their run-time sizes; the
    // maps of the padded axes do not depend on it.
    vkp__c_emit_shape(sb, "vkp_shape", y, k->out_ext[0], false);
    vkp__c_emit_shape(sb, "vkp_stride", vkp__c_in(k, 0), k->in_ext[0], true);
    vkp__sb_append(sb, "  const int32_t *const vkp_maps[] = {");
  } else {
    vkp__sb_append(sb, "  static const ptrdiff_t vkp_shape[] = {");
    for (int32_t d = 0; d < plan.rank; ++d)
      vkp__sb_printf(sb, "%s%lld", d ? ", " : "", (long long)plan.shape[d]);
    vkp__sb_append(sb, "}, vkp_stride[] = {");
    for (int32_t d = 0; d < plan.rank; ++d)
      vkp__sb_printf(sb, "%s%lld", d ? ", " : "", (long long)plan.stride[d]);
    vkp__sb_append(sb, "};\n  const int32_t *const vkp_maps[] = {");
  }
  for (int32_t d = 0; d < plan.rank; ++d) {
    if (plan.map[d])
      vkp__sb_printf(sb, "%svkp_map%d", d ? ", " : "", (int)d);
    else
      vkp__sb_printf(sb, "%sNULL", d ? ", " : "");
  }
  vkp__sb_append(sb, "};\n");
  vkp__sb_printf(sb,
                 "  vkp_remap(&(vkp_remap_t){%s, %s, %d, %d, vkp_shape, vkp_stride, vkp_maps, vkp_fill});\n",
                 k->out, k->in[0], (int)vkp_dtype_size(y->dtype), (int)plan.rank);
  vkp__remap_deinit(&plan);
  return NULL;
}

vkp_status_t vkp__c_emit_resize(vkp__c_kernel_t *k) {
  const vkp_node_t *n = k->node;
  const vkp_value_t *x = vkp__c_in(k, 0), *y = vkp__c_out(k);
  vkp__sb_t *sb = k->body;
  int32_t rank = x->rank > 0 ? x->rank : 1;
  int64_t in_shape[VKP_MAX_RANK], out_shape[VKP_MAX_RANK], stride[VKP_MAX_RANK];
  for (int32_t d = 0; d < rank; ++d) {
    in_shape[d] = x->rank ? x->shape[d] : 1;
    out_shape[d] = y->rank ? y->shape[d] : 1;
  }
  int64_t s = 1;
  for (int32_t d = rank - 1; d >= 0; --d) {
    stride[d] = s;
    s *= in_shape[d];
  }
  int32_t width[VKP_MAX_RANK];
  for (int32_t d = 0; d < rank; ++d) {
    width[d] = x->rank ? vkp__resize_width(n, d) : 1;
    int64_t len = out_shape[d], total = len * width[d];
    int64_t *idx = vkp__calloc((size_t)width[d], sizeof *idx);
    double *w = vkp__calloc((size_t)width[d], sizeof *w);
    if (!idx || !w) {
      vkp__free(idx);
      vkp__free(w);
      return vkp_status_make(VKP_STATUS_OUT_OF_MEMORY, "resize taps");
    }
    vkp__sb_printf(sb, "  static const int32_t vkp_ri%d[%lld] = {", (int)d,
                   (long long)(total ? total : 1));
    vkp__sb_t weights = {0}, outside = {0};
    vkp__sb_printf(&weights, "  static const float vkp_rw%d[%lld] = {", (int)d,
                   (long long)(total ? total : 1));
    vkp__sb_printf(&outside, "  static const unsigned char vkp_ro%d[%lld] = {", (int)d,
                   (long long)(len ? len : 1));
    for (int64_t o = 0; o < len; ++o) {
      bool out_of_roi = false;
      if (x->rank) {
        vkp__resize_taps(n, d, in_shape[d], len, o, idx, w, &out_of_roi);
      } else {
        idx[0] = 0;
        w[0] = 1.0;
      }
      for (int32_t t = 0; t < width[d]; ++t) {
        bool first = o == 0 && t == 0;
        vkp__sb_printf(sb, "%s%lld", first ? "" : ", ", (long long)idx[t]);
        char lit[64];
        vkp_codegen_c_literal(w[t], lit, sizeof lit);
        vkp__sb_printf(&weights, "%s%s", first ? "" : ", ", lit);
      }
      vkp__sb_printf(&outside, "%s%d", o ? ", " : "", (int)out_of_roi);
    }
    vkp__sb_append(sb, total ? "};\n" : "0};\n");
    vkp__sb_append(&weights, total ? "};\n" : "0};\n");
    vkp__sb_append(&outside, len ? "};\n" : "0};\n");
    vkp_status_t st = vkp__sb_status(&weights, "resize weights");
    if (!st) st = vkp__sb_status(&outside, "resize flags");
    if (!st) {
      vkp__sb_append(sb, weights.data);
      vkp__sb_append(sb, outside.data);
    }
    vkp__sb_deinit(&weights);
    vkp__sb_deinit(&outside);
    vkp__free(idx);
    vkp__free(w);
    VKP_RETURN_IF_ERROR(st);
  }
  static const char *const lists[3][2] = {{"int32_t", "vkp_ri"}, {"float", "vkp_rw"},
                                          {"unsigned char", "vkp_ro"}};
  for (int l = 0; l < 3; ++l) {
    vkp__sb_printf(sb, "  const %s *const %s[] = {", lists[l][0], lists[l][1]);
    for (int32_t d = 0; d < rank; ++d)
      vkp__sb_printf(sb, "%s%s%d", d ? ", " : "", lists[l][1], (int)d);
    vkp__sb_append(sb, "};\n");
  }
  if (vkp__c_bounded(k)) {
    // An axis the resize keeps varies (graph/bounded.h): the strides and
    // the output's shape at their run-time sizes; the tap tables, written
    // for the bound, are the identity along it.
    vkp__c_emit_shape(sb, "vkp_in_stride", x, k->in_ext[0], true);
    vkp__c_emit_shape(sb, "vkp_out_shape", y, k->out_ext[0], false);
  } else {
    vkp__sb_append(sb, "  static const ptrdiff_t vkp_in_stride[] = {");
    for (int32_t d = 0; d < rank; ++d)
      vkp__sb_printf(sb, "%s%lld", d ? ", " : "", (long long)stride[d]);
    vkp__sb_append(sb, "}, vkp_out_shape[] = {");
    for (int32_t d = 0; d < rank; ++d)
      vkp__sb_printf(sb, "%s%lld", d ? ", " : "", (long long)out_shape[d]);
    vkp__sb_append(sb, "};\n");
  }
  vkp__sb_append(sb, "  static const int vkp_width[] = {");
  for (int32_t d = 0; d < rank; ++d) vkp__sb_printf(sb, "%s%d", d ? ", " : "", (int)width[d]);
  char lit[64];
  vkp_codegen_c_literal(vkp_node_float(n, "extrapolation_value"), lit, sizeof lit);
  vkp__sb_printf(sb,
                 "};\n  vkp_resize_f32(&(vkp_resize_t){%s, %s, %d, vkp_in_stride, vkp_out_shape, "
                 "vkp_width, vkp_ri, vkp_rw, vkp_ro, %s});\n",
                 k->in[0], k->out, (int)rank, lit);
  return NULL;
}

vkp_status_t vkp__c_emit_trilu(vkp__c_kernel_t *k) {
  const vkp_value_t *x = vkp__c_in(k, 0);
  long long rows = x->shape[x->rank - 2], cols = x->shape[x->rank - 1], batch = 1;
  for (int32_t d = 0; d + 2 < x->rank; ++d) batch *= x->shape[d];
  long long kk = vkp_node_int(k->node, "k");
  bool upper = vkp_node_int(k->node, "upper") != 0;
  vkp__sb_printf(k->body,
                 "  for (ptrdiff_t b = 0; b < %lld; ++b)\n"
                 "    for (ptrdiff_t r = 0; r < %lld; ++r)\n"
                 "      for (ptrdiff_t c = 0; c < %lld; ++c) {\n"
                 "        ptrdiff_t i = (b * %lld + r) * %lld + c;\n"
                 "        %s[i] = c - r %s %lld ? %s[i] : 0;\n"
                 "      }\n",
                 batch, rows, cols, rows, cols, k->out, upper ? ">=" : "<=", kk, k->in[0]);
  return NULL;
}

vkp_status_t vkp__c_emit_eye_like(vkp__c_kernel_t *k) {
  const vkp_value_t *y = vkp__c_out(k);
  // One as the output's C type stores it (float16 and bfloat16 as bits).
  const char *one = y->dtype == VKP_DTYPE_FLOAT16    ? "0x3C00"
                    : y->dtype == VKP_DTYPE_BFLOAT16 ? "0x3F80"
                                                     : "1";
  vkp__sb_printf(k->body,
                 "  for (ptrdiff_t r = 0; r < %lld; ++r)\n"
                 "    for (ptrdiff_t c = 0; c < %lld; ++c)\n"
                 "      %s[r * %lld + c] = c - r == %lld ? %s : 0;\n",
                 (long long)y->shape[0], (long long)y->shape[1], k->out,
                 (long long)y->shape[1], (long long)vkp_node_int(k->node, "k"), one);
  return NULL;
}
