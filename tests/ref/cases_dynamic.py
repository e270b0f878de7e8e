# SPDX-License-Identifier: Apache-2.0
"""NumPy cases of the data-dependent ops (graph/op_dynamic.c): non_zero of
random data on every dtype (about half the elements zero, so the count
varies from seed to seed), of a scalar and of all-zero data; unique on every
dtype, sorted and by first occurrence, flattened and along an axis, with
all four outputs; shape of every dtype with start and end. Outputs are
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


def generate(g):
    gen_non_zero(g)
    gen_unique(g)
    gen_shape(g)
