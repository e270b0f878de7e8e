# SPDX-License-Identifier: Apache-2.0
"""NumPy cases of the elementwise family's functions, activations, mod,
prelu, clip, pow on integers and the ops with any number of inputs (min,
max, sum, mean): every dtype the op table gives them, with broadcasting,
fresh random data and the edge values each op defines (ties of round, NaN
through min/max, mod signs, shifts of integer clip bounds)."""
import math

import numpy as np

from gen_cases import (ALL, F, FLOAT_X, I, INTS, S, SIGNED_INTS, UNSIGNED_INTS,
                       add_typed, typed, wide)

FLOATS = ["float32"] + FLOAT_X

SELU_ALPHA = 1.67326319217681884765625
SELU_GAMMA = 1.05070102214813232421875


def softplus(x):
    return np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))


# op, NumPy function (in float64), input range.
FUNCTIONS = [
    ("log", np.log, (0.05, 5.0)),
    ("floor", np.floor, (-4.0, 4.0)),
    ("ceil", np.ceil, (-4.0, 4.0)),
    ("reciprocal", lambda x: 1.0 / x, None),
    ("sin", np.sin, (-4.0, 4.0)),
    ("cos", np.cos, (-4.0, 4.0)),
    ("tan", np.tan, (-1.3, 1.3)),
    ("asin", np.arcsin, (-0.99, 0.99)),
    ("acos", np.arccos, (-0.99, 0.99)),
    ("atan", np.arctan, (-6.0, 6.0)),
    ("sinh", np.sinh, (-4.0, 4.0)),
    ("cosh", np.cosh, (-4.0, 4.0)),
    ("asinh", np.arcsinh, (-6.0, 6.0)),
    ("acosh", np.arccosh, (1.0, 6.0)),
    ("atanh", np.arctanh, (-0.95, 0.95)),
    ("softplus", softplus, (-12.0, 12.0)),
    ("softsign", lambda x: x / (1 + np.abs(x)), (-5.0, 5.0)),
    ("mish", lambda x: x * np.tanh(softplus(x)), (-6.0, 6.0)),
]


def away_from_zero(g, shape, dt):
    mag = g.rng.uniform(0.25, 3.0, size=shape)
    return (mag * g.rng.choice([-1.0, 1.0], size=shape)).astype(dt)


def gen_functions(g):
    d = g.dim
    # Every float dtype, then float32 in other shapes (a scalar, 1-D).
    cases = [(dt, (d([2, 3]), d([3, 5]))) for dt in FLOATS]
    cases += [("float32", ()), ("float32", (d([7, 11, 13]),))]
    for op, fn, rng in FUNCTIONS:
        for k, (dt, shape) in enumerate(cases):
            x = away_from_zero(g, shape, dt) if rng is None else typed(g, shape, dt, *rng)
            add_typed(g, op, [x], fn(wide(x)).astype(dt), dt, tag=str(k))
    # sinh, asinh, atanh, softplus and mish near 0, where naive formulas
    # cancel.
    for op, fn, _ in FUNCTIONS:
        if op in ("sinh", "asinh", "atanh", "mish", "softsign", "sin", "tan", "atan"):
            x = typed(g, (d(), d()), "float32", -1e-3, 1e-3)
            add_typed(g, op, [x], fn(wide(x)).astype(np.float32), "float32", tag="small")
    # round: halves go to the even neighbour (NumPy's round).
    for dt in FLOATS:
        x = typed(g, (4, d([3, 5])), dt, -4.0, 4.0)
        x.flat[::2] = (g.rng.integers(-9, 9, size=x.flat[::2].shape) + 0.5).astype(dt)
        add_typed(g, "round", [x], np.round(wide(x)).astype(dt), dt)
    # sign: every numeric dtype, zeros included.
    for dt in FLOATS + INTS:
        x = typed(g, (d([2, 3]), d([5, 7])), dt, -100, 100)
        x.flat[::3] = 0
        add_typed(g, "sign", [x], np.sign(x).astype(dt), dt)


def gen_activations(g):
    d = g.dim
    sh = (d([2, 3]), d([3, 5]), d([5, 7]))
    for dt in FLOATS:
        x = typed(g, sh, dt, -4.0, 4.0)
        w = wide(x)
        add_typed(g, "hard_sigmoid", [x], np.clip(0.2 * w + 0.5, 0, 1).astype(dt), dt)
        add_typed(g, "elu", [x], np.where(w < 0, np.expm1(w), w).astype(dt), dt)
        add_typed(g, "selu", [x], (SELU_GAMMA * np.where(w <= 0, SELU_ALPHA * np.expm1(w), w)).astype(dt), dt)
        add_typed(g, "celu", [x], np.where(w > 0, w, np.expm1(w)).astype(dt), dt)
        add_typed(g, "thresholded_relu", [x], np.where(w > 1.0, w, 0).astype(dt), dt)
        add_typed(g, "shrink", [x], np.where(w < -0.5, w, np.where(w > 0.5, w, 0)).astype(dt), dt)
    # Explicit attributes.
    x = typed(g, sh, "float32", -4.0, 4.0)
    w = wide(x)
    a, b = float(g.rng.uniform(0.1, 0.5)), float(g.rng.uniform(0.2, 0.8))
    add_typed(g, "hard_sigmoid", [x], np.clip(a * w + b, 0, 1).astype(np.float32), "float32",
              (F("alpha", a), F("beta", b)), tag="attrs")
    a = float(g.rng.uniform(0.5, 2.0))
    add_typed(g, "elu", [x], np.where(w < 0, a * np.expm1(w), w).astype(np.float32), "float32",
              (F("alpha", a),), tag="attrs")
    add_typed(g, "celu", [x], np.where(w > 0, w, a * np.expm1(w / a)).astype(np.float32),
              "float32", (F("alpha", a),), tag="attrs")
    add_typed(g, "thresholded_relu", [x], np.where(w > a, w, 0).astype(np.float32), "float32",
              (F("alpha", a),), tag="attrs")
    s_a, s_g = float(g.rng.uniform(1.0, 2.0)), float(g.rng.uniform(0.5, 1.5))
    add_typed(g, "selu", [x], (s_g * np.where(w <= 0, s_a * np.expm1(w), w)).astype(np.float32),
              "float32", (F("alpha", s_a), F("gamma", s_g)), tag="attrs")
    lambd, bias = float(g.rng.uniform(0.5, 1.5)), float(g.rng.uniform(0.0, 0.5))
    add_typed(g, "shrink", [x],
              np.where(w < -lambd, w + bias, np.where(w > lambd, w - bias, 0)).astype(np.float32),
              "float32", (F("bias", bias), F("lambd", lambd)), tag="attrs")
    # Integer shrink computes in double and truncates (ONNX's reference);
    # bias <= lambd keeps unsigned results non-negative.
    for dt in INTS:
        x = typed(g, sh, dt, -20, 20)
        w = wide(x)
        exp = np.where(w < -1.5, w + 1.25, np.where(w > 1.5, w - 1.25, 0))
        add_typed(g, "shrink", [x], np.trunc(exp).astype(dt), dt,
                  (F("bias", 1.25), F("lambd", 1.5)))


def gen_prelu(g):
    d = g.dim
    n, c, h, w = d([1, 2]), d([3, 5]), d([2, 3]), d([3, 7])
    for slope_shape in ((c, 1, 1), (), (n, c, h, w), (w,)):
        x, s = typed(g, (n, c, h, w), "float32"), typed(g, slope_shape, "float32", 0.05, 0.5)
        add_typed(g, "prelu", [x, s], np.where(wide(x) < 0, wide(s) * wide(x), wide(x)).astype(np.float32),
                  "float32", tag="slope%d" % len(slope_shape))
    for dt in FLOAT_X + INTS:
        x, s = typed(g, (d(), c), dt, -50, 50), typed(g, (c,), dt, -3, 3)
        with np.errstate(over="ignore"):
            exp = np.where(x < 0, s * x, x).astype(dt) if dt in INTS else \
                np.where(wide(x) < 0, wide(s) * wide(x), wide(x)).astype(dt)
        add_typed(g, "prelu", [x, s], exp, dt)


def gen_mod(g):
    d = g.dim
    sh = (d([2, 3]), d([3, 5]))
    for dt in FLOATS:
        a, b = typed(g, sh, dt, -10.0, 10.0), away_from_zero(g, (sh[1],), dt)
        add_typed(g, "mod", [a, b], np.fmod(wide(a), wide(b)).astype(dt), dt, (I("fmod", 1),),
                  tag="fmod")
        add_typed(g, "mod", [a, b], np.mod(wide(a), wide(b)).astype(dt), dt, tag="mod")
    for dt in INTS:
        a, b = typed(g, sh, dt, -100, 100), typed(g, (sh[1],), dt, -9, 9)
        b[b == 0] = 7
        add_typed(g, "mod", [a, b], np.fmod(a, b), dt, (I("fmod", 1),), tag="fmod")
        add_typed(g, "mod", [a, b], np.mod(a, b), dt, tag="mod")
    # The signs of every combination, and MIN % -1.
    a = np.array([7, -7, 7, -7, 6, -6, -128, 5], np.int8)
    b = np.array([3, 3, -3, -3, 3, -3, -1, 1], np.int8)
    add_typed(g, "mod", [a, b], np.mod(a, b), "int8", tag="signs")
    add_typed(g, "mod", [a, b], np.fmod(a, b), "int8", (I("fmod", 1),), tag="signs_fmod")


def gen_variadic(g):
    d = g.dim
    a, b, c = d([2, 3]), d([3, 5]), d([5, 7])
    shapes = [[(a, b, c)], [(a, b, c), (b, c)], [(a, 1, c), (1, b, 1), (c,)],
              [(), (a, b), (b,), (1, 1)]]
    for op, fn in (("min", np.minimum), ("max", np.maximum), ("sum", np.add),
                   ("mean", None)):
        for dt in (FLOATS if op in ("sum", "mean") else FLOATS + INTS):
            for k, group in enumerate(shapes):
                if dt != "float32" and k not in (1, 2):
                    continue
                xs = [typed(g, s, dt, -100, 100) for s in group]
                if op == "mean":
                    exp = sum(wide(x) for x in xs) / len(xs)
                elif op == "sum":
                    exp = sum(wide(x) for x in xs)
                else:
                    exp = xs[0]
                    for x in xs[1:]:
                        exp = fn(exp, x)
                shape = np.broadcast_shapes(*[x.shape for x in xs])
                add_typed(g, op, xs, np.broadcast_to(exp, shape).astype(dt), dt,
                          tag="%d_inputs" % len(xs))
    # NaN wins min and max, from any input.
    x, y = typed(g, (a, b), "float32"), typed(g, (a, b), "float32")
    x.flat[::4], y.flat[1::4] = np.nan, np.nan
    add_typed(g, "min", [x, y], np.minimum(x, y), "float32", tag="nan")
    add_typed(g, "max", [x, y], np.maximum(x, y), "float32", tag="nan")
    # Eight inputs (more than one Vulkan dispatch binds: placed elsewhere).
    xs = [typed(g, (a, b), "float32") for _ in range(8)]
    add_typed(g, "sum", xs, sum(wide(x) for x in xs).astype(np.float32), "float32", tag="8_inputs")
    # An empty broadcast.
    x, y = typed(g, (0, b), "float32"), typed(g, (b,), "float32")
    add_typed(g, "max", [x, y], np.maximum(x, y), "float32", tag="empty")
    # Ranks growing from the first input on: the shape the inputs before one
    # broadcast to is widened by the later, higher-rank inputs.
    xs = [typed(g, s, "float32") for s in ((c,), (b, c), (a, 1, c))]
    shape = np.broadcast_shapes(*[x.shape for x in xs])
    add_typed(g, "max", xs, np.broadcast_to(np.maximum(np.maximum(xs[0], xs[1]), xs[2]),
                                            shape).astype(np.float32), "float32",
              tag="rank_grows")
    add_typed(g, "sum", xs, (wide(xs[0]) + wide(xs[1]) + wide(xs[2])).astype(np.float32),
              "float32", tag="rank_grows")


def gen_clip(g):
    d = g.dim
    sh = (d([2, 3]), d([5, 7]))
    # Bounds as inputs (runtime or constant), one of them omitted.
    x = typed(g, sh, "float32")
    lo, hi = np.array(-0.5, np.float32), np.array(1.25, np.float32)
    add_typed(g, "clip", [x, lo, hi], np.clip(x, lo, hi), "float32", tag="inputs")
    add_typed(g, "clip", [x, ("const", lo), ("const", hi)], np.clip(x, lo, hi), "float32",
              tag="const_inputs")
    add_typed(g, "clip", [x, None, hi], np.minimum(x, hi), "float32", tag="max_only")
    add_typed(g, "clip", [x, lo], np.maximum(x, lo), "float32", tag="min_only")
    add_typed(g, "clip", [x, np.array([0.7], np.float32), np.array([[0.2]], np.float32)],
              np.full(sh, 0.2, np.float32), "float32", tag="min_above_max")
    for dt in INTS:
        x = typed(g, sh, dt, -100, 100)
        lo, hi = typed(g, (), dt, -20, 0), typed(g, (), dt, 0, 20)
        add_typed(g, "clip", [x, lo, hi], np.clip(x, lo, hi), dt, tag="inputs")
        # Attribute bounds: min rounds up, max down, to the dtype's range.
        info = np.iinfo(dt)
        exp = np.clip(wide(x), max(math.ceil(-7.5), info.min), min(math.floor(9.5), info.max))
        add_typed(g, "clip", [x], exp.astype(dt), dt, (F("min", -7.5), F("max", 9.5)),
                  tag="attrs")
        add_typed(g, "clip", [x], x.copy(), dt, tag="defaults")


def int_pow(base, e, dt):
    """Wrapping integer power, 1 / b ** -e truncated for negative e."""
    bits = np.dtype(dt).itemsize * 8
    out = []
    for b, k in zip(base.ravel().tolist(), e.ravel().tolist()):
        if k < 0:
            r = 1 if b == 1 else (-1 if k % 2 else 1) if b == -1 else 0
        else:
            r = pow(b, k, 1 << bits)
        out.append(r % (1 << bits))
    r = np.array(out, dtype=np.uint64).astype(np.dtype(dt).str.replace("i", "u"))
    return r.view(dt).reshape(base.shape)


def gen_pow(g):
    d = g.dim
    sh = (d([2, 3]), d([3, 5]))
    for dt in INTS:
        a, b = typed(g, sh, dt, -7, 7), typed(g, (sh[1],), dt, 0, 9)
        ab, bb = np.broadcast_arrays(a, b)
        add_typed(g, "pow", [a, b], int_pow(ab, bb, dt), dt, tag="int_exponent")
        # A float exponent: pow in double, truncated (ONNX's reference).
        a = typed(g, sh, dt, 1, 9)
        e = typed(g, (sh[1],), "float32", 0.0, 2.5)
        add_typed(g, "pow", [a, e], np.trunc(np.power(wide(a), wide(e))).astype(dt), dt,
                  tag="float_exponent")
    a = np.array([1, -1, -1, 2, -3, 5], np.int32)
    b = np.array([-3, -3, -2, -1, -2, 0], np.int64)
    add_typed(g, "pow", [a, b], int_pow(a, b, "int32"), "int32", tag="negative_exponent")


def generate(g):
    gen_functions(g)
    gen_activations(g)
    gen_prelu(g)
    gen_mod(g)
    gen_variadic(g)
    gen_clip(g)
    gen_pow(g)
