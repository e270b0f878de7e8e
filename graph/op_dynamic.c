// SPDX-License-Identifier: Apache-2.0
// Data-dependent shapes: non_zero (ONNX NonZero), unique (ONNX Unique),
// shape (ONNX Shape of a value whose shape is known only at run time),
// non_max_suppression, branch_select (ONNX If on a run-time condition), and
// the rules by which every other op takes a bounded value.
//
// A bounded value (vkp_value_t.bounded) has a static shape whose entry at
// bounded_axis is an upper bound; at run time its tensor carries the actual
// extent in its shape and the elements are stored compactly for that shape
// (so a reference kernel, which reads every size from its tensors, runs
// unchanged). non_zero and unique make such values. The ops downstream that
// accept one, and how its extent reaches their outputs, are the rules
// below; validation refuses a bounded input anywhere else, naming the node
// and the value. docs/onnx.md, "Data-dependent output shapes".
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "graph/bounded.h"
#include "graph/ops_internal.h"
#include "graph/resample.h"

const char *vkp__fmt_bounded(const vkp_value_t *v, char *buf, size_t size) {
  size_t used = 0;
  buf[0] = '\0';
  for (int32_t d = 0; d < v->rank && used < size; ++d) {
    int w = snprintf(buf + used, size - used, "%s%s%lld", d ? ", " : "[",
                     v->bounded && d == v->bounded_axis ? "<=" : "",
                     (long long)v->shape[d]);
    if (w < 0) break;
    used += (size_t)w;
  }
  if (used < size) snprintf(buf + used, size - used, v->rank ? "]" : "[]");
  return buf;
}

static void vkp__set_bounded(vkp_value_t *v, int32_t axis) {
  v->bounded = true;
  v->bounded_axis = axis;
}

// ---------------------------------------------------------------------------
// non_zero: the indices of the non-zero elements of x, as [rank, n] int64
// in row-major order of x; n is bounded by numel(x). A scalar reads as [1].

vkp_status_t vkp__infer_non_zero(vkp_graph_t *g, vkp_node_t *n, vkp_value_t *out) {
  const vkp_value_t *x = vkp__in(g, n, 0);
  int64_t shape[2] = {x->rank ? x->rank : 1, vkp__prod(x->shape, 0, x->rank)};
  vkp__set_out(out, VKP_DTYPE_INT64, 2, shape);
  vkp__set_bounded(out, 1);
  return NULL;
}

static bool vkp__is_nonzero(const vkp_tensor_t *x, int64_t i) {
  return vkp_dtype_is_float(x->dtype) ? vkp__get_f(x, i) != 0.0 : vkp__get_i(x, i) != 0;
}

vkp_status_t vkp__eval_non_zero(const vkp_node_t *n, const vkp_tensor_t *const *in,
                                vkp_tensor_t *out) {
  (void)n;
  const vkp_tensor_t *x = in[0];
  int64_t count = (int64_t)vkp_tensor_numel(x), nnz = 0;
  for (int64_t i = 0; i < count; ++i) nnz += vkp__is_nonzero(x, i);
  int32_t rank = x->rank ? x->rank : 1;
  out->shape[1] = nnz;  // the run-time extent: rows are nnz long
  int64_t idx[VKP_MAX_RANK] = {0}, col = 0;
  int64_t shape[VKP_MAX_RANK];
  memcpy(shape, x->shape, sizeof shape);
  if (!x->rank) shape[0] = 1;
  for (int64_t i = 0; i < count; ++i) {
    if (vkp__is_nonzero(x, i)) {
      for (int32_t d = 0; d < rank; ++d) vkp__put_i(out, d * nnz + col, idx[d]);
      ++col;
    }
    vkp__next_index(rank, shape, idx);
  }
  return NULL;
}

// ---------------------------------------------------------------------------
// unique: Y (the distinct slices along `axis`, or the distinct elements of
// the flattened x without one), indices (first occurrence of each), inverse
// (for every slice of x, its entry in Y) and counts; sorted (1) orders Y
// ascending (slices lexicographically, NaN last), 0 by first occurrence.

const vkp__attr_spec_t vkp__attrs_unique[] = {
    VKP__ATTR("axis", INT), VKP__ATTR_INT("sorted", 1), VKP__ATTR_END};

vkp_status_t vkp__infer_unique(vkp_graph_t *g, vkp_node_t *n, vkp_value_t *out) {
  const vkp_value_t *x = vkp__in(g, n, 0);
  int64_t sorted = vkp_node_int(n, "sorted");
  if (sorted != 0 && sorted != 1)
    return VKP__ERR("attribute 'sorted' is %lld; 0 or 1", (long long)sorted);
  int64_t yshape[VKP_MAX_RANK], slices;
  int32_t yrank, yaxis;
  if (vkp_node_attr(n, "axis")) {
    int64_t axis;
    VKP_RETURN_IF_ERROR(vkp__norm_axis(vkp_node_int(n, "axis"), x->rank, false,
                                       "axis", &axis));
    VKP_RETURN_IF_ERROR(vkp__set_int(n, "axis", axis));
    memcpy(yshape, x->shape, sizeof yshape);
    yrank = x->rank;
    yaxis = (int32_t)axis;
    slices = x->shape[axis];
    // The slices of a bounded x are compared whole; only its extent along
    // the axis itself may vary.
    if (x->bounded && x->bounded_axis != axis) {
      char sx[160];
      return VKP__ERR("input '%s' %s is data-dependent along axis %d, not the "
                      "unique axis %lld",
                      x->name, vkp__fmt_bounded(x, sx, sizeof sx),
                      (int)x->bounded_axis, (long long)axis);
    }
  } else {
    slices = vkp__prod(x->shape, 0, x->rank);
    yshape[0] = slices;
    yrank = 1;
    yaxis = 0;
  }
  vkp__set_out(out, x->dtype, yrank, yshape);
  vkp__set_bounded(out, yaxis);
  for (int32_t i = 1; i < n->n_outputs; ++i) {
    vkp_value_t *o = vkp__out(g, n, i);
    vkp__set_out(o, VKP_DTYPE_INT64, 1, &slices);
    if (i != 2 || x->bounded) vkp__set_bounded(o, 0);  // inverse: one per slice
  }
  return NULL;
}

// x as [outer, n, inner] around the axis; slice j is every element at
// position j of the axis, compared lexicographically in memory order.
typedef struct vkp__slices_t {
  const vkp_tensor_t *x;
  int64_t outer, n, inner;
} vkp__slices_t;

static int vkp__slice_cmp(const vkp__slices_t *s, int64_t a, int64_t b) {
  for (int64_t o = 0; o < s->outer; ++o)
    for (int64_t i = 0; i < s->inner; ++i) {
      int64_t base = o * s->n * s->inner + i;
      int64_t ia = base + a * s->inner, ib = base + b * s->inner;
      int c = vkp__compare_elems(s->x, ia, s->x, ib);
      if (c == 2) {  // NaN sorts last and equals another NaN
        bool a_nan = vkp__compare_elems(s->x, ia, s->x, ia) == 2;
        bool b_nan = vkp__compare_elems(s->x, ib, s->x, ib) == 2;
        c = a_nan == b_nan ? 0 : a_nan ? 1 : -1;
      }
      if (c) return c;
    }
  return 0;
}

// Sorts order[0..n) by slice, stably (a bottom-up merge sort; scratch: n).
static void vkp__slice_sort(const vkp__slices_t *s, int64_t *order, int64_t *scratch) {
  int64_t *src = order, *dst = scratch;
  for (int64_t width = 1; width < s->n; width *= 2) {
    for (int64_t lo = 0; lo < s->n; lo += 2 * width) {
      int64_t mid = lo + width < s->n ? lo + width : s->n;
      int64_t hi = lo + 2 * width < s->n ? lo + 2 * width : s->n;
      int64_t a = lo, b = mid, w = lo;
      while (a < mid && b < hi)
        dst[w++] = vkp__slice_cmp(s, src[b], src[a]) < 0 ? src[b++] : src[a++];
      while (a < mid) dst[w++] = src[a++];
      while (b < hi) dst[w++] = src[b++];
    }
    int64_t *t = src;
    src = dst;
    dst = t;
  }
  if (src != order) memcpy(order, src, (size_t)s->n * sizeof *order);
}

vkp_status_t vkp__unique_compute(const vkp_tensor_t *x, bool has_axis, int32_t axis,
                                 bool sorted, vkp__unique_t *u) {
  memset(u, 0, sizeof *u);
  vkp__slices_t s = {.x = x, .outer = 1, .n = (int64_t)vkp_tensor_numel(x), .inner = 1};
  if (has_axis) {
    s.outer = vkp__prod(x->shape, 0, axis);
    s.n = x->shape[axis];
    s.inner = vkp__prod(x->shape, axis + 1, x->rank);
  }
  int64_t cnt = s.n;
  int64_t *buf = vkp__malloc(7 * (size_t)(cnt ? cnt : 1) * sizeof(int64_t));
  if (!buf) return VKP_OOM("unique");
  int64_t *order = buf, *scratch = buf + cnt, *group = buf + 2 * cnt,
          *first = buf + 3 * cnt, *count = buf + 4 * cnt, *renumber = buf + 5 * cnt,
          *moved = buf + 6 * cnt;
  for (int64_t j = 0; j < cnt; ++j) order[j] = j;
  vkp__slice_sort(&s, order, scratch);
  int64_t m = 0;  // distinct slices
  for (int64_t r = 0; r < cnt; ++r) {
    int64_t j = order[r];
    if (r == 0 || vkp__slice_cmp(&s, order[r - 1], j) != 0) {
      first[m] = j;  // the stable sort puts the first occurrence first
      count[m++] = 0;
    }
    group[j] = m - 1;
    ++count[m - 1];
  }
  if (!sorted) {
    // By first occurrence: renumber[g] is sorted group g's new position.
    for (int64_t g = 0; g < m; ++g) renumber[g] = -1;
    int64_t next = 0;
    for (int64_t j = 0; j < cnt; ++j)
      if (renumber[group[j]] < 0) renumber[group[j]] = next++;
    for (int64_t j = 0; j < cnt; ++j) group[j] = renumber[group[j]];
    for (int64_t g = 0; g < m; ++g) moved[renumber[g]] = first[g];
    memcpy(first, moved, (size_t)m * sizeof *first);
    for (int64_t g = 0; g < m; ++g) moved[renumber[g]] = count[g];
    memcpy(count, moved, (size_t)m * sizeof *count);
  }
  *u = (vkp__unique_t){.n = cnt, .m = m, .outer = s.outer, .inner = s.inner,
                       .first = first, .count = count, .group = group, .buf = buf};
  return NULL;
}

void vkp__unique_free(vkp__unique_t *u) {
  vkp__free(u->buf);
  memset(u, 0, sizeof *u);
}

vkp_status_t vkp__eval_unique(const vkp_node_t *n, const vkp_tensor_t *const *in,
                              vkp_tensor_t *out) {
  const vkp_tensor_t *x = in[0];
  bool has_axis = vkp_node_attr(n, "axis") != NULL;
  int32_t axis = has_axis ? (int32_t)vkp_node_int(n, "axis") : 0;
  vkp__unique_t u;
  VKP_RETURN_IF_ERROR(
      vkp__unique_compute(x, has_axis, axis, vkp_node_int(n, "sorted") != 0, &u));
  // Run-time extents first, so the stores below use the compact layout.
  out[0].shape[has_axis ? axis : 0] = u.m;
  for (int32_t i = 1; i < 4; ++i)
    if (i < (int32_t)n->n_outputs) out[i].shape[0] = i == 2 ? u.n : u.m;
  size_t elem = vkp_dtype_size(x->dtype);
  for (int64_t g = 0; g < u.m; ++g) {
    for (int64_t o = 0; o < u.outer && u.inner; ++o)
      memcpy((char *)out[0].data + (size_t)((o * u.m + g) * u.inner) * elem,
             (const char *)x->data + (size_t)((o * u.n + u.first[g]) * u.inner) * elem,
             (size_t)u.inner * elem);
    if (n->n_outputs > 1) vkp__put_i(&out[1], g, u.first[g]);
    if (n->n_outputs > 3) vkp__put_i(&out[3], g, u.count[g]);
  }
  if (n->n_outputs > 2)
    for (int64_t j = 0; j < u.n; ++j) vkp__put_i(&out[2], j, u.group[j]);
  vkp__unique_free(&u);
  return NULL;
}

// ---------------------------------------------------------------------------
// shape: dims [start, end) of x's run-time shape as int64 (ONNX Shape,
// opset 15 clamping: negative counts from the end, then clamped to
// 0..rank). The importer folds Shape of a static value; this op is what
// remains for a bounded one.

const vkp__attr_spec_t vkp__attrs_shape[] = {
    VKP__ATTR_INT("start", 0), VKP__ATTR("end", INT), VKP__ATTR_END};

static int64_t vkp__clamp_dim(int64_t v, int32_t rank) {
  if (v < 0) v += rank;
  return v < 0 ? 0 : v > rank ? rank : v;
}

vkp_status_t vkp__infer_shape(vkp_graph_t *g, vkp_node_t *n, vkp_value_t *out) {
  const vkp_value_t *x = vkp__in(g, n, 0);
  int64_t start = vkp__clamp_dim(vkp_node_int(n, "start"), x->rank);
  int64_t end = vkp_node_attr(n, "end") ? vkp__clamp_dim(vkp_node_int(n, "end"), x->rank)
                                        : x->rank;
  if (end < start) end = start;
  VKP_RETURN_IF_ERROR(vkp__set_int(n, "start", start));
  VKP_RETURN_IF_ERROR(vkp__set_int(n, "end", end));
  int64_t len = end - start;
  vkp__set_out(out, VKP_DTYPE_INT64, 1, &len);
  return NULL;
}

vkp_status_t vkp__eval_shape(const vkp_node_t *n, const vkp_tensor_t *const *in,
                             vkp_tensor_t *out) {
  int64_t start = vkp_node_int(n, "start"), end = vkp_node_int(n, "end");
  for (int64_t d = start; d < end; ++d) vkp__put_i(out, d - start, in[0]->shape[d]);
  return NULL;
}

// ---------------------------------------------------------------------------
// non_max_suppression (ONNX NonMaxSuppression, opsets 10/11): for every batch
// and class, the boxes kept by greedy suppression in descending score order
// (ties by box index), as [n, 3] int64 rows (batch, class, box). Inputs:
// boxes [B, N, 4], scores [B, C, N], and optionally max_output_boxes_per_class
// (int64, one element; absent or <= 0: nothing kept), iou_threshold (one
// element; default 0) and score_threshold (one element; absent: no
// threshold, else only scores above it). center_point_box 0: boxes are two
// opposite corners [y1, x1, y2, x2] in either order; 1: [x_centre,
// y_centre, width, height]. n is bounded by B * C * min(max_output, N)
// (min with N when max_output is not a constant). A bounded N (boxes along
// axis 1, scores along axis 2) is taken.

const vkp__attr_spec_t vkp__attrs_non_max_suppression[] = {
    VKP__ATTR_INT("center_point_box", 0), VKP__ATTR_END};

// A one-element operand's dtype check.
static vkp_status_t vkp__nms_scalar(const vkp_value_t *v, const char *what,
                                    vkp_dtype_set_t set) {
  if (!v) return NULL;
  VKP_RETURN_IF_ERROR(vkp__need_dtypes(v, what, set));
  if (v->bounded || vkp__prod(v->shape, 0, v->rank) != 1) {
    char sv[160];
    return VKP__ERR("%s '%s' %s must hold one element", what, v->name,
                    vkp__fmt_bounded(v, sv, sizeof sv));
  }
  return NULL;
}

vkp_status_t vkp__infer_non_max_suppression(vkp_graph_t *g, vkp_node_t *n,
                                            vkp_value_t *out) {
  const vkp_value_t *boxes = vkp__in(g, n, 0), *scores = vkp__in(g, n, 1);
  int64_t center = vkp_node_int(n, "center_point_box");
  if (center != 0 && center != 1)
    return VKP__ERR("attribute 'center_point_box' is %lld; 0 or 1", (long long)center);
  char sb[160], ss[160];
  if (boxes->rank != 3 || boxes->shape[2] != 4)
    return VKP__ERR("boxes '%s' %s must be [batches, boxes, 4]", boxes->name,
                    vkp__fmt_bounded(boxes, sb, sizeof sb));
  VKP_RETURN_IF_ERROR(vkp__same_dtype(boxes, scores));
  // Two bounded box counts are checked against each other at run time.
  bool varying = boxes->bounded || scores->bounded;
  if (scores->rank != 3 || scores->shape[0] != boxes->shape[0] ||
      (!varying && scores->shape[2] != boxes->shape[1]))
    return VKP__ERR("scores '%s' %s must be [batches, classes, boxes] for boxes "
                    "%s",
                    scores->name, vkp__fmt_bounded(scores, ss, sizeof ss),
                    vkp__fmt_bounded(boxes, sb, sizeof sb));
  // A data-dependent box count: the boxes' axis 1 and the scores' axis 2.
  if ((boxes->bounded && boxes->bounded_axis != 1) ||
      (scores->bounded && scores->bounded_axis != 2))
    return vkp_status_make(VKP_STATUS_UNSUPPORTED,
                           "boxes %s and scores %s may vary only in the number "
                           "of boxes (boxes axis 1, scores axis 2)",
                           vkp__fmt_bounded(boxes, sb, sizeof sb),
                           vkp__fmt_bounded(scores, ss, sizeof ss));
  VKP_RETURN_IF_ERROR(vkp__nms_scalar(vkp__in(g, n, 2), "max_output_boxes_per_class",
                                      VKP_DTYPE_SET(VKP_DTYPE_INT64)));
  VKP_RETURN_IF_ERROR(vkp__nms_scalar(vkp__in(g, n, 3), "iou_threshold",
                                      VKP_OP_DTYPES_FLOAT));
  VKP_RETURN_IF_ERROR(vkp__nms_scalar(vkp__in(g, n, 4), "score_threshold",
                                      VKP_OP_DTYPES_FLOAT));
  int64_t per_class = boxes->shape[1] < scores->shape[2] ? boxes->shape[1]
                                                         : scores->shape[2];
  const vkp_value_t *mo = vkp__in(g, n, 2);
  if (!mo) {
    per_class = 0;
  } else if (mo->kind == VKP_VALUE_CONSTANT) {
    int64_t m;
    memcpy(&m, mo->data, sizeof m);
    if (m < per_class) per_class = m > 0 ? m : 0;
  }
  int64_t shape[2] = {boxes->shape[0] * scores->shape[1] * per_class, 3};
  vkp__set_out(out, VKP_DTYPE_INT64, 2, shape);
  vkp__set_bounded(out, 0);
  return NULL;
}

typedef struct vkp__nms_box_t {
  double y1, x1, y2, x2, area;
} vkp__nms_box_t;

typedef struct vkp__nms_cand_t {
  double score;
  int64_t box;
} vkp__nms_cand_t;

// Descending score, then ascending box index: a total order, so qsort's
// instability does not matter.
static int vkp__nms_cand_cmp(const void *a, const void *b) {
  const vkp__nms_cand_t *x = a, *y = b;
  if (x->score != y->score) return x->score > y->score ? -1 : 1;
  return (x->box > y->box) - (x->box < y->box);
}

// IoU above the threshold; boxes of no area suppress nothing.
static bool vkp__nms_suppresses(const vkp__nms_box_t *a, const vkp__nms_box_t *b,
                                double threshold) {
  if (a->area <= 0 || b->area <= 0) return false;
  double h = fmin(a->y2, b->y2) - fmax(a->y1, b->y1);
  double w = fmin(a->x2, b->x2) - fmax(a->x1, b->x1);
  double inter = (h > 0 ? h : 0) * (w > 0 ? w : 0);
  double uni = a->area + b->area - inter;
  if (inter <= 0 || uni <= 0) return false;
  return inter / uni > threshold;
}

vkp_status_t vkp__eval_non_max_suppression(const vkp_node_t *n,
                                           const vkp_tensor_t *const *in,
                                           vkp_tensor_t *out) {
  const vkp_tensor_t *boxes = in[0], *scores = in[1];
  int64_t batches = boxes->shape[0], count = boxes->shape[1];
  int64_t classes = scores->shape[1];
  if (scores->shape[2] != count)
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "node '%s' (non_max_suppression): %lld boxes but "
                           "scores for %lld at run time",
                           n->name, (long long)count, (long long)scores->shape[2]);
  int64_t max_out = n->n_inputs > 2 && in[2] ? vkp__get_i(in[2], 0) : 0;
  double iou = n->n_inputs > 3 && in[3] ? vkp__get_f(in[3], 0) : 0.0;
  bool has_min = n->n_inputs > 4 && in[4];
  double min_score = has_min ? vkp__get_f(in[4], 0) : 0.0;
  bool center = vkp_node_int(n, "center_point_box") != 0;
  int64_t bound = out->shape[0], rows = 0;
  size_t cnt = (size_t)(count ? count : 1);
  vkp__nms_box_t *geo = vkp__malloc(cnt * sizeof *geo);
  vkp__nms_cand_t *cand = vkp__malloc(cnt * sizeof *cand);
  int64_t *kept = vkp__malloc(cnt * sizeof *kept);
  if (!geo || !cand || !kept) {
    vkp__free(geo);
    vkp__free(cand);
    vkp__free(kept);
    return VKP_OOM("non_max_suppression");
  }
  for (int64_t b = 0; b < batches && max_out > 0; ++b) {
    for (int64_t i = 0; i < count; ++i) {
      double c[4];
      for (int k = 0; k < 4; ++k) c[k] = vkp__get_f(boxes, (b * count + i) * 4 + k);
      vkp__nms_box_t *g = &geo[i];
      if (center) {
        *g = (vkp__nms_box_t){.y1 = c[1] - c[3] / 2, .x1 = c[0] - c[2] / 2,
                              .y2 = c[1] + c[3] / 2, .x2 = c[0] + c[2] / 2};
      } else {
        *g = (vkp__nms_box_t){.y1 = fmin(c[0], c[2]), .x1 = fmin(c[1], c[3]),
                              .y2 = fmax(c[0], c[2]), .x2 = fmax(c[1], c[3])};
      }
      g->area = (g->y2 - g->y1) * (g->x2 - g->x1);
    }
    for (int64_t c = 0; c < classes; ++c) {
      int64_t m = 0, k = 0;
      for (int64_t i = 0; i < count; ++i) {
        double s = vkp__get_f(scores, (b * classes + c) * count + i);
        if (!has_min || s > min_score) cand[m++] = (vkp__nms_cand_t){s, i};
      }
      qsort(cand, (size_t)m, sizeof *cand, vkp__nms_cand_cmp);
      for (int64_t j = 0; j < m && k < max_out; ++j) {
        bool keep = true;
        for (int64_t q = 0; q < k && keep; ++q)
          keep = !vkp__nms_suppresses(&geo[kept[q]], &geo[cand[j].box], iou);
        if (!keep) continue;
        kept[k++] = cand[j].box;
        if (rows >= bound) break;  // cannot happen: the bound counts every row
        vkp__put_i(out, rows * 3, b);
        vkp__put_i(out, rows * 3 + 1, c);
        vkp__put_i(out, rows * 3 + 2, cand[j].box);
        ++rows;
      }
    }
  }
  vkp__free(geo);
  vkp__free(cand);
  vkp__free(kept);
  out->shape[0] = rows;
  return NULL;
}

// ---------------------------------------------------------------------------
// branch_select: `then` when the one-element bool cond is true, else `else`
// (ONNX If on a run-time condition, its branches imported into the graph;
// the ref target skips the nodes only the untaken side reads: docs/onnx.md,
// "If"). The two results have one dtype and rank and may differ in the
// extent of one axis (an empty branch beside a data-dependent one): the
// output is then bounded along it by the larger, and at run time takes the
// chosen operand's shape.

vkp_status_t vkp__infer_branch_select(vkp_graph_t *g, vkp_node_t *n, vkp_value_t *out) {
  const vkp_value_t *cond = vkp__in(g, n, 0), *a = vkp__in(g, n, 1), *b = vkp__in(g, n, 2);
  char sa[160], sb[160];
  if (cond->bounded || vkp__prod(cond->shape, 0, cond->rank) != 1)
    return VKP__ERR("condition '%s' %s must hold one element", cond->name,
                    vkp__fmt_bounded(cond, sa, sizeof sa));
  if (a->dtype != b->dtype)
    return VKP__ERR("the branches give %s '%s' and %s '%s'; If needs one dtype",
                    vkp_dtype_name(a->dtype), a->name, vkp_dtype_name(b->dtype),
                    b->name);
  if (a->rank != b->rank)
    return VKP__ERR("the branches give '%s' %s and '%s' %s of different ranks",
                    a->name, vkp__fmt_bounded(a, sa, sizeof sa), b->name,
                    vkp__fmt_bounded(b, sb, sizeof sb));
  int32_t axis = a->bounded ? a->bounded_axis : b->bounded ? b->bounded_axis : -1;
  bool differ = false;
  for (int32_t d = 0; d < a->rank; ++d) {
    if (a->shape[d] == b->shape[d] && d != axis) continue;
    if (axis >= 0 && d != axis) differ = true;
    axis = d;
  }
  if (differ || (a->bounded && a->bounded_axis != axis) ||
      (b->bounded && b->bounded_axis != axis))
    return vkp_status_make(VKP_STATUS_UNSUPPORTED,
                           "the branches give '%s' %s and '%s' %s, which differ "
                           "along more than one axis; a data-dependent shape "
                           "may vary along one",
                           a->name, vkp__fmt_bounded(a, sa, sizeof sa), b->name,
                           vkp__fmt_bounded(b, sb, sizeof sb));
  int64_t shape[VKP_MAX_RANK];
  memcpy(shape, a->shape, sizeof shape);
  if (axis >= 0 && b->shape[axis] > shape[axis]) shape[axis] = b->shape[axis];
  vkp__set_out(out, a->dtype, a->rank, shape);
  if (axis >= 0) vkp__set_bounded(out, axis);
  return NULL;
}

vkp_status_t vkp__eval_branch_select(const vkp_node_t *n, const vkp_tensor_t *const *in,
                                     vkp_tensor_t *out) {
  (void)n;
  const vkp_tensor_t *x = vkp__get_i(in[0], 0) ? in[1] : in[2];
  memcpy(out->shape, x->shape, sizeof out->shape);
  size_t bytes = vkp_tensor_nbytes(x);
  if (bytes) memcpy(out->data, x->data, bytes);
  return NULL;
}

// ---------------------------------------------------------------------------
// Which ops take a bounded input, and how its extent reaches the outputs

// Ops of the ELEMWISE and BROADCAST patterns follow BROADCAST (the pattern
// says each output element reads the same broadcast index of its inputs),
// except batch_norm, whose per-channel operands are not NumPy-aligned.
static const uint8_t vkp__bound_rules[VKP_OP_COUNT] = {
    [VKP_OP_NON_ZERO] = VKP__BOUND_OWN,
    [VKP_OP_UNIQUE] = VKP__BOUND_OWN,
    [VKP_OP_SHAPE] = VKP__BOUND_OWN,
    [VKP_OP_NON_MAX_SUPPRESSION] = VKP__BOUND_OWN,
    [VKP_OP_BRANCH_SELECT] = VKP__BOUND_OWN,
    [VKP_OP_ROI_ALIGN] = VKP__BOUND_OWN,
    [VKP_OP_IDENTITY] = VKP__BOUND_VIEW,
    [VKP_OP_RESHAPE] = VKP__BOUND_VIEW,
    [VKP_OP_FLATTEN] = VKP__BOUND_VIEW,
    [VKP_OP_SQUEEZE] = VKP__BOUND_VIEW,
    [VKP_OP_UNSQUEEZE] = VKP__BOUND_VIEW,
    [VKP_OP_TRANSPOSE] = VKP__BOUND_VIEW,
    [VKP_OP_REDUCE_MEAN] = VKP__BOUND_REDUCE,
    [VKP_OP_REDUCE_SUM] = VKP__BOUND_REDUCE,
    [VKP_OP_REDUCE_MAX] = VKP__BOUND_REDUCE,
    [VKP_OP_REDUCE_MIN] = VKP__BOUND_REDUCE,
    [VKP_OP_REDUCE_PROD] = VKP__BOUND_REDUCE,
    [VKP_OP_REDUCE_L1] = VKP__BOUND_REDUCE,
    [VKP_OP_REDUCE_L2] = VKP__BOUND_REDUCE,
    [VKP_OP_REDUCE_LOG_SUM] = VKP__BOUND_REDUCE,
    [VKP_OP_REDUCE_LOG_SUM_EXP] = VKP__BOUND_REDUCE,
    [VKP_OP_REDUCE_SUM_SQUARE] = VKP__BOUND_REDUCE,
    [VKP_OP_ARG_MAX] = VKP__BOUND_ARG,
    [VKP_OP_ARG_MIN] = VKP__BOUND_ARG,
    [VKP_OP_CONCAT] = VKP__BOUND_CONCAT,
    [VKP_OP_GATHER] = VKP__BOUND_GATHER,
    [VKP_OP_GATHER_ELEMENTS] = VKP__BOUND_GATHER_ELEMENTS,
    [VKP_OP_GATHER_ND] = VKP__BOUND_GATHER_ND,
    [VKP_OP_TOP_K] = VKP__BOUND_TOP_K,
    [VKP_OP_SLICE] = VKP__BOUND_SLICE,
    [VKP_OP_SCATTER_ELEMENTS] = VKP__BOUND_SCATTER,
    [VKP_OP_GEMM] = VKP__BOUND_BATCH,
    [VKP_OP_MATMUL] = VKP__BOUND_BATCH,
    [VKP_OP_SOFTMAX] = VKP__BOUND_BATCH,
    [VKP_OP_LOG_SOFTMAX] = VKP__BOUND_BATCH,
    [VKP_OP_HARDMAX] = VKP__BOUND_BATCH,
    [VKP_OP_LAYER_NORM] = VKP__BOUND_BATCH,
    [VKP_OP_CONV2D] = VKP__BOUND_BATCH,
    [VKP_OP_CONV_TRANSPOSE] = VKP__BOUND_BATCH,
    [VKP_OP_MAX_POOL2D] = VKP__BOUND_BATCH,
    [VKP_OP_AVG_POOL2D] = VKP__BOUND_BATCH,
    [VKP_OP_LP_POOL] = VKP__BOUND_BATCH,
    [VKP_OP_GLOBAL_AVG_POOL] = VKP__BOUND_BATCH,
    [VKP_OP_BATCH_NORM] = VKP__BOUND_BATCH,
    [VKP_OP_INSTANCE_NORM] = VKP__BOUND_BATCH,
    [VKP_OP_ATTENTION] = VKP__BOUND_BATCH,
    [VKP_OP_RESIZE] = VKP__BOUND_BATCH,
    [VKP_OP_PAD] = VKP__BOUND_BATCH,
};

vkp__bound_rule_t vkp__bound_rule(vkp_op_t op) {
  if (vkp__bound_rules[op]) return (vkp__bound_rule_t)vkp__bound_rules[op];
  vkp_op_pattern_t p = vkp_op_pattern(op);
  if ((p == VKP_OP_PATTERN_ELEMWISE || p == VKP_OP_PATTERN_BROADCAST) &&
      op != VKP_OP_BATCH_NORM)
    return VKP__BOUND_BROADCAST;
  return VKP__BOUND_REFUSE;
}

int32_t vkp_node_bounded_value(const vkp_graph_t *g, const vkp_node_t *n) {
  for (int32_t i = 0; i < n->n_inputs; ++i)
    if (n->inputs[i] >= 0 && g->values[n->inputs[i]].bounded) return n->inputs[i];
  for (int32_t i = 0; i < n->n_outputs; ++i)
    if (g->values[n->outputs[i]].bounded) return n->outputs[i];
  return -1;
}

bool vkp_node_is_bounded(const vkp_graph_t *g, const vkp_node_t *n) {
  return vkp_node_bounded_value(g, n) >= 0;
}

static vkp_status_t vkp__refuse(const vkp_graph_t *g, const vkp_node_t *n, int32_t i,
                                const char *why) {
  const vkp_value_t *v = vkp__in(g, n, i);
  char sv[160];
  return vkp_status_make(
      VKP_STATUS_UNSUPPORTED,
      "input %d '%s' has a data-dependent shape %s (its extent along axis %d is "
      "known only at run time); %s %s (docs/onnx.md, \"Data-dependent output "
      "shapes\", lists the ops that take one)",
      (int)i, v->name, vkp__fmt_bounded(v, sv, sizeof sv), (int)v->bounded_axis,
      vkp_op_name(n->op), why);
}

// The index of a node's only bounded input, -1 when none, -2 when several.
static int32_t vkp__only_bounded(const vkp_graph_t *g, const vkp_node_t *n) {
  int32_t found = -1;
  for (int32_t i = 0; i < n->n_inputs; ++i) {
    const vkp_value_t *v = vkp__in(g, n, i);
    if (!v || !v->bounded) continue;
    if (found >= 0) return -2;
    found = i;
  }
  return found;
}

static int32_t vkp__first_bounded(const vkp_graph_t *g, const vkp_node_t *n) {
  for (int32_t i = 0; i < n->n_inputs; ++i) {
    const vkp_value_t *v = vkp__in(g, n, i);
    if (v && v->bounded) return i;
  }
  return 0;
}

// Where the bounded axis of a view op's input (reshape family, transpose)
// lands in its output, or -1 when the op removes it or cannot say where.
static int32_t vkp__view_axis(const vkp_node_t *n, const vkp_value_t *x,
                              const vkp_value_t *y) {
  int32_t b = x->bounded_axis;
  if (n->op == VKP_OP_TRANSPOSE) {
    const int64_t *perm;
    int32_t count = vkp_node_attr_ints(n, "perm", &perm);
    for (int32_t i = 0; i < count; ++i)
      if (perm[i] == b) return i;
    return -1;
  }
  if (n->op == VKP_OP_IDENTITY) return b;
  if (n->op == VKP_OP_RESHAPE) {
    // The exporter's -1 (or a 0 copying the bounded dim) says where the
    // varying extent goes.
    const int64_t *spec;
    int32_t count = vkp_node_attr_ints(n, "shape", &spec);
    for (int32_t i = 0; i < count; ++i)
      if (spec[i] == -1) return i;
    if (b < count && spec[b] == 0) return b;
    return -1;
  }
  if (n->op == VKP_OP_FLATTEN) return b < vkp_node_int(n, "axis") ? 0 : 1;
  const int64_t *axes;
  int32_t count = vkp_node_attr_ints(n, "axes", &axes);
  if (n->op == VKP_OP_SQUEEZE) {
    int32_t at = b;
    for (int32_t i = 0; i < count; ++i) {
      if (axes[i] == b) return -1;
      if (axes[i] < b) --at;
    }
    return at;
  }
  // unsqueeze: the output axes that are not inserted are x's, in order.
  for (int32_t d = 0, k = 0, j = 0; d < y->rank; ++d) {
    if (j < count && axes[j] == d) {
      ++j;
      continue;
    }
    if (k++ == b) return d;
  }
  return -1;
}

// For VKP__BOUND_BATCH: whether the op computes the slices along the
// bounded axis independently, with no static operand spanning that axis;
// NULL when it does, and *out_axis is that axis in output 0. Convolution,
// pooling and the norms take input 0 along the batch axis; softmax and
// layer_norm outside their axis; resize and pad along an axis they leave as
// it is;
// gemm along A's rows; matmul and attention
// along a batch axis every bounded operand shares (right-aligned, same
// bound; a static operand has 1 there or lacks the axis), or matmul along
// A's rows with B static.
static const char *vkp__batch_check(const vkp_graph_t *g, const vkp_node_t *n,
                                    const vkp_value_t *y, int32_t *out_axis) {
  const vkp_value_t *x = vkp__in(g, n, 0);
  int32_t first = vkp__first_bounded(g, n);
  const vkp_value_t *f = vkp__in(g, n, first);
  int32_t b = f->bounded_axis;
  *out_axis = b + (y->rank - f->rank);
  bool multi = n->op == VKP_OP_MATMUL || n->op == VKP_OP_ATTENTION;
  if (!multi && first != 0) return "takes one only as input 0";
  if (!multi && vkp__only_bounded(g, n) == -2) return "takes one only as input 0";
  switch (n->op) {
    case VKP_OP_GEMM: {
      const vkp_value_t *c = vkp__in(g, n, 2);
      if (vkp_node_int(n, "transA") || b != 0) return "needs it along A's rows (transA 0)";
      if (c && c->rank == 2 && c->shape[0] != 1)
        return "needs a bias C that does not span the rows";
      return NULL;
    }
    case VKP_OP_MATMUL:
    case VKP_OP_ATTENTION: {
      int32_t a = *out_axis;
      if (n->op == VKP_OP_MATMUL && first == 0 && x->rank >= 2 && b == x->rank - 2 &&
          vkp__only_bounded(g, n) == 0)
        return NULL;  // A's rows, B static
      if (a >= y->rank - 2 || a < 0) return "needs it along a batch axis";
      for (int32_t i = 0; i < n->n_inputs; ++i) {
        const vkp_value_t *v = vkp__in(g, n, i);
        if (!v) continue;
        // The attention condition and mask broadcast to the scores, which
        // have output 0's rank.
        int32_t d = a - (y->rank - v->rank);
        if (v->bounded) {
          if (d != v->bounded_axis || v->shape[d] != f->shape[b])
            return "needs every data-dependent operand on the same batch axis "
                   "with the same bound";
        } else if (d >= 0 && v->shape[d] != 1) {
          return "needs the static operands of size 1 along that batch axis";
        }
      }
      return NULL;
    }
    case VKP_OP_SOFTMAX:
    case VKP_OP_LOG_SOFTMAX:
    case VKP_OP_HARDMAX:
      return b == vkp_node_int(n, "axis") ? "normalises along it" : NULL;
    case VKP_OP_LAYER_NORM:
      return b >= vkp_node_int(n, "axis") ? "normalises over it" : NULL;
    case VKP_OP_RESIZE:  // Keypoint R-CNN upsamples its per-detection maps
      // (ONNX Resize given sizes along the varying axis is refused at
      // import: they fix its length; scales of 1 keep what the input has.)
      return vkp__resize_keeps_axis(n, b) ? NULL : "resamples along it";
    case VKP_OP_PAD: {  // Mask R-CNN pads its per-detection masks by one pixel
      const int64_t *pads;
      vkp_node_attr_ints(n, "pads", &pads);
      return pads[b] == 0 && pads[x->rank + b] == 0 ? NULL : "pads along it";
    }
    default:  // convolution, pooling, batch_norm, instance_norm: images
      return b == 0 && x->rank >= 3 ? NULL : "needs it along the batch axis (0)";
  }
}

// Called by vkp__op_infer after the op's own inference: checks that the
// op takes its bounded inputs and marks the bounded outputs.
vkp_status_t vkp__bounded_infer(vkp_graph_t *g, vkp_node_t *n) {
  int32_t only = vkp__only_bounded(g, n);
  if (only == -1) return NULL;
  vkp__bound_rule_t rule = vkp__bound_rule(n->op);
  vkp_value_t *y = vkp__out(g, n, 0);
  switch (rule) {
    case VKP__BOUND_REFUSE:
      return vkp__refuse(g, n, vkp__first_bounded(g, n), "does not take one");
    case VKP__BOUND_OWN:
      return NULL;
    case VKP__BOUND_BROADCAST: {
      // Every bounded operand on the same output axis with the same bound;
      // every static operand of size 1 (or absent) there.
      int32_t axis = -1;
      int64_t bound = 0;
      for (int32_t i = 0; i < n->n_inputs; ++i) {
        const vkp_value_t *v = vkp__in(g, n, i);
        if (!v || !v->bounded) continue;
        int32_t a = v->bounded_axis + (y->rank - v->rank);
        if (axis < 0) {
          axis = a;
          bound = v->shape[v->bounded_axis];
        } else if (a != axis || v->shape[v->bounded_axis] != bound) {
          return vkp__refuse(g, n, i, "needs every data-dependent operand on "
                                      "the same axis with the same bound");
        }
      }
      for (int32_t i = 0; i < n->n_inputs; ++i) {
        const vkp_value_t *v = vkp__in(g, n, i);
        if (!v || v->bounded) continue;
        int32_t d = axis - (y->rank - v->rank);
        if (d >= 0 && v->shape[d] != 1) {
          char msg[200];
          snprintf(msg, sizeof msg,
                   "cannot broadcast it against input %d '%s' of size %lld on "
                   "that axis (only 1 broadcasts against a varying extent)",
                   (int)i, v->name, (long long)v->shape[d]);
          for (int32_t j = 0; j < n->n_inputs; ++j) {
            const vkp_value_t *b = vkp__in(g, n, j);
            if (b && b->bounded) return vkp__refuse(g, n, j, msg);
          }
        }
      }
      if (y->shape[axis] != bound)
        return vkp__refuse(g, n, vkp__first_bounded(g, n), "broadcasts it to a wider shape");
      for (int32_t j = 0; j < n->n_outputs; ++j)
        vkp__set_bounded(vkp__out(g, n, j), axis);
      return NULL;
    }
    default:
      break;
  }
  if (only == -2 && rule != VKP__BOUND_CONCAT && rule != VKP__BOUND_GATHER &&
      rule != VKP__BOUND_GATHER_ND && rule != VKP__BOUND_GATHER_ELEMENTS &&
      rule != VKP__BOUND_SCATTER && rule != VKP__BOUND_BATCH) {
    for (int32_t i = 1; i < n->n_inputs; ++i) {
      const vkp_value_t *v = vkp__in(g, n, i);
      if (v && v->bounded) return vkp__refuse(g, n, i, "takes one only as input 0");
    }
  }
  const vkp_value_t *x = vkp__in(g, n, 0);
  switch (rule) {
    case VKP__BOUND_VIEW: {
      if (only != 0) return vkp__refuse(g, n, only, "takes one only as input 0");
      int32_t a = vkp__view_axis(n, x, y);
      if (a < 0)
        return vkp__refuse(g, n, 0,
                           n->op == VKP_OP_RESHAPE
                               ? "needs -1 in its target shape (or 0 copying "
                                 "that axis) to say where the extent goes"
                               : "would remove or split that axis");
      vkp__set_bounded(y, a);
      return NULL;
    }
    case VKP__BOUND_REDUCE:
    case VKP__BOUND_ARG: {
      if (only != 0) return vkp__refuse(g, n, only, "takes one only as input 0");
      int64_t red[VKP_MAX_RANK];
      int32_t nred;
      if (rule == VKP__BOUND_ARG) {
        red[0] = vkp_node_int(n, "axis");
        nred = 1;
      } else {
        const int64_t *axes;
        nred = vkp_node_attr_ints(n, "axes", &axes);
        memcpy(red, axes, (size_t)nred * sizeof *red);
      }
      bool keep = vkp_node_int(n, "keepdims") != 0;
      int32_t b = x->bounded_axis, at = b;
      for (int32_t i = 0; i < nred; ++i) {
        if (red[i] == b) return NULL;  // reduced away: the output is static
        if (red[i] < b && !keep) --at;
      }
      vkp__set_bounded(y, at);
      return NULL;
    }
    case VKP__BOUND_CONCAT: {
      int32_t axis = (int32_t)vkp_node_int(n, "axis");
      int32_t other = -1;
      for (int32_t i = 0; i < n->n_inputs; ++i) {
        const vkp_value_t *v = vkp__in(g, n, i);
        if (!v || !v->bounded || v->bounded_axis == axis) continue;
        other = v->bounded_axis;
      }
      if (other < 0) {
        vkp__set_bounded(y, axis);
        return NULL;
      }
      // Bounded along another axis: every input alike (extents checked at
      // run time).
      for (int32_t i = 0; i < n->n_inputs; ++i) {
        const vkp_value_t *v = vkp__in(g, n, i);
        if (v && (!v->bounded || v->bounded_axis != other))
          return vkp__refuse(g, n, v->bounded ? i : vkp__first_bounded(g, n),
                             "concatenates along another axis, so every input "
                             "needs the same data-dependent axis");
      }
      vkp__set_bounded(y, other);
      return NULL;
    }
    case VKP__BOUND_GATHER: {
      const vkp_value_t *idx = vkp__in(g, n, 1);
      int32_t axis = (int32_t)vkp_node_int(n, "axis");
      bool data_off = x->bounded && x->bounded_axis != axis;
      if (data_off && idx->bounded)
        return vkp__refuse(g, n, 1, "would have two data-dependent axes (its data "
                                    "varies along another axis too)");
      if (idx->bounded) vkp__set_bounded(y, axis + idx->bounded_axis);
      else if (data_off)
        vkp__set_bounded(y, x->bounded_axis < axis
                                ? x->bounded_axis
                                : x->bounded_axis - 1 + idx->rank);
      return NULL;
    }
    case VKP__BOUND_GATHER_ELEMENTS: {
      const vkp_value_t *idx = vkp__in(g, n, 1);
      int32_t axis = (int32_t)vkp_node_int(n, "axis");
      if (x->bounded && x->bounded_axis != axis &&
          !(idx->bounded && idx->bounded_axis == x->bounded_axis))
        return vkp__refuse(g, n, 0, "reads it along another axis than 'axis' "
                                    "with static indices");
      if (idx->bounded) vkp__set_bounded(y, idx->bounded_axis);
      return NULL;
    }
    case VKP__BOUND_GATHER_ND: {
      const vkp_value_t *idx = vkp__in(g, n, 1);
      int64_t batch = vkp_node_int(n, "batch_dims");
      int64_t k = idx->shape[idx->rank - 1];
      if (idx->bounded && idx->bounded_axis == idx->rank - 1)
        return vkp__refuse(g, n, 1, "needs the index tuples' length static");
      if (idx->bounded && idx->bounded_axis < batch)
        return vkp__refuse(g, n, 1, "needs the batch dims static");
      if (x->bounded && x->bounded_axis < batch)
        return vkp__refuse(g, n, 0, "needs the batch dims static");
      bool data_tail = x->bounded && x->bounded_axis >= batch + k;
      if (data_tail && idx->bounded)
        return vkp__refuse(g, n, 1, "would have two data-dependent axes");
      if (idx->bounded) vkp__set_bounded(y, idx->bounded_axis);
      else if (data_tail)
        vkp__set_bounded(y, (int32_t)(idx->rank - 1 + x->bounded_axis - batch - k));
      return NULL;
    }
    case VKP__BOUND_BATCH: {
      int32_t a;
      const char *why = vkp__batch_check(g, n, y, &a);
      if (why) return vkp__refuse(g, n, vkp__first_bounded(g, n), why);
      const vkp_value_t *f = vkp__in(g, n, vkp__first_bounded(g, n));
      int64_t bound = f->shape[f->bounded_axis];
      for (int32_t j = 0; j < n->n_outputs; ++j) {
        vkp_value_t *o = vkp__out(g, n, j);
        int32_t at = j == 0 ? a : a - (y->rank - o->rank);
        if (at >= 0 && at < o->rank && o->shape[at] == bound) vkp__set_bounded(o, at);
      }
      return NULL;
    }
    case VKP__BOUND_SCATTER: {
      // Indices and updates have one shape (inference checked the static
      // ones), so they vary alike or not at all; data passes its extent on.
      const vkp_value_t *idx = vkp__in(g, n, 1), *upd = vkp__in(g, n, 2);
      if (idx->bounded != upd->bounded ||
          (idx->bounded && idx->bounded_axis != upd->bounded_axis))
        return vkp__refuse(g, n, idx->bounded ? 1 : 2,
                           "needs indices and updates data-dependent alike "
                           "(they have one shape)");
      if (x->bounded) vkp__set_bounded(y, x->bounded_axis);
      return NULL;
    }
    case VKP__BOUND_SLICE:
      // vkp__infer_slice refused what counts from the run-time end.
      vkp__set_bounded(y, x->bounded_axis);
      return NULL;
    case VKP__BOUND_TOP_K:
      if (only != 0) return vkp__refuse(g, n, only, "takes one only as input 0");
      if (vkp__in(g, n, 1) && x->bounded_axis != vkp_node_int(n, "axis"))
        return vkp__refuse(g, n, 0, "with a run-time K would have two "
                                    "data-dependent axes");
      for (int32_t j = 0; j < n->n_outputs; ++j)
        vkp__set_bounded(vkp__out(g, n, j), x->bounded_axis);
      return NULL;
    default:
      return vkp__refuse(g, n, vkp__first_bounded(g, n), "does not take one");
  }
}

// ---------------------------------------------------------------------------
// Run-time shapes

static vkp_status_t vkp__extent_mismatch(const vkp_node_t *n, int64_t a, int64_t b) {
  return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                         "node '%s' (%s): data-dependent operands have extents "
                         "%lld and %lld at run time; they must agree",
                         n->name, vkp_op_name(n->op), (long long)a, (long long)b);
}

vkp_status_t vkp_node_bounded_shapes(const vkp_graph_t *g, const vkp_node_t *n,
                                     const vkp_tensor_t *const *in,
                                     vkp_tensor_t *out) {
  vkp__bound_rule_t rule = vkp__bound_rule(n->op);
  if (rule == VKP__BOUND_OWN) return NULL;
  if (rule == VKP__BOUND_SCATTER) {
    // At run time too: updates shaped like indices, which fit inside data
    // on every axis but 'axis'.
    int64_t axis = vkp_node_int(n, "axis");
    for (int32_t d = 0; d < in[1]->rank; ++d) {
      if (in[2]->shape[d] != in[1]->shape[d] ||
          (d != axis && in[1]->shape[d] > in[0]->shape[d]))
        return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                               "node '%s' (%s): at run time indices have %lld "
                               "along axis %d, updates %lld and data %lld",
                               n->name, vkp_op_name(n->op),
                               (long long)in[1]->shape[d], (int)d,
                               (long long)in[2]->shape[d], (long long)in[0]->shape[d]);
    }
  }
  for (int32_t j = 0; j < n->n_outputs; ++j) {
    const vkp_value_t *y = &g->values[n->outputs[j]];
    if (!y->bounded) continue;
    int32_t a = y->bounded_axis;
    int64_t e = -1;
    switch (rule) {
      case VKP__BOUND_BROADCAST:
      case VKP__BOUND_CONCAT:
        for (int32_t i = 0; i < n->n_inputs; ++i) {
          const vkp_value_t *v = vkp__in(g, n, i);
          if (!v) continue;
          int32_t d = rule == VKP__BOUND_CONCAT ? a : a - (y->rank - v->rank);
          if (rule == VKP__BOUND_CONCAT && a == vkp_node_int(n, "axis")) {
            e = (e < 0 ? 0 : e) + in[i]->shape[d];
            continue;
          }
          if (!v->bounded) continue;
          if (e >= 0 && in[i]->shape[d] != e)
            return vkp__extent_mismatch(n, e, in[i]->shape[d]);
          e = in[i]->shape[d];
        }
        break;
      case VKP__BOUND_VIEW: {
        // Same elements: the extent is what the others leave.
        int64_t others = 1;
        for (int32_t d = 0; d < y->rank; ++d)
          if (d != a) others *= y->shape[d];
        int64_t numel = (int64_t)vkp_tensor_numel(in[0]);
        if (others == 0) {
          e = 0;
        } else if (numel % others) {
          return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                                 "node '%s' (%s): %lld elements at run time do "
                                 "not fill dims of %lld",
                                 n->name, vkp_op_name(n->op), (long long)numel,
                                 (long long)others);
        } else {
          e = numel / others;
        }
        break;
      }
      case VKP__BOUND_REDUCE:
      case VKP__BOUND_ARG:
        e = in[0]->shape[g->values[n->inputs[0]].bounded_axis];
        break;
      case VKP__BOUND_GATHER:
      case VKP__BOUND_GATHER_ELEMENTS:
      case VKP__BOUND_GATHER_ND: {
        const vkp_value_t *idx = vkp__in(g, n, 1);
        if (idx->bounded) e = in[1]->shape[idx->bounded_axis];
        else e = in[0]->shape[g->values[n->inputs[0]].bounded_axis];
        break;
      }
      case VKP__BOUND_SCATTER:
        e = in[0]->shape[a];
        break;
      case VKP__BOUND_BATCH:
        // Every bounded operand along the one batch axis: their extents
        // agree at run time.
        for (int32_t i = 0; i < n->n_inputs; ++i) {
          const vkp_value_t *v = vkp__in(g, n, i);
          if (!v || !v->bounded) continue;
          if (e >= 0 && in[i]->shape[v->bounded_axis] != e)
            return vkp__extent_mismatch(n, e, in[i]->shape[v->bounded_axis]);
          e = in[i]->shape[v->bounded_axis];
        }
        break;
      case VKP__BOUND_SLICE: {
        // Forward from a start that does not count from the end: the
        // canonical start and end, clamped to the run-time extent.
        const int64_t *starts, *ends, *steps;
        vkp_node_attr_ints(n, "starts", &starts);
        vkp_node_attr_ints(n, "ends", &ends);
        vkp_node_attr_ints(n, "steps", &steps);
        int64_t len = in[0]->shape[a];
        int64_t s = starts[a] < len ? starts[a] : len, t = ends[a] < len ? ends[a] : len;
        e = t > s ? (t - s + steps[a] - 1) / steps[a] : 0;
        break;
      }
      case VKP__BOUND_TOP_K: {
        int64_t len = in[0]->shape[a];
        bool k_in = n->n_inputs > 1 && in[1];
        int64_t k = k_in ? vkp__get_i(in[1], 0) : vkp_node_int(n, "k");
        if (k < 0)
          return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                                 "node '%s' (top_k): k is %lld at run time",
                                 n->name, (long long)k);
        e = a == vkp_node_int(n, "axis") && k < len ? k : len;
        break;
      }
      default:
        return vkp_status_make(VKP_STATUS_INTERNAL,
                               "node '%s' (%s): no run-time shape rule",
                               n->name, vkp_op_name(n->op));
    }
    if (e < 0 || e > y->shape[a])
      return vkp_status_make(VKP_STATUS_INTERNAL,
                             "node '%s' (%s): run-time extent %lld outside its "
                             "bound %lld",
                             n->name, vkp_op_name(n->op), (long long)e,
                             (long long)y->shape[a]);
    out[j].shape[a] = e;
  }
  return NULL;
}

vkp_status_t vkp_value_check_tensor(const vkp_value_t *v, const vkp_tensor_t *t,
                                    const char *what) {
  bool same = t->dtype == v->dtype && t->rank == v->rank;
  for (int32_t d = 0; same && d < v->rank; ++d)
    same = v->bounded && d == v->bounded_axis
               ? t->shape[d] >= 0 && t->shape[d] <= v->shape[d]
               : t->shape[d] == v->shape[d];
  if (!same) {
    char want[160], got[128];
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "%s '%s': expected %s %s, got %s %s", what, v->name,
                           vkp_dtype_name(v->dtype),
                           vkp__fmt_bounded(v, want, sizeof want),
                           vkp_dtype_name(t->dtype),
                           vkp_shape_format(t->rank, t->shape, got, sizeof got));
  }
  if (!t->data && vkp_tensor_nbytes(t))
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT, "%s '%s' has no data",
                           what, v->name);
  return NULL;
}
