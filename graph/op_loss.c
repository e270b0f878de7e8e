// SPDX-License-Identifier: Apache-2.0
// Losses: softmax_cross_entropy_loss and negative_log_likelihood_loss (the
// ONNX operators of those names): schema, inference, reference kernel.
//
// Scores / log-probabilities X are [N, C, d1, ...], the labels [N, d1, ...]
// (int32 or int64) pick one class per position, weights [C] (optional)
// weight each class. A position whose label is `ignore_index` (when the
// attribute is present) contributes nothing and has weight 0.
//   per position: loss = -weight[label] * X'[n, label, d...], where X' is X
//   (nll) or log_softmax(X) over axis 1 (softmax cross entropy);
//   reduction "none": those losses, shaped like the labels; "sum": their
//   sum; "mean": their sum over the sum of the weights of the positions
//   not ignored (without weights: over the number of those positions).
// softmax_cross_entropy_loss's optional second output is log_softmax(X).
#include <math.h>
#include <string.h>

#include "graph/ops_internal.h"

const vkp__attr_spec_t vkp__attrs_loss[] = {
    VKP__ATTR_STRING("reduction", "mean"), VKP__ATTR("ignore_index", INT),
    VKP__ATTR_END};

vkp_status_t vkp__infer_loss(vkp_graph_t *g, vkp_node_t *n, vkp_value_t *out) {
  const vkp_value_t *x = vkp__in(g, n, 0), *labels = vkp__in(g, n, 1),
                    *w = vkp__in(g, n, 2);
  const char *reduction = vkp_node_string(n, "reduction");
  bool none = strcmp(reduction, "none") == 0;
  if (!none && strcmp(reduction, "sum") != 0 && strcmp(reduction, "mean") != 0)
    return VKP__ERR("attribute 'reduction' is '%s'; none, sum or mean", reduction);
  if (x->rank < 2)
    return VKP__ERR("input '%s' needs rank >= 2 ([N, C, ...]), has %d", x->name,
                    (int)x->rank);
  if (labels->dtype != VKP_DTYPE_INT32 && labels->dtype != VKP_DTYPE_INT64)
    return VKP__ERR("labels '%s' are %s; int32 or int64", labels->name,
                    vkp_dtype_name(labels->dtype));
  bool same = labels->rank == x->rank - 1 && labels->shape[0] == x->shape[0];
  for (int32_t d = 1; same && d < labels->rank; ++d)
    same = labels->shape[d] == x->shape[d + 1];
  if (!same) {
    char sx[128], sl[128];
    return VKP__ERR("labels '%s' %s do not match input '%s' %s without its "
                    "class axis 1",
                    labels->name, vkp__fmt(labels, sl, sizeof sl), x->name,
                    vkp__fmt(x, sx, sizeof sx));
  }
  if (w) {
    VKP_RETURN_IF_ERROR(vkp__same_dtype(x, w));
    if (w->rank != 1 || w->shape[0] != x->shape[1])
      return VKP__ERR("weights '%s' must have shape [%lld]", w->name,
                      (long long)x->shape[1]);
  }
  vkp__set_out(out, x->dtype, none ? labels->rank : 0, labels->shape);
  if (n->n_outputs > 1) {
    if (n->op != VKP_OP_SOFTMAX_CROSS_ENTROPY_LOSS)
      return VKP__ERR("%s has one output", vkp_op_name(n->op));
    vkp__set_out(vkp__out(g, n, 1), x->dtype, x->rank, x->shape);
  }
  return NULL;
}

vkp_status_t vkp__eval_loss(const vkp_node_t *n, const vkp_tensor_t *const *in,
                            vkp_tensor_t *out) {
  const vkp_tensor_t *x = in[0], *labels = in[1];
  const vkp_tensor_t *w = n->n_inputs > 2 ? in[2] : NULL;
  const vkp_attr_t *ignore = vkp_node_attr(n, "ignore_index");
  const char *reduction = vkp_node_string(n, "reduction");
  bool softmax = n->op == VKP_OP_SOFTMAX_CROSS_ENTROPY_LOSS;
  vkp_tensor_t *log_prob = n->n_outputs > 1 ? &out[1] : NULL;
  // X as [N, C, D]: position (i, k) reads X[i, :, k].
  int64_t N = x->shape[0], C = x->shape[1], D = vkp__prod(x->shape, 2, x->rank);
  double total = 0, weights = 0;
  for (int64_t i = 0; i < N; ++i) {
    for (int64_t k = 0; k < D; ++k) {
      int64_t base = i * C * D + k;
      // log(sum(exp(x - max))) + max, the log-softmax's shift.
      double shift = 0;
      if (softmax) {
        double mx = -INFINITY, sum = 0;
        for (int64_t c = 0; c < C; ++c) mx = fmax(mx, vkp__get_f(x, base + c * D));
        for (int64_t c = 0; c < C; ++c) sum += exp(vkp__get_f(x, base + c * D) - mx);
        shift = mx + log(sum);
        if (log_prob)
          for (int64_t c = 0; c < C; ++c)
            vkp__put_f(log_prob, base + c * D, vkp__get_f(x, base + c * D) - shift);
      }
      int64_t label = vkp__get_i(labels, i * D + k);
      double loss = 0, weight = 0;
      if (!ignore || label != ignore->i) {
        if (label < 0 || label >= C)
          return VKP__ERR("node '%s': label %lld at position %lld is outside 0..%lld",
                          n->name, (long long)label, (long long)(i * D + k),
                          (long long)(C - 1));
        weight = w ? vkp__get_f(w, label) : 1.0;
        loss = -weight * (vkp__get_f(x, base + label * D) - shift);
      }
      if (strcmp(reduction, "none") == 0) vkp__put_f(&out[0], i * D + k, loss);
      total += loss;
      weights += weight;
    }
  }
  // Mean over no positions (all ignored) is 0 / 0: NaN, as NumPy has it.
  if (strcmp(reduction, "sum") == 0) vkp__put_f(&out[0], 0, total);
  else if (strcmp(reduction, "mean") == 0) vkp__put_f(&out[0], 0, total / weights);
  return NULL;
}
