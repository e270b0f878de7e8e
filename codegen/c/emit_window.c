// SPDX-License-Identifier: Apache-2.0
// Emitters of the N-d window ops (prelude_window.c): conv2d over 1 or 3
// spatial dims (2-D convolutions are GEMM / Winograd / depthwise anchors in
// emit.c), conv_transpose, lp_pool, and max / avg pooling that is not 2-D
// or returns max_pool2d's indices, and int8 / uint8 max pooling (the rest
// runs vkp_pool2d / vkp_maxpool2d); max_unpool.
#include <stdio.h>

#include "codegen/c/emit_internal.h"

// Writes `static const vkp_win3_t win = {...};` for node k->node, whose
// window sizes are `kernel` (S of them), as the prelude's 3-D view.
static void vkp__emit_win3(vkp__c_kernel_t *k, const int64_t *kernel) {
  const vkp_node_t *n = k->node;
  const vkp_value_t *x = vkp__c_in(k, 0), *y = vkp__c_out(k);
  int32_t s = x->rank - 2, lead = 3 - s;
  const int64_t *pads, *strides, *dil;
  vkp_node_attr_ints(n, "pads", &pads);
  vkp_node_attr_ints(n, "strides", &strides);
  vkp_node_attr_ints(n, "dilations", &dil);
  long long rows[7][3];
  for (int32_t d = 0; d < 3; ++d) {
    int32_t i = d - lead;
    bool real = i >= 0;
    rows[0][d] = real ? (long long)x->shape[2 + i] : 1;
    rows[1][d] = real ? (long long)y->shape[2 + i] : 1;
    rows[2][d] = real ? (long long)kernel[i] : 1;
    rows[3][d] = real ? (long long)strides[i] : 1;
    rows[4][d] = real ? (long long)dil[i] : 1;
    rows[5][d] = real ? (long long)pads[i] : 0;
    rows[6][d] = real ? (long long)pads[s + i] : 0;
  }
  vkp__sb_append(k->body, "  static const vkp_win3_t win = {");
  for (int r = 0; r < 7; ++r)
    vkp__sb_printf(k->body, "%s{%lld, %lld, %lld}", r ? ", " : "", rows[r][0], rows[r][1],
                   rows[r][2]);
  vkp__sb_append(k->body, "};\n");
}

vkp_status_t vkp__c_emit_window(vkp__c_kernel_t *k) {
  const vkp_node_t *n = k->node;
  const vkp_value_t *x = vkp__c_in(k, 0);
  long long c = x->shape[1];
  // A bounded input varies along the batch (graph/bounded.h): the run-time
  // batch; every image keeps its static size.
  vkp__c_dim_t batch = vkp__c_dims(x, k->in_ext[0], 0, 1);
  vkp__c_dim_t planes = vkp__c_dims(x, k->in_ext[0], 0, 2);
  if (n->op == VKP_OP_CONV2D || n->op == VKP_OP_CONV_TRANSPOSE) {
    const vkp_value_t *w = vkp__c_in(k, 1);
    long long groups = vkp_node_int(n, "group");
    long long m = vkp__c_out(k)->shape[1];
    vkp__emit_win3(k, w->shape + 2);
    const char *bias = n->n_inputs > 2 && k->in[2] ? k->in[2] : "NULL";
    long long taps = 1, in_plane = 1;
    for (int32_t d = 2; d < w->rank; ++d) taps *= w->shape[d];
    for (int32_t d = 2; d < x->rank; ++d) in_plane *= x->shape[d];
    // A transposed convolution with enough channels to fill a GEMM runs as
    // GEMM + col2im (DCGAN's generator was 100x ONNX Runtime's time as a
    // scatter); a thin one keeps the scatter, which needs no scratch.
    if (n->op == VKP_OP_CONV_TRANSPOSE && c / groups >= 8 && m / groups * taps >= 16) {
      vkp__sb_printf(k->body,
                     "  vkp_conv_transpose3d_gemm(%s, %s, %s, %s, %s, %lld, %lld, %lld, &win,\n"
                     "      scratch + (size_t)VKP_STAGE_THREADS * VKP_GEMM_SCRATCH_FLOATS, "
                     "scratch, VKP_STAGE_THREADS);\n",
                     k->in[0], k->in[1], bias, k->out, batch.s, c, m, groups);
      k->scratch_floats = (size_t)(m / groups * taps * in_plane) + 1;
      k->after_gemm_scratch = true;
      return NULL;
    }
    // A convolution whose groups fill a GEMM runs as one per output frame
    // over the im2col view (vkp_conv3d_gemm; S3D was 18x ONNX Runtime's
    // time on the direct loops); a thin or depthwise one keeps them.
    if (n->op == VKP_OP_CONV2D && m / groups >= 4 && c / groups * taps >= 8) {
      vkp__sb_printf(k->body,
                     "  vkp_conv3d_gemm(%s, %s, %s, %s, %s, %lld, %lld, %lld, &win, scratch, "
                     "VKP_STAGE_THREADS);\n",
                     k->in[0], k->in[1], bias, k->out, batch.s, c, m, groups);
      k->scratch_floats = 1;
      k->after_gemm_scratch = true;
      return NULL;
    }
    vkp__sb_printf(k->body, "  %s(%s, %s, %s, %s, %s, %lld, %lld, %lld, &win);\n",
                   n->op == VKP_OP_CONV2D ? "vkp_conv3d" : "vkp_conv_transpose3d",
                   k->in[0], k->in[1], bias, k->out, batch.s, c, m, groups);
    return NULL;
  }
  const int64_t *kernel;
  vkp_node_attr_ints(n, "kernel_shape", &kernel);
  vkp__emit_win3(k, kernel);
  const vkp_value_t *y = vkp__c_out(k);
  if (y->dtype != VKP_DTYPE_FLOAT32) {  // int8, uint8: max pooling only
    vkp__sb_printf(k->body, "  vkp_maxpool3d_%s(%s, %s, %s, %s, &win, %d);\n",
                   vkp__c_type(y->dtype), k->in[0], k->out,
                   n->n_outputs > 1 ? k->outs[1] : "NULL", planes.s,
                   vkp_node_int(n, "storage_order") != 0);
    return NULL;
  }
  if (n->op == VKP_OP_MAX_POOL2D && n->n_outputs < 2) {
    // No indices: separable (vkp_maxpool3d_sep), its two passes' rows per
    // worker in scratch.
    long long in_d = 1, in_h = 1, out_h = 1, out_w = y->shape[y->rank - 1];
    int32_t s = x->rank - 2;
    if (s >= 2) in_h = x->shape[x->rank - 2], out_h = y->shape[y->rank - 2];
    if (s >= 3) in_d = x->shape[2];
    snprintf(k->scratch_expr, sizeof k->scratch_expr, "(size_t)VKP_STAGE_THREADS * %lld",
             in_d * in_h * out_w + in_d * out_h * out_w);
    vkp__sb_printf(k->body, "  vkp_maxpool3d_sep(%s, %s, %s, &win, scratch);\n", k->in[0],
                   k->out, planes.s);
    return NULL;
  }
  const char *mode = "VKP_POOL3D_MAX";
  long long p = 1;
  int col_major = 0;
  if (n->op == VKP_OP_AVG_POOL2D)
    mode = vkp_node_int(n, "count_include_pad") ? "VKP_POOL3D_AVG_PAD" : "VKP_POOL3D_AVG";
  else if (n->op == VKP_OP_LP_POOL)
    mode = "VKP_POOL3D_LP", p = vkp_node_int(n, "p");
  else
    col_major = vkp_node_int(n, "storage_order") != 0;
  vkp__sb_printf(k->body, "  vkp_pool3d(%s, %s, %s, %s, &win, %s, %lld.0f, %d);\n",
                 k->in[0], k->out, n->n_outputs > 1 ? k->outs[1] : "NULL", planes.s,
                 mode, p, col_major);
  return NULL;
}

// max_unpool: zeros, then each x element at its index's position in the
// unpooled shape, moved into the (possibly larger) output; an index outside
// the unpooled elements stops the stage. (Generated locals start with 'l',
// which value names never do unprefixed.)
vkp_status_t vkp__c_emit_max_unpool(vkp__c_kernel_t *k) {
  const vkp_value_t *x = vkp__c_in(k, 0), *y = vkp__c_out(k);
  const int64_t *kern, *pads, *st;
  vkp_node_attr_ints(k->node, "kernel_shape", &kern);
  vkp_node_attr_ints(k->node, "pads", &pads);
  vkp_node_attr_ints(k->node, "strides", &st);
  int32_t s = x->rank - 2;
  long long u[8] = {x->shape[0], x->shape[1]}, u_count = x->shape[0] * x->shape[1];
  long long n_in = 1, n_out = 1, ostride[8];
  for (int32_t i = 0; i < s; ++i) {
    u[2 + i] = (x->shape[2 + i] - 1) * st[i] + kern[i] - pads[i] - pads[s + i];
    u_count *= u[2 + i];
  }
  for (int32_t d = x->rank - 1; d >= 0; --d) {
    ostride[d] = n_out;
    n_out *= y->shape[d];
    n_in *= x->shape[d];
  }
  vkp__sb_append(k->body, "  static const ptrdiff_t lu[] = {");
  for (int32_t d = 0; d < x->rank; ++d) vkp__sb_printf(k->body, "%s%lld", d ? ", " : "", u[d]);
  vkp__sb_append(k->body, "};\n  static const ptrdiff_t los[] = {");
  for (int32_t d = 0; d < x->rank; ++d)
    vkp__sb_printf(k->body, "%s%lld", d ? ", " : "", ostride[d]);
  vkp__sb_printf(k->body,
                 "};\n"
                 "  for (ptrdiff_t li = 0; li < %lld; ++li) %s[li] = 0.0f;\n"
                 "  for (ptrdiff_t li = 0; li < %lld; ++li) {\n"
                 "    int64_t lrest = %s[li];\n"
                 "    if (lrest < 0 || lrest >= %lld) return 1;\n"
                 "    ptrdiff_t ldst = 0;\n"
                 "    for (int ld = %d; ld >= 0; --ld) {\n"
                 "      ldst += (ptrdiff_t)(lrest %% lu[ld]) * los[ld];\n"
                 "      lrest /= lu[ld];\n"
                 "    }\n"
                 "    %s[ldst] = %s[li];\n"
                 "  }\n",
                 n_out, k->out, n_in, k->in[1], u_count, (int)x->rank - 1, k->out, k->in[0]);
  k->can_fail = true;
  snprintf(k->fail_message, sizeof k->fail_message,
           "an index is outside the %lld unpooled elements of '%s'", u_count, x->name);
  return NULL;
}
