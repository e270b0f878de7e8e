// SPDX-License-Identifier: Apache-2.0
#include "support/ref_double.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

// A window op's geometry seen as 3-D (1 or 2 spatial dims as leading unit
// dims): input, output and kernel sizes, strides, dilations, begin and end
// pads per dim (D, H, W).
typedef struct win3_t {
  int64_t in[3], out[3], k[3], s[3], d[3], pb[3], pe[3];
} win3_t;

static win3_t win3(const vkp_value_t *x, const vkp_value_t *o, const int64_t *k,
                   const int64_t *p, const int64_t *s, const int64_t *dl) {
  win3_t v;
  int32_t sp = x->rank - 2, lead = 3 - sp;
  for (int32_t d = 0; d < 3; ++d) {
    int32_t i = d - lead;
    bool real = i >= 0;
    v.in[d] = real ? x->shape[2 + i] : 1;
    v.out[d] = real ? o->shape[2 + i] : 1;
    v.k[d] = real ? k[i] : 1;
    v.s[d] = real ? s[i] : 1;
    v.d[d] = real ? dl[i] : 1;
    v.pb[d] = real ? p[i] : 0;
    v.pe[d] = real ? p[sp + i] : 0;
  }
  return v;
}

static int64_t numel(const vkp_value_t *v) {
  int64_t n = 1;
  for (int32_t d = 0; d < v->rank; ++d) n *= v->shape[d];
  return n;
}

// Offset into `v` of the output multi-index `idx` (rank r), broadcasting
// right-aligned.
static int64_t bcast_off(const vkp_value_t *v, int32_t r, const int64_t *idx) {
  int64_t off = 0, s = 1;
  for (int32_t d = v->rank - 1; d >= 0; --d) {
    int64_t i = v->shape[d] == 1 ? 0 : idx[r - v->rank + d];
    off += i * s;
    s *= v->shape[d];
  }
  return off;
}

static void unravel(int64_t flat, int32_t r, const int64_t *shape, int64_t *idx) {
  for (int32_t d = r - 1; d >= 0; --d) {
    idx[d] = shape[d] ? flat % shape[d] : 0;
    flat = shape[d] ? flat / shape[d] : 0;
  }
}

static double unary(const vkp_node_t *n, double x) {
  switch (n->op) {
    case VKP_OP_SQRT: return sqrt(x);
    case VKP_OP_EXP: return exp(x);
    case VKP_OP_NEG: return -x;
    case VKP_OP_ABS: return fabs(x);
    case VKP_OP_RELU: return x > 0 ? x : 0;
    case VKP_OP_LEAKY_RELU: return x >= 0 ? x : vkp_node_attr_float(n, "alpha", 0.01) * x;
    case VKP_OP_CLIP: {
      double lo = vkp_node_attr_float(n, "min", -INFINITY), hi = vkp_node_attr_float(n, "max", INFINITY);
      return x < lo ? lo : x > hi ? hi : x;
    }
    case VKP_OP_SIGMOID: return 1.0 / (1.0 + exp(-x));
    case VKP_OP_TANH: return tanh(x);
    case VKP_OP_ERF: return erf(x);
    case VKP_OP_GELU:
      if (strcmp(vkp_node_attr_string(n, "approximate", "none"), "tanh") == 0)
        return 0.5 * x * (1 + tanh(sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
      return 0.5 * x * (1 + erf(x / sqrt(2.0)));
    case VKP_OP_IDENTITY: return x;
    default: return NAN;
  }
}

static double binary(vkp_op_t op, double a, double b) {
  switch (op) {
    case VKP_OP_ADD: return a + b;
    case VKP_OP_SUB: return a - b;
    case VKP_OP_MUL: return a * b;
    case VKP_OP_DIV: return a / b;
    case VKP_OP_POW: return pow(a, b);
    default: return NAN;
  }
}

bool vkp_test_ref_eval(const vkp_graph_t *g, const vkp_tensor_t *inputs, double **out) {
  double **val = calloc((size_t)g->n_values, sizeof(double *));
  for (int32_t v = 0; v < g->n_values; ++v) {
    const vkp_value_t *x = &g->values[v];
    if (x->kind == VKP_VALUE_INTERMEDIATE) continue;
    int64_t n = numel(x);
    val[v] = calloc((size_t)n + 1, sizeof(double));
    const void *src = x->data;
    for (int32_t i = 0; i < g->n_inputs; ++i)
      if (g->inputs[i] == v) src = inputs[i].data;
    for (int64_t i = 0; i < n; ++i) {
      switch (x->dtype) {
        case VKP_DTYPE_FLOAT32: val[v][i] = ((const float *)src)[i]; break;
        case VKP_DTYPE_INT32: val[v][i] = ((const int32_t *)src)[i]; break;
        case VKP_DTYPE_INT64: val[v][i] = (double)((const int64_t *)src)[i]; break;
        default: break;
      }
    }
  }
  bool ok = true;
  for (int32_t ni = 0; ni < g->n_nodes && ok; ++ni) {
    const vkp_node_t *n = &g->nodes[ni];
    const vkp_value_t *o = &g->values[n->outputs[0]];
    const vkp_value_t *x = &g->values[n->inputs[0]];
    const double *X = val[n->inputs[0]];
    int64_t on = numel(o);
    double *Y = calloc((size_t)on + 1, sizeof(double));
    val[n->outputs[0]] = Y;
    int64_t idx[VKP_MAX_RANK] = {0}, xidx[VKP_MAX_RANK] = {0};
    switch (n->op) {
      case VKP_OP_ADD: case VKP_OP_SUB: case VKP_OP_MUL: case VKP_OP_DIV: case VKP_OP_POW: {
        const vkp_value_t *b = &g->values[n->inputs[1]];
        for (int64_t i = 0; i < on; ++i) {
          unravel(i, o->rank, o->shape, idx);
          double av = X[bcast_off(x, o->rank, idx)], bv = val[n->inputs[1]][bcast_off(b, o->rank, idx)];
          if (n->op == VKP_OP_DIV && o->dtype != VKP_DTYPE_FLOAT32)
            Y[i] = bv == 0 ? 0 : trunc(av / bv);
          else
            Y[i] = binary(n->op, av, bv);
        }
        break;
      }
      case VKP_OP_SQRT: case VKP_OP_EXP: case VKP_OP_NEG: case VKP_OP_ABS: case VKP_OP_RELU:
      case VKP_OP_LEAKY_RELU: case VKP_OP_CLIP: case VKP_OP_SIGMOID: case VKP_OP_TANH:
      case VKP_OP_ERF: case VKP_OP_GELU: case VKP_OP_IDENTITY:
        for (int64_t i = 0; i < on; ++i) Y[i] = unary(n, X[i]);
        break;
      case VKP_OP_RESHAPE: case VKP_OP_FLATTEN: case VKP_OP_SQUEEZE: case VKP_OP_UNSQUEEZE:
        memcpy(Y, X, sizeof(double) * (size_t)on);
        break;
      case VKP_OP_MATMUL: {
        const vkp_value_t *b = &g->values[n->inputs[1]];
        const double *B = val[n->inputs[1]];
        int64_t K = x->shape[x->rank - 1];
        int64_t M = x->rank >= 2 ? x->shape[x->rank - 2] : 1, N = b->rank >= 2 ? b->shape[b->rank - 1] : 1;
        int32_t nb = o->rank - (x->rank >= 2) - (b->rank >= 2);
        int64_t batch = on / (M * N);
        for (int64_t bi = 0; bi < batch; ++bi) {
          unravel(bi, nb, o->shape, idx);
          int64_t ao = 0, bo = 0, s = M * K;
          for (int32_t d = x->rank - 3; d >= 0; --d) {
            ao += (x->shape[d] == 1 ? 0 : idx[nb - (x->rank - 2) + d]) * s;
            s *= x->shape[d];
          }
          s = K * N;
          for (int32_t d = b->rank - 3; d >= 0; --d) {
            bo += (b->shape[d] == 1 ? 0 : idx[nb - (b->rank - 2) + d]) * s;
            s *= b->shape[d];
          }
          for (int64_t i = 0; i < M; ++i)
            for (int64_t j = 0; j < N; ++j) {
              double acc = 0;
              for (int64_t k = 0; k < K; ++k) acc += X[ao + i * K + k] * B[bo + k * N + j];
              Y[bi * M * N + i * N + j] = acc;
            }
        }
        break;
      }
      case VKP_OP_GEMM: {
        const double *B = val[n->inputs[1]];
        bool ta = vkp_node_attr_int(n, "transA", 0), tb = vkp_node_attr_int(n, "transB", 0);
        int64_t M = o->shape[0], N = o->shape[1], K = ta ? x->shape[0] : x->shape[1];
        double alpha = vkp_node_attr_float(n, "alpha", 1), beta = vkp_node_attr_float(n, "beta", 1);
        for (int64_t i = 0; i < M; ++i)
          for (int64_t j = 0; j < N; ++j) {
            double acc = 0;
            for (int64_t k = 0; k < K; ++k)
              acc += X[ta ? k * M + i : i * K + k] * B[tb ? j * K + k : k * N + j];
            acc *= alpha;
            if (n->n_inputs > 2 && n->inputs[2] >= 0) {
              int64_t ij[2] = {i, j};
              acc += beta * val[n->inputs[2]][bcast_off(&g->values[n->inputs[2]], 2, ij)];
            }
            Y[i * N + j] = acc;
          }
        break;
      }
      case VKP_OP_CONV2D: {
        const vkp_value_t *w = &g->values[n->inputs[1]];
        const double *W = val[n->inputs[1]];
        const double *Bi = n->n_inputs > 2 && n->inputs[2] >= 0 ? val[n->inputs[2]] : NULL;
        const int64_t *p, *s, *dl;
        vkp_node_attr_ints(n, "pads", &p);
        vkp_node_attr_ints(n, "strides", &s);
        vkp_node_attr_ints(n, "dilations", &dl);
        win3_t v = win3(x, o, w->shape + 2, p, s, dl);
        int64_t G = vkp_node_attr_int(n, "group", 1);
        int64_t C = x->shape[1], M = o->shape[1], Cg = C / G, Mg = M / G;
        int64_t in_plane = v.in[0] * v.in[1] * v.in[2], taps = v.k[0] * v.k[1] * v.k[2];
        for (int64_t b = 0; b < o->shape[0]; ++b)
          for (int64_t m = 0; m < M; ++m)
            for (int64_t oz = 0; oz < v.out[0]; ++oz)
              for (int64_t oh = 0; oh < v.out[1]; ++oh)
                for (int64_t ow = 0; ow < v.out[2]; ++ow) {
                  double acc = Bi ? Bi[m] : 0;
                  int64_t gi = m / Mg;
                  for (int64_t c = 0; c < Cg; ++c)
                    for (int64_t kz = 0; kz < v.k[0]; ++kz)
                      for (int64_t kh = 0; kh < v.k[1]; ++kh)
                        for (int64_t kw = 0; kw < v.k[2]; ++kw) {
                          int64_t iz = oz * v.s[0] - v.pb[0] + kz * v.d[0];
                          int64_t ih = oh * v.s[1] - v.pb[1] + kh * v.d[1];
                          int64_t iw = ow * v.s[2] - v.pb[2] + kw * v.d[2];
                          if (iz < 0 || iz >= v.in[0] || ih < 0 || ih >= v.in[1] || iw < 0 ||
                              iw >= v.in[2])
                            continue;
                          acc += X[(b * C + gi * Cg + c) * in_plane +
                                   (iz * v.in[1] + ih) * v.in[2] + iw] *
                                 W[(m * Cg + c) * taps + (kz * v.k[1] + kh) * v.k[2] + kw];
                        }
                  Y[(((b * M + m) * v.out[0] + oz) * v.out[1] + oh) * v.out[2] + ow] = acc;
                }
        break;
      }
      case VKP_OP_MAX_POOL2D: case VKP_OP_AVG_POOL2D: {
        const int64_t *k, *p, *s, *dl;
        vkp_node_attr_ints(n, "kernel_shape", &k);
        vkp_node_attr_ints(n, "pads", &p);
        vkp_node_attr_ints(n, "strides", &s);
        vkp_node_attr_ints(n, "dilations", &dl);
        win3_t v = win3(x, o, k, p, s, dl);
        bool incl = vkp_node_attr_int(n, "count_include_pad", 0) != 0;
        int64_t in_plane = v.in[0] * v.in[1] * v.in[2];
        int64_t at = 0;
        for (int64_t bc = 0; bc < o->shape[0] * o->shape[1]; ++bc)
          for (int64_t oz = 0; oz < v.out[0]; ++oz)
            for (int64_t oh = 0; oh < v.out[1]; ++oh)
              for (int64_t ow = 0; ow < v.out[2]; ++ow, ++at) {
                double acc = n->op == VKP_OP_MAX_POOL2D ? -INFINITY : 0;
                int64_t cnt = 0, cntp = 0;
                for (int64_t kz = 0; kz < v.k[0]; ++kz)
                  for (int64_t kh = 0; kh < v.k[1]; ++kh)
                    for (int64_t kw = 0; kw < v.k[2]; ++kw) {
                      int64_t iz = oz * v.s[0] - v.pb[0] + kz * v.d[0];
                      int64_t ih = oh * v.s[1] - v.pb[1] + kh * v.d[1];
                      int64_t iw = ow * v.s[2] - v.pb[2] + kw * v.d[2];
                      if (iz >= -v.pb[0] && iz < v.in[0] + v.pe[0] && ih >= -v.pb[1] &&
                          ih < v.in[1] + v.pe[1] && iw >= -v.pb[2] && iw < v.in[2] + v.pe[2])
                        ++cntp;
                      if (iz < 0 || iz >= v.in[0] || ih < 0 || ih >= v.in[1] || iw < 0 ||
                          iw >= v.in[2])
                        continue;
                      double val_ = X[bc * in_plane + (iz * v.in[1] + ih) * v.in[2] + iw];
                      ++cnt;
                      // Max pooling propagates NaN, as the ref target does.
                      if (n->op == VKP_OP_MAX_POOL2D) acc = isnan(val_) || val_ > acc ? val_ : acc;
                      else acc += val_;
                    }
                if (n->op == VKP_OP_AVG_POOL2D) acc /= (double)(incl ? cntp : cnt);
                Y[at] = acc;
              }
        break;
      }
      case VKP_OP_GLOBAL_AVG_POOL: {
        int64_t inner = numel(x) / on;
        for (int64_t i = 0; i < on; ++i) {
          double acc = 0;
          for (int64_t k = 0; k < inner; ++k) acc += X[i * inner + k];
          Y[i] = acc / (double)inner;
        }
        break;
      }
      case VKP_OP_BATCH_NORM: {
        double eps = vkp_node_attr_float(n, "epsilon", 1e-5);
        const double *sc = val[n->inputs[1]], *bi = val[n->inputs[2]], *mu = val[n->inputs[3]], *var = val[n->inputs[4]];
        for (int64_t i = 0; i < on; ++i) {
          unravel(i, o->rank, o->shape, idx);
          int64_t c = idx[1];
          Y[i] = (X[i] - mu[c]) / sqrt(var[c] + eps) * sc[c] + bi[c];
        }
        break;
      }
      case VKP_OP_SOFTMAX: case VKP_OP_LAYER_NORM: {
        int64_t axis = vkp_node_attr_int(n, "axis", -1), outer = 1, len = 1, inner = 1;
        for (int32_t d = 0; d < axis; ++d) outer *= x->shape[d];
        if (n->op == VKP_OP_SOFTMAX) {
          len = x->shape[axis];
          for (int32_t d = (int32_t)axis + 1; d < x->rank; ++d) inner *= x->shape[d];
          for (int64_t a = 0; a < outer; ++a)
            for (int64_t i = 0; i < inner; ++i) {
              double mx = -INFINITY, sum = 0;
              for (int64_t k = 0; k < len; ++k) mx = fmax(mx, X[(a * len + k) * inner + i]);
              for (int64_t k = 0; k < len; ++k) sum += exp(X[(a * len + k) * inner + i] - mx);
              for (int64_t k = 0; k < len; ++k)
                Y[(a * len + k) * inner + i] = exp(X[(a * len + k) * inner + i] - mx) / sum;
            }
        } else {
          len = on / outer;
          double eps = vkp_node_attr_float(n, "epsilon", 1e-5);
          for (int64_t a = 0; a < outer; ++a) {
            double m = 0, v = 0;
            for (int64_t k = 0; k < len; ++k) m += X[a * len + k];
            m /= (double)len;
            for (int64_t k = 0; k < len; ++k) v += (X[a * len + k] - m) * (X[a * len + k] - m);
            v /= (double)len;
            for (int64_t k = 0; k < len; ++k) {
              unravel(a * len + k, o->rank, o->shape, idx);
              double y = (X[a * len + k] - m) / sqrt(v + eps);
              y *= val[n->inputs[1]][bcast_off(&g->values[n->inputs[1]], o->rank, idx)];
              if (n->n_inputs > 2 && n->inputs[2] >= 0)
                y += val[n->inputs[2]][bcast_off(&g->values[n->inputs[2]], o->rank, idx)];
              Y[a * len + k] = y;
            }
          }
        }
        break;
      }
      case VKP_OP_REDUCE_MEAN: case VKP_OP_REDUCE_SUM: {
        const int64_t *axes;
        int32_t na = vkp_node_attr_ints(n, "axes", &axes);
        bool red[VKP_MAX_RANK] = {false};
        for (int32_t i = 0; i < na; ++i) red[axes[i]] = true;
        int64_t cnt = numel(x) / (on ? on : 1);
        for (int64_t i = 0; i < numel(x); ++i) {
          unravel(i, x->rank, x->shape, xidx);
          int64_t off = 0, s = 1;
          for (int32_t d = x->rank - 1; d >= 0; --d) {
            if (red[d]) continue;
            off += xidx[d] * s;
            s *= x->shape[d];
          }
          Y[off] += X[i];
        }
        if (n->op == VKP_OP_REDUCE_MEAN)
          for (int64_t i = 0; i < on; ++i) Y[i] /= (double)cnt;
        break;
      }
      case VKP_OP_TRANSPOSE: {
        const int64_t *perm;
        vkp_node_attr_ints(n, "perm", &perm);
        for (int64_t i = 0; i < on; ++i) {
          unravel(i, o->rank, o->shape, idx);
          for (int32_t d = 0; d < o->rank; ++d) xidx[perm[d]] = idx[d];
          int64_t off = 0;
          for (int32_t d = 0; d < x->rank; ++d) off = off * x->shape[d] + xidx[d];
          Y[i] = X[off];
        }
        break;
      }
      case VKP_OP_SLICE: {
        const int64_t *st, *sp;
        vkp_node_attr_ints(n, "starts", &st);
        vkp_node_attr_ints(n, "steps", &sp);
        for (int64_t i = 0; i < on; ++i) {
          unravel(i, o->rank, o->shape, idx);
          int64_t off = 0;
          for (int32_t d = 0; d < x->rank; ++d) off = off * x->shape[d] + st[d] + idx[d] * sp[d];
          Y[i] = X[off];
        }
        break;
      }
      case VKP_OP_CONCAT: {
        int64_t axis = vkp_node_attr_int(n, "axis", 0);
        for (int64_t i = 0; i < on; ++i) {
          unravel(i, o->rank, o->shape, idx);
          int64_t a = idx[axis];
          for (int32_t k = 0; k < n->n_inputs; ++k) {
            const vkp_value_t *v = &g->values[n->inputs[k]];
            if (a < v->shape[axis]) {
              idx[axis] = a;
              int64_t off = 0;
              for (int32_t d = 0; d < v->rank; ++d) off = off * v->shape[d] + idx[d];
              Y[i] = val[n->inputs[k]][off];
              break;
            }
            a -= v->shape[axis];
          }
        }
        break;
      }
      default:
        ok = false;
    }
  }
  for (int32_t i = 0; i < g->n_outputs && ok; ++i) {
    int64_t n = numel(&g->values[g->outputs[i]]);
    out[i] = malloc(sizeof(double) * (size_t)(n + 1));
    memcpy(out[i], val[g->outputs[i]], sizeof(double) * (size_t)n);
  }
  for (int32_t v = 0; v < g->n_values; ++v) free(val[v]);
  free(val);
  return ok;
}
