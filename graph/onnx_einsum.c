// SPDX-License-Identifier: Apache-2.0
// ONNX Einsum: lowered at import to the IR's transpose, reshape, reduce_sum
// and matmul where the equation allows, so that every target runs it;
// otherwise the IR's einsum (graph/op_linalg.c), which only "ref" runs.
//
// One input: sum the labels the output drops, then transpose.
// Two inputs: each label is a batch label (both inputs and the output), a
// contracted one (both inputs, not the output), a row label (A and the
// output), a column label (B and the output), or summed away in one input
// (first, with reduce_sum). A goes to [batch..., rows, contracted], B to
// [batch..., contracted, columns], a matmul multiplies them, and the result
// is reshaped and transposed to the output's order.
// Left to the IR's einsum: three or more inputs, a label repeated within a
// term (diagonals, traces), labels whose sizes differ between the inputs
// (broadcast ellipsis dims), and integer inputs where a matmul or a
// reduction is needed (those IR ops are float only).
#include <string.h>

#include "base/status_macros.h"
#include "graph/einsum.h"
#include "graph/onnx_internal.h"

// Emits one step: the final one defines (and binds) the ONNX output.
static vkp_status_t vkp__step(vkp__onnx_ctx_t *ctx, vkp_op_t op, int32_t n_in,
                              const int32_t *in, int32_t n_attrs,
                              const vkp_attr_t *a, bool final, int32_t *out) {
  const char *name = final ? vkp__onnx_output(ctx, 0) : NULL;
  return vkp__onnx_emit_bind(ctx, op, n_in, in, n_attrs, a, name, out);
}

// A term with no label twice.
static bool vkp__distinct(const vkp__einsum_t *e, int32_t i) {
  for (int32_t d = 0; d < e->rank[i]; ++d)
    for (int32_t k = 0; k < d; ++k)
      if (e->label[i][d] == e->label[i][k]) return false;
  return true;
}

static bool vkp__has(const vkp__einsum_t *e, int32_t i, int32_t label) {
  for (int32_t d = 0; d < e->rank[i]; ++d)
    if (e->label[i][d] == label) return true;
  return false;
}

// Sums input i over the labels `keep` rejects, transposes the rest into
// `order` (n labels) and reshapes it to `shape` (rank). *value is the
// input's IR value on entry and the result on exit.
static vkp_status_t vkp__prepare(vkp__onnx_ctx_t *ctx, const vkp__einsum_t *e,
                                 int32_t i, const int32_t *order, int32_t n,
                                 const int64_t *shape, int32_t rank,
                                 int32_t *value) {
  int32_t labels[VKP_MAX_RANK], n_labels = 0, n_axes = 0;
  int64_t axes[VKP_MAX_RANK];
  for (int32_t d = 0; d < e->rank[i]; ++d) {
    bool kept = false;
    for (int32_t k = 0; k < n; ++k) kept |= order[k] == e->label[i][d];
    if (kept) labels[n_labels++] = e->label[i][d];
    else axes[n_axes++] = d;
  }
  if (n_axes) {
    vkp_attr_t a[2] = {vkp__onnx_a_ints("axes", axes, n_axes), vkp__onnx_a_int("keepdims", 0)};
    VKP_RETURN_IF_ERROR(vkp__step(ctx, VKP_OP_REDUCE_SUM, 1, value, 2, a, false, value));
  }
  int64_t perm[VKP_MAX_RANK];
  bool moved = false;
  for (int32_t k = 0; k < n; ++k)
    for (int32_t d = 0; d < n_labels; ++d)
      if (labels[d] == order[k]) {
        perm[k] = d;
        moved |= d != k;
      }
  if (moved) {
    vkp_attr_t a = vkp__onnx_a_ints("perm", perm, n);
    VKP_RETURN_IF_ERROR(vkp__step(ctx, VKP_OP_TRANSPOSE, 1, value, 1, &a, false, value));
  }
  const vkp_value_t *v = vkp__onnx_value(ctx, *value);
  bool same = v->rank == rank;
  for (int32_t d = 0; same && d < rank; ++d) same = v->shape[d] == shape[d];
  if (!same) {
    vkp_attr_t a = vkp__onnx_a_ints("shape", shape, rank);
    VKP_RETURN_IF_ERROR(vkp__step(ctx, VKP_OP_RESHAPE, 1, value, 1, &a, false, value));
  }
  return NULL;
}

// The two-input lowering; *out_lowered false (nothing emitted) when the
// equation does not qualify.
static vkp_status_t vkp__lower_two(vkp__onnx_ctx_t *ctx, const vkp__einsum_t *e,
                                   const int32_t *in, bool is_float,
                                   bool *out_lowered) {
  *out_lowered = false;
  if (!is_float || !vkp__distinct(e, 0) || !vkp__distinct(e, 1)) return NULL;
  for (int32_t i = 0; i < 2; ++i)
    for (int32_t d = 0; d < e->rank[i]; ++d)
      if (vkp__onnx_value(ctx, in[i])->shape[d] != e->dim[e->label[i][d]]) return NULL;
  int32_t batch[VKP_MAX_RANK], rows[VKP_MAX_RANK], cols[VKP_MAX_RANK], con[VKP_MAX_RANK];
  int32_t nb = 0, nr = 0, nc = 0, nk = 0;
  for (int32_t l = 0; l < e->out_rank; ++l) {
    bool a = vkp__has(e, 0, l), b = vkp__has(e, 1, l);
    if (a && b) batch[nb++] = l;
    else if (a) rows[nr++] = l;
    else cols[nc++] = l;
  }
  for (int32_t d = 0; d < e->rank[0]; ++d) {
    int32_t l = e->label[0][d];
    if (l >= e->out_rank && vkp__has(e, 1, l)) con[nk++] = l;
  }
  if (nb + 2 > VKP_MAX_RANK) return NULL;
  int64_t m = 1, k = 1, n = 1;
  for (int32_t j = 0; j < nr; ++j) m *= e->dim[rows[j]];
  for (int32_t j = 0; j < nk; ++j) k *= e->dim[con[j]];
  for (int32_t j = 0; j < nc; ++j) n *= e->dim[cols[j]];
  // A: [batch..., rows..., con...] as [batch..., m, k]; B: [batch...,
  // con..., cols...] as [batch..., k, n].
  int32_t order_a[VKP_MAX_RANK], order_b[VKP_MAX_RANK], na = 0, nbb = 0;
  int64_t shape_a[VKP_MAX_RANK], shape_b[VKP_MAX_RANK];
  for (int32_t j = 0; j < nb; ++j) {
    order_a[na++] = order_b[nbb++] = batch[j];
    shape_a[j] = shape_b[j] = e->dim[batch[j]];
  }
  for (int32_t j = 0; j < nr; ++j) order_a[na++] = rows[j];
  for (int32_t j = 0; j < nk; ++j) order_a[na++] = order_b[nbb++] = con[j];
  for (int32_t j = 0; j < nc; ++j) order_b[nbb++] = cols[j];
  shape_a[nb] = m;
  shape_a[nb + 1] = k;
  shape_b[nb] = k;
  shape_b[nb + 1] = n;
  *out_lowered = true;
  int32_t a = in[0], b = in[1], y;
  VKP_RETURN_IF_ERROR(vkp__prepare(ctx, e, 0, order_a, na, shape_a, nb + 2, &a));
  VKP_RETURN_IF_ERROR(vkp__prepare(ctx, e, 1, order_b, nbb, shape_b, nb + 2, &b));
  // The product's labels: batch, rows, cols; reshaped, then transposed to
  // the output's order.
  int32_t have[VKP_MAX_RANK], nh = 0;
  int64_t shape[VKP_MAX_RANK];
  for (int32_t j = 0; j < nb; ++j) have[nh++] = batch[j];
  for (int32_t j = 0; j < nr; ++j) have[nh++] = rows[j];
  for (int32_t j = 0; j < nc; ++j) have[nh++] = cols[j];
  bool reshape = nh != nb + 2, transpose = false;
  for (int32_t j = 0; j < nh; ++j) {
    shape[j] = e->dim[have[j]];
    transpose |= have[j] != j;
  }
  if (!reshape)
    reshape = shape[nb] != m || shape[nb + 1] != n;
  int32_t ab[2] = {a, b};
  VKP_RETURN_IF_ERROR(vkp__step(ctx, VKP_OP_MATMUL, 2, ab, 0, NULL,
                                !reshape && !transpose, &y));
  if (reshape) {
    vkp_attr_t at = vkp__onnx_a_ints("shape", shape, nh);
    VKP_RETURN_IF_ERROR(vkp__step(ctx, VKP_OP_RESHAPE, 1, &y, 1, &at, !transpose, &y));
  }
  if (transpose) {
    int64_t perm[VKP_MAX_RANK];
    for (int32_t l = 0; l < nh; ++l)
      for (int32_t j = 0; j < nh; ++j)
        if (have[j] == l) perm[l] = j;
    vkp_attr_t at = vkp__onnx_a_ints("perm", perm, nh);
    VKP_RETURN_IF_ERROR(vkp__step(ctx, VKP_OP_TRANSPOSE, 1, &y, 1, &at, true, &y));
  }
  return NULL;
}

// The one-input lowering (a sum and / or a transpose).
static vkp_status_t vkp__lower_one(vkp__onnx_ctx_t *ctx, const vkp__einsum_t *e,
                                   int32_t x, bool is_float, bool *out_lowered) {
  *out_lowered = false;
  if (!vkp__distinct(e, 0)) return NULL;
  int64_t axes[VKP_MAX_RANK], perm[VKP_MAX_RANK];
  int32_t n_axes = 0, kept[VKP_MAX_RANK], n_kept = 0;
  for (int32_t d = 0; d < e->rank[0]; ++d) {
    if (e->label[0][d] >= e->out_rank) axes[n_axes++] = d;
    else kept[n_kept++] = e->label[0][d];
  }
  if (n_axes && !is_float) return NULL;
  bool transpose = false;
  for (int32_t l = 0; l < n_kept; ++l)
    for (int32_t j = 0; j < n_kept; ++j)
      if (kept[j] == l) {
        perm[l] = j;
        transpose |= j != l;
      }
  *out_lowered = true;
  int32_t y = x;
  if (n_axes) {
    vkp_attr_t a[2] = {vkp__onnx_a_ints("axes", axes, n_axes), vkp__onnx_a_int("keepdims", 0)};
    VKP_RETURN_IF_ERROR(vkp__step(ctx, VKP_OP_REDUCE_SUM, 1, &y, 2, a, !transpose, &y));
  }
  if (transpose) {
    vkp_attr_t a = vkp__onnx_a_ints("perm", perm, n_kept);
    VKP_RETURN_IF_ERROR(vkp__step(ctx, VKP_OP_TRANSPOSE, 1, &y, 1, &a, true, &y));
  }
  if (!n_axes && !transpose)
    VKP_RETURN_IF_ERROR(vkp__step(ctx, VKP_OP_IDENTITY, 1, &y, 0, NULL, true, &y));
  return NULL;
}

vkp_status_t vkp__map_einsum(vkp__onnx_ctx_t *ctx) {
  VKP_RETURN_IF_ERROR(vkp__onnx_only_outputs(ctx, 1));
  char equation[256];
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_string(ctx, "equation", "", equation, sizeof equation));
  size_t n = ctx->node->n_input;
  if (n < 1 || n > VKP__EINSUM_MAX_INPUTS)
    return VKP__ONNX_UNSUPPORTED("Einsum of %zu inputs (1 to %d)", n,
                                 VKP__EINSUM_MAX_INPUTS);
  int32_t in[VKP__EINSUM_MAX_INPUTS], ranks[VKP__EINSUM_MAX_INPUTS];
  const int64_t *shapes[VKP__EINSUM_MAX_INPUTS];
  for (int32_t i = 0; i < (int32_t)n; ++i) {
    VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, i, &in[i]));
    ranks[i] = vkp__onnx_value(ctx, in[i])->rank;
    shapes[i] = vkp__onnx_value(ctx, in[i])->shape;
  }
  vkp__einsum_t e;
  VKP_RETURN_IF_ERROR(vkp__einsum_parse(equation, (int32_t)n, ranks, shapes, &e));
  bool is_float = vkp_dtype_is_float(vkp__onnx_value(ctx, in[0])->dtype), lowered = false;
  if (n == 1) VKP_RETURN_IF_ERROR(vkp__lower_one(ctx, &e, in[0], is_float, &lowered));
  if (n == 2) VKP_RETURN_IF_ERROR(vkp__lower_two(ctx, &e, in, is_float, &lowered));
  if (lowered) return NULL;
  vkp_attr_t a = {.name = "equation", .kind = VKP_ATTR_STRING, .s = e.canonical};
  return vkp__onnx_emit_out(ctx, VKP_OP_EINSUM, (int32_t)n, in, 1, &a);
}
