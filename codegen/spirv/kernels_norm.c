// SPDX-License-Identifier: Apache-2.0
// Vulkan kernels of the reduction and normalisation family: every reduce_*
// op (reduce.comp with the operation as macros), log_softmax (softmax.comp),
// hardmax, instance_norm / group_norm, lp_norm, mean_variance_norm (row
// kernels, with their workgroup-per-row variants) and lrn (one invocation
// per element).
#include <stdio.h>

#include "codegen/spirv/glsl.h"
#include "codegen/spirv/kernels.h"

// The operation of each reduce_* op as reduce.comp's macros (a sum when
// none is given). -inf / +inf are written as bits: GLSL has no literal.
typedef struct vkp__spv_reduce_t {
  vkp_op_t op;
  const char *defines;
} vkp__spv_reduce_t;

#define VKP__NEG_INF "uintBitsToFloat(0xff800000u)"
#define VKP__POS_INF "uintBitsToFloat(0x7f800000u)"

static const vkp__spv_reduce_t vkp__spv_reduces[] = {
    {VKP_OP_REDUCE_SUM, ""},
    {VKP_OP_REDUCE_MEAN, "#define REDUCE_MEAN 1\n"},
    {VKP_OP_REDUCE_MAX,
     "#define REDUCE_INIT " VKP__NEG_INF "\n#define REDUCE_STEP(a, v) vkp_max(a, v)\n"
     "#define REDUCE_WG vkp_wg_max_nan\n"},
    {VKP_OP_REDUCE_MIN,
     "#define REDUCE_INIT " VKP__POS_INF "\n#define REDUCE_STEP(a, v) vkp_min(a, v)\n"
     "#define REDUCE_WG vkp_wg_min_nan\n"},
    {VKP_OP_REDUCE_PROD,
     "#define REDUCE_INIT 1.0\n#define REDUCE_STEP(a, v) ((a) * (v))\n"
     "#define REDUCE_WG vkp_wg_prod\n"},
    {VKP_OP_REDUCE_L1, "#define REDUCE_INIT 0.0\n#define REDUCE_STEP(a, v) ((a) + abs(v))\n"},
    {VKP_OP_REDUCE_L2,
     "#define REDUCE_INIT 0.0\n#define REDUCE_STEP(a, v) ((a) + (v) * (v))\n"
     "#define REDUCE_FINAL(a) sqrt(a)\n"},
    {VKP_OP_REDUCE_LOG_SUM, "#define REDUCE_FINAL(a) vkp_log(a)\n"},
    {VKP_OP_REDUCE_LOG_SUM_EXP,
     "#define REDUCE_INIT " VKP__NEG_INF "\n#define REDUCE_STEP(a, v) vkp_max(a, v)\n"
     "#define REDUCE_WG vkp_wg_max_nan\n#define REDUCE_LSE 1\n"},
    {VKP_OP_REDUCE_SUM_SQUARE,
     "#define REDUCE_INIT 0.0\n#define REDUCE_STEP(a, v) ((a) + (v) * (v))\n"},
};

// The affine maps of reduce.comp and mvn.comp over x split into the kept
// dims (vkp_reduce_base: the first element of output / row o) and the
// dims in the node's "axes" (vkp_reduce_offset: the r-th reduced element);
// *rows and *len count each.
static void vkp__emit_axes_split(vkp__emit_t *e, const vkp_node_t *n,
                                 uint64_t *rows, uint64_t *len) {
  const vkp_value_t *x = vkp__spv_input(e->g, n, 0);
  const int64_t *axes;
  int32_t n_axes = vkp_node_attr_ints(n, "axes", &axes);
  int64_t strides[VKP_MAX_RANK];
  vkp__spv_strides(x, strides);
  int64_t kept_shape[VKP_MAX_RANK], kept_coef[VKP_MAX_RANK];
  int64_t red_shape[VKP_MAX_RANK], red_coef[VKP_MAX_RANK];
  int32_t n_kept = 0, n_red = 0;
  *rows = *len = 1;
  for (int32_t d = 0; d < x->rank; ++d) {
    bool reduced = false;
    for (int32_t i = 0; i < n_axes; ++i) reduced |= axes[i] == d;
    if (reduced) {
      red_shape[n_red] = x->shape[d];
      red_coef[n_red++] = strides[d];
      *len *= (uint64_t)x->shape[d];
    } else {
      kept_shape[n_kept] = x->shape[d];
      kept_coef[n_kept++] = strides[d];
      *rows *= (uint64_t)x->shape[d];
    }
  }
  vkp__spv_affine(&e->head, "vkp_reduce_base", n_kept, kept_shape, kept_coef, 0);
  vkp__spv_affine(&e->head, "vkp_reduce_offset", n_red, red_shape, red_coef, 0);
  vkp__spv_define_u(&e->body, "TOTAL", *rows);
  vkp__spv_define_u(&e->body, "R", *len);
}

vkp_status_t vkp__spv_emit_reduce(vkp__emit_t *e, const vkp_node_t *n) {
  const char *defines = NULL;
  for (size_t i = 0; i < sizeof vkp__spv_reduces / sizeof *vkp__spv_reduces; ++i)
    if (vkp__spv_reduces[i].op == n->op) defines = vkp__spv_reduces[i].defines;
  if (!defines)
    return vkp_status_make(VKP_STATUS_UNSUPPORTED, "no reduction kernel for '%s'",
                           vkp_op_name(n->op));
  uint64_t rows, len;
  vkp__emit_axes_split(e, n, &rows, &len);
  vkp__sb_append(&e->body, defines);
  // The workgroup variant combines float partials in shared memory; double
  // data (float64) takes the per-invocation one, which reduces in ACC_T.
  const vkp_value_t *x = vkp__spv_input(e->g, n, 0);
  vkp__kernel_config_t config = *e->config;
  if (x->dtype == VKP_DTYPE_FLOAT64) config.rows_workgroup = false;
  const vkp__kernel_config_t *saved = e->config;
  e->config = &config;
  vkp__spv_row_kernel(e, VKP__ROW_reduce, rows, len);
  e->config = saved;
  return NULL;
}

vkp_status_t vkp__spv_emit_mean_variance_norm(vkp__emit_t *e, const vkp_node_t *n) {
  uint64_t rows, len;
  vkp__emit_axes_split(e, n, &rows, &len);
  vkp__spv_row_kernel(e, VKP__ROW_mvn, rows, len);
  return NULL;
}

// Rows along the node's "axis" of x viewed as [outer, L, inner] (ROWS, L,
// INNER), as softmax.comp reads them.
static void vkp__emit_axis_rows(vkp__emit_t *e, const vkp_node_t *n, uint64_t *rows,
                                uint64_t *len) {
  const vkp_value_t *x = vkp__spv_input(e->g, n, 0);
  int64_t axis = vkp_node_int(n, "axis");
  uint64_t outer = 1, inner = 1;
  for (int32_t d = 0; d < axis; ++d) outer *= (uint64_t)x->shape[d];
  for (int32_t d = (int32_t)axis + 1; d < x->rank; ++d) inner *= (uint64_t)x->shape[d];
  *rows = outer * inner;
  *len = (uint64_t)x->shape[axis];
  vkp__spv_define_u(&e->body, "ROWS", *rows);
  vkp__spv_define_u(&e->body, "L", *len);
  vkp__spv_define_u(&e->body, "INNER", inner);
}

vkp_status_t vkp__spv_emit_softmax_family(vkp__emit_t *e, const vkp_node_t *n) {
  uint64_t rows, len;
  vkp__emit_axis_rows(e, n, &rows, &len);
  if (n->op == VKP_OP_HARDMAX) {
    vkp__spv_row_kernel(e, VKP__ROW_hardmax, rows, len);
    return NULL;
  }
  vkp__sb_append(&e->body, "#define LOG_SOFTMAX 1\n");
  vkp__spv_row_kernel(e, VKP__ROW_softmax, rows, len);
  return NULL;
}

vkp_status_t vkp__spv_emit_lp_norm(vkp__emit_t *e, const vkp_node_t *n) {
  uint64_t rows, len;
  vkp__emit_axis_rows(e, n, &rows, &len);
  vkp__spv_define_u(&e->body, "P", (uint64_t)vkp_node_int(n, "p"));
  vkp__spv_row_kernel(e, VKP__ROW_lp_norm, rows, len);
  return NULL;
}

vkp_status_t vkp__spv_emit_group_norm(vkp__emit_t *e, const vkp_node_t *n) {
  const vkp_value_t *x = vkp__spv_input(e->g, n, 0);
  uint64_t c = (uint64_t)x->shape[1], spatial = 1;
  for (int32_t d = 2; d < x->rank; ++d) spatial *= (uint64_t)x->shape[d];
  uint64_t groups = n->op == VKP_OP_GROUP_NORM ? (uint64_t)vkp_node_int(n, "num_groups") : c;
  uint64_t rows = (uint64_t)x->shape[0] * groups, len = c / groups * spatial;
  vkp__spv_define_u(&e->body, "ROWS", rows);
  vkp__spv_define_u(&e->body, "L", len);
  vkp__spv_define_u(&e->body, "G", groups);
  vkp__spv_define_u(&e->body, "CPG", c / groups);
  vkp__spv_define_u(&e->body, "S", spatial);
  vkp__sb_append(&e->body, "#define EPSILON ");
  vkp__sb_float(&e->body, vkp_node_float(n, "epsilon"));
  vkp__sb_append(&e->body, "\n");
  vkp__spv_row_kernel(e, VKP__ROW_group_norm, rows, len);
  return NULL;
}

vkp_status_t vkp__spv_emit_lrn(vkp__emit_t *e, const vkp_node_t *n) {
  const vkp_value_t *x = vkp__spv_input(e->g, n, 0);
  uint64_t spatial = 1, size = (uint64_t)vkp_node_int(n, "size");
  for (int32_t d = 2; d < x->rank; ++d) spatial *= (uint64_t)x->shape[d];
  vkp__spv_define_u(&e->body, "TOTAL", vkp__spv_numel(x));
  vkp__spv_define_u(&e->body, "C", (uint64_t)x->shape[1]);
  vkp__spv_define_u(&e->body, "S", spatial);
  vkp__spv_define_u(&e->body, "SIZE", size);
  vkp__spv_define_u(&e->body, "BEFORE", (size - 1) / 2);
  vkp__spv_define_u(&e->body, "AFTER", size - 1 - (size - 1) / 2);
  static const char *const names[] = {"alpha", "beta", "bias"};
  static const char *const macros[] = {"ALPHA", "BETA", "BIAS"};
  for (int i = 0; i < 3; ++i) {
    vkp__sb_printf(&e->body, "#define %s ", macros[i]);
    vkp__sb_float(&e->body, vkp_node_float(n, names[i]));
    vkp__sb_append(&e->body, "\n");
  }
  vkp__spv_grid_1d(e, vkp__spv_numel(x));
  vkp__spv_template(e, VKP__SHADER_lrn);
  return NULL;
}
