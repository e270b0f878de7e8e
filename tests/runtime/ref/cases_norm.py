# SPDX-License-Identifier: Apache-2.0
"""NumPy cases of the reduction and normalisation families (docs/ops.md):
every reduce_* op over attribute axes (negative, unsorted, all, none),
keepdims, empty reductions (the identity of each operation), float16 /
float64 and every integer dtype (exact sums and products that wrap like
NumPy's, exact max / min up to uint64, truncated means and norms), bool
max / min; log_softmax and hardmax (ties: the first maximum wins) over every
axis; instance_norm, group_norm, lp_norm (p 1 and 2, zero norms),
mean_variance_norm (default and explicit axes) and lrn (odd, even and unit
sizes, every attribute)."""
import warnings

import numpy as np

from gen_cases import (FLOAT_X, I, INTS, IS, F, UNSIGNED_INTS, add_typed, f32,
                       typed, wide)

FLOATS = ["float32"] + FLOAT_X


def lse(x, axis, keepdims):
    with np.errstate(divide="ignore"):
        return np.log(np.sum(np.exp(x), axis=axis, keepdims=keepdims))


# op -> (NumPy function of a float64 array, input range for floats)
REDUCE = {
    "reduce_sum": (lambda x, a, k: np.sum(x, axis=a, keepdims=k), (-2, 2)),
    "reduce_mean": (lambda x, a, k: np.mean(x, axis=a, keepdims=k), (-2, 2)),
    "reduce_max": (lambda x, a, k: np.max(x, axis=a, keepdims=k, initial=-np.inf), (-2, 2)),
    "reduce_min": (lambda x, a, k: np.min(x, axis=a, keepdims=k, initial=np.inf), (-2, 2)),
    "reduce_prod": (lambda x, a, k: np.prod(x, axis=a, keepdims=k), (0.5, 1.5)),
    "reduce_l1": (lambda x, a, k: np.sum(np.abs(x), axis=a, keepdims=k), (-2, 2)),
    "reduce_l2": (lambda x, a, k: np.sqrt(np.sum(x * x, axis=a, keepdims=k)), (-2, 2)),
    "reduce_log_sum": (lambda x, a, k: np.log(np.sum(x, axis=a, keepdims=k)), (0.1, 2)),
    "reduce_log_sum_exp": (lse, (-4, 4)),
    "reduce_sum_square": (lambda x, a, k: np.sum(x * x, axis=a, keepdims=k), (-2, 2)),
}


def reduce_attrs(axes, keep):
    attrs = []
    if axes is not None:
        attrs.append(IS("axes", axes))
    if keep is not None:
        attrs.append(I("keepdims", keep))
    return attrs


def gen_reduce_float(g):
    d = g.dim
    for op, (fn, (lo, hi)) in REDUCE.items():
        shape = (d([2, 3]), d([2, 3, 5]), d([2, 3]))
        for axes, keep in (([1], None), ([0, 2], 0), ([-1], 1), (None, 0), ([2, 0], 1),
                           ([], 1), ([-3, -2, -1], 0)):
            x = typed(g, shape, "float32", lo, hi)
            ax = None if not axes else tuple(axes)
            k = True if keep is None else bool(keep)
            with np.errstate(divide="ignore"):
                add_typed(g, op, [x], f32(fn(wide(x), ax, k)), "float32",
                          reduce_attrs(axes, keep))
        # The empty reduction: the identity of the operation.
        x = typed(g, (d([2, 3]), 0, 2), "float32")
        with np.errstate(divide="ignore", invalid="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # the mean of nothing
            exp = fn(wide(x), (1,), False)
        add_typed(g, op, [x], f32(exp), "float32", reduce_attrs([1], 0), tag="empty")
        for dt in FLOAT_X:
            x = typed(g, (3, 4, 2), dt, lo, hi)
            add_typed(g, op, [x], fn(wide(x), (0, 2), True).astype(dt), dt,
                      reduce_attrs([0, 2], None))
    # NaN wins in max and min, as in NumPy.
    x = typed(g, (3, 5), "float32")
    x[1, 2] = np.nan
    add_typed(g, "reduce_max", [x], np.max(x, axis=1), "float32", reduce_attrs([1], 0), tag="nan")
    add_typed(g, "reduce_min", [x], np.min(x, axis=0), "float32", reduce_attrs([0], 0), tag="nan")


def int_reduce(op, x, axes, dt):
    """The integer result ONNX's reference gives: exact (wrapping) sums and
    products, exact max / min, float64 means and norms truncated."""
    acc = np.uint64 if dt in UNSIGNED_INTS else np.int64
    a = x.astype(acc)
    with np.errstate(over="ignore"):
        if op == "reduce_sum":
            r = np.sum(a, axis=axes, dtype=acc)
        elif op == "reduce_prod":
            r = np.prod(a, axis=axes, dtype=acc)
        elif op == "reduce_l1":
            r = np.sum(np.abs(a) if acc == np.int64 else a, axis=axes, dtype=acc)
        elif op == "reduce_sum_square":
            r = np.sum(a * a, axis=axes, dtype=acc)
        elif op == "reduce_max":
            r = np.max(x, axis=axes)
        elif op == "reduce_min":
            r = np.min(x, axis=axes)
        else:
            r = np.trunc(REDUCE[op][0](wide(x), axes, False))
    return r.astype(dt)


def gen_reduce_int(g):
    for op in REDUCE:
        # Ranges that keep truncated float results inside the smallest dtype.
        lo, hi = {"reduce_log_sum": (1, 20), "reduce_log_sum_exp": (0, 4),
                  "reduce_l2": (-4, 4), "reduce_prod": (-5, 5)}.get(op, (-100, 100))
        for dt in INTS:
            x = typed(g, (3, 4, 2), dt, lo, hi)
            add_typed(g, op, [x], int_reduce(op, x, (1,), dt), dt,
                      reduce_attrs([1], 0))
    # Wrapping: an int8 sum far outside int8, an int32 product past 2^31.
    x = np.array([[100, 100, 100, -7], [-128, -128, 5, 3]], np.int8)
    add_typed(g, "reduce_sum", [x], int_reduce("reduce_sum", x, (1,), "int8"), "int8",
              reduce_attrs([1], 0), tag="wrap")
    x = np.array([[65536, 65537, 3], [-70000, 80000, 9]], np.int32)
    add_typed(g, "reduce_prod", [x], int_reduce("reduce_prod", x, (1,), "int32"), "int32",
              reduce_attrs([1], 0), tag="wrap")
    # uint64 extremes compare exactly; empty max / min give the dtype's limits.
    x = np.array([[2 ** 64 - 1, 2 ** 63, 1], [2 ** 63 - 1, 2 ** 63 + 5, 0]], np.uint64)
    for op, fn in (("reduce_max", np.max), ("reduce_min", np.min)):
        add_typed(g, op, [x], fn(x, axis=1), "uint64", reduce_attrs([1], 0), tag="extremes")
        for dt in ("int8", "uint16", "int64", "uint64"):
            info = np.iinfo(dt)
            e = np.full((3,), info.min if op == "reduce_max" else info.max, dt)
            add_typed(g, op, [typed(g, (3, 0), dt)], e, dt, reduce_attrs([1], 0),
                      tag="empty")
        xb = typed(g, (4, 3), "bool")
        add_typed(g, op, [xb], (np.any if op == "reduce_max" else np.all)(xb, axis=0),
                  "bool", reduce_attrs([0], 0))


def axis_view(x, axis):
    return np.moveaxis(x, axis, -1)


def hardmax(x, axis):
    idx = np.argmax(x, axis=axis)
    y = np.zeros_like(x)
    np.put_along_axis(y, np.expand_dims(idx, axis), 1, axis)
    return y


def gen_softmax_family(g):
    d = g.dim
    for shape, axis in (((d(), d(), d()), None), ((d(), d(), d()), 0), ((d(), d(), d()), 1),
                        ((d(), d()), -2), ((d([2, 3, 5, 7]),), 0), ((2, 1, d()), 1)):
        ax = -1 if axis is None else axis
        attrs = [] if axis is None else [I("axis", axis)]
        x = typed(g, shape, "float32", -6, 6)
        xd = wide(x)
        mx = xd.max(axis=ax, keepdims=True)
        ls = xd - mx - np.log(np.exp(xd - mx).sum(axis=ax, keepdims=True))
        add_typed(g, "log_softmax", [x], f32(ls), "float32", attrs)
        # Few distinct values: ties, where the first maximum wins.
        x = np.round(typed(g, shape, "float32", -2, 2))
        add_typed(g, "hardmax", [x], hardmax(x, ax), "float32", attrs)
    x = typed(g, (2, 5), "float32", -1000, 1000)  # large magnitudes stay finite
    xd = wide(x)
    ls = xd - xd.max(1, keepdims=True)
    ls -= np.log(np.exp(ls).sum(1, keepdims=True))
    add_typed(g, "log_softmax", [x], f32(ls), "float32", [I("axis", 1)], tag="large")
    for dt in FLOAT_X:
        x = typed(g, (2, 3, 4), dt)
        xd = wide(x)
        ls = xd - xd.max(1, keepdims=True)
        ls -= np.log(np.exp(ls).sum(1, keepdims=True))
        add_typed(g, "log_softmax", [x], ls.astype(dt), dt, [I("axis", 1)])
        add_typed(g, "hardmax", [x], hardmax(x, -1), dt)


def group_norm(x, scale, bias, groups, eps):
    n, c = x.shape[:2]
    xg = wide(x).reshape(n, groups, -1)
    mean = xg.mean(axis=2, keepdims=True)
    var = ((xg - mean) ** 2).mean(axis=2, keepdims=True)
    y = ((xg - mean) / np.sqrt(var + eps)).reshape(x.shape)
    sh = (1, c) + (1,) * (x.ndim - 2)
    return y * wide(scale).reshape(sh) + wide(bias).reshape(sh)


def gen_group_norms(g):
    d = g.dim
    for shape, eps in (((2, d([2, 3]), d(), d()), None), ((1, 4, d([5, 7])), 1e-2),
                       ((d([2, 3]), 3), 0.5), ((2, 2, 1, 3, 2), None)):
        x = typed(g, shape, "float32")
        c = shape[1]
        scale, bias = typed(g, (c,), "float32"), typed(g, (c,), "float32")
        attrs = [] if eps is None else [F("epsilon", eps)]
        e = 1e-5 if eps is None else eps
        add_typed(g, "instance_norm", [x, ("const", scale), bias],
                  f32(group_norm(x, scale, bias, c, e)), "float32", attrs)
    for shape, groups, eps in (((2, 6, d(), d()), 3, None), ((1, 8, d([5, 7])), 2, 1e-3),
                               ((2, 4, 3), 4, None), ((3, 6), 1, 0.1),
                               ((1, 4, 2, 2, 3), 2, None)):
        x = typed(g, shape, "float32")
        c = shape[1]
        scale, bias = typed(g, (c,), "float32"), typed(g, (c,), "float32")
        attrs = [I("num_groups", groups)] + ([] if eps is None else [F("epsilon", eps)])
        e = 1e-5 if eps is None else eps
        add_typed(g, "group_norm", [x, scale, ("const", bias)],
                  f32(group_norm(x, scale, bias, groups, e)), "float32", attrs)
    for dt in FLOAT_X:
        x = typed(g, (2, 4, 3, 2), dt)
        scale, bias = typed(g, (4,), dt), typed(g, (4,), dt)
        add_typed(g, "instance_norm", [x, scale, bias],
                  group_norm(x, scale, bias, 4, 1e-5).astype(dt), dt)
        add_typed(g, "group_norm", [x, scale, bias],
                  group_norm(x, scale, bias, 2, 1e-5).astype(dt), dt, [I("num_groups", 2)])


def lp_norm(x, axis, p):
    xd = wide(x)
    n = np.sum(np.abs(xd), axis=axis, keepdims=True) if p == 1 else \
        np.sqrt(np.sum(xd * xd, axis=axis, keepdims=True))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n == 0, 0.0, xd / n)


def mvn(x, axes):
    xd = wide(x)
    mean = xd.mean(axis=axes, keepdims=True)
    std = np.sqrt(((xd - mean) ** 2).mean(axis=axes, keepdims=True))
    return (xd - mean) / (std + 1e-9)


def lrn(x, size, alpha, beta, bias):
    xd = wide(x)
    c = x.shape[1]
    sq = np.zeros_like(xd)
    for ch in range(c):
        lo, hi = max(0, ch - (size - 1) // 2), min(c - 1, ch + size - 1 - (size - 1) // 2)
        sq[:, ch] = (xd[:, lo:hi + 1] ** 2).sum(axis=1)
    return xd / (bias + alpha / size * sq) ** beta


def gen_other_norms(g):
    d = g.dim
    for shape, axis, p in (((d(), d(), d([2, 3, 5])), None, None), ((d(), d([3, 5])), 0, 1),
                           ((d(), d(), d()), 1, 2), ((4, 3), -2, 1)):
        x = typed(g, shape, "float32")
        x[0] = 0  # a zero norm along some axis gives zeros
        ax = -1 if axis is None else axis
        pp = 2 if p is None else p
        attrs = ([] if axis is None else [I("axis", axis)]) + ([] if p is None else [I("p", p)])
        add_typed(g, "lp_norm", [x], f32(lp_norm(x, ax, pp)), "float32", attrs)
    for shape, axes in (((2, d(), d(), d()), None), ((d(), d(), d()), [1]),
                        ((2, 3, d(), 2), [0, 1, 2, 3]), ((2, 3, d(), 2), [-1, -2]),
                        ((d(), d()), [])):
        x = typed(g, shape, "float32")
        ax = (0, 2, 3) if axes is None else tuple(axes)
        add_typed(g, "mean_variance_norm", [x], f32(mvn(x, ax)), "float32",
                  [] if axes is None else [IS("axes", axes)])
    for shape, size, alpha, beta, bias in (((2, d([5, 7]), d(), d()), 3, None, None, None),
                                           ((1, 6, d()), 5, 0.02, 0.5, 2.0),
                                           ((2, 4, 3, 2), 2, 0.1, 0.9, 1.5),
                                           ((1, 3, 2, 2), 1, 1e-3, 0.75, 0.5),
                                           ((1, 3, 5), 8, 0.05, 1.0, 1.0)):
        x = typed(g, shape, "float32")
        attrs = [I("size", size)]
        for name, v in (("alpha", alpha), ("beta", beta), ("bias", bias)):
            if v is not None:
                attrs.append(F(name, v))
        exp = lrn(x, size, 1e-4 if alpha is None else alpha, 0.75 if beta is None else beta,
                  1.0 if bias is None else bias)
        add_typed(g, "lrn", [x], f32(exp), "float32", attrs)
    for dt in FLOAT_X:
        x = typed(g, (2, 5, 3, 2), dt)
        add_typed(g, "lp_norm", [x], lp_norm(x, 1, 2).astype(dt), dt, [I("axis", 1)])
        add_typed(g, "mean_variance_norm", [x], mvn(x, (0, 2, 3)).astype(dt), dt)
        add_typed(g, "lrn", [x], lrn(x, 3, 1e-4, 0.75, 1.0).astype(dt), dt, [I("size", 3)])


def generate(g):
    gen_reduce_float(g)
    gen_reduce_int(g)
    gen_softmax_family(g)
    gen_group_norms(g)
    gen_other_norms(g)
