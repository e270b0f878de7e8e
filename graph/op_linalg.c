// SPDX-License-Identifier: Apache-2.0
// Linear algebra: matmul (NumPy semantics), gemm, einsum and det.
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "graph/einsum.h"
#include "graph/ops_internal.h"

const vkp__attr_spec_t vkp__attrs_gemm[] = {
    VKP__ATTR_FLOAT("alpha", 1.0), VKP__ATTR_FLOAT("beta", 1.0),
    VKP__ATTR_INT("transA", 0), VKP__ATTR_INT("transB", 0), VKP__ATTR_END};
const vkp__attr_spec_t vkp__attrs_einsum[] = {VKP__ATTR("equation", STRING),
                                              VKP__ATTR_END};

// ---------------------------------------------------------------------------
// Inference

vkp_status_t vkp__infer_matmul(vkp_graph_t *g, vkp_node_t *n, vkp_value_t *out) {
  const vkp_value_t *a = vkp__in(g, n, 0), *b = vkp__in(g, n, 1);
  VKP_RETURN_IF_ERROR(vkp__same_dtype(a, b));
  if (a->rank < 1 || b->rank < 1)
    return VKP__ERR("matmul inputs need rank >= 1 (got %d and %d)", (int)a->rank,
                    (int)b->rank);
  int64_t k_a = a->shape[a->rank - 1];
  int64_t k_b = b->rank == 1 ? b->shape[0] : b->shape[b->rank - 2];
  if (k_a != k_b) {
    char sa[128], sb[128];
    return VKP__ERR("inner dimensions %lld and %lld differ (%s x %s)",
                    (long long)k_a, (long long)k_b, vkp__fmt(a, sa, sizeof sa),
                    vkp__fmt(b, sb, sizeof sb));
  }
  int32_t ba = a->rank > 2 ? a->rank - 2 : 0, bb = b->rank > 2 ? b->rank - 2 : 0;
  int32_t batch = ba > bb ? ba : bb;
  int64_t shape[VKP_MAX_RANK + 2];
  int32_t rank = 0;
  for (int32_t i = 0; i < batch; ++i) {
    int32_t ia = i - (batch - ba), ib = i - (batch - bb);
    int64_t da = ia >= 0 ? a->shape[ia] : 1, db = ib >= 0 ? b->shape[ib] : 1;
    if (da != db && da != 1 && db != 1)
      return VKP__ERR("batch dimensions %lld and %lld do not broadcast",
                      (long long)da, (long long)db);
    shape[rank++] = da == 1 ? db : da;
  }
  if (a->rank >= 2) shape[rank++] = a->shape[a->rank - 2];
  if (b->rank >= 2) shape[rank++] = b->shape[b->rank - 1];
  if (rank > VKP_MAX_RANK) return VKP__ERR("result rank exceeds %d", VKP_MAX_RANK);
  vkp__set_out(out, a->dtype, rank, shape);
  return NULL;
}

vkp_status_t vkp__infer_gemm(vkp_graph_t *g, vkp_node_t *n, vkp_value_t *out) {
  const vkp_value_t *a = vkp__in(g, n, 0), *b = vkp__in(g, n, 1),
                    *c = vkp__in(g, n, 2);
  int64_t ta = vkp_node_int(n, "transA"), tb = vkp_node_int(n, "transB");
  if ((ta != 0 && ta != 1) || (tb != 0 && tb != 1))
    return VKP__ERR("transA/transB must be 0 or 1");
  VKP_RETURN_IF_ERROR(vkp__same_dtype(a, b));
  if (a->rank != 2 || b->rank != 2)
    return VKP__ERR("gemm inputs A and B must be 2-D (got rank %d and %d)",
                    (int)a->rank, (int)b->rank);
  int64_t m = ta ? a->shape[1] : a->shape[0], k = ta ? a->shape[0] : a->shape[1];
  int64_t kb = tb ? b->shape[1] : b->shape[0], nn = tb ? b->shape[0] : b->shape[1];
  if (k != kb)
    return VKP__ERR("inner dimensions %lld and %lld differ", (long long)k,
                    (long long)kb);
  if (c) {
    VKP_RETURN_IF_ERROR(vkp__same_dtype(a, c));
    int64_t target[2] = {m, nn};
    if (c->rank > 2) return VKP__ERR("C has rank %d; at most 2", (int)c->rank);
    for (int32_t i = 0; i < c->rank; ++i) {
      int64_t d = c->shape[i], t = target[2 - c->rank + i];
      if (d != 1 && d != t) {
        char sc[128];
        return VKP__ERR("C %s does not broadcast to [%lld, %lld]",
                        vkp__fmt(c, sc, sizeof sc), (long long)m, (long long)nn);
      }
    }
  }
  int64_t shape[2] = {m, nn};
  vkp__set_out(out, a->dtype, 2, shape);
  return NULL;
}

// ---------------------------------------------------------------------------
// Kernels

vkp_status_t vkp__eval_matmul(const vkp_node_t *n, const vkp_tensor_t *const *in,
                              vkp_tensor_t *out) {
  (void)n;
  const vkp_tensor_t *a = in[0], *b = in[1];
  // 1-D promotion: a [K] is [1, K], b [K] is [K, 1]; the unit dim is dropped
  // from the result, which inference already did.
  int64_t m = a->rank >= 2 ? a->shape[a->rank - 2] : 1;
  int64_t k = a->shape[a->rank - 1];
  int64_t nn = b->rank >= 2 ? b->shape[b->rank - 1] : 1;
  int32_t ba = a->rank > 2 ? a->rank - 2 : 0, bb = b->rank > 2 ? b->rank - 2 : 0;
  int32_t batch_rank = ba > bb ? ba : bb;
  int64_t batch_shape[VKP_MAX_RANK], sa[VKP_MAX_RANK], sb[VKP_MAX_RANK];
  for (int32_t d = 0; d < batch_rank; ++d) {
    int32_t ia = d - (batch_rank - ba), ib = d - (batch_rank - bb);
    int64_t da = ia >= 0 ? a->shape[ia] : 1, db = ib >= 0 ? b->shape[ib] : 1;
    batch_shape[d] = da == 1 ? db : da;
  }
  // Batch strides in units of whole matrices, 0 where broadcast.
  int64_t stride_a = 1, stride_b = 1;
  for (int32_t d = batch_rank - 1; d >= 0; --d) {
    int32_t ia = d - (batch_rank - ba), ib = d - (batch_rank - bb);
    sa[d] = (ia < 0 || a->shape[ia] == 1) ? 0 : stride_a;
    sb[d] = (ib < 0 || b->shape[ib] == 1) ? 0 : stride_b;
    if (ia >= 0) stride_a *= a->shape[ia];
    if (ib >= 0) stride_b *= b->shape[ib];
  }
  int64_t batches = vkp__prod(batch_shape, 0, batch_rank);
  int64_t idx[VKP_MAX_RANK] = {0};
  bool f32 = a->dtype == VKP_DTYPE_FLOAT32 && b->dtype == VKP_DTYPE_FLOAT32;
#define VKP__MATMUL_LOOP(LOAD)                                           \
  for (int64_t t = 0; t < batches; ++t) {                                \
    int64_t oa = vkp__dot(batch_rank, idx, sa) * m * k;                  \
    int64_t ob = vkp__dot(batch_rank, idx, sb) * k * nn;                 \
    int64_t oy = t * m * nn;                                             \
    for (int64_t i = 0; i < m; ++i)                                      \
      for (int64_t j = 0; j < nn; ++j) {                                 \
        double acc = 0;                                                  \
        for (int64_t p = 0; p < k; ++p)                                  \
          acc += LOAD(a, oa + i * k + p) * LOAD(b, ob + p * nn + j);     \
        vkp__put_f(out, oy + i * nn + j, acc);                           \
      }                                                                  \
    vkp__next_index(batch_rank, batch_shape, idx);                       \
  }
  VKP__F32_OR_ANY(f32, VKP__MATMUL_LOOP);
#undef VKP__MATMUL_LOOP
  return NULL;
}

vkp_status_t vkp__eval_gemm(const vkp_node_t *n, const vkp_tensor_t *const *in,
                            vkp_tensor_t *out) {
  const vkp_tensor_t *a = in[0], *b = in[1], *c = n->n_inputs > 2 ? in[2] : NULL;
  double alpha = vkp_node_float(n, "alpha"), beta = vkp_node_float(n, "beta");
  bool ta = vkp_node_int(n, "transA") != 0, tb = vkp_node_int(n, "transB") != 0;
  int64_t m = out->shape[0], nn = out->shape[1];
  int64_t k = ta ? a->shape[0] : a->shape[1];
  // Element (i, p) of op(A) and (p, j) of op(B), row-major storage.
  int64_t a_row = ta ? 1 : k, a_col = ta ? m : 1;
  int64_t b_row = tb ? 1 : nn, b_col = tb ? k : 1;
  int64_t sc[2] = {0, 0};
  if (c) vkp__broadcast_strides(c, 2, sc);
  bool f32 = a->dtype == VKP_DTYPE_FLOAT32 && b->dtype == VKP_DTYPE_FLOAT32;
#define VKP__GEMM_LOOP(LOAD)                                                   \
  for (int64_t i = 0; i < m; ++i)                                              \
    for (int64_t j = 0; j < nn; ++j) {                                         \
      double acc = 0;                                                          \
      for (int64_t p = 0; p < k; ++p)                                          \
        acc += LOAD(a, i * a_row + p * a_col) * LOAD(b, p * b_row + j * b_col); \
      double y = alpha * acc;                                                  \
      if (c) y += beta * vkp__get_f(c, i * sc[0] + j * sc[1]);                 \
      vkp__put_f(out, i * nn + j, y);                                          \
    }
  VKP__F32_OR_ANY(f32, VKP__GEMM_LOOP);
#undef VKP__GEMM_LOOP
  return NULL;
}

// ---------------------------------------------------------------------------
// Einsum

// A term's subscripts: letters as their character, the ellipsis as -1.
typedef struct vkp__einsum_term_t {
  int32_t n;
  int32_t sub[VKP_MAX_RANK + 1];
  bool ellipsis;
} vkp__einsum_term_t;

static bool vkp__is_letter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

// Parses text[0..len) as one term.
static vkp_status_t vkp__einsum_term(const char *text, size_t len,
                                     vkp__einsum_term_t *t) {
  t->n = 0;
  t->ellipsis = false;
  for (size_t i = 0; i < len;) {
    if (t->n > VKP_MAX_RANK)
      return VKP__ERR("einsum: term '%.*s' has more than %d subscripts",
                      (int)len, text, VKP_MAX_RANK);
    if (text[i] == '.') {
      if (t->ellipsis || i + 3 > len || strncmp(text + i, "...", 3) != 0)
        return VKP__ERR("einsum: term '%.*s' has a stray '.' or two ellipses",
                        (int)len, text);
      t->ellipsis = true;
      t->sub[t->n++] = -1;
      i += 3;
      continue;
    }
    if (!vkp__is_letter(text[i]))
      return VKP__ERR("einsum: '%c' in term '%.*s' is not a letter", text[i],
                      (int)len, text);
    t->sub[t->n++] = (unsigned char)text[i++];
  }
  return NULL;
}

vkp_status_t vkp__einsum_parse(const char *equation, int32_t n,
                               const int32_t *ranks,
                               const int64_t *const *shapes,
                               vkp__einsum_t *out) {
  memset(out, 0, sizeof *out);
  char eq[256];
  size_t len = 0;
  for (const char *p = equation; *p; ++p) {
    if (*p == ' ') continue;
    if (len + 1 >= sizeof eq) return VKP__ERR("einsum: equation is too long");
    eq[len++] = *p;
  }
  eq[len] = '\0';
  if (n < 1 || n > VKP__EINSUM_MAX_INPUTS)
    return VKP__ERR("einsum: %d inputs (1 to %d)", (int)n, VKP__EINSUM_MAX_INPUTS);
  const char *arrow = strstr(eq, "->");
  size_t lhs_len = arrow ? (size_t)(arrow - eq) : len;
  // Input terms.
  vkp__einsum_term_t terms[VKP__EINSUM_MAX_INPUTS];
  int32_t count = 0, ell_rank = 0;
  for (size_t start = 0;;) {
    const char *comma = memchr(eq + start, ',', lhs_len - start);
    size_t end = comma ? (size_t)(comma - eq) : lhs_len;
    if (count >= n)
      return VKP__ERR("einsum: equation '%s' has more terms than the %d inputs",
                      eq, (int)n);
    VKP_RETURN_IF_ERROR(vkp__einsum_term(eq + start, end - start, &terms[count]));
    vkp__einsum_term_t *t = &terms[count];
    int32_t letters = t->n - (t->ellipsis ? 1 : 0);
    int32_t er = ranks[count] - letters;
    if (er < 0 || (!t->ellipsis && er != 0))
      return VKP__ERR("einsum: term %d '%.*s' has %d subscripts; input %d has "
                      "rank %d",
                      (int)count, (int)(end - start), eq + start, (int)letters,
                      (int)count, (int)ranks[count]);
    if (er > ell_rank) ell_rank = er;
    ++count;
    if (!comma) break;
    start = end + 1;
  }
  if (count != n)
    return VKP__ERR("einsum: equation '%s' has %d terms for %d inputs", eq,
                    (int)count, (int)n);
  // Keys: a letter is its character, ellipsis dim e (0 = the outermost of
  // the broadcast ellipsis) is 128 + e.
  int32_t uses[128 + VKP_MAX_RANK] = {0};
  bool any_ellipsis = false;
  for (int32_t i = 0; i < n; ++i) {
    any_ellipsis |= terms[i].ellipsis;
    for (int32_t k = 0; k < terms[i].n; ++k)
      if (terms[i].sub[k] >= 0) uses[terms[i].sub[k]]++;
  }
  // Output keys, and the canonical text of the output.
  int32_t out_keys[VKP__EINSUM_MAX_LABELS], n_out = 0;
  char rhs[256];
  size_t rl = 0;
  if (arrow) {
    vkp__einsum_term_t t;
    VKP_RETURN_IF_ERROR(vkp__einsum_term(arrow + 2, strlen(arrow + 2), &t));
    for (int32_t k = 0; k < t.n; ++k) {
      if (t.sub[k] < 0) {
        for (int32_t e = 0; e < ell_rank; ++e) out_keys[n_out++] = 128 + e;
        continue;
      }
      if (!uses[t.sub[k]])
        return VKP__ERR("einsum: output subscript '%c' appears in no input",
                        (char)t.sub[k]);
      for (int32_t j = 0; j < n_out; ++j)
        if (out_keys[j] == t.sub[k])
          return VKP__ERR("einsum: output subscript '%c' is repeated", (char)t.sub[k]);
      out_keys[n_out++] = t.sub[k];
    }
    rl = (size_t)snprintf(rhs, sizeof rhs, "%s", arrow + 2);
  } else {
    if (any_ellipsis) {
      for (int32_t e = 0; e < ell_rank; ++e) out_keys[n_out++] = 128 + e;
      rl = (size_t)snprintf(rhs, sizeof rhs, "...");
    }
    for (int32_t c = 0; c < 128; ++c)
      if (uses[c] == 1) {
        out_keys[n_out++] = c;
        rhs[rl++] = (char)c;
      }
    rhs[rl] = '\0';
  }
  if (n_out > VKP_MAX_RANK)
    return VKP__ERR("einsum: the output has rank %d; at most %d", (int)n_out,
                    VKP_MAX_RANK);
  // Labels: output keys first, then the others by first appearance.
  int32_t label_of[128 + VKP_MAX_RANK];
  for (int32_t k = 0; k < 128 + VKP_MAX_RANK; ++k) label_of[k] = -1;
  for (int32_t j = 0; j < n_out; ++j) label_of[out_keys[j]] = j;
  out->n_labels = n_out;
  out->out_rank = n_out;
  out->n_inputs = n;
  for (int32_t l = 0; l < VKP__EINSUM_MAX_LABELS; ++l) out->dim[l] = -1;
  for (int32_t i = 0; i < n; ++i) {
    const vkp__einsum_term_t *t = &terms[i];
    int32_t er = ranks[i] - (t->n - (t->ellipsis ? 1 : 0)), d = 0;
    out->rank[i] = ranks[i];
    for (int32_t k = 0; k < t->n; ++k) {
      int32_t first = t->sub[k] < 0 ? 128 + ell_rank - er : t->sub[k];
      int32_t span = t->sub[k] < 0 ? er : 1;
      for (int32_t e = 0; e < span; ++e, ++d) {
        int32_t key = first + e;
        if (label_of[key] < 0) label_of[key] = out->n_labels++;
        int32_t l = label_of[key];
        out->label[i][d] = l;
        int64_t size = shapes[i][d];
        bool ellipsis = key >= 128;
        if (out->dim[l] < 0 || (ellipsis && out->dim[l] == 1)) {
          out->dim[l] = size;
        } else if (size != out->dim[l] && !(ellipsis && size == 1)) {
          if (ellipsis)
            return VKP__ERR("einsum: ellipsis dims of input %d do not broadcast "
                            "(%lld vs %lld)",
                            (int)i, (long long)size, (long long)out->dim[l]);
          return VKP__ERR("einsum: subscript '%c' is %lld in input %d, %lld "
                          "elsewhere",
                          (char)key, (long long)size, (int)i,
                          (long long)out->dim[l]);
        }
      }
    }
  }
  // Ellipsis dims in the output that no input has (all inputs shorter) stay
  // size 1.
  for (int32_t l = 0; l < out->n_labels; ++l)
    if (out->dim[l] < 0) out->dim[l] = 1;
  int w = snprintf(out->canonical, sizeof out->canonical, "%.*s->%s", (int)lhs_len,
                   eq, rhs);
  if (w < 0 || (size_t)w >= sizeof out->canonical)
    return VKP__ERR("einsum: equation is too long");
  return NULL;
}

vkp_status_t vkp__infer_einsum(vkp_graph_t *g, vkp_node_t *n, vkp_value_t *out) {
  const char *equation = vkp_node_string(n, "equation");
  if (!equation) return VKP__ERR("attribute 'equation' is required");
  if (n->n_inputs > VKP__EINSUM_MAX_INPUTS)
    return vkp_status_make(VKP_STATUS_UNSUPPORTED, "einsum of %d inputs; at most %d",
                           (int)n->n_inputs, VKP__EINSUM_MAX_INPUTS);
  int32_t ranks[VKP__EINSUM_MAX_INPUTS];
  const int64_t *shapes[VKP__EINSUM_MAX_INPUTS];
  const vkp_value_t *x = vkp__in(g, n, 0);
  for (int32_t i = 0; i < n->n_inputs; ++i) {
    const vkp_value_t *v = vkp__in(g, n, i);
    if (!v) return VKP__ERR("input %d is required", (int)i);
    VKP_RETURN_IF_ERROR(vkp__same_dtype(x, v));
    ranks[i] = v->rank;
    shapes[i] = v->shape;
  }
  vkp__einsum_t e;
  VKP_RETURN_IF_ERROR(vkp__einsum_parse(equation, n->n_inputs, ranks, shapes, &e));
  VKP_RETURN_IF_ERROR(vkp__set_string(n, "equation", e.canonical));
  vkp__set_out(out, x->dtype, e.out_rank, e.dim);
  return NULL;
}

// Walks every combination of every label (output ones outermost, so each
// output element's terms are consecutive) and sums the products.
vkp_status_t vkp__eval_einsum(const vkp_node_t *n, const vkp_tensor_t *const *in,
                              vkp_tensor_t *out) {
  int32_t ranks[VKP__EINSUM_MAX_INPUTS];
  const int64_t *shapes[VKP__EINSUM_MAX_INPUTS];
  for (int32_t i = 0; i < n->n_inputs; ++i) {
    ranks[i] = in[i]->rank;
    shapes[i] = in[i]->shape;
  }
  vkp__einsum_t e;
  VKP_RETURN_IF_ERROR(vkp__einsum_parse(vkp_node_string(n, "equation"),
                                        n->n_inputs, ranks, shapes, &e));
  // stride[i][l]: how far input i moves when label l steps (repeated
  // subscripts add up: a diagonal; broadcast dims do not move).
  int64_t stride[VKP__EINSUM_MAX_INPUTS][VKP__EINSUM_MAX_LABELS] = {{0}};
  for (int32_t i = 0; i < e.n_inputs; ++i) {
    int64_t own[VKP_MAX_RANK];
    vkp__strides(in[i], own);
    for (int32_t d = 0; d < e.rank[i]; ++d)
      if (in[i]->shape[d] != 1) stride[i][e.label[i][d]] += own[d];
  }
  int64_t inner = vkp__prod(e.dim, e.out_rank, e.n_labels);
  int64_t outer = vkp__prod(e.dim, 0, e.out_rank);
  bool is_float = vkp_dtype_is_float(out->dtype);
  int64_t idx[VKP__EINSUM_MAX_LABELS] = {0}, off[VKP__EINSUM_MAX_INPUTS] = {0};
  for (int64_t o = 0; o < outer; ++o) {
    double acc = 0;
    uint64_t iacc = 0;  // integers wrap, as NumPy's do
    for (int64_t s = 0; s < inner; ++s) {
      if (is_float) {
        double prod = 1;
        for (int32_t i = 0; i < e.n_inputs; ++i) prod *= vkp__get_f(in[i], off[i]);
        acc += prod;
      } else {
        uint64_t prod = 1;
        for (int32_t i = 0; i < e.n_inputs; ++i)
          prod *= (uint64_t)vkp__get_i(in[i], off[i]);
        iacc += prod;
      }
      // Next combination: the innermost label steps first.
      for (int32_t l = e.n_labels - 1; l >= 0; --l) {
        for (int32_t i = 0; i < e.n_inputs; ++i) off[i] += stride[i][l];
        if (++idx[l] < e.dim[l]) break;
        for (int32_t i = 0; i < e.n_inputs; ++i) off[i] -= stride[i][l] * e.dim[l];
        idx[l] = 0;
      }
    }
    if (is_float) vkp__put_f(out, o, acc);
    else vkp__put_i(out, o, (int64_t)iacc);
    // An empty sum (a summed label of size 0) never stepped the output
    // labels: step them here.
    if (inner == 0)
      for (int32_t l = e.out_rank - 1; l >= 0; --l) {
        for (int32_t i = 0; i < e.n_inputs; ++i) off[i] += stride[i][l];
        if (++idx[l] < e.dim[l]) break;
        for (int32_t i = 0; i < e.n_inputs; ++i) off[i] -= stride[i][l] * e.dim[l];
        idx[l] = 0;
      }
  }
  return NULL;
}

// ---------------------------------------------------------------------------
// det: the determinant of each trailing [M, M] matrix, by LU factorisation
// with partial pivoting in double (a zero pivot column gives 0).

vkp_status_t vkp__infer_det(vkp_graph_t *g, vkp_node_t *n, vkp_value_t *out) {
  const vkp_value_t *x = vkp__in(g, n, 0);
  if (x->rank < 2 || x->shape[x->rank - 1] != x->shape[x->rank - 2]) {
    char s[128];
    return VKP__ERR("input '%s' %s must end in a square matrix [M, M]", x->name,
                    vkp__fmt(x, s, sizeof s));
  }
  vkp__set_out(out, x->dtype, x->rank - 2, x->shape);
  return NULL;
}

vkp_status_t vkp__eval_det(const vkp_node_t *n, const vkp_tensor_t *const *in,
                           vkp_tensor_t *out) {
  (void)n;
  const vkp_tensor_t *x = in[0];
  int64_t m = x->shape[x->rank - 1], batch = vkp__prod(x->shape, 0, x->rank - 2);
  double *a = vkp__reallocarray(NULL, (size_t)(m * m > 0 ? m * m : 1), sizeof(double));
  if (!a) return vkp_status_make(VKP_STATUS_OUT_OF_MEMORY, "det of %lldx%lld", (long long)m,
                                 (long long)m);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t i = 0; i < m * m; ++i) a[i] = vkp__get_f(x, b * m * m + i);
    double det = 1.0;
    for (int64_t c = 0; c < m && det != 0.0; ++c) {
      int64_t p = c;
      for (int64_t r = c + 1; r < m; ++r)
        if (fabs(a[r * m + c]) > fabs(a[p * m + c])) p = r;
      if (a[p * m + c] == 0.0) {
        det = 0.0;
        break;
      }
      if (p != c) {
        for (int64_t j = 0; j < m; ++j) {
          double t = a[c * m + j];
          a[c * m + j] = a[p * m + j];
          a[p * m + j] = t;
        }
        det = -det;
      }
      det *= a[c * m + c];
      for (int64_t r = c + 1; r < m; ++r) {
        double f = a[r * m + c] / a[c * m + c];
        for (int64_t j = c + 1; j < m; ++j) a[r * m + j] -= f * a[c * m + j];
      }
    }
    vkp__put_f(out, b, det);
  }
  vkp__free(a);
  return NULL;
}
