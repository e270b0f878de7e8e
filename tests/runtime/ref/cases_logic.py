# SPDX-License-Identifier: Apache-2.0
"""NumPy cases of the logic family: comparisons on every dtype (NaN
included), and/or/xor/not on bools, where choosing between any dtype's
values, the bitwise ops and shifts on integers, is_nan and is_inf. Bool
results are compared byte for byte."""
import numpy as np

from gen_cases import ALL, FLOAT_X, I, INTS, S, UNSIGNED_INTS, add_typed, typed

FLOATS = ["float32"] + FLOAT_X
NUMERIC = FLOATS + INTS

COMPARISONS = [("equal", np.equal), ("less", np.less), ("greater", np.greater),
               ("less_or_equal", np.less_equal), ("greater_or_equal", np.greater_equal)]


def gen_comparisons(g):
    d = g.dim
    a, b = d([2, 3]), d([3, 5])
    for op, fn in COMPARISONS:
        for dt in (ALL if op == "equal" else NUMERIC):
            # Few distinct values, so that equality happens.
            x, y = typed(g, (a, b), dt, -3, 3), typed(g, (b,), dt, -3, 3)
            if dt in FLOATS:
                x, y = np.round(x).astype(dt), np.round(y).astype(dt)
            add_typed(g, op, [x, y], fn(x, y), dt)
        # NaN is unordered: every comparison with it is false.
        x, y = typed(g, (a, 1, b), "float32", -2, 2), typed(g, (d([2, 7]), 1), "float32", -2, 2)
        x.flat[::3] = np.nan
        y.flat[0] = x.flat[1]
        add_typed(g, op, [x, y], fn(x, y), "float32", tag="nan_bcast")
        # 64-bit extremes compare exactly.
        x = np.array([np.iinfo(np.uint64).max, 2 ** 63, 1, 0], np.uint64)
        y = np.array([np.iinfo(np.uint64).max - 1, 2 ** 63 - 1, 1, 2 ** 63], np.uint64)
        add_typed(g, op, [x, y], fn(x, y), "uint64", tag="extremes")


def gen_logic(g):
    d = g.dim
    a, b, c = d([2, 3]), d([3, 5]), d([5, 7])
    for op, fn in (("and", np.logical_and), ("or", np.logical_or), ("xor", np.logical_xor)):
        for sa, sb in (((a, b), (a, b)), ((a, 1, c), (b, 1)), ((), (c,))):
            x, y = typed(g, sa, "bool"), typed(g, sb, "bool")
            add_typed(g, op, [x, y], fn(x, y), "bool", tag="%dd" % len(sa))
    for shape in ((a, b, c), ()):
        x = typed(g, shape, "bool")
        add_typed(g, "not", [x], np.logical_not(x), "bool")


def gen_where(g):
    d = g.dim
    a, b, c = d([2, 3]), d([3, 5]), d([5, 7])
    for dt in ALL:
        cond = typed(g, (a, 1, c), "bool")
        x, y = typed(g, (b, 1), dt, -100, 100), typed(g, (c,), dt, -100, 100)
        add_typed(g, "where", [cond, x, y], np.where(cond, x, y), dt)
    cond, x, y = typed(g, (a, b), "bool"), typed(g, (a, b), "float32"), typed(g, (), "float32")
    x.flat[::5] = np.nan
    add_typed(g, "where", [cond, x, y], np.where(cond, x, y), "float32", tag="nan_scalar")
    cond, x, y = typed(g, (0, b), "bool"), typed(g, (b,), "int64"), typed(g, (1,), "int64")
    add_typed(g, "where", [cond, x, y], np.where(cond, x, y), "int64", tag="empty")
    # A condition of lower rank than the values (a causal [t, t] mask over
    # [batch, heads, t, t] scores).
    cond = typed(g, (b, c), "bool")
    x, y = typed(g, (a, 1, b, c), "float32"), typed(g, (1, d([2, 4]), 1, c), "float32")
    add_typed(g, "where", [cond, x, y], np.where(cond, x, y), "float32", tag="low_rank_cond")


def gen_bitwise(g):
    d = g.dim
    a, b = d([2, 3]), d([3, 5])
    for dt in INTS:
        info = np.iinfo(dt)
        x = g.rng.integers(info.min, info.max, size=(a, b), endpoint=True, dtype=dt)
        y = g.rng.integers(info.min, info.max, size=(b,), endpoint=True, dtype=dt)
        add_typed(g, "bitwise_and", [x, y], np.bitwise_and(x, y), dt)
        add_typed(g, "bitwise_or", [x, y], np.bitwise_or(x, y), dt)
        add_typed(g, "bitwise_xor", [x, y], np.bitwise_xor(x, y), dt)
        add_typed(g, "bitwise_not", [x], np.invert(x), dt)
    for dt in UNSIGNED_INTS:
        bits = np.iinfo(dt).bits
        info = np.iinfo(dt)
        x = g.rng.integers(0, info.max, size=(a, b), endpoint=True, dtype=dt)
        # Shifts up to past the width, which give 0.
        y = g.rng.integers(0, bits + 3, size=(b,), dtype=dt)
        y[0] = bits
        add_typed(g, "bit_shift", [x, y], np.left_shift(x, y), dt,
                  (S("direction", "LEFT"),), tag="left")
        add_typed(g, "bit_shift", [x, y], np.right_shift(x, y), dt,
                  (S("direction", "RIGHT"),), tag="right")


def gen_classify(g):
    d = g.dim
    for dt in FLOATS:
        x = typed(g, (d([2, 3]), d([5, 7])), dt)
        x.flat[::4] = np.nan
        x.flat[1::4] = np.inf
        x.flat[2::8] = -np.inf
        add_typed(g, "is_nan", [x], np.isnan(x), dt)
        add_typed(g, "is_inf", [x], np.isinf(x), dt)
        add_typed(g, "is_inf", [x], np.isneginf(x), dt, (I("detect_positive", 0),),
                  tag="negative")
        add_typed(g, "is_inf", [x], np.isposinf(x), dt, (I("detect_negative", 0),),
                  tag="positive")


def generate(g):
    gen_comparisons(g)
    gen_logic(g)
    gen_where(g)
    gen_bitwise(g)
    gen_classify(g)
