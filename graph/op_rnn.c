// SPDX-License-Identifier: Apache-2.0
// Recurrent networks: lstm, gru, rnn (the ONNX LSTM, GRU and RNN operators):
// schemas, inference and the reference kernel.
//
// Inputs X, W, R, B, sequence_lens, initial_h (lstm: initial_c, P) in ONNX's
// order; outputs Y, Y_h (lstm: Y_c), trailing ones may be left out. W holds
// the gates' input weights stacked per direction ([dirs, G*hidden, input],
// gate order i o f c for lstm, z r h for gru), R the recurrent ones, B both
// biases ([dirs, 2*G*hidden]: W's then R's).
//
// Canonical form: `direction` checked, `hidden_size` written from R,
// `activations` a comma-separated list with one name per activation and
// direction (lstm: f g h, gru: f g, rnn: f; the second direction's after the
// first's), `activation_alpha` and `activation_beta` one value per entry of
// that list (each activation's ONNX default where it takes none).
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "graph/ops_internal.h"
#include "graph/rnn.h"

const vkp__attr_spec_t vkp__attrs_lstm[] = {
    VKP__ATTR_STRING("direction", "forward"), VKP__ATTR("hidden_size", INT),
    VKP__ATTR("activations", STRING), VKP__ATTR("activation_alpha", FLOATS),
    VKP__ATTR("activation_beta", FLOATS), VKP__ATTR_FLOAT("clip", 0.0),
    VKP__ATTR_INT("layout", 0), VKP__ATTR_INT("input_forget", 0),
    VKP__ATTR_END};
const vkp__attr_spec_t vkp__attrs_gru[] = {
    VKP__ATTR_STRING("direction", "forward"), VKP__ATTR("hidden_size", INT),
    VKP__ATTR("activations", STRING), VKP__ATTR("activation_alpha", FLOATS),
    VKP__ATTR("activation_beta", FLOATS), VKP__ATTR_FLOAT("clip", 0.0),
    VKP__ATTR_INT("layout", 0), VKP__ATTR_INT("linear_before_reset", 0),
    VKP__ATTR_END};
const vkp__attr_spec_t vkp__attrs_rnn[] = {
    VKP__ATTR_STRING("direction", "forward"), VKP__ATTR("hidden_size", INT),
    VKP__ATTR("activations", STRING), VKP__ATTR("activation_alpha", FLOATS),
    VKP__ATTR("activation_beta", FLOATS), VKP__ATTR_FLOAT("clip", 0.0),
    VKP__ATTR_INT("layout", 0), VKP__ATTR_END};

// ---------------------------------------------------------------------------
// Activations: name, how many of alpha and beta they take, their defaults
// (ONNX's; ONNX gives Affine none, ONNX Runtime's 1 and 0 are used).

#define VKP__RNN_ACT_LIST(X)                           \
  X(RELU, "relu", 0, 0.0, 0.0)                         \
  X(TANH, "tanh", 0, 0.0, 0.0)                         \
  X(SIGMOID, "sigmoid", 0, 0.0, 0.0)                   \
  X(AFFINE, "affine", 2, 1.0, 0.0)                     \
  X(LEAKY_RELU, "leaky_relu", 1, 0.01, 0.0)            \
  X(THRESHOLDED_RELU, "thresholded_relu", 1, 1.0, 0.0) \
  X(SCALED_TANH, "scaled_tanh", 2, 1.0, 1.0)           \
  X(HARD_SIGMOID, "hard_sigmoid", 2, 0.2, 0.5)         \
  X(ELU, "elu", 1, 1.0, 0.0)                           \
  X(SOFTSIGN, "softsign", 0, 0.0, 0.0)                 \
  X(SOFTPLUS, "softplus", 0, 0.0, 0.0)

typedef enum vkp__rnn_act_t {
#define VKP__ACT_ENUM(e, name, p, a, b) VKP__ACT_##e,
  VKP__RNN_ACT_LIST(VKP__ACT_ENUM)
#undef VKP__ACT_ENUM
  VKP__ACT_COUNT
} vkp__rnn_act_t;

static const struct {
  const char *name;
  int32_t params;
  double alpha, beta;
} vkp__rnn_acts[] = {
#define VKP__ACT_INFO(e, name, p, a, b) {name, p, a, b},
    VKP__RNN_ACT_LIST(VKP__ACT_INFO)
#undef VKP__ACT_INFO
};
_Static_assert(sizeof vkp__rnn_acts / sizeof vkp__rnn_acts[0] == VKP__ACT_COUNT,
               "activation table out of sync");

bool vkp__rnn_activation(const char *name, size_t len, double *alpha,
                         double *beta, int32_t *params) {
  for (int32_t a = 0; a < VKP__ACT_COUNT; ++a)
    if (strlen(vkp__rnn_acts[a].name) == len &&
        strncmp(vkp__rnn_acts[a].name, name, len) == 0) {
      *alpha = vkp__rnn_acts[a].alpha;
      *beta = vkp__rnn_acts[a].beta;
      *params = vkp__rnn_acts[a].params;
      return true;
    }
  return false;
}

static double vkp__rnn_act(vkp__rnn_act_t f, double x, double a, double b) {
  switch (f) {
    case VKP__ACT_RELU: return x > 0 ? x : 0;
    case VKP__ACT_TANH: return tanh(x);
    case VKP__ACT_SIGMOID: return 1.0 / (1.0 + exp(-x));
    case VKP__ACT_AFFINE: return a * x + b;
    case VKP__ACT_LEAKY_RELU: return x >= 0 ? x : a * x;
    case VKP__ACT_THRESHOLDED_RELU: return x > a ? x : 0;
    case VKP__ACT_SCALED_TANH: return a * tanh(b * x);
    case VKP__ACT_HARD_SIGMOID: {
      double y = a * x + b;
      return y < 0 ? 0 : y > 1 ? 1 : y;
    }
    case VKP__ACT_ELU: return x >= 0 ? x : a * (exp(x) - 1.0);
    case VKP__ACT_SOFTSIGN: return x / (1.0 + fabs(x));
    case VKP__ACT_SOFTPLUS: return x > 30 ? x : log1p(exp(x));
    case VKP__ACT_COUNT: break;
  }
  return x;
}

// Gates per direction, and activations per direction.
static int32_t vkp__rnn_gates(vkp_op_t op) {
  return op == VKP_OP_LSTM ? 4 : op == VKP_OP_GRU ? 3 : 1;
}
static int32_t vkp__rnn_n_acts(vkp_op_t op) {
  return op == VKP_OP_LSTM ? 3 : op == VKP_OP_GRU ? 2 : 1;
}
static const char *vkp__rnn_default_acts(vkp_op_t op) {
  return op == VKP_OP_LSTM ? "sigmoid,tanh,tanh" : op == VKP_OP_GRU ? "sigmoid,tanh"
                                                                    : "tanh";
}

// Splits a comma-separated activation list into codes; the error names the
// entry at fault.
static vkp_status_t vkp__rnn_parse_acts(const char *list, vkp__rnn_act_t *out,
                                        int32_t cap, int32_t *count) {
  *count = 0;
  const char *p = list;
  while (*p) {
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    int32_t found = -1;
    for (int32_t a = 0; a < VKP__ACT_COUNT; ++a)
      if (strlen(vkp__rnn_acts[a].name) == len &&
          strncmp(vkp__rnn_acts[a].name, p, len) == 0)
        found = a;
    if (found < 0)
      return VKP__ERR("attribute 'activations': unknown activation '%.*s' "
                      "(relu, tanh, sigmoid, affine, leaky_relu, "
                      "thresholded_relu, scaled_tanh, hard_sigmoid, elu, "
                      "softsign, softplus)",
                      (int)len, p);
    if (*count >= cap)
      return VKP__ERR("attribute 'activations' lists more than %d entries",
                      (int)cap);
    out[(*count)++] = (vkp__rnn_act_t)found;
    p = end ? end + 1 : p + len;
  }
  return NULL;
}

// The direction's count; 0 for an unknown direction.
static int32_t vkp__rnn_dirs(const char *direction) {
  if (strcmp(direction, "forward") == 0 || strcmp(direction, "reverse") == 0)
    return 1;
  return strcmp(direction, "bidirectional") == 0 ? 2 : 0;
}

// ---------------------------------------------------------------------------
// Inference

// Checks that input `i` (when present) has dtype `dt` and shape `want`.
static vkp_status_t vkp__rnn_check(const vkp_graph_t *g, const vkp_node_t *n,
                                   int32_t i, const char *what, vkp_dtype_t dt,
                                   int32_t rank, const int64_t *want) {
  const vkp_value_t *v = vkp__in(g, n, i);
  if (!v) return NULL;
  if (v->dtype != dt)
    return VKP__ERR("%s '%s' is %s; X is %s", what, v->name,
                    vkp_dtype_name(v->dtype), vkp_dtype_name(dt));
  bool same = v->rank == rank;
  for (int32_t d = 0; same && d < rank; ++d) same = v->shape[d] == want[d];
  if (!same) {
    char got[128], exp[128];
    return VKP__ERR("%s '%s' has shape %s; expected %s", what, v->name,
                    vkp__fmt(v, got, sizeof got),
                    vkp_shape_format(rank, want, exp, sizeof exp));
  }
  return NULL;
}

vkp_status_t vkp__infer_rnn(vkp_graph_t *g, vkp_node_t *n, vkp_value_t *out) {
  (void)out;
  const vkp_value_t *x = vkp__in(g, n, 0), *r = vkp__in(g, n, 2);
  const char *direction = vkp_node_string(n, "direction");
  int32_t dirs = vkp__rnn_dirs(direction);
  if (!dirs)
    return VKP__ERR("attribute 'direction' is '%s'; forward, reverse or "
                    "bidirectional",
                    direction);
  int64_t layout = vkp_node_int(n, "layout");
  if (layout != 0 && layout != 1)
    return VKP__ERR("attribute 'layout' is %lld; 0 or 1", (long long)layout);
  if (vkp_node_float(n, "clip") < 0)
    return VKP__ERR("attribute 'clip' is negative (0: no clipping)");
  if (x->rank != 3)
    return VKP__ERR("X '%s' must be 3-D (rank %d)", x->name, (int)x->rank);
  if (r->rank != 3)
    return VKP__ERR("R '%s' must be 3-D (rank %d)", r->name, (int)r->rank);
  int64_t seq = x->shape[layout ? 1 : 0], batch = x->shape[layout ? 0 : 1];
  int64_t input = x->shape[2], hidden = r->shape[2];
  const vkp_attr_t *hs = vkp_node_attr(n, "hidden_size");
  if (hs && hs->i != hidden)
    return VKP__ERR("attribute 'hidden_size' is %lld; R '%s' says %lld",
                    (long long)hs->i, r->name, (long long)hidden);
  VKP_RETURN_IF_ERROR(vkp__set_int(n, "hidden_size", hidden));
  int64_t gh = vkp__rnn_gates(n->op) * hidden;
  int64_t ws[3] = {dirs, gh, input}, rs[3] = {dirs, gh, hidden},
          bs[2] = {dirs, 2 * gh}, ls[1] = {batch};
  int64_t hshape[3] = {dirs, batch, hidden};
  if (layout) {
    hshape[0] = batch;
    hshape[1] = dirs;
  }
  VKP_RETURN_IF_ERROR(vkp__rnn_check(g, n, 1, "W", x->dtype, 3, ws));
  VKP_RETURN_IF_ERROR(vkp__rnn_check(g, n, 2, "R", x->dtype, 3, rs));
  VKP_RETURN_IF_ERROR(vkp__rnn_check(g, n, 3, "B", x->dtype, 2, bs));
  const vkp_value_t *lens = vkp__in(g, n, 4);
  if (lens) {
    if (lens->dtype != VKP_DTYPE_INT32 && lens->dtype != VKP_DTYPE_INT64)
      return VKP__ERR("sequence_lens '%s' is %s; int32 or int64", lens->name,
                      vkp_dtype_name(lens->dtype));
    VKP_RETURN_IF_ERROR(vkp__rnn_check(g, n, 4, "sequence_lens", lens->dtype, 1, ls));
  }
  VKP_RETURN_IF_ERROR(vkp__rnn_check(g, n, 5, "initial_h", x->dtype, 3, hshape));
  if (n->op == VKP_OP_LSTM) {
    int64_t ps[2] = {dirs, 3 * hidden};
    VKP_RETURN_IF_ERROR(vkp__rnn_check(g, n, 6, "initial_c", x->dtype, 3, hshape));
    VKP_RETURN_IF_ERROR(vkp__rnn_check(g, n, 7, "P", x->dtype, 2, ps));
  }
  // Activations: the op's defaults, or one set used for both directions.
  int32_t per = vkp__rnn_n_acts(n->op), count;
  vkp__rnn_act_t acts[6];
  const char *given = vkp_node_string(n, "activations");
  VKP_RETURN_IF_ERROR(vkp__rnn_parse_acts(given ? given : vkp__rnn_default_acts(n->op),
                                          acts, 6, &count));
  if (count != per && count != per * dirs)
    return VKP__ERR("attribute 'activations' has %d entries; %s takes %d per "
                    "direction",
                    (int)count, vkp_op_name(n->op), (int)per);
  const vkp_attr_t *alpha = vkp_node_attr(n, "activation_alpha"),
                   *beta = vkp_node_attr(n, "activation_beta");
  if ((alpha && alpha->count != count) || (beta && beta->count != count))
    return VKP__ERR("attributes 'activation_alpha' and 'activation_beta' need "
                    "one value per activation (%d)",
                    (int)count);
  char list[160] = "";
  double av[6], bv[6];
  size_t used = 0;
  for (int32_t i = 0; i < per * dirs; ++i) {
    int32_t k = i % count;
    av[i] = alpha ? alpha->floats[k] : vkp__rnn_acts[acts[k]].alpha;
    bv[i] = beta ? beta->floats[k] : vkp__rnn_acts[acts[k]].beta;
    used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? "," : "",
                             vkp__rnn_acts[acts[k]].name);
  }
  VKP_RETURN_IF_ERROR(vkp__set_string(n, "activations", list));
  vkp_attr_t fa = {.name = "activation_alpha", .kind = VKP_ATTR_FLOATS,
                   .floats = av, .count = per * dirs};
  vkp_attr_t fb = {.name = "activation_beta", .kind = VKP_ATTR_FLOATS,
                   .floats = bv, .count = per * dirs};
  VKP_RETURN_IF_ERROR(vkp__node_set_attr(n, &fa));
  VKP_RETURN_IF_ERROR(vkp__node_set_attr(n, &fb));
  // Outputs: Y, then Y_h and Y_c.
  int64_t yshape[4] = {seq, dirs, batch, hidden};
  if (layout) {
    yshape[0] = batch;
    yshape[1] = seq;
    yshape[2] = dirs;
  }
  vkp__set_out(vkp__out(g, n, 0), x->dtype, 4, yshape);
  for (int32_t i = 1; i < n->n_outputs; ++i)
    vkp__set_out(vkp__out(g, n, i), x->dtype, 3, hshape);
  return NULL;
}

// ---------------------------------------------------------------------------
// Reference kernel: each direction and batch entry runs its own sequence,
// step by step, with the state in double.

typedef struct vkp__rnn_t {
  vkp_op_t op;
  int64_t seq, batch, input, hidden, dirs;
  bool layout1, input_forget, linear_before_reset;
  double clip;  // 0: none
  vkp__rnn_act_t act[6];
  double alpha[6], beta[6];
  const vkp_tensor_t *w, *r, *bias, *peep;  // bias and peep may be NULL
} vkp__rnn_t;

// Element offsets of X[t, b, :], of Y[t, d, b, :] and of Y_h[d, b, :] (and
// initial_h, initial_c, Y_c) under the layout.
static int64_t vkp__x_at(const vkp__rnn_t *p, int64_t t, int64_t b) {
  return (p->layout1 ? b * p->seq + t : t * p->batch + b) * p->input;
}
static int64_t vkp__y_at(const vkp__rnn_t *p, int64_t t, int64_t d, int64_t b) {
  return (p->layout1 ? (b * p->seq + t) * p->dirs + d
                     : (t * p->dirs + d) * p->batch + b) *
         p->hidden;
}
static int64_t vkp__h_at(const vkp__rnn_t *p, int64_t d, int64_t b) {
  return (p->layout1 ? b * p->dirs + d : d * p->batch + b) * p->hidden;
}

static double vkp__clipped(const vkp__rnn_t *p, double v) {
  if (p->clip > 0) v = v < -p->clip ? -p->clip : v > p->clip ? p->clip : v;
  return v;
}

// Activation `slot` (f, g, h) of direction d applied to pre-activation v.
static double vkp__act_at(const vkp__rnn_t *p, int64_t d, int32_t slot, double v) {
  int32_t i = (int32_t)d * vkp__rnn_n_acts(p->op) + slot;
  return vkp__rnn_act(p->act[i], v, p->alpha[i], p->beta[i]);
}

// sum_k v[k] * m[row, k] over a row-major matrix m with `cols` columns.
static double vkp__row_dot(const vkp_tensor_t *m, int64_t row, int64_t cols,
                           const double *v) {
  double acc = 0;
  for (int64_t k = 0; k < cols; ++k) acc += vkp__get_f(m, row * cols + k) * v[k];
  return acc;
}

// Bias term `which` (0: W's, 1: R's) of gate row g of direction d.
static double vkp__bias(const vkp__rnn_t *p, int64_t d, int32_t which, int64_t g) {
  int64_t gh = vkp__rnn_gates(p->op) * p->hidden;
  return p->bias ? vkp__get_f(p->bias, (d * 2 + which) * gh + g) : 0.0;
}

// One step of direction d for one sequence: h (and c) in place; x is the
// step's input in double, pre[] and rh[] are scratch.
static void vkp__rnn_step(const vkp__rnn_t *p, int64_t d, const double *x,
                          double *h, double *c, double *pre, double *rh) {
  int64_t H = p->hidden, gh = vkp__rnn_gates(p->op) * H;
  // pre[g] = W x + Wb (+ R h + Rb), gate rows in W's order. GRU's h gate
  // gets its R term below: it depends on the reset gate.
  for (int64_t g = 0; g < gh; ++g) {
    double v = vkp__row_dot(p->w, d * gh + g, p->input, x) + vkp__bias(p, d, 0, g);
    if (p->op != VKP_OP_GRU || g < 2 * H)
      v += vkp__row_dot(p->r, d * gh + g, H, h) + vkp__bias(p, d, 1, g);
    pre[g] = v;
  }
  if (p->op == VKP_OP_RNN) {
    for (int64_t j = 0; j < H; ++j) h[j] = vkp__act_at(p, d, 0, vkp__clipped(p, pre[j]));
    return;
  }
  if (p->op == VKP_OP_GRU) {
    // Gates z, r, h:
    //   linear_before_reset: h~ = g(Wh x + Wbh + r (.) (Rh h + Rbh))
    //   otherwise:           h~ = g(Wh x + Wbh + Rh (r (.) h) + Rbh)
    //   h = (1 - z) (.) h~ + z (.) h
    for (int64_t j = 0; j < 2 * H; ++j) pre[j] = vkp__act_at(p, d, 0, vkp__clipped(p, pre[j]));
    const double *z = pre, *rg = pre + H;
    double *hh = pre + 2 * H;
    for (int64_t j = 0; j < H; ++j) rh[j] = rg[j] * h[j];
    for (int64_t j = 0; j < H; ++j) {
      int64_t row = d * gh + 2 * H + j;
      double rb = vkp__bias(p, d, 1, 2 * H + j);
      hh[j] += p->linear_before_reset ? rg[j] * (vkp__row_dot(p->r, row, H, h) + rb)
                                      : vkp__row_dot(p->r, row, H, rh) + rb;
    }
    for (int64_t j = 0; j < H; ++j) {
      double cand = vkp__act_at(p, d, 1, vkp__clipped(p, hh[j]));
      h[j] = (1.0 - z[j]) * cand + z[j] * h[j];
    }
    return;
  }
  // LSTM, gates i o f c, peepholes i o f; with input_forget f = 1 - i.
  const vkp_tensor_t *peep = p->peep;
  for (int64_t j = 0; j < H; ++j) {
    double pi = peep ? vkp__get_f(peep, d * 3 * H + j) : 0.0;
    double po = peep ? vkp__get_f(peep, d * 3 * H + H + j) : 0.0;
    double pf = peep ? vkp__get_f(peep, d * 3 * H + 2 * H + j) : 0.0;
    double ig = vkp__act_at(p, d, 0, vkp__clipped(p, pre[j] + pi * c[j]));
    double fg = p->input_forget
                    ? 1.0 - ig
                    : vkp__act_at(p, d, 0, vkp__clipped(p, pre[2 * H + j] + pf * c[j]));
    double cg = vkp__act_at(p, d, 1, vkp__clipped(p, pre[3 * H + j]));
    c[j] = fg * c[j] + ig * cg;
    double og = vkp__act_at(p, d, 0, vkp__clipped(p, pre[H + j] + po * c[j]));
    h[j] = og * vkp__act_at(p, d, 2, c[j]);
  }
}

// Input i of a node, or NULL when omitted or past its inputs.
static const vkp_tensor_t *vkp__opt(const vkp_node_t *n,
                                    const vkp_tensor_t *const *in, int32_t i) {
  return i < n->n_inputs ? in[i] : NULL;
}

vkp_status_t vkp__eval_rnn(const vkp_node_t *n, const vkp_tensor_t *const *in,
                           vkp_tensor_t *out) {
  const vkp_tensor_t *xt = in[0], *lens = vkp__opt(n, in, 4), *h0 = vkp__opt(n, in, 5);
  const vkp_tensor_t *c0 = n->op == VKP_OP_LSTM ? vkp__opt(n, in, 6) : NULL;
  const char *direction = vkp_node_string(n, "direction");
  vkp__rnn_t p = {.op = n->op, .dirs = vkp__rnn_dirs(direction),
                  .hidden = vkp_node_int(n, "hidden_size"),
                  .layout1 = vkp_node_int(n, "layout") != 0,
                  .input_forget = vkp_node_int(n, "input_forget") != 0,
                  .linear_before_reset = vkp_node_int(n, "linear_before_reset") != 0,
                  .clip = vkp_node_float(n, "clip"),
                  .w = in[1], .r = in[2], .bias = vkp__opt(n, in, 3),
                  .peep = n->op == VKP_OP_LSTM ? vkp__opt(n, in, 7) : NULL};
  p.seq = xt->shape[p.layout1 ? 1 : 0];
  p.batch = xt->shape[p.layout1 ? 0 : 1];
  p.input = xt->shape[2];
  int32_t count;
  VKP_RETURN_IF_ERROR(vkp__rnn_parse_acts(vkp_node_string(n, "activations"),
                                          p.act, 6, &count));
  const vkp_attr_t *alpha = vkp_node_attr(n, "activation_alpha"),
                   *beta = vkp_node_attr(n, "activation_beta");
  for (int32_t i = 0; i < count && i < alpha->count && i < beta->count; ++i) {
    p.alpha[i] = alpha->floats[i];
    p.beta[i] = beta->floats[i];
  }
  // Per-sequence state: x, h, c, r (.) h, the gate pre-activations. (The
  // reference kernels have no workspace; this is the one allocation.)
  int64_t H = p.hidden, G = vkp__rnn_gates(n->op);
  size_t doubles = (size_t)(p.input + 3 * H + G * H);
  double *x = vkp__malloc((doubles ? doubles : 1) * sizeof(double));
  if (!x) return VKP_OOM("rnn state");
  double *h = x + p.input, *c = h + H, *rh = c + H, *pre = rh + H;
  vkp_tensor_t *y = &out[0], *yh = n->n_outputs > 1 ? &out[1] : NULL,
               *yc = n->n_outputs > 2 ? &out[2] : NULL;
  vkp_status_t st = NULL;
  for (int64_t d = 0; d < p.dirs && !st; ++d) {
    bool reverse = strcmp(direction, "reverse") == 0 || d == 1;
    for (int64_t b = 0; b < p.batch; ++b) {
      int64_t len = lens ? vkp__get_i(lens, b) : p.seq;
      if (len < 0 || len > p.seq) {
        st = VKP__ERR("node '%s': sequence_lens[%lld] is %lld; 0 to %lld",
                      n->name, (long long)b, (long long)len, (long long)p.seq);
        break;
      }
      for (int64_t j = 0; j < H; ++j) {
        h[j] = h0 ? vkp__get_f(h0, vkp__h_at(&p, d, b) + j) : 0.0;
        c[j] = c0 ? vkp__get_f(c0, vkp__h_at(&p, d, b) + j) : 0.0;
      }
      // A reverse direction runs from the sequence's own last step.
      for (int64_t s = 0; s < len; ++s) {
        int64_t t = reverse ? len - 1 - s : s;
        for (int64_t k = 0; k < p.input; ++k) x[k] = vkp__get_f(xt, vkp__x_at(&p, t, b) + k);
        vkp__rnn_step(&p, d, x, h, c, pre, rh);
        for (int64_t j = 0; j < H; ++j) vkp__put_f(y, vkp__y_at(&p, t, d, b) + j, h[j]);
      }
      // Steps past the sequence's end are zero in Y.
      for (int64_t t = len; t < p.seq; ++t)
        for (int64_t j = 0; j < H; ++j) vkp__put_f(y, vkp__y_at(&p, t, d, b) + j, 0.0);
      for (int64_t j = 0; j < H; ++j) {
        if (yh) vkp__put_f(yh, vkp__h_at(&p, d, b) + j, h[j]);
        if (yc) vkp__put_f(yc, vkp__h_at(&p, d, b) + j, c[j]);
      }
    }
  }
  vkp__free(x);
  return st;
}
