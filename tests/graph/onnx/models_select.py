# SPDX-License-Identifier: Apache-2.0
"""ONNX models for the importer of the selection family (graph/onnx_select.c):
TopK, ArgMax, ArgMin and CumSum across opsets, NonZero and Unique folded on
constants, and the run-time form that is refused (a CumSum axis), with
NumPy's expected outputs.
Imported by gen_models.py, which calls generate(w); test_onnx_select.c
loads them."""
import numpy as np
from onnx import TensorProto, helper

from gen_models import I64, init, model, vi


def top_k(x, k, axis, largest):
    """Stable: equal values keep their index order (ONNX's TopK rule)."""
    key = -x if largest else x
    idx = np.take(np.argsort(key, axis=axis, kind="stable"), np.arange(k), axis=axis)
    return np.take_along_axis(x, idx, axis), idx.astype(np.int64)


def cum_sum(x, axis, exclusive, reverse):
    y = np.flip(x, axis) if reverse else x
    s = np.cumsum(y.astype(np.float64), axis=axis)
    if exclusive:
        s = s - y
    return (np.flip(s, axis) if reverse else s).astype(np.float32)


def gen_select_opsets(w):
    n = helper.make_node
    # Opset 9: TopK's k is an attribute (largest, sorted: not yet), ArgMax /
    # ArgMin without select_last_index. Ties in x (rounded values) check
    # the index order of both.
    x = np.round(w.f32(3, 8, lo=-3, hi=3))
    nodes = [n("TopK", ["x"], ["v", "i"], k=3, axis=1),
             n("ArgMax", ["x"], ["amax"], axis=1, keepdims=0),
             n("ArgMin", ["x"], ["amin"])]
    m = model(nodes, [vi("x", [3, 8])],
              [vi("v", [3, 3]), vi("i", [3, 3], I64), vi("amax", [3], I64),
               vi("amin", [1, 8], I64)], opset=9)
    v, i = top_k(x, 3, 1, True)
    w.save("select_opset9", m, [x],
           [v, i, np.argmax(x, 1).astype(np.int64),
            np.argmin(x, 0)[None].astype(np.int64)])

    # Opset 13: K and CumSum's axis as constant inputs, largest 0 with only
    # the Values output used, select_last_index, exclusive and reverse.
    x = np.round(w.f32(2, 5, 4, lo=-3, hi=3))
    nodes = [n("TopK", ["x", "k"], ["v", ""], axis=-2, largest=0),
             n("ArgMax", ["x"], ["amax"], axis=2, select_last_index=1),
             n("CumSum", ["x", "ax"], ["cs"], exclusive=1, reverse=1),
             n("CumSum", ["x", "ax0"], ["cs0"])]
    m = model(nodes, [vi("x", [2, 5, 4])],
              [vi("v", [2, 2, 4]), vi("amax", [2, 5, 1], I64), vi("cs", [2, 5, 4]),
               vi("cs0", [2, 5, 4])],
              [init("k", np.array([2], np.int64)), init("ax", np.array(1, np.int32)),
               init("ax0", np.array([0], np.int64))], opset=13)
    amax = 3 - np.argmax(np.flip(x, 2), 2)[..., None]
    w.save("select_opset13", m, [x],
           [top_k(x, 2, 1, False)[0], amax.astype(np.int64), cum_sum(x, 1, 1, 1),
            cum_sum(x, 0, 0, 0)])

    # NonZero and Unique on constants fold; their results feed run-time
    # arithmetic.
    mask = w.rng.integers(0, 2, size=(3, 4)).astype(bool)
    mask[0, 0] = True
    nz = np.array(np.nonzero(mask), np.int64)
    vals = w.rng.integers(0, 5, size=9).astype(np.float32)
    uy, ui, uinv, uc = np.unique(vals, return_index=True, return_inverse=True,
                                 return_counts=True)
    a, b = w.f32(*nz.shape), w.f32(len(uc))
    nodes = [n("NonZero", ["mask"], ["nz"]), n("Cast", ["nz"], ["nzf"], to=TensorProto.FLOAT),
             n("Add", ["a", "nzf"], ["y0"]),
             n("Unique", ["vals"], ["uy", "ui", "uinv", "uc"]),
             n("Cast", ["uc"], ["ucf"], to=TensorProto.FLOAT), n("Mul", ["b", "ucf"], ["y1"]),
             n("Add", ["y1", "uy"], ["y2"])]
    m = model(nodes, [vi("a", list(nz.shape)), vi("b", [len(uc)])],
              [vi("y0", list(nz.shape)), vi("y2", [len(uc)])],
              [init("mask", mask), init("vals", vals)], opset=13)
    w.save("select_fold", m, [a, b],
           [(a + nz).astype(np.float32),
            (b * uc.astype(np.float32)) + uy])  # float32 per op, as the graph

    # A run-time CumSum axis: refused. (TopK with a run-time K, NonZero and
    # Unique on run-time data run: models_dynamic.py.)
    nodes = [n("CumSum", ["x", "ax"], ["cs"])]
    m = model(nodes, [vi("x", [2, 3]), vi("ax", [], I64)], [vi("cs", [2, 3])], opset=13)
    w.save("select_runtime", m)


def top_k_nan(x, k, axis, largest):
    """TopK by ONNX's rule with NaNs: NaN is the largest value (first when
    largest, last when smallest); equal values keep their index order."""
    xm = np.moveaxis(x, axis, -1)
    flat = xm.reshape(-1, xm.shape[-1])
    idx = np.empty((flat.shape[0], k), np.int64)
    for r, row in enumerate(flat):
        if largest:
            key = lambda j: (0 if np.isnan(row[j]) else 1, 0.0 if np.isnan(row[j]) else -row[j])
        else:
            key = lambda j: (1 if np.isnan(row[j]) else 0, 0.0 if np.isnan(row[j]) else row[j])
        idx[r] = sorted(range(len(row)), key=key)[:k]
    idx = np.moveaxis(idx.reshape(xm.shape[:-1] + (k,)), -1, axis)
    return np.take_along_axis(x, idx, axis), idx


def gen_select_long_rows(w):
    # Long rows and a small K take the C kernel's one-pass selection (K * 16
    # <= n): ties (values rounded to a few levels), NaNs, largest and
    # smallest, the axis last (inner 1) and first (inner 3).
    n = helper.make_node
    a = np.round(w.f32(4, 200, lo=-4, hi=4) * 2) / 2
    a[1, [3, 50, 199]] = np.nan
    b = np.round(w.f32(160, 3, lo=-3, hi=3))
    b[[0, 7, 100], 2] = np.nan
    nodes = [n("TopK", ["a", "ka"], ["va", "ia"], axis=1),
             n("TopK", ["b", "kb"], ["vb", "ib"], axis=0, largest=0)]
    m = model(nodes, [vi("a", [4, 200]), vi("b", [160, 3])],
              [vi("va", [4, 6]), vi("ia", [4, 6], I64), vi("vb", [7, 3]),
               vi("ib", [7, 3], I64)],
              [init("ka", np.array([6], np.int64)), init("kb", np.array([7], np.int64))],
              opset=13)
    va, ia = top_k_nan(a, 6, 1, True)
    vb, ib = top_k_nan(b, 7, 0, False)
    w.save("select_topk_long", m, [a, b], [va, ia, vb, ib])


def generate(w):
    gen_select_opsets(w)
    gen_select_long_rows(w)
