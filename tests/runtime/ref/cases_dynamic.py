# SPDX-License-Identifier: Apache-2.0
"""NumPy cases of the data-dependent ops (graph/op_dynamic.c): non_zero of
random data on every dtype (about half the elements zero, so the count
varies from seed to seed), of a scalar and of all-zero data; unique on every
dtype, sorted and by first occurrence, flattened and along an axis, with
all four outputs; shape of every dtype with start and end;
non_max_suppression of random overlapping boxes on every float dtype, both
box formats, a run-time max_output_boxes_per_class and none; branch_select
of static and of differently sized branches. Outputs are
compared at their run-time shapes (the manifest's), which the op's bound
(its inferred shape) must hold. Expected results come from NumPy (nonzero,
unique), not from vkpipe."""
import numpy as np

from gen_cases import ALL, I, add_typed, typed


def sparse(g, shape, dt):
    """Random data of dtype dt with about half its elements zero."""
    x = typed(g, shape, dt, 1, 3)
    keep = g.rng.integers(0, 2, size=shape).astype(bool)
    return np.where(keep, x, np.zeros((), x.dtype)).astype(dt)


def unique_all(x, axis, sorted_):
    y, idx, inv, cnt = np.unique(x, axis=axis, return_index=True,
                                 return_inverse=True, return_counts=True)
    inv = inv.reshape(-1)
    if not sorted_:
        order = np.argsort(idx, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        y = np.take(y, order, axis=0 if axis is None else axis)
        idx, cnt, inv = idx[order], cnt[order], rank[inv]
    return [y, idx.astype(np.int64), inv.astype(np.int64), cnt.astype(np.int64)]


def gen_non_zero(g):
    d = g.dim
    for dt in ALL:
        x = sparse(g, (d([2, 3]), d([3, 5])), dt)
        add_typed(g, "non_zero", [x], np.array(np.nonzero(x), np.int64), dt)
    x = sparse(g, (2, 3, 4), "float32")
    add_typed(g, "non_zero", [x], np.array(np.nonzero(x), np.int64), "float32",
              tag="rank3")
    x = np.zeros((3, 4), np.float32)
    add_typed(g, "non_zero", [x], np.zeros((2, 0), np.int64), "float32", tag="none")
    x = np.array(2.5, np.float32)
    add_typed(g, "non_zero", [x], np.zeros((1, 1), np.int64), "float32", tag="scalar")


def gen_unique(g):
    for dt in ALL:
        x = typed(g, (9,), dt, 0, 3)  # few distinct values: repeats
        for sorted_ in (1, 0):
            add_typed(g, "unique", [x], unique_all(x, None, sorted_), dt,
                      [I("sorted", sorted_)], tag="flat%d" % sorted_)
    x = typed(g, (5, 2), "float32", 0, 2).round()
    for axis, sorted_ in ((0, 1), (-1, 0), (1, 1)):
        want = unique_all(x, axis % 2, sorted_)
        add_typed(g, "unique", [x], want, "float32",
                  [I("axis", axis), I("sorted", sorted_)], tag="axis%d" % axis)
    x = typed(g, (2, 4, 3), "int32", 0, 1)
    add_typed(g, "unique", [x], unique_all(x, 1, 1), "int32", [I("axis", 1)],
              tag="axis_3d")
    x = typed(g, (8,), "float64", 0, 2).round()
    add_typed(g, "unique", [x], unique_all(x, None, 1)[:2], "float64",
              tag="two_outputs")


def gen_shape(g):
    for k, dt in enumerate(ALL):
        x = typed(g, (2, 3, 5)[: 1 + k % 3], dt)
        add_typed(g, "shape", [x], np.array(x.shape, np.int64), dt)
    x = typed(g, (2, 3, 5, 7), "float32")
    for start, end in ((1, 3), (-2, 4), (2, 10), (3, 1)):
        s, e = max(0, start + 4 if start < 0 else start), min(4, end)
        want = np.array(x.shape[s:e] if e > s else (), np.int64)
        add_typed(g, "shape", [x], want, "float32", [I("start", start), I("end", end)],
                  tag="slice%d" % len(want))


def nms(boxes, scores, max_out, iou, min_score, center):
    """Greedy suppression per batch and class in float64, written from the
    ONNX operator description: candidates above min_score (None: all) in
    descending score order (ties by index), kept unless their IoU with one
    already kept exceeds iou; at most max_out per class."""
    b = boxes.astype(np.float64)
    if center:
        xc, yc, w, h = b[..., 0], b[..., 1], b[..., 2], b[..., 3]
        y1, x1, y2, x2 = yc - h / 2, xc - w / 2, yc + h / 2, xc + w / 2
    else:
        y1 = np.minimum(b[..., 0], b[..., 2])
        y2 = np.maximum(b[..., 0], b[..., 2])
        x1 = np.minimum(b[..., 1], b[..., 3])
        x2 = np.maximum(b[..., 1], b[..., 3])
    area = (y2 - y1) * (x2 - x1)
    rows = []
    for n in range(boxes.shape[0]):
        for c in range(scores.shape[1]):
            s = scores[n, c].astype(np.float64)
            order = [i for i in np.lexsort((np.arange(len(s)), -s))
                     if min_score is None or s[i] > min_score]
            kept = []
            for i in order:
                if len(kept) >= max_out:
                    break
                ok = True
                for j in kept:
                    ih = min(y2[n, i], y2[n, j]) - max(y1[n, i], y1[n, j])
                    iw = min(x2[n, i], x2[n, j]) - max(x1[n, i], x1[n, j])
                    inter = max(ih, 0.0) * max(iw, 0.0)
                    union = area[n, i] + area[n, j] - inter
                    if (area[n, i] > 0 and area[n, j] > 0 and inter > 0 and
                            union > 0 and inter / union > iou):
                        ok = False
                        break
                if ok:
                    kept.append(i)
                    rows.append([n, c, i])
    return np.array(rows, np.int64).reshape(-1, 3)


def random_boxes(g, batches, count, dt, center):
    """Boxes in a 10x10 field, overlapping often: corners in either order,
    or centres with sizes."""
    if center:
        xy = g.rng.uniform(0, 10, size=(batches, count, 2))
        wh = g.rng.uniform(0.5, 5, size=(batches, count, 2))
        return np.concatenate([xy, wh], axis=2).astype(dt)
    return g.rng.uniform(0, 10, size=(batches, count, 4)).astype(dt)


def gen_non_max_suppression(g):
    for k, dt in enumerate(["float32", "float16", "float64"]):
        center = k % 2
        boxes = random_boxes(g, 2, 7, dt, center)
        scores = g.rng.uniform(0, 1, size=(2, 3, 7)).astype(dt)
        max_out = np.array([4], np.int64)
        iou = np.array([0.3], dt)
        thr = np.array([0.2], dt)
        want = nms(boxes, scores, 4, float(iou[0]), float(thr[0]), center)
        add_typed(g, "non_max_suppression",
                  [boxes, scores, ("const", max_out), iou, thr], want, dt,
                  [I("center_point_box", center)], tag="center%d" % center)
    # max_output_boxes_per_class at run time (the bound is every box), no
    # score threshold.
    boxes = random_boxes(g, 1, 9, "float32", 0)
    scores = g.rng.uniform(0, 1, size=(1, 2, 9)).astype(np.float32)
    want = nms(boxes, scores, 3, 0.5, None, 0)
    add_typed(g, "non_max_suppression",
              [boxes, scores, np.array([3], np.int64), np.array([0.5], np.float32)],
              want, "float32", tag="runtime_max")
    # No max_output_boxes_per_class: nothing is kept.
    add_typed(g, "non_max_suppression", [boxes, scores], np.zeros((0, 3), np.int64),
              "float32", tag="no_max")


def gen_branch_select(g):
    for cond in (True, False):
        a, b = g.f32((3, 4)), g.f32((3, 4))
        add_typed(g, "branch_select", [np.array(cond), a, b], a if cond else b,
                  "bool", tag="static%d" % cond)
        # Branches of different extent along axis 1: the result is bounded by
        # the larger and comes back at the chosen one's shape.
        e, f = np.zeros((2, 0), np.int64), g.ints((2, 5), np.int64)
        add_typed(g, "branch_select", [np.array([cond]), e, f], e if cond else f,
                  "bool", tag="empty_or_five%d" % cond)


def generate(g):
    gen_non_zero(g)
    gen_unique(g)
    gen_shape(g)
    gen_non_max_suppression(g)
    gen_branch_select(g)
