# SPDX-License-Identifier: Apache-2.0
"""NumPy cases of the selection family (docs/ops.md): arg_max / arg_min over
every axis (negative too), keepdims, select_last_index on data with ties,
NaN (picked by both); top_k with largest and smallest, ties (the lower index
first), k = 0 and k = the whole axis; cum_sum over every axis with
exclusive and reverse, wrapping integer sums; each on float32, float16,
float64 and every integer dtype. Expected results come from NumPy
(argmax, a stable sort, cumsum), not from vkpipe."""
import numpy as np

from gen_cases import FLOAT_X, INTS, I, add_typed, typed, wide

DTYPES = ["float32"] + FLOAT_X + INTS


def arg(x, axis, op, keep, last):
    fn = np.argmax if op == "arg_max" else np.argmin
    if last:
        n = x.shape[axis]
        r = n - 1 - fn(np.flip(x, axis), axis=axis)
    else:
        r = fn(x, axis=axis)
    if keep:
        r = np.expand_dims(r, axis)
    return r.astype(np.int64)


def top_k(x, k, axis, largest):
    """Values and indices of the k largest (smallest) along axis, ties in
    index order: a stable sort on Python numbers (exact for uint64)."""
    moved = np.moveaxis(x, axis, -1)
    rows = moved.reshape(-1, moved.shape[-1])
    idx = np.zeros((rows.shape[0], k), np.int64)
    for r, row in enumerate(rows.tolist()):
        order = sorted(range(len(row)), key=lambda j: -row[j] if largest else row[j])
        idx[r] = order[:k]
    idx = idx.reshape(moved.shape[:-1] + (k,))
    vals = np.take_along_axis(moved, idx, -1)
    return np.moveaxis(vals, -1, axis), np.moveaxis(idx, -1, axis)


def cum_sum(x, axis, exclusive, reverse):
    dt = x.dtype
    y = np.flip(x, axis) if reverse else x
    if dt.kind == "f":
        s = np.cumsum(wide(y), axis=axis)
        if exclusive:
            s = s - wide(y)
    else:
        with np.errstate(over="ignore"):
            s = np.cumsum(y, axis=axis, dtype=dt)
            if exclusive:
                s = (s - y).astype(dt)
    if reverse:
        s = np.flip(s, axis)
    return s.astype(dt)


def gen_arg(g):
    d = g.dim
    for op in ("arg_max", "arg_min"):
        shape = (d([2, 3]), d([3, 5]), d([2, 7]))
        for axis, keep, last in ((0, None, None), (1, 0, 0), (-1, 1, 1), (2, 0, 1), (-3, 1, 0)):
            x = typed(g, shape, "float32")
            attrs = [I("axis", axis)]
            if keep is not None:
                attrs.append(I("keepdims", keep))
            if last is not None:
                attrs.append(I("select_last_index", last))
            add_typed(g, op, [x], arg(x, axis, op, keep != 0, bool(last)), "float32", attrs)
        # Ties everywhere (small integers), first and last index; every dtype.
        for dt in DTYPES:
            x = typed(g, (4, 6), dt, -3, 3)
            for last in (0, 1):
                add_typed(g, op, [x], arg(x, 1, op, False, bool(last)), dt,
                          [I("axis", 1), I("keepdims", 0), I("select_last_index", last)])
        # NaN is picked by both ops, the first one (or the last one).
        x = typed(g, (3, 6), "float32")
        x[0, 2] = x[0, 4] = np.nan
        x[2, 5] = np.nan
        for last in (0, 1):
            add_typed(g, op, [x], arg(x, 1, op, True, bool(last)), "float32",
                      [I("axis", 1), I("select_last_index", last)], tag="nan")
    # uint64 and int64 extremes compare exactly.
    x = np.array([[2 ** 64 - 1, 2 ** 64 - 2, 2 ** 63], [1, 0, 2 ** 63 + 1]], np.uint64)
    add_typed(g, "arg_max", [x], arg(x, 1, "arg_max", False, False), "uint64",
              [I("axis", 1), I("keepdims", 0)], tag="extremes")
    x = np.array([[2 ** 62 + 1, 2 ** 62, -2 ** 63]], np.int64)
    add_typed(g, "arg_min", [x], arg(x, 1, "arg_min", True, False), "int64",
              [I("axis", 1)], tag="extremes")


def gen_top_k(g):
    d = g.dim
    shape = (d([2, 3]), d([5, 7]), d([3, 4]))
    for axis in (0, 1, -1, -2):
        n = shape[axis]
        for k in sorted({1, n // 2 + 1, n}):
            for largest in (1, 0):
                x = typed(g, shape, "float32")
                attrs = [I("k", k), I("axis", axis), I("largest", largest)]
                add_typed(g, "top_k", [x], list(top_k(x, k, axis, largest)), "float32",
                          attrs)
    # The default axis (-1) and largest; k = 0.
    x = typed(g, (3, 5), "float32")
    add_typed(g, "top_k", [x], list(top_k(x, 2, -1, True)), "float32", [I("k", 2)])
    add_typed(g, "top_k", [x], list(top_k(x, 0, 1, True)), "float32", [I("k", 0)],
              tag="k0")
    # Ties (small integers): the lower index first; every dtype.
    for dt in DTYPES:
        x = typed(g, (3, 9), dt, -4, 4)
        for largest in (1, 0):
            add_typed(g, "top_k", [x], list(top_k(x, 5, 1, largest)), dt,
                      [I("k", 5), I("axis", 1), I("largest", largest)])
    x = np.array([[2 ** 64 - 1, 5, 2 ** 63, 2 ** 64 - 2]], np.uint64)
    add_typed(g, "top_k", [x], list(top_k(x, 3, 1, True)), "uint64", [I("k", 3)],
              tag="extremes")


def gen_cum_sum(g):
    d = g.dim
    shape = (d([2, 3]), d([3, 5]), d([2, 4]))
    for axis in (0, 1, 2, -1):
        for exclusive in (0, 1):
            for reverse in (0, 1):
                x = typed(g, shape, "float32")
                attrs = [I("axis", axis), I("exclusive", exclusive), I("reverse", reverse)]
                add_typed(g, "cum_sum", [x], cum_sum(x, axis, exclusive, reverse),
                          "float32", attrs)
    for dt in FLOAT_X + INTS:
        x = typed(g, (3, 5), dt, -4, 4)
        for exclusive, reverse in ((0, 0), (1, 1)):
            add_typed(g, "cum_sum", [x], cum_sum(x, 1, exclusive, reverse), dt,
                      [I("axis", 1), I("exclusive", exclusive), I("reverse", reverse)])
    # Integer sums wrap like NumPy's fixed-width integers.
    x = np.array([[100, 100, 100, -100], [-128, -1, 127, 1]], np.int8)
    add_typed(g, "cum_sum", [x], cum_sum(x, 1, 0, 0), "int8", [I("axis", 1)], tag="wrap")
    x = np.array([2 ** 64 - 1, 2, 2 ** 63], np.uint64)
    add_typed(g, "cum_sum", [x], cum_sum(x, 0, 0, 0), "uint64", [I("axis", 0)], tag="wrap")


def generate(g):
    gen_arg(g)
    gen_top_k(g)
    gen_cum_sum(g)
