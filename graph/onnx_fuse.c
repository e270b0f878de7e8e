// SPDX-License-Identifier: Apache-2.0
// Exporter-expanded subgraphs recognised as one IR op:
//
//   LayerNorm  mu = ReduceMean(x); d = Sub(x, mu); v = ReduceMean(Pow(d, 2));
//              y = Div(d, Sqrt(Add(v, eps))) [-> Mul(., gamma)] [-> Add(., beta)]
//              over trailing axes  ->  layer_norm(x, gamma, beta)
//   GELU       y = Mul(Mul(x, Add(Erf(Div(x, sqrt 2)), 1)), 0.5)  (operands of
//              Mul and Add in either order)  ->  gelu(x, approximate="none")
//   Attention  S = MatMul(Q [* or / c], Kt [* or / c]) [* or / c]
//              [-> Where(C, fill, S) or Where(C, S, fill)] [-> Add(S, M)]
//              -> Softmax(last axis) [-> Dropout] -> MatMul(., V)
//              ->  attention(Q, Kt, V, [M], [C]; scale, fill, fill_where)
//   RMSNorm    r = Sqrt(Add(ReduceMean(Pow(x, 2) or Mul(x, x)), eps));
//              y = Div(x, r) or Mul(x, Reciprocal(r)) or Mul(x, Div(1, r))
//              [-> Mul(., gamma)] over trailing axes  ->  layer_norm(x, gamma;
//              rms=1)
//   tanh GELU  t = Tanh(Mul(sqrt(2/pi), Add(x, Mul(0.044715, x^3)))), x^3 as
//              Pow(x, 3) or Mul(x, Mul(x, x)); y = Mul(0.5, Mul(x, Add(1, t)))
//              or Mul(Mul(x, 0.5), Add(1, t))  ->  gelu(x, approximate="tanh")
//   GroupNorm  r = Reshape(x, [0, G, -1]); n = InstanceNormalization(r, ones[G],
//              zeros[G]); y = Reshape(n, shape of x) [-> Mul(., gamma)]
//              [-> Add(., beta)], gamma and beta per channel (what PyTorch
//              exports for nn.GroupNorm)  ->  group_norm(x, gamma, beta)
//   QDQ        DequantizeLinear(x_q) and DequantizeLinear(w_q) [and
//              DequantizeLinear(b_q)] -> Conv, Gemm or MatMul [-> Add(.,
//              DequantizeLinear(b_q)), MatMul only] [-> Relu]
//              -> QuantizeLinear  ->  qlinear_conv / qlinear_matmul (the
//              exactness conditions are checked in graph/onnx_quant.c)
//
// Planning is structural (onnx graph only): every inner value must be used
// only inside the pattern. Whether the operands qualify (eps, 2, sqrt 2, 1,
// 0.5 constants; axes trailing; dtypes and shapes) is decided when the
// pattern's last node is reached; when they do not, the nodes are imported
// one by one as usual.
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/status_macros.h"
#include "graph/onnx_internal.h"

typedef struct vkp__fuse_scan_t {
  const Onnx__GraphProto *g;
  vkp_strmap_t producer;  // value -> node index
  vkp_strmap_t uses;      // value -> consumer count (graph outputs count many)
  vkp_strmap_t consumer;  // value -> last consumer
  bool *taken;            // node already in a pattern or folded
} vkp__fuse_scan_t;

static bool vkp__is_op(const vkp__fuse_scan_t *s, int32_t k, const char *op,
                       size_t n_in) {
  if (k < 0 || s->taken[k]) return false;
  const Onnx__NodeProto *n = s->g->node[k];
  return n->op_type && strcmp(n->op_type, op) == 0 &&
         (!n->domain || !n->domain[0] || strcmp(n->domain, "ai.onnx") == 0) &&
         n->n_input == n_in && n->n_output == 1 && n->output[0] &&
         n->output[0][0];
}

static int32_t vkp__prod(const vkp__fuse_scan_t *s, const char *value) {
  return value ? vkp_strmap_get(&s->producer, value) : -1;
}

static int32_t vkp__uses(const vkp__fuse_scan_t *s, const char *value) {
  int32_t u = value ? vkp_strmap_get(&s->uses, value) : -1;
  return u < 0 ? 0 : u;
}

static const char *vkp__in(const vkp__fuse_scan_t *s, int32_t k, int32_t i) {
  return s->g->node[k]->input[i];
}

static const char *vkp__out(const vkp__fuse_scan_t *s, int32_t k) {
  return s->g->node[k]->output[0];
}

// The node that consumes `value` when it is its only use.
static int32_t vkp__only_consumer(const vkp__fuse_scan_t *s, const char *value) {
  if (vkp__uses(s, value) != 1) return -1;
  return vkp_strmap_get(&s->consumer, value);
}

static int vkp__cmp_i32(const void *a, const void *b) {
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

static vkp_status_t vkp__add_group(vkp__onnx_ctx_t *ctx, vkp__fuse_scan_t *s,
                                   vkp__onnx_fusion_t *f, const int32_t *nodes,
                                   int32_t n) {
  f->nodes = vkp__calloc((size_t)n, sizeof(int32_t));
  if (!f->nodes) return VKP_OOM("fusion");
  memcpy(f->nodes, nodes, (size_t)n * sizeof(int32_t));
  qsort(f->nodes, (size_t)n, sizeof(int32_t), vkp__cmp_i32);
  f->n_nodes = n;
  vkp__onnx_fusion_t *grown = vkp__reallocarray(
      ctx->fusions, (size_t)ctx->n_fusions + 1, sizeof *grown);
  if (!grown) {
    vkp__free(f->nodes);
    return VKP_OOM("fusion list");
  }
  ctx->fusions = grown;
  int32_t id = ctx->n_fusions++;
  ctx->fusions[id] = *f;
  for (int32_t i = 0; i < n; ++i) {
    s->taken[f->nodes[i]] = true;
    if (i + 1 < n) ctx->skip[f->nodes[i]] = true;
  }
  ctx->fusion_at[f->nodes[n - 1]] = id;
  return NULL;
}

// LayerNorm, anchored at its Div.
static vkp_status_t vkp__match_layer_norm(vkp__onnx_ctx_t *ctx,
                                          vkp__fuse_scan_t *s, int32_t div) {
  if (!vkp__is_op(s, div, "Div", 2)) return NULL;
  const char *d = vkp__in(s, div, 0), *sd = vkp__in(s, div, 1);
  int32_t sub = vkp__prod(s, d), sq = vkp__prod(s, sd);
  if (!vkp__is_op(s, sub, "Sub", 2) || vkp__uses(s, d) != 2 ||
      !vkp__is_op(s, sq, "Sqrt", 1) || vkp__uses(s, sd) != 1)
    return NULL;
  const char *x = vkp__in(s, sub, 0), *mu = vkp__in(s, sub, 1);
  int32_t rm1 = vkp__prod(s, mu);
  if (!vkp__is_op(s, rm1, "ReduceMean", 1) || vkp__uses(s, mu) != 1 ||
      strcmp(vkp__in(s, rm1, 0), x) != 0)
    return NULL;
  int32_t add = vkp__prod(s, vkp__in(s, sq, 0));
  if (!vkp__is_op(s, add, "Add", 2) || vkp__uses(s, vkp__out(s, add)) != 1)
    return NULL;
  int32_t rm2 = -1, which = -1;
  for (int32_t i = 0; i < 2 && rm2 < 0; ++i) {
    int32_t p = vkp__prod(s, vkp__in(s, add, i));
    if (vkp__is_op(s, p, "ReduceMean", 1)) rm2 = p, which = i;
  }
  if (rm2 < 0 || vkp__uses(s, vkp__out(s, rm2)) != 1) return NULL;
  int32_t pw = vkp__prod(s, vkp__in(s, rm2, 0));
  if (!vkp__is_op(s, pw, "Pow", 2) || vkp__uses(s, vkp__out(s, pw)) != 1 ||
      strcmp(vkp__in(s, pw, 0), d) != 0)
    return NULL;
  vkp__onnx_fusion_t f = {.kind = VKP__FUSE_LAYER_NORM,
                          .x = x,
                          .eps = vkp__in(s, add, 1 - which),
                          .two = vkp__in(s, pw, 1),
                          .mean_node = rm1};
  int32_t nodes[9] = {rm1, sub, pw, rm2, add, sq, div}, n = 7;
  int32_t mul = vkp__only_consumer(s, vkp__out(s, div));
  if (vkp__is_op(s, mul, "Mul", 2)) {
    int32_t other = strcmp(vkp__in(s, mul, 0), vkp__out(s, div)) == 0 ? 1 : 0;
    f.scale = vkp__in(s, mul, other);
    nodes[n++] = mul;
    int32_t badd = vkp__only_consumer(s, vkp__out(s, mul));
    if (vkp__is_op(s, badd, "Add", 2)) {
      other = strcmp(vkp__in(s, badd, 0), vkp__out(s, mul)) == 0 ? 1 : 0;
      f.bias = vkp__in(s, badd, other);
      nodes[n++] = badd;
    }
  }
  // The operands must come from outside the pattern.
  const char *operands[] = {f.eps, f.two, f.scale, f.bias};
  for (int i = 0; i < 4; ++i) {
    int32_t p = vkp__prod(s, operands[i]);
    for (int32_t j = 0; operands[i] && j < n; ++j)
      if (p == nodes[j]) return NULL;
  }
  return vkp__add_group(ctx, s, &f, nodes, n);
}

// The input of `k` (a 2-input node) that is not `value`, or NULL.
static const char *vkp__other(const vkp__fuse_scan_t *s, int32_t k,
                              const char *value) {
  if (strcmp(vkp__in(s, k, 0), value) == 0) return vkp__in(s, k, 1);
  if (strcmp(vkp__in(s, k, 1), value) == 0) return vkp__in(s, k, 0);
  return NULL;
}

// GELU, anchored at the final Mul by 0.5.
static vkp_status_t vkp__match_gelu(vkp__onnx_ctx_t *ctx, vkp__fuse_scan_t *s,
                                    int32_t last) {
  if (!vkp__is_op(s, last, "Mul", 2)) return NULL;
  for (int32_t side = 0; side < 2; ++side) {
    const char *m = vkp__in(s, last, side);
    int32_t mm = vkp__prod(s, m);
    if (!vkp__is_op(s, mm, "Mul", 2) || vkp__uses(s, m) != 1) continue;
    for (int32_t xs = 0; xs < 2; ++xs) {
      const char *x = vkp__in(s, mm, xs), *a = vkp__in(s, mm, 1 - xs);
      int32_t ad = vkp__prod(s, a);
      if (!vkp__is_op(s, ad, "Add", 2) || vkp__uses(s, a) != 1) continue;
      for (int32_t es = 0; es < 2; ++es) {
        const char *e = vkp__in(s, ad, es);
        int32_t erf = vkp__prod(s, e);
        if (!vkp__is_op(s, erf, "Erf", 1) || vkp__uses(s, e) != 1) continue;
        const char *q = vkp__in(s, erf, 0);
        int32_t div = vkp__prod(s, q);
        if (!vkp__is_op(s, div, "Div", 2) || vkp__uses(s, q) != 1 ||
            strcmp(vkp__in(s, div, 0), x) != 0)
          continue;
        vkp__onnx_fusion_t f = {.kind = VKP__FUSE_GELU,
                                .x = x,
                                .eps = vkp__in(s, div, 1),
                                .two = vkp__other(s, ad, e),
                                .scale = vkp__in(s, last, 1 - side),
                                .mean_node = -1};
        int32_t nodes[5] = {div, erf, ad, mm, last};
        return vkp__add_group(ctx, s, &f, nodes, 5);
      }
    }
  }
  return NULL;
}

// The node producing `value` when it is an `op` with `n_in` inputs and
// `value` is used once; -1 otherwise.
static int32_t vkp__once(const vkp__fuse_scan_t *s, const char *value,
                         const char *op, size_t n_in) {
  int32_t k = vkp__prod(s, value);
  return vkp__uses(s, value) == 1 && vkp__is_op(s, k, op, n_in) ? k : -1;
}

static bool vkp__is(const char *a, const char *b) {
  return a && b && strcmp(a, b) == 0;
}

// True when no operand is produced inside the pattern `nodes`, and no node of
// it is already in another pattern.
static bool vkp__operands_outside(const vkp__fuse_scan_t *s, const char *const *ops,
                                  int32_t n_ops, const int32_t *nodes, int32_t n) {
  for (int32_t i = 0; i < n; ++i)
    if (s->taken[nodes[i]]) return false;
  for (int32_t i = 0; i < n_ops; ++i) {
    int32_t p = vkp__prod(s, ops[i]);
    for (int32_t j = 0; ops[i] && j < n; ++j)
      if (p == nodes[j]) return false;
  }
  return true;
}

// RMSNorm, anchored at the node that scales x by the inverse RMS.
static vkp_status_t vkp__match_rms_norm(vkp__onnx_ctx_t *ctx,
                                        vkp__fuse_scan_t *s, int32_t k) {
  (void)ctx;
  bool div = vkp__is_op(s, k, "Div", 2);
  if (!div && !vkp__is_op(s, k, "Mul", 2)) return NULL;
  for (int32_t side = 0; side < (div ? 1 : 2); ++side) {
    vkp__onnx_fusion_t f = {.kind = VKP__FUSE_RMS_NORM, .x = vkp__in(s, k, side)};
    int32_t nodes[9], n = 0;
    const char *r = vkp__in(s, k, 1 - side);
    int32_t sq = -1;
    if (div) {
      sq = vkp__once(s, r, "Sqrt", 1);
    } else {
      int32_t inv = vkp__once(s, r, "Reciprocal", 1);
      if (inv < 0) {
        inv = vkp__once(s, r, "Div", 2);
        if (inv >= 0) f.one = vkp__in(s, inv, 0);
      }
      if (inv < 0) continue;
      nodes[n++] = inv;
      sq = vkp__once(s, vkp__in(s, inv, f.one ? 1 : 0), "Sqrt", 1);
    }
    if (sq < 0) continue;
    nodes[n++] = sq;
    int32_t add = vkp__once(s, vkp__in(s, sq, 0), "Add", 2);
    if (add < 0) continue;
    nodes[n++] = add;
    int32_t rm = -1;
    for (int32_t i = 0; i < 2 && rm < 0; ++i) {
      int32_t p = vkp__prod(s, vkp__in(s, add, i));
      if (vkp__uses(s, vkp__in(s, add, i)) != 1) continue;
      if (vkp__is_op(s, p, "ReduceMean", 1) || vkp__is_op(s, p, "ReduceMean", 2)) {
        rm = p;
        f.eps = vkp__in(s, add, 1 - i);
      }
    }
    if (rm < 0) continue;
    nodes[n++] = f.mean_node = rm;
    const char *sqv = vkp__in(s, rm, 0);
    int32_t pw = vkp__once(s, sqv, "Pow", 2);
    if (pw >= 0 && vkp__is(vkp__in(s, pw, 0), f.x)) {
      f.two = vkp__in(s, pw, 1);
    } else {
      pw = vkp__once(s, sqv, "Mul", 2);
      if (pw < 0 || !vkp__is(vkp__in(s, pw, 0), f.x) ||
          !vkp__is(vkp__in(s, pw, 1), f.x))
        continue;
    }
    nodes[n++] = pw;
    nodes[n++] = k;
    int32_t mul = vkp__only_consumer(s, vkp__out(s, k));
    if (vkp__is_op(s, mul, "Mul", 2)) {
      f.scale = vkp__other(s, mul, vkp__out(s, k));
      nodes[n++] = mul;
    }
    const char *ops[] = {f.x, f.eps, f.two, f.one, f.scale};
    if (!vkp__operands_outside(s, ops, 5, nodes, n)) continue;
    return vkp__add_group(ctx, s, &f, nodes, n);
  }
  return NULL;
}

// tanh GELU's inner part from `a1` = Add(1, Tanh(...)) for input `x`.
static bool vkp__match_gelu_tanh_inner(const vkp__fuse_scan_t *s, const char *x,
                                       const char *a1, vkp__onnx_fusion_t *f,
                                       int32_t *nodes, int32_t *n) {
  int32_t add1 = vkp__once(s, a1, "Add", 2);
  if (add1 < 0) return false;
  for (int32_t s1 = 0; s1 < 2; ++s1) {
    int32_t th = vkp__once(s, vkp__in(s, add1, s1), "Tanh", 1);
    if (th < 0) continue;
    int32_t m3 = vkp__once(s, vkp__in(s, th, 0), "Mul", 2);
    if (m3 < 0) continue;
    for (int32_t s3 = 0; s3 < 2; ++s3) {
      int32_t a0 = vkp__once(s, vkp__in(s, m3, s3), "Add", 2);
      if (a0 < 0) continue;
      const char *m2v = vkp__other(s, a0, x);
      int32_t m2 = m2v ? vkp__once(s, m2v, "Mul", 2) : -1;
      if (m2 < 0) continue;
      for (int32_t s2 = 0; s2 < 2; ++s2) {
        const char *cv = vkp__in(s, m2, s2);
        int32_t m = *n, ck = vkp__once(s, cv, "Pow", 2);
        const char *cube = NULL;
        if (ck >= 0 && vkp__is(vkp__in(s, ck, 0), x)) {
          cube = vkp__in(s, ck, 1);
        } else {
          ck = vkp__once(s, cv, "Mul", 2);
          const char *sqv = ck >= 0 ? vkp__other(s, ck, x) : NULL;
          int32_t sq = sqv ? vkp__once(s, sqv, "Mul", 2) : -1;
          if (sq < 0 || !vkp__is(vkp__in(s, sq, 0), x) || !vkp__is(vkp__in(s, sq, 1), x))
            continue;
          nodes[m++] = sq;
        }
        nodes[m++] = ck;
        nodes[m++] = m2;
        nodes[m++] = a0;
        nodes[m++] = m3;
        nodes[m++] = th;
        nodes[m++] = add1;
        f->cube = cube;
        f->two = vkp__in(s, m2, 1 - s2);
        f->eps = vkp__in(s, m3, 1 - s3);
        f->one = vkp__in(s, add1, 1 - s1);
        *n = m;
        return true;
      }
    }
  }
  return false;
}

// tanh GELU, anchored at its last Mul.
static vkp_status_t vkp__match_gelu_tanh(vkp__onnx_ctx_t *ctx,
                                         vkp__fuse_scan_t *s, int32_t last) {
  if (!vkp__is_op(s, last, "Mul", 2)) return NULL;
  for (int32_t side = 0; side < 2; ++side) {
    const char *u = vkp__in(s, last, side), *w = vkp__in(s, last, 1 - side);
    int32_t mm = vkp__once(s, u, "Mul", 2);
    for (int32_t xs = 0; xs < 2; ++xs) {
      vkp__onnx_fusion_t f = {.kind = VKP__FUSE_GELU_TANH, .mean_node = -1};
      int32_t nodes[12], n = 0;
      const char *a1;
      if (mm >= 0) {
        // 0.5 * (x * (1 + t))
        f.x = vkp__in(s, mm, xs);
        a1 = vkp__in(s, mm, 1 - xs);
        f.scale = w;
        nodes[n++] = mm;
      } else {
        // (x * 0.5) * (1 + t)
        int32_t mh = vkp__once(s, w, "Mul", 2);
        if (mh < 0) break;
        f.x = vkp__in(s, mh, xs);
        f.scale = vkp__in(s, mh, 1 - xs);
        a1 = u;
        nodes[n++] = mh;
      }
      if (!vkp__match_gelu_tanh_inner(s, f.x, a1, &f, nodes, &n)) continue;
      nodes[n++] = last;
      const char *ops[] = {f.x, f.scale, f.cube, f.two, f.eps, f.one};
      if (!vkp__operands_outside(s, ops, 6, nodes, n)) continue;
      return vkp__add_group(ctx, s, &f, nodes, n);
    }
  }
  return NULL;
}

// Expected to be a constant once the nodes before it are imported: an
// initializer, a Constant's output, a Shape (of a statically shaped value),
// or computed only from such values (ViT's `d ** -0.5` is Pow(Constant,
// Constant)). Only a guess made before import; vkp__emit_attention checks the
// folded value and imports node by node when it is not a constant after all.
static bool vkp__static_const_at(vkp__onnx_ctx_t *ctx, const vkp__fuse_scan_t *s,
                                 const char *value, int depth) {
  vkp__onnx_sym_t *sym = vkp__onnx_sym_find(ctx, value);
  if (sym && sym->is_const) return true;
  int32_t k = vkp__prod(s, value);
  if (k < 0 || depth > 8) return false;
  const Onnx__NodeProto *n = s->g->node[k];
  if (!n->op_type) return false;
  if (strcmp(n->op_type, "Constant") == 0 || strcmp(n->op_type, "Shape") == 0)
    return true;
  if (n->n_input == 0) return false;
  for (size_t i = 0; i < n->n_input; ++i)
    if (n->input[i] && n->input[i][0] &&
        !vkp__static_const_at(ctx, s, n->input[i], depth + 1))
      return false;
  return true;
}

static bool vkp__static_const(vkp__onnx_ctx_t *ctx, const vkp__fuse_scan_t *s,
                              const char *value) {
  return vkp__static_const_at(ctx, s, value, 0);
}

// `value` scaled by a constant: Mul (either order) or Div (divisor second)
// whose output `value` is used once. Returns that node, or -1.
static int32_t vkp__scaling(vkp__onnx_ctx_t *ctx, const vkp__fuse_scan_t *s,
                            const char *value, const char **out_in,
                            const char **out_factor, bool *out_divide) {
  int32_t k = vkp__prod(s, value);
  if (vkp__uses(s, value) != 1) return -1;
  bool div = vkp__is_op(s, k, "Div", 2);
  if (!div && !vkp__is_op(s, k, "Mul", 2)) return -1;
  for (int32_t f = 1; f >= (div ? 1 : 0); --f) {
    if (!vkp__static_const(ctx, s, vkp__in(s, k, f))) continue;
    *out_in = vkp__in(s, k, 1 - f);
    *out_factor = vkp__in(s, k, f);
    *out_divide = div;
    return k;
  }
  return -1;
}

// A Dropout that only passes its input on (one used output, no
// training_mode input).
static bool vkp__is_identity_dropout(const vkp__fuse_scan_t *s, int32_t k) {
  if (k < 0 || s->taken[k]) return false;
  const Onnx__NodeProto *n = s->g->node[k];
  if (!n->op_type || strcmp(n->op_type, "Dropout") != 0 || n->n_input < 1 ||
      n->n_input > 2 || n->n_output < 1 || !n->output[0] || !n->output[0][0])
    return false;
  for (size_t i = 1; i < n->n_output; ++i)
    if (n->output[i] && n->output[i][0] && vkp__uses(s, n->output[i]) > 0)
      return false;
  return true;
}

// The scores chain of attention, backwards from `sc` (used once):
// [Where(C, fill, S) | Where(C, S, fill)] <- [scale] <- MatMul(Q', Kt')
// with Q' and Kt' optionally scaled. Appends its nodes; false when `sc` is
// not such a chain.
static bool vkp__match_scores(vkp__onnx_ctx_t *ctx, const vkp__fuse_scan_t *s,
                              const char *sc, vkp__onnx_fusion_t *f,
                              int32_t *nodes, int32_t *n, bool where_ok) {
  vkp__onnx_attention_t *a = &f->att;
  if (vkp__uses(s, sc) != 1) return false;
  int32_t k = vkp__prod(s, sc);
  if (where_ok && vkp__is_op(s, k, "Where", 3)) {
    // The scores are whichever branch continues the chain; the other is
    // the fill.
    for (int32_t branch = 2; branch >= 1; --branch) {
      vkp__onnx_fusion_t g = *f;
      int32_t m = *n;
      nodes[m++] = k;
      if (!vkp__match_scores(ctx, s, vkp__in(s, k, branch), &g, nodes, &m, false))
        continue;
      g.att.cond = vkp__in(s, k, 0);
      g.att.fill = vkp__in(s, k, 3 - branch);
      g.att.fill_where = branch == 2;
      *f = g;
      *n = m;
      return true;
    }
    return false;
  }
  if (!vkp__is_op(s, k, "MatMul", 2)) {
    const char *in;
    int32_t m = vkp__scaling(ctx, s, sc, &in, &a->factors[0], &a->divide[0]);
    if (m < 0) return false;
    a->n_factors = 1;
    nodes[(*n)++] = m;
    sc = in;
    k = vkp__prod(s, sc);
    if (vkp__uses(s, sc) != 1 || !vkp__is_op(s, k, "MatMul", 2)) return false;
  }
  nodes[(*n)++] = k;
  f->x = vkp__in(s, k, 0);
  a->kt = vkp__in(s, k, 1);
  // Pre-scaled Q and Kt (nn.MultiheadAttention, scaled_dot_product_attention).
  const char **ends[2] = {&f->x, &a->kt};
  for (int i = 0; i < 2; ++i) {
    const char *in;
    int32_t j = a->n_factors;
    int32_t m = vkp__scaling(ctx, s, *ends[i], &in, &a->factors[j], &a->divide[j]);
    if (m < 0) continue;
    a->n_factors++;
    nodes[(*n)++] = m;
    *ends[i] = in;
  }
  return true;
}

// Attention, anchored at the MatMul by V.
static vkp_status_t vkp__match_attention(vkp__onnx_ctx_t *ctx,
                                         vkp__fuse_scan_t *s, int32_t last) {
  if (!vkp__is_op(s, last, "MatMul", 2)) return NULL;
  int32_t nodes[12], n = 0;
  nodes[n++] = last;
  vkp__onnx_fusion_t f = {.kind = VKP__FUSE_ATTENTION, .mean_node = -1};
  vkp__onnx_attention_t *a = &f.att;
  a->v = vkp__in(s, last, 1);
  const char *p = vkp__in(s, last, 0);
  int32_t k = vkp__prod(s, p);
  if (vkp__uses(s, p) != 1) return NULL;
  if (vkp__is_identity_dropout(s, k)) {
    nodes[n++] = k;
    p = vkp__in(s, k, 0);
    k = vkp__prod(s, p);
    if (vkp__uses(s, p) != 1) return NULL;
  }
  if (!vkp__is_op(s, k, "Softmax", 1)) return NULL;
  nodes[n++] = a->softmax = k;
  const char *sc = vkp__in(s, k, 0);
  k = vkp__prod(s, sc);
  bool matched = false;
  if (vkp__is_op(s, k, "Add", 2) && vkp__uses(s, sc) == 1) {
    // The mask is whichever operand does not continue the chain.
    for (int32_t side = 0; side < 2 && !matched; ++side) {
      vkp__onnx_fusion_t g = f;
      int32_t m = n;
      nodes[m++] = k;
      if (!vkp__match_scores(ctx, s, vkp__in(s, k, side), &g, nodes, &m, true))
        continue;
      g.att.mask = vkp__in(s, k, 1 - side);
      f = g;
      n = m;
      matched = true;
    }
  }
  if (!matched && !vkp__match_scores(ctx, s, sc, &f, nodes, &n, true)) return NULL;
  for (int32_t i = 0; i < n; ++i)
    if (s->taken[nodes[i]]) return NULL;
  // The operands must come from outside the pattern.
  const char *operands[] = {f.x, a->kt, a->v, a->mask, a->cond, a->fill,
                            a->factors[0], a->factors[1], a->factors[2]};
  for (size_t i = 0; i < sizeof operands / sizeof *operands; ++i) {
    int32_t q = vkp__prod(s, operands[i]);
    for (int32_t j = 0; operands[i] && j < n; ++j)
      if (q == nodes[j]) return NULL;
  }
  return vkp__add_group(ctx, s, &f, nodes, n);
}

// GroupNorm, anchored at its InstanceNormalization.
static vkp_status_t vkp__match_group_norm(vkp__onnx_ctx_t *ctx,
                                          vkp__fuse_scan_t *s, int32_t k) {
  if (!vkp__is_op(s, k, "InstanceNormalization", 3)) return NULL;
  const char *grouped = vkp__in(s, k, 0);
  int32_t rs1 = vkp__prod(s, grouped);
  if (!vkp__is_op(s, rs1, "Reshape", 2) || vkp__uses(s, grouped) != 1) return NULL;
  int32_t rs2 = vkp__only_consumer(s, vkp__out(s, k));
  if (!vkp__is_op(s, rs2, "Reshape", 2) ||
      strcmp(vkp__in(s, rs2, 0), vkp__out(s, k)) != 0)
    return NULL;
  vkp__onnx_fusion_t f = {.kind = VKP__FUSE_GROUP_NORM,
                          .x = vkp__in(s, rs1, 0),
                          .mean_node = k};
  int32_t nodes[5] = {rs1, k, rs2}, n = 3;
  int32_t mul = vkp__only_consumer(s, vkp__out(s, rs2));
  if (vkp__is_op(s, mul, "Mul", 2)) {
    f.scale = vkp__other(s, mul, vkp__out(s, rs2));
    nodes[n++] = mul;
    int32_t badd = vkp__only_consumer(s, vkp__out(s, mul));
    if (vkp__is_op(s, badd, "Add", 2)) {
      f.bias = vkp__other(s, badd, vkp__out(s, mul));
      nodes[n++] = badd;
    }
  }
  // The operands must come from outside the pattern.
  const char *operands[] = {f.scale, f.bias, vkp__in(s, rs1, 1), vkp__in(s, rs2, 1),
                            vkp__in(s, k, 1), vkp__in(s, k, 2)};
  for (int i = 0; i < 6; ++i) {
    int32_t p = vkp__prod(s, operands[i]);
    for (int32_t j = 0; operands[i] && j < n; ++j)
      if (p == nodes[j]) return NULL;
  }
  return vkp__add_group(ctx, s, &f, nodes, n);
}

// A node of `op` with 2 or 3 inputs.
static bool vkp__is_op23(const vkp__fuse_scan_t *s, int32_t k, const char *op) {
  return vkp__is_op(s, k, op, 2) || vkp__is_op(s, k, op, 3);
}

// QDQ integer product, anchored at its QuantizeLinear. The DequantizeLinear
// nodes join the group only when the product is their only consumer (else
// they are imported as well, for the other consumers).
static vkp_status_t vkp__match_qdq(vkp__onnx_ctx_t *ctx, vkp__fuse_scan_t *s,
                                   int32_t q) {
  if (!vkp__is_op23(s, q, "QuantizeLinear")) return NULL;
  const char *y = vkp__in(s, q, 0);
  int32_t relu = vkp__prod(s, y);
  if (vkp__is_op(s, relu, "Relu", 1) && vkp__uses(s, y) == 1) y = vkp__in(s, relu, 0);
  else relu = -1;
  int32_t p = vkp__prod(s, y);
  if (vkp__uses(s, y) != 1) return NULL;
  // MatMul + Add(., DequantizeLinear(b_q)): the Add is the bias.
  int32_t add = -1, dq_add = -1;
  if (vkp__is_op(s, p, "Add", 2)) {
    add = p;
    for (int32_t side = 0; side < 2 && dq_add < 0; ++side) {
      int32_t mm = vkp__prod(s, vkp__in(s, add, side));
      int32_t dq = vkp__prod(s, vkp__in(s, add, 1 - side));
      if (vkp__is_op(s, mm, "MatMul", 2) && vkp__uses(s, vkp__out(s, mm)) == 1 &&
          vkp__is_op23(s, dq, "DequantizeLinear")) {
        p = mm;
        dq_add = dq;
      }
    }
    if (dq_add < 0) return NULL;
  }
  bool conv = vkp__is_op23(s, p, "Conv");
  if (!conv && !vkp__is_op(s, p, "MatMul", 2) && !vkp__is_op23(s, p, "Gemm")) return NULL;
  int32_t dq[3] = {-1, -1, dq_add};
  size_t n_in = s->g->node[p]->n_input;
  for (size_t i = 0; i < n_in; ++i) {
    dq[i] = vkp__prod(s, vkp__in(s, p, (int32_t)i));
    if (!vkp__is_op23(s, dq[i], "DequantizeLinear")) return NULL;
  }
  vkp__onnx_fusion_t f = {.kind = VKP__FUSE_QDQ,
                          .x = vkp__in(s, dq[0], 0),
                          .qdq = {dq[0], dq[1], dq[2], p, relu, q, add}};
  int32_t nodes[7], n = 0;
  for (int32_t i = 0; i < 3; ++i)
    if (dq[i] >= 0 && vkp__uses(s, vkp__out(s, dq[i])) == 1) nodes[n++] = dq[i];
  nodes[n++] = p;
  if (add >= 0) nodes[n++] = add;
  if (relu >= 0) nodes[n++] = relu;
  nodes[n++] = q;
  return vkp__add_group(ctx, s, &f, nodes, n);
}

vkp_status_t vkp__onnx_plan_fusions(vkp__onnx_ctx_t *ctx) {
  const Onnx__GraphProto *g = ctx->onnx_graph;
  size_t n = g->n_node;
  ctx->fusion_at = vkp__calloc(n + 1, sizeof(int32_t));
  if (!ctx->fusion_at) return VKP_OOM("fusion plan");
  for (size_t k = 0; k < n; ++k) ctx->fusion_at[k] = -1;
  vkp__fuse_scan_t s = {.g = g};
  vkp_strmap_init(&s.producer);
  vkp_strmap_init(&s.uses);
  vkp_strmap_init(&s.consumer);
  s.taken = vkp__calloc(n + 1, sizeof(bool));
  vkp_status_t st = s.taken ? NULL : VKP_OOM("fusion plan");
  for (size_t k = 0; k < n && !st; ++k) {
    const Onnx__NodeProto *node = g->node[k];
    s.taken[k] = ctx->skip[k] || (ctx->fold_bn && ctx->fold_bn[k] >= 0);
    for (size_t i = 0; i < node->n_output && !st; ++i)
      if (node->output[i] && node->output[i][0])
        st = vkp_strmap_put(&s.producer, node->output[i], (int32_t)k);
    for (size_t i = 0; i < node->n_input && !st; ++i) {
      const char *in = node->input[i];
      if (!in || !in[0]) continue;
      st = vkp_strmap_put(&s.uses, in, vkp__uses(&s, in) + 1);
      if (!st) st = vkp_strmap_put(&s.consumer, in, (int32_t)k);
    }
  }
  for (size_t i = 0; i < g->n_output && !st; ++i) {
    const char *o = g->output[i] ? g->output[i]->name : NULL;
    if (o && o[0]) st = vkp_strmap_put(&s.uses, o, 1 << 20);
  }
  // What an If branch reads counts as used many times: never fused away.
  for (size_t k = 0; k < n && !st; ++k)
    st = vkp__onnx_mark_branch_uses(g->node[k], &s.uses, 1 << 20);
  for (size_t k = 0; k < n && !st; ++k) {
    st = vkp__match_layer_norm(ctx, &s, (int32_t)k);
    if (!st) st = vkp__match_gelu(ctx, &s, (int32_t)k);
    if (!st) st = vkp__match_gelu_tanh(ctx, &s, (int32_t)k);
    if (!st) st = vkp__match_rms_norm(ctx, &s, (int32_t)k);
    if (!st) st = vkp__match_attention(ctx, &s, (int32_t)k);
    if (!st) st = vkp__match_group_norm(ctx, &s, (int32_t)k);
    if (!st) st = vkp__match_qdq(ctx, &s, (int32_t)k);
  }
  vkp__free(s.taken);
  vkp_strmap_deinit(&s.producer);
  vkp_strmap_deinit(&s.uses);
  vkp_strmap_deinit(&s.consumer);
  return st;
}

// ---------------------------------------------------------------------------
// Emitting

// A one-element float constant whose value is within `tol` of `want`.
static bool vkp__const_near(vkp__onnx_ctx_t *ctx, const char *name, double want,
                            double tol, double *out) {
  vkp__onnx_sym_t *s = vkp__onnx_sym_find(ctx, name);
  if (!s || !s->is_const || !vkp__onnx_type_is_float(s->constant.type) ||
      vkp__onnx_tensor_numel(&s->constant) != 1)
    return false;
  double v = vkp__onnx_tensor_get_f(&s->constant, 0);
  if (out) *out = v;
  return fabs(v - want) <= tol;
}

// A float32 runtime value or constant that broadcasts to x.shape[axis:].
static bool vkp__param_ok(vkp__onnx_ctx_t *ctx, const char *name,
                          const vkp_value_t *x, int32_t axis) {
  vkp__onnx_sym_t *s = vkp__onnx_sym_find(ctx, name);
  if (!s || s->poisoned) return false;
  if (s->is_const ? s->constant.type != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT
                  : ctx->graph->values[s->value].dtype != VKP_DTYPE_FLOAT32)
    return false;
  int32_t rank;
  int64_t shape[VKP_MAX_RANK];
  vkp__onnx_sym_shape(ctx, s, &rank, shape);
  if (rank > x->rank - axis) return false;
  for (int32_t d = 0; d < rank; ++d) {
    int64_t want = x->shape[x->rank - rank + d];
    if (shape[d] != want && shape[d] != 1) return false;
  }
  return true;
}

// A ReduceMean over trailing axes with keepdims=1 (axes as the attribute or
// as opset 18's constant input): the first reduced axis, or -1.
static int32_t vkp__trailing_mean_axis(vkp__onnx_ctx_t *ctx,
                                       const Onnx__NodeProto *rm, int32_t rank) {
  int64_t axes[VKP_MAX_RANK];
  int32_t n_axes = 0;
  for (size_t i = 0; i < rm->n_attribute; ++i) {
    const Onnx__AttributeProto *a = rm->attribute[i];
    if (!a->name) return -1;
    if (strcmp(a->name, "keepdims") == 0) {
      if (a->i != 1) return -1;
    } else if (strcmp(a->name, "noop_with_empty_axes") == 0) {
      if (a->i != 0) return -1;
    } else if (strcmp(a->name, "axes") == 0) {
      if (a->n_ints < 1 || a->n_ints > (size_t)rank) return -1;
      n_axes = (int32_t)a->n_ints;
      for (size_t j = 0; j < a->n_ints; ++j) axes[j] = a->ints[j];
    } else {
      return -1;
    }
  }
  if (rm->n_input > 1 && rm->input[1] && rm->input[1][0]) {
    vkp__onnx_sym_t *c = vkp__onnx_sym_find(ctx, rm->input[1]);
    if (n_axes || !c || !c->is_const) return -1;
    vkp_status_t st = vkp__onnx_const_ints(&c->constant, "axes", axes,
                                           VKP_MAX_RANK, &n_axes);
    if (st) {
      vkp_status_free(st);
      return -1;
    }
  }
  if (n_axes < 1 || n_axes > rank) return -1;
  bool seen[VKP_MAX_RANK] = {false};
  for (int32_t j = 0; j < n_axes; ++j) {
    int64_t v = axes[j] < 0 ? axes[j] + rank : axes[j];
    if (v < rank - n_axes || v >= rank || seen[v]) return -1;
    seen[v] = true;
  }
  return rank - n_axes;
}

// A normalisation's scale operand: gamma's value, or ones over
// x.shape[axis:] when the pattern had none.
static vkp_status_t vkp__norm_scale(vkp__onnx_ctx_t *ctx, const char *gamma,
                                    const vkp_value_t *x, int32_t axis,
                                    int32_t *out_value) {
  if (gamma) return vkp__onnx_sym_value(ctx, vkp__onnx_sym_find(ctx, gamma), out_value);
  vkp__onnx_tensor_t ones;
  VKP_RETURN_IF_ERROR(vkp__onnx_tensor_alloc(
      &ones, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, x->rank - axis, &x->shape[axis]));
  for (size_t i = 0; i < vkp__onnx_tensor_numel(&ones); ++i)
    vkp__onnx_tensor_set_f(&ones, i, 1.0);
  vkp_status_t st = vkp__onnx_add_const(ctx, &ones, out_value);
  vkp__onnx_tensor_deinit(&ones);
  return st;
}

static vkp_status_t vkp__emit_layer_norm(vkp__onnx_ctx_t *ctx,
                                         const vkp__onnx_fusion_t *f,
                                         const vkp_value_t *x, int32_t xv,
                                         bool *out_fused) {
  double eps;
  if (!vkp__const_near(ctx, f->eps, 0.0, 1.0, &eps) || eps < 0 ||
      !vkp__const_near(ctx, f->two, 2.0, 0.0, NULL))
    return NULL;
  // Both ReduceMeans: the same trailing axes, keepdims=1.
  int32_t axis = -1;
  for (int32_t i = 0; i < f->n_nodes; ++i) {
    const Onnx__NodeProto *n = ctx->onnx_graph->node[f->nodes[i]];
    if (strcmp(n->op_type, "ReduceMean") != 0) continue;
    int32_t a = vkp__trailing_mean_axis(ctx, n, x->rank);
    if (a < 0 || (axis >= 0 && a != axis)) return NULL;
    axis = a;
  }
  if (axis < 0) return NULL;
  if ((f->scale && !vkp__param_ok(ctx, f->scale, x, axis)) ||
      (f->bias && !vkp__param_ok(ctx, f->bias, x, axis)))
    return NULL;
  int32_t in[3] = {xv, -1, -1}, n_in = 2;
  VKP_RETURN_IF_ERROR(vkp__norm_scale(ctx, f->scale, x, axis, &in[1]));
  if (f->bias) {
    VKP_RETURN_IF_ERROR(vkp__onnx_sym_value(ctx, vkp__onnx_sym_find(ctx, f->bias), &in[2]));
    n_in = 3;
  }
  vkp_attr_t a[2] = {{.name = "axis", .kind = VKP_ATTR_INT, .i = axis},
                     {.name = "epsilon", .kind = VKP_ATTR_FLOAT, .f = (float)eps}};
  const char *out = ctx->node->output[0];
  int32_t value;
  VKP_RETURN_IF_ERROR(
      vkp__onnx_emit(ctx, VKP_OP_LAYER_NORM, n_in, in, 2, a, out, &value));
  *out_fused = true;
  return vkp__onnx_bind_value(ctx, out, value);
}

static vkp_status_t vkp__emit_gelu(vkp__onnx_ctx_t *ctx,
                                   const vkp__onnx_fusion_t *f, int32_t xv,
                                   bool *out_fused) {
  if (!vkp__const_near(ctx, f->eps, sqrt(2.0), 1e-4, NULL) ||
      !vkp__const_near(ctx, f->two, 1.0, 0.0, NULL) ||
      !vkp__const_near(ctx, f->scale, 0.5, 0.0, NULL))
    return NULL;
  vkp_attr_t a = {.name = "approximate", .kind = VKP_ATTR_STRING, .s = "none"};
  const char *out = ctx->node->output[0];
  int32_t value;
  VKP_RETURN_IF_ERROR(vkp__onnx_emit(ctx, VKP_OP_GELU, 1, &xv, 1, &a, out, &value));
  *out_fused = true;
  return vkp__onnx_bind_value(ctx, out, value);
}

static vkp_status_t vkp__emit_gelu_tanh(vkp__onnx_ctx_t *ctx,
                                        const vkp__onnx_fusion_t *f, int32_t xv,
                                        bool *out_fused) {
  if (!vkp__const_near(ctx, f->eps, sqrt(2.0 / M_PI), 1e-4, NULL) ||
      !vkp__const_near(ctx, f->two, 0.044715, 1e-6, NULL) ||
      !vkp__const_near(ctx, f->one, 1.0, 0.0, NULL) ||
      !vkp__const_near(ctx, f->scale, 0.5, 0.0, NULL) ||
      (f->cube && !vkp__const_near(ctx, f->cube, 3.0, 0.0, NULL)))
    return NULL;
  vkp_attr_t a = {.name = "approximate", .kind = VKP_ATTR_STRING, .s = "tanh"};
  const char *out = ctx->node->output[0];
  int32_t value;
  VKP_RETURN_IF_ERROR(vkp__onnx_emit(ctx, VKP_OP_GELU, 1, &xv, 1, &a, out, &value));
  *out_fused = true;
  return vkp__onnx_bind_value(ctx, out, value);
}

static vkp_status_t vkp__emit_rms_norm(vkp__onnx_ctx_t *ctx,
                                       const vkp__onnx_fusion_t *f,
                                       const vkp_value_t *x, int32_t xv,
                                       bool *out_fused) {
  double eps;
  if (!vkp__const_near(ctx, f->eps, 0.0, 1.0, &eps) || eps < 0 ||
      (f->two && !vkp__const_near(ctx, f->two, 2.0, 0.0, NULL)) ||
      (f->one && !vkp__const_near(ctx, f->one, 1.0, 0.0, NULL)))
    return NULL;
  int32_t axis = vkp__trailing_mean_axis(ctx, ctx->onnx_graph->node[f->mean_node],
                                         x->rank);
  if (axis < 0 || (f->scale && !vkp__param_ok(ctx, f->scale, x, axis))) return NULL;
  int32_t in[2] = {xv, -1};
  VKP_RETURN_IF_ERROR(vkp__norm_scale(ctx, f->scale, x, axis, &in[1]));
  vkp_attr_t a[3] = {{.name = "axis", .kind = VKP_ATTR_INT, .i = axis},
                     {.name = "epsilon", .kind = VKP_ATTR_FLOAT, .f = (float)eps},
                     {.name = "rms", .kind = VKP_ATTR_INT, .i = 1}};
  const char *out = ctx->node->output[0];
  int32_t value;
  VKP_RETURN_IF_ERROR(vkp__onnx_emit(ctx, VKP_OP_LAYER_NORM, 2, in, 3, a, out, &value));
  *out_fused = true;
  return vkp__onnx_bind_value(ctx, out, value);
}

// A symbol's dtype (false when its constant has no IR dtype).
static bool vkp__sym_dtype(const vkp__onnx_ctx_t *ctx, const vkp__onnx_sym_t *sym,
                           vkp_dtype_t *out) {
  if (!sym->is_const) {
    *out = ctx->graph->values[sym->value].dtype;
    return true;
  }
  return vkp__onnx_type_to_dtype(sym->constant.type, out);
}

// Whether [rank, shape] broadcasts (right-aligned) to [out_rank, out].
static bool vkp__fits(int32_t rank, const int64_t *shape, int32_t out_rank,
                      const int64_t *out) {
  if (rank > out_rank) return false;
  for (int32_t i = 0; i < rank; ++i)
    if (shape[i] != 1 && shape[i] != out[out_rank - rank + i]) return false;
  return true;
}

static vkp_status_t vkp__emit_attention(vkp__onnx_ctx_t *ctx,
                                        const vkp__onnx_fusion_t *f,
                                        vkp_dtype_t dtype, int32_t qv,
                                        bool *out_fused) {
  const vkp__onnx_attention_t *a = &f->att;
  // Every operand known, of Q's dtype (the condition: any dtype).
  const char *names[5] = {f->x, a->kt, a->v, a->mask, a->cond};
  vkp__onnx_sym_t *syms[5] = {NULL};
  int32_t rank[5];
  int64_t shape[5][VKP_MAX_RANK];
  for (int i = 0; i < 5; ++i) {
    if (!names[i]) continue;
    syms[i] = vkp__onnx_sym_find(ctx, names[i]);
    vkp_dtype_t dt;
    if (!syms[i] || syms[i]->poisoned || !vkp__sym_dtype(ctx, syms[i], &dt) ||
        (i < 4 && dt != dtype))
      return NULL;
    vkp__onnx_sym_shape(ctx, syms[i], &rank[i], shape[i]);
  }
  // Q [..., Lq, D] @ Kt [..., D, Lk]; P [..., Lq, Lk] @ V [..., Lk, Dv].
  for (int i = 0; i < 3; ++i)
    if (rank[i] < 2) return NULL;
  int64_t d = shape[0][rank[0] - 1], lq = shape[0][rank[0] - 2];
  int64_t lk = shape[1][rank[1] - 1];
  if (shape[1][rank[1] - 2] != d || shape[2][rank[2] - 2] != lk) return NULL;
  // The scores' batch dims are Q's and Kt's broadcast; V's may not widen
  // them (the second MatMul would broadcast P, which attention does not).
  int32_t brank = (rank[0] > rank[1] ? rank[0] : rank[1]) - 2;
  int64_t scores[VKP_MAX_RANK];
  for (int32_t i = 0; i < brank; ++i) {
    scores[i] = 1;
    for (int k = 0; k < 2; ++k) {
      int32_t j = i - (brank - (rank[k] - 2));
      int64_t dim = j >= 0 ? shape[k][j] : 1;
      if (dim != 1 && scores[i] != 1 && dim != scores[i]) return NULL;
      if (dim != 1) scores[i] = dim;
    }
  }
  scores[brank] = lq;
  scores[brank + 1] = lk;
  if (!vkp__fits(rank[2] - 2, shape[2], brank, scores)) return NULL;
  for (int i = 3; i < 5; ++i)
    if (syms[i] && !vkp__fits(rank[i], shape[i], brank + 2, scores)) return NULL;
  // Softmax over the last axis.
  const Onnx__NodeProto *sm = ctx->onnx_graph->node[a->softmax];
  int64_t axis = ctx->opset >= 13 ? -1 : 1;
  for (size_t i = 0; i < sm->n_attribute; ++i)
    if (sm->attribute[i]->name && strcmp(sm->attribute[i]->name, "axis") == 0)
      axis = sm->attribute[i]->i;
  if (axis < 0) axis += brank + 2;
  if (axis != brank + 1) return NULL;
  // The scale: the product of the scalar factors.
  double scale = 1.0, fill = 0.0;
  for (int32_t i = 0; i < a->n_factors; ++i) {
    double c;
    if (!vkp__const_near(ctx, a->factors[i], 0.0, INFINITY, &c) ||
        (a->divide[i] && c == 0.0))
      return NULL;
    scale = a->divide[i] ? scale / c : scale * c;
  }
  if (a->fill && !vkp__const_near(ctx, a->fill, 0.0, INFINITY, &fill)) return NULL;
  int32_t in[5] = {qv, -1, -1, -1, -1}, n_in = 3;
  for (int i = 1; i < 4; ++i)
    if (syms[i]) {
      VKP_RETURN_IF_ERROR(vkp__onnx_sym_value(ctx, syms[i], &in[i]));
      n_in = i + 1;
    }
  if (syms[4]) {
    if (syms[4]->is_const) {
      // A constant condition becomes float32 0/1, which every target binds.
      vkp__onnx_tensor_t c;
      VKP_RETURN_IF_ERROR(vkp__onnx_tensor_alloc(
          &c, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, rank[4], shape[4]));
      for (size_t i = 0; i < vkp__onnx_tensor_numel(&c); ++i)
        vkp__onnx_tensor_set_f(
            &c, i, vkp__onnx_tensor_get_f(&syms[4]->constant, i) != 0 ? 1.0 : 0.0);
      vkp_status_t st = vkp__onnx_add_const(ctx, &c, &in[4]);
      vkp__onnx_tensor_deinit(&c);
      VKP_RETURN_IF_ERROR(st);
    } else {
      VKP_RETURN_IF_ERROR(vkp__onnx_sym_value(ctx, syms[4], &in[4]));
      // So is one computed at run time (a causal mask or'ed with the
      // padding of each row): cast, nonzero to 1.
      if (vkp__onnx_value(ctx, in[4])->dtype != VKP_DTYPE_FLOAT32) {
        vkp_attr_t to = {.name = "to", .kind = VKP_ATTR_STRING, .s = "float32"};
        VKP_RETURN_IF_ERROR(vkp__onnx_emit(ctx, VKP_OP_CAST, 1, &in[4], 1, &to, NULL, &in[4]));
      }
    }
    n_in = 5;
  }
  vkp_attr_t at[3] = {vkp__onnx_a_float("scale", scale),
                      vkp__onnx_a_float("fill", fill),
                      vkp__onnx_a_int("fill_where", a->fill_where)};
  const char *out = ctx->node->output[0];
  int32_t value;
  VKP_RETURN_IF_ERROR(vkp__onnx_emit(ctx, VKP_OP_ATTENTION, n_in, in,
                                     a->cond ? 3 : 1, at, out, &value));
  *out_fused = true;
  return vkp__onnx_bind_value(ctx, out, value);
}

// An attribute of an ONNX node, or NULL.
static const Onnx__AttributeProto *vkp__node_attr(const Onnx__NodeProto *n,
                                                  const char *name) {
  for (size_t i = 0; i < n->n_attribute; ++i)
    if (n->attribute[i]->name && strcmp(n->attribute[i]->name, name) == 0)
      return n->attribute[i];
  return NULL;
}

// A float constant of `count` elements, every one `want`.
static bool vkp__const_fill(vkp__onnx_ctx_t *ctx, const char *name, int64_t count,
                            double want) {
  vkp__onnx_sym_t *s = vkp__onnx_sym_find(ctx, name);
  if (!s || !s->is_const || !vkp__onnx_type_is_float(s->constant.type) ||
      vkp__onnx_tensor_numel(&s->constant) != (size_t)count)
    return false;
  for (size_t i = 0; i < (size_t)count; ++i)
    if (vkp__onnx_tensor_get_f(&s->constant, i) != want) return false;
  return true;
}

// A Reshape (allowzero 0) whose constant shape, resolved against its input
// `in` (0 copies a dim, -1 takes the rest), is `want`.
static bool vkp__reshapes_to(vkp__onnx_ctx_t *ctx, const Onnx__NodeProto *rs,
                             int32_t in_rank, const int64_t *in,
                             int32_t want_rank, const int64_t *want) {
  const Onnx__AttributeProto *az = vkp__node_attr(rs, "allowzero");
  vkp__onnx_sym_t *sym = vkp__onnx_sym_find(ctx, rs->input[1]);
  int64_t shape[VKP_MAX_RANK];
  int32_t n = 0;
  if ((az && az->i != 0) || !sym || !sym->is_const) return false;
  vkp_status_t st = vkp__onnx_const_ints(&sym->constant, "shape", shape,
                                         VKP_MAX_RANK, &n);
  if (st) {
    vkp_status_free(st);
    return false;
  }
  if (n != want_rank) return false;
  int64_t total = 1, known = 1;
  int32_t infer = -1;
  for (int32_t i = 0; i < in_rank; ++i) total *= in[i];
  for (int32_t i = 0; i < n; ++i) {
    if (shape[i] == 0) {
      if (i >= in_rank) return false;
      shape[i] = in[i];
    }
    if (shape[i] == -1) {
      if (infer >= 0) return false;
      infer = i;
    } else if (shape[i] < 0) {
      return false;
    } else {
      known *= shape[i];
    }
  }
  if (infer >= 0) {
    if (known == 0 || total % known != 0) return false;
    shape[infer] = total / known;
  }
  for (int32_t i = 0; i < n; ++i)
    if (shape[i] != want[i]) return false;
  return true;
}

// GroupNorm's gamma or beta: a float32 constant or value that varies only
// along x's channel axis (its shape, right-aligned to x's, is 1 everywhere
// else). A runtime value must span the channels; a constant may be one
// number.
static bool vkp__channel_param_ok(vkp__onnx_ctx_t *ctx, const char *name,
                                  const vkp_value_t *x) {
  if (!name) return true;
  vkp__onnx_sym_t *s = vkp__onnx_sym_find(ctx, name);
  if (!s || s->poisoned) return false;
  if (s->is_const ? s->constant.type != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT
                  : ctx->graph->values[s->value].dtype != VKP_DTYPE_FLOAT32)
    return false;
  int32_t rank;
  int64_t shape[VKP_MAX_RANK];
  vkp__onnx_sym_shape(ctx, s, &rank, shape);
  if (rank > x->rank) return false;
  bool spans = false;
  for (int32_t d = 0; d < rank; ++d) {
    bool channel_axis = x->rank - rank + d == 1;
    if (channel_axis && shape[d] == x->shape[1]) spans = true;
    else if (shape[d] != 1) return false;
  }
  return spans || s->is_const;
}

// The [C] IR value of a checked gamma / beta (`fill` everywhere when absent).
static vkp_status_t vkp__channel_param(vkp__onnx_ctx_t *ctx, const char *name,
                                       const vkp_value_t *x, double fill,
                                       int32_t *out_value) {
  int64_t c = x->shape[1];
  vkp__onnx_sym_t *s = name ? vkp__onnx_sym_find(ctx, name) : NULL;
  if (s && !s->is_const) {
    int32_t v;
    VKP_RETURN_IF_ERROR(vkp__onnx_sym_value(ctx, s, &v));
    vkp_attr_t a = {.name = "shape", .kind = VKP_ATTR_INTS, .ints = &c, .count = 1};
    return vkp__onnx_emit(ctx, VKP_OP_RESHAPE, 1, &v, 1, &a, NULL, out_value);
  }
  vkp__onnx_tensor_t t;
  VKP_RETURN_IF_ERROR(
      vkp__onnx_tensor_alloc(&t, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 1, &c));
  bool one = s && vkp__onnx_tensor_numel(&s->constant) == 1;
  for (int64_t i = 0; i < c; ++i)
    vkp__onnx_tensor_set_f(&t, (size_t)i,
                           s ? vkp__onnx_tensor_get_f(&s->constant, one ? 0 : (size_t)i)
                             : fill);
  vkp_status_t st = vkp__onnx_add_const(ctx, &t, out_value);
  vkp__onnx_tensor_deinit(&t);
  return st;
}

static vkp_status_t vkp__emit_group_norm(vkp__onnx_ctx_t *ctx,
                                         const vkp__onnx_fusion_t *f,
                                         const vkp_value_t *x, int32_t xv,
                                         bool *out_fused) {
  // nodes: Reshape, InstanceNormalization, Reshape[, Mul[, Add]] (graph order).
  const Onnx__NodeProto *rs1 = ctx->onnx_graph->node[f->nodes[0]];
  const Onnx__NodeProto *in = ctx->onnx_graph->node[f->mean_node];
  const Onnx__NodeProto *rs2 = ctx->onnx_graph->node[f->nodes[2]];
  vkp__onnx_sym_t *shape1 = vkp__onnx_sym_find(ctx, rs1->input[1]);
  if (x->rank < 2 || x->shape[0] < 1 || !shape1 || !shape1->is_const ||
      vkp__onnx_tensor_numel(&shape1->constant) != 3)
    return NULL;
  int64_t groups = vkp__onnx_tensor_get_i(&shape1->constant, 1);
  int64_t c = x->shape[1], total = 1;
  for (int32_t d = 0; d < x->rank; ++d) total *= x->shape[d];
  if (groups < 1 || c % groups != 0) return NULL;
  int64_t grouped[3] = {x->shape[0], groups, total / (x->shape[0] * groups)};
  if (!vkp__reshapes_to(ctx, rs1, x->rank, x->shape, 3, grouped) ||
      !vkp__reshapes_to(ctx, rs2, 3, grouped, x->rank, x->shape) ||
      !vkp__const_fill(ctx, in->input[1], groups, 1.0) ||
      !vkp__const_fill(ctx, in->input[2], groups, 0.0) ||
      !vkp__channel_param_ok(ctx, f->scale, x) ||
      !vkp__channel_param_ok(ctx, f->bias, x))
    return NULL;
  const Onnx__AttributeProto *ea = vkp__node_attr(in, "epsilon");
  int32_t inputs[3] = {xv, -1, -1};
  VKP_RETURN_IF_ERROR(vkp__channel_param(ctx, f->scale, x, 1.0, &inputs[1]));
  VKP_RETURN_IF_ERROR(vkp__channel_param(ctx, f->bias, x, 0.0, &inputs[2]));
  vkp_attr_t a[2] = {{.name = "num_groups", .kind = VKP_ATTR_INT, .i = groups},
                     {.name = "epsilon", .kind = VKP_ATTR_FLOAT,
                      .f = ea ? ea->f : (float)1e-5}};
  const char *out = ctx->node->output[0];
  int32_t value;
  VKP_RETURN_IF_ERROR(
      vkp__onnx_emit(ctx, VKP_OP_GROUP_NORM, 3, inputs, 2, a, out, &value));
  *out_fused = true;
  return vkp__onnx_bind_value(ctx, out, value);
}

vkp_status_t vkp__onnx_try_fusion(vkp__onnx_ctx_t *ctx, int32_t group,
                                  bool *out_fused) {
  *out_fused = false;
  const vkp__onnx_fusion_t *f = &ctx->fusions[group];
  int32_t anchor = f->nodes[f->n_nodes - 1];
  vkp__onnx_sym_t *xs = vkp__onnx_sym_find(ctx, f->x);
  if (!xs || xs->poisoned || xs->is_const) return NULL;
  // A copy: adding constants may move the value table.
  vkp_value_t xcopy = ctx->graph->values[xs->value];
  const vkp_value_t *x = &xcopy;
  if (f->kind == VKP__FUSE_QDQ) {
    // The quantized input: anchored at the QuantizeLinear, like the others.
    const char *qout = ctx->onnx_graph->node[anchor]->output[0];
    if (vkp__onnx_sym_find(ctx, qout) || vkp_graph_find_value(ctx->graph, qout) >= 0)
      return NULL;
    ctx->node_index = anchor;
    ctx->node = ctx->onnx_graph->node[anchor];
    ctx->node_name = ctx->node_names[anchor];
    ctx->emitted = 0;
    return vkp__onnx_emit_qdq(ctx, f, xs->value, out_fused);
  }
  bool float_ok = x->dtype == VKP_DTYPE_FLOAT32 ||
                  (f->kind == VKP__FUSE_ATTENTION &&
                   (x->dtype == VKP_DTYPE_FLOAT16 || x->dtype == VKP_DTYPE_FLOAT64));
  if (!float_ok || x->rank < 1) return NULL;
  // A later node may already have claimed the output name (a broken model):
  // leave such a pattern to the ordinary path, which reports it.
  const char *out = ctx->onnx_graph->node[anchor]->output[0];
  if (vkp__onnx_sym_find(ctx, out) || vkp_graph_find_value(ctx->graph, out) >= 0)
    return NULL;
  ctx->node_index = anchor;
  ctx->node = ctx->onnx_graph->node[anchor];
  ctx->node_name = ctx->node_names[anchor];
  ctx->emitted = 0;
  switch (f->kind) {
    case VKP__FUSE_LAYER_NORM:
      return vkp__emit_layer_norm(ctx, f, x, xs->value, out_fused);
    case VKP__FUSE_GELU:
      return vkp__emit_gelu(ctx, f, xs->value, out_fused);
    case VKP__FUSE_ATTENTION:
      return vkp__emit_attention(ctx, f, x->dtype, xs->value, out_fused);
    case VKP__FUSE_GROUP_NORM:
      return vkp__emit_group_norm(ctx, f, x, xs->value, out_fused);
    case VKP__FUSE_RMS_NORM:
      return vkp__emit_rms_norm(ctx, f, x, xs->value, out_fused);
    case VKP__FUSE_GELU_TANH:
      return vkp__emit_gelu_tanh(ctx, f, xs->value, out_fused);
    case VKP__FUSE_QDQ:
      return NULL;  // handled above
  }
  return NULL;
}
