#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the ref conformance cases: for every op, several single-node graphs
with fresh random inputs and the expected output, computed here with NumPy
(independently of vkpipe), following docs/ops.md.

  gen_cases.py OUT_DIR      # writes OUT_DIR/manifest.json and *.bin

The seed comes from $VKPIPE_TEST_SEED when set, else is fresh; it is printed
and stored in the manifest so a failure can be reproduced.

Manifest: {"seed": "S" (a string: it may exceed a double), "dtypes": [the
dtypes this generator writes], "cases": [{"name", "op", "attrs": [[name, kind, value]],
"inputs": [{"name", "dtype", "shape", "file", "constant"} or {"omitted": true}],
"output": {"dtype", "shape", "file"}, "rtol", "atol"}]}; a node with several
outputs has them all in "outputs" (a list of the same), "output" being the
first. Files hold raw little-endian, row-major element data.
"""
import glob
import importlib
import json
import math
import os
import secrets
import sys

import numpy as np

DTYPES = {"float32": "<f4", "float16": "<f2", "int32": "<i4", "int64": "<i8",
          "float64": "<f8", "int16": "<i2", "int8": "|i1", "uint64": "<u8",
          "uint32": "<u4", "uint16": "<u2", "uint8": "|u1", "bool": "|b1"}
FLOAT_X = ["float16", "float64"]       # float32 has its own cases above
SIGNED_INTS = ["int8", "int16", "int32", "int64"]
UNSIGNED_INTS = ["uint8", "uint16", "uint32", "uint64"]
INTS = SIGNED_INTS + UNSIGNED_INTS
ALL = ["float32"] + FLOAT_X + INTS + ["bool"]
PRIMES = [1, 2, 3, 5, 7, 11, 13]


class Gen:
    def __init__(self, out_dir, seed):
        self.out_dir = out_dir
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self.cases = []

    # --- random data ---------------------------------------------------------
    def dim(self, choices=PRIMES):
        return int(self.rng.choice(choices))

    def f32(self, shape, lo=-2.0, hi=2.0):
        return self.rng.uniform(lo, hi, size=shape).astype(np.float32)

    def away_from_zero(self, shape, lo=0.5, hi=2.0):
        mag = self.rng.uniform(lo, hi, size=shape)
        sign = self.rng.choice([-1.0, 1.0], size=shape)
        return (mag * sign).astype(np.float32)

    def ints(self, shape, dtype, lo=-50, hi=50):
        return self.rng.integers(lo, hi, size=shape, endpoint=True).astype(dtype)

    # --- recording -----------------------------------------------------------
    def add(self, op, inputs, expected, attrs=(), tag="", rtol=1e-5, atol=1e-6):
        """inputs: list of np arrays, None (omitted), or ("const", array);
        expected: an array, or a list of arrays for a node with several
        outputs."""
        name = "%s_%d%s" % (op, len(self.cases), ("_" + tag) if tag else "")
        recorded = []
        for i, x in enumerate(inputs):
            if x is None:
                recorded.append({"omitted": True})
                continue
            constant = isinstance(x, tuple)
            arr = x[1] if constant else x
            dt = str(arr.dtype)
            fname = "%s.in%d.bin" % (name, i)
            self.write(fname, arr, dt)
            recorded.append({"name": "x%d" % i, "dtype": dt,
                             "shape": list(arr.shape), "file": fname,
                             "constant": constant})
        several = isinstance(expected, (list, tuple))
        outputs = []
        for k, out in enumerate(expected if several else [expected]):
            dt = str(out.dtype)
            fname = "%s.out%s.bin" % (name, k if several else "")
            self.write(fname, out, dt)
            outputs.append({"dtype": dt, "shape": list(out.shape), "file": fname})
        case = {"name": name, "op": op, "attrs": [list(a) for a in attrs],
                "inputs": recorded, "output": outputs[0], "rtol": rtol, "atol": atol}
        if several:
            case["outputs"] = outputs
        self.cases.append(case)

    def write(self, fname, arr, dt):
        data = np.ascontiguousarray(arr).astype(DTYPES[dt]).tobytes()
        with open(os.path.join(self.out_dir, fname), "wb") as f:
            f.write(data)


def f32(x):
    return np.asarray(x, dtype=np.float64).astype(np.float32)


def F(name, v):
    return (name, "float", float(v))


def I(name, v):
    return (name, "int", int(v))


def IS(name, v):
    return (name, "ints", [int(e) for e in v])


def S(name, v):
    return (name, "string", v)


# ---------------------------------------------------------------------------
# Elementwise

def int_trunc_div(a, b):
    q = np.abs(a.astype(np.int64)) // np.abs(b.astype(np.int64))
    return (np.sign(a.astype(np.int64)) * np.sign(b.astype(np.int64)) * q).astype(a.dtype)


BINARY = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
    "pow": lambda a, b: np.power(a, b),
}


def gen_binary(g):
    d = g.dim
    shape_pairs = [
        ((d(), d(), d()), None),            # same shape
        ((d([2, 3, 5]), 1, d()), (1, d([2, 7]), 1)),   # both broadcast
        ((), (d(), d())),                    # scalar and matrix
        ((d(), d(), d([3, 5])), None),       # rank-1 against rank-3 (below)
        ((1,), (d(), 1)),
        ((d([2, 3]), 1, d([5, 7]), 1), (d([3, 4]), 1, 1)),
    ]
    for op, fn in BINARY.items():
        for k, (sa, sb) in enumerate(shape_pairs):
            if sb is None:
                sb = sa if k == 0 else (sa[-1],)
            if op == "pow":
                a, b = g.f32(sa, 0.1, 3.0), g.f32(sb, -2.0, 2.0)
            elif op == "div":
                a, b = g.f32(sa), g.away_from_zero(sb)
            else:
                a, b = g.f32(sa), g.f32(sb)
            expected = f32(fn(a.astype(np.float64), b.astype(np.float64)))
            if k % 2 == 1 and op in ("add", "sub", "mul"):
                g.add(op, [b, a], f32(fn(b.astype(np.float64), a.astype(np.float64))),
                      tag="swapped")
            else:
                g.add(op, [a, b], expected)
        if op == "pow":
            continue
        # Empty tensors: nothing to compute, nothing may break.
        a, b = g.f32((0, 3)), g.f32((3,))
        g.add(op, [a, b], f32(fn(a.astype(np.float64), b)), tag="empty")
        for dt in (np.int32, np.int64):
            inner = d([2, 3, 5])
            sa, sb = (d(), inner), (inner,)
            a = g.ints(sa, dt)
            b = g.ints(sb, dt)
            if op == "div":
                b[b == 0] = 7
                expected = int_trunc_div(np.broadcast_to(a, np.broadcast_shapes(sa, sb)),
                                         np.broadcast_to(b, np.broadcast_shapes(sa, sb)))
            else:
                expected = fn(a, b).astype(dt)
            g.add(op, [a, b], expected, tag=np.dtype(dt).name)
        if op in ("add", "mul"):
            # Wrap-around, as NumPy does it for arrays.
            info = np.iinfo(np.int32)
            a = np.array([info.max, info.min, 123456789, -98765], dtype=np.int32)
            b = np.array([1, -1, 1000, 77777], dtype=np.int32)
            with np.errstate(over="ignore"):
                g.add(op, [a, b], fn(a, b).astype(np.int32), tag="wrap")


def erf(x):
    return np.vectorize(math.erf, otypes=[np.float64])(x)


def gelu(x, approximate):
    if approximate == "tanh":
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
    return 0.5 * x * (1 + erf(x / math.sqrt(2)))


def gen_unary(g):
    d = g.dim
    shapes = [(d(), d(), d()), (), (d(),), (1, d(), 1, d())]
    defs = [
        ("sqrt", lambda x: np.sqrt(x), (0.0, 4.0), ()),
        ("exp", lambda x: np.exp(x), (-5.0, 5.0), ()),
        ("neg", lambda x: -x, (-3, 3), ()),
        ("abs", lambda x: np.abs(x), (-3, 3), ()),
        ("relu", lambda x: np.maximum(x, 0), (-3, 3), ()),
        ("sigmoid", lambda x: 1 / (1 + np.exp(-x)), (-8, 8), ()),
        ("tanh", np.tanh, (-4, 4), ()),
        ("erf", erf, (-3, 3), ()),
        ("identity", lambda x: x, (-3, 3), ()),
    ]
    for op, fn, (lo, hi), attrs in defs:
        for s in shapes:
            x = g.f32(s, lo, hi)
            g.add(op, [x], f32(fn(x.astype(np.float64))), attrs)
    # leaky_relu: default alpha and an explicit one.
    x = g.f32(shapes[0])
    g.add("leaky_relu", [x], f32(np.where(x < 0, 0.01 * x.astype(np.float64), x)),
          tag="default")
    alpha = float(g.rng.uniform(0.05, 0.5))
    x = g.f32(shapes[3])
    g.add("leaky_relu", [x], f32(np.where(x < 0, alpha * x.astype(np.float64), x)),
          [F("alpha", alpha)])
    # clip: both bounds, one bound, none.
    x = g.f32(shapes[0], -3, 3)
    lo, hi = float(g.rng.uniform(-1.5, -0.1)), float(g.rng.uniform(0.1, 1.5))
    g.add("clip", [x], f32(np.clip(x.astype(np.float64), lo, hi)), [F("min", lo), F("max", hi)])
    x = g.f32(shapes[2], -3, 3)
    g.add("clip", [x], f32(np.maximum(x, 0.0)), [F("min", 0.0)], tag="min_only")
    x = g.f32(shapes[1], -3, 3)
    g.add("clip", [x], x.copy(), tag="no_bounds")
    x = g.f32(shapes[3], -3, 3)
    g.add("clip", [x], f32(np.minimum(x, 6.0)), [("max", "int", 6)], tag="int_attr")
    # gelu: exact (default and explicit) and tanh.
    for attrs, ap in (((), "none"), ((S("approximate", "none"),), "none"),
                      ((S("approximate", "tanh"),), "tanh")):
        x = g.f32(shapes[0], -4, 4)
        g.add("gelu", [x], f32(gelu(x.astype(np.float64), ap)), attrs, tag=ap)
    # Integer neg/abs/relu, with INT_MIN wrapping like NumPy.
    for dt in (np.int32, np.int64):
        x = g.ints((d(), d([3, 5])), dt, -1000, 1000)
        x.flat[0] = np.iinfo(dt).min
        with np.errstate(over="ignore"):
            g.add("neg", [x], (-x).astype(dt), tag=np.dtype(dt).name)
            g.add("abs", [x], np.abs(x).astype(dt), tag=np.dtype(dt).name)
        g.add("relu", [x], np.maximum(x, 0).astype(dt), tag=np.dtype(dt).name)
    # identity of other dtypes moves bytes.
    for dt in (np.int64, np.int32, np.float16):
        x = g.f32((d(), d())).astype(dt) if dt == np.float16 else g.ints((d(), d()), dt)
        g.add("identity", [x], x.copy(), tag=np.dtype(dt).name)


# ---------------------------------------------------------------------------
# Linear algebra

def gen_matmul(g):
    d = g.dim
    m, k, n, b = d(), d([1, 3, 7, 13, 17]), d(), d([2, 3])
    cases = [
        ((m, k), (k, n)),
        ((b, m, k), (b, k, n)),
        ((b, m, k), (k, n)),                 # batch broadcast
        ((b, 1, m, k), (d([2, 3]), k, n)),   # both broadcast
        ((k,), (k, n)),                      # 1-D promotion on the left
        ((m, k), (k,)),                      # on the right
        ((k,), (k,)),                        # dot product -> scalar
        ((b, m, k), (k,)),
        ((k,), (b, k, n)),
    ]
    for sa, sb in cases:
        a, bb = g.f32(sa), g.f32(sb)
        g.add("matmul", [a, bb], f32(np.matmul(a.astype(np.float64), bb.astype(np.float64))))
    a, bb = g.f32((m, k)), g.f32((k, n))
    g.add("matmul", [a, ("const", bb)], f32(a.astype(np.float64) @ bb), tag="const")


def gen_gemm(g):
    d = g.dim
    for ta in (0, 1):
        for tb in (0, 1):
            m, k, n = d(), d(), d()
            a = g.f32((k, m) if ta else (m, k))
            b = g.f32((n, k) if tb else (k, n))
            alpha, beta = float(g.rng.uniform(-2, 2)), float(g.rng.uniform(-2, 2))
            c_shapes = [(m, n), (n,), (1, n), (m, 1), ()]
            cs = c_shapes[(2 * ta + tb) % len(c_shapes)]
            c = g.f32(cs)
            oa = a.astype(np.float64).T if ta else a.astype(np.float64)
            ob = b.astype(np.float64).T if tb else b.astype(np.float64)
            exp = alpha * (oa @ ob) + beta * c.astype(np.float64)
            g.add("gemm", [a, b, c], f32(exp),
                  [F("alpha", alpha), F("beta", beta), I("transA", ta), I("transB", tb)],
                  tag="t%d%d" % (ta, tb))
    m, k, n = d(), d(), d()
    a, b = g.f32((m, k)), g.f32((k, n))
    g.add("gemm", [a, ("const", b)], f32(a.astype(np.float64) @ b), tag="no_c")
    c = g.f32((1, 1))
    g.add("gemm", [a, b, ("const", c)],
          f32(a.astype(np.float64) @ b + c), tag="c_scalar_like")
    c = g.f32(())
    g.add("gemm", [a, b, c], f32(0.5 * (a.astype(np.float64) @ b) + c),
          [F("alpha", 0.5)], tag="c_scalar")


# ---------------------------------------------------------------------------
# Convolution and pooling

def conv2d(x, w, b, pads, strides, dil, group):
    x = x.astype(np.float64)
    w = w.astype(np.float64)
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    pt, pl, pb, pr = pads
    xp = np.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr)))
    oh = (h + pt + pb - (dil[0] * (kh - 1) + 1)) // strides[0] + 1
    ow = (wd + pl + pr - (dil[1] * (kw - 1) + 1)) // strides[1] + 1
    out = np.zeros((n, m, oh, ow))
    mg = m // group
    for gi in range(group):
        xg = xp[:, gi * cg:(gi + 1) * cg]
        wg = w[gi * mg:(gi + 1) * mg]
        for i in range(kh):
            for j in range(kw):
                y0, x0 = i * dil[0], j * dil[1]
                patch = xg[:, :, y0:y0 + strides[0] * (oh - 1) + 1:strides[0],
                           x0:x0 + strides[1] * (ow - 1) + 1:strides[1]]
                out[:, gi * mg:(gi + 1) * mg] += np.einsum("nchw,mc->nmhw", patch,
                                                           wg[:, :, i, j])
    if b is not None:
        out += b.astype(np.float64).reshape(1, m, 1, 1)
    return out


def gen_conv2d(g):
    d = g.dim
    configs = [
        # (N, C, H, W, M, group, kh, kw, pads, strides, dilations, bias)
        (1, 3, 7, 7, 4, 1, 3, 3, (0, 0, 0, 0), (1, 1), (1, 1), True),
        (2, 4, 9, 8, 6, 2, 3, 2, (1, 0, 2, 1), (2, 1), (1, 1), False),
        (1, 6, 11, 10, 6, 6, 3, 3, (1, 1, 1, 1), (1, 1), (1, 1), True),   # depthwise
        (1, 2, 13, 11, 3, 1, 3, 3, (2, 2, 2, 2), (2, 3), (2, 2), True),   # dilated
        (2, 3, 5, 5, 5, 1, 1, 1, (0, 0, 0, 0), (1, 1), (1, 1), True),     # 1x1
        (1, 4, 6, 7, 8, 4, 2, 3, (0, 1, 1, 0), (1, 2), (1, 1), False),    # 2 per group
    ]
    for k, (n, c, h, w, m, group, kh, kw, pads, strides, dil, bias) in enumerate(configs):
        h += d([0, 1, 2])
        w += d([0, 1, 2])
        x = g.f32((n, c, h, w))
        wt = g.f32((m, c // group, kh, kw), -1, 1)
        b = g.f32((m,)) if bias else None
        attrs = [IS("pads", pads), IS("strides", strides), IS("dilations", dil),
                 I("group", group)]
        if k == 0:
            attrs = []  # all defaults
        inputs = [x, ("const", wt)] + ([("const", b)] if bias else [])
        if k == 4:
            inputs = [x, wt, b]  # weights as graph inputs too
        g.add("conv2d", inputs, f32(conv2d(x, wt, b, pads, strides, dil, group)), attrs)


def pool_out(size, pb, pe, k, s, dl, ceil):
    span = dl * (k - 1) + 1
    room = size + pb + pe - span
    o = (-(-room // s) if ceil else room // s) + 1
    if ceil and (o - 1) * s >= size + pb:
        o -= 1
    return o


def pool2d(x, kind, k, pads, strides, dil, ceil, include_pad):
    n, c, h, w = x.shape
    pt, pl, pb, pr = pads
    oh = pool_out(h, pt, pb, k[0], strides[0], dil[0], ceil)
    ow = pool_out(w, pl, pr, k[1], strides[1], dil[1], ceil)
    out = np.zeros((n, c, oh, ow))
    x = x.astype(np.float64)
    for y in range(oh):
        for xo in range(ow):
            vals, padded = [], 0
            for i in range(k[0]):
                iy = y * strides[0] - pt + i * dil[0]
                if iy >= h + pb:
                    continue
                for j in range(k[1]):
                    ix = xo * strides[1] - pl + j * dil[1]
                    if ix >= w + pr:
                        continue
                    padded += 1
                    if 0 <= iy < h and 0 <= ix < w:
                        vals.append(x[:, :, iy, ix])
            if kind == "max":
                out[:, :, y, xo] = np.max(vals, axis=0) if vals else -np.inf
            else:
                div = padded if include_pad else len(vals)
                out[:, :, y, xo] = (np.sum(vals, axis=0) / div) if vals else 0.0
    return out


def gen_pool(g):
    d = g.dim
    configs = [
        # (kernel, pads, strides, dilations, ceil_mode)
        ((2, 2), (0, 0, 0, 0), (2, 2), (1, 1), 0),
        ((3, 3), (1, 1, 1, 1), (2, 2), (1, 1), 0),
        ((3, 2), (1, 0, 2, 1), (2, 1), (1, 1), 1),
        ((2, 3), (0, 0, 0, 0), (3, 2), (1, 1), 1),
        ((3, 3), (1, 1, 1, 1), (1, 1), (1, 1), 0),
        ((2, 2), (1, 1, 1, 1), (2, 2), (2, 2), 1),
        ((1, 1), (0, 0, 0, 0), (2, 2), (1, 1), 0),
    ]
    for kind in ("max", "avg"):
        op = kind + "_pool2d"
        for k, (ks, pads, strides, dil, ceil) in enumerate(configs):
            x = g.f32((d([1, 2]), d([1, 3]), 5 + d([0, 1, 2, 3, 4]), 6 + d([0, 1, 2, 3])))
            include = k % 2 if kind == "avg" else 0
            attrs = [IS("kernel_shape", ks)]
            if k != 0:  # the first one leaves every default in place
                attrs += [IS("pads", pads), IS("strides", strides), IS("dilations", dil),
                          I("ceil_mode", ceil)]
            else:
                pads, strides, dil, ceil = (0, 0, 0, 0), (1, 1), (1, 1), 0
            if kind == "avg" and k != 0:
                attrs.append(I("count_include_pad", include))
            g.add(op, [x], f32(pool2d(x, kind, ks, pads, strides, dil, ceil, include)),
                  attrs, tag="ceil" if ceil else "")
    for shape in ((2, 3, d(), d()), (1, 5, d()), (1, 2, d([2, 3]), d([2, 3]), 2)):
        x = g.f32(shape)
        g.add("global_avg_pool", [x],
              f32(x.astype(np.float64).mean(axis=tuple(range(2, x.ndim)), keepdims=True)))


# ---------------------------------------------------------------------------
# Normalisation and reductions

def gen_norm(g):
    d = g.dim
    for shape, eps in (((2, d(), d(), d()), None), ((d(), d([2, 3, 5])), 1e-3),
                       ((1, d([2, 3]), d()), 0.1)):
        x = g.f32(shape)
        c = shape[1]
        scale, b, mean = g.f32((c,)), g.f32((c,)), g.f32((c,), -0.5, 0.5)
        var = g.f32((c,), 0.1, 2.0)
        e = 1e-5 if eps is None else eps
        bshape = (1, c) + (1,) * (x.ndim - 2)
        rs = lambda v: v.astype(np.float64).reshape(bshape)
        exp = (x.astype(np.float64) - rs(mean)) / np.sqrt(rs(var) + e) * rs(scale) + rs(b)
        attrs = [] if eps is None else [F("epsilon", eps)]
        g.add("batch_norm", [x, ("const", scale), ("const", b), ("const", mean),
                             ("const", var)], f32(exp), attrs)

    for shape, axis in (((d(), d(), d()), None), ((d(), d(), d()), 0), ((d(), d(), d()), 1),
                        ((d(), d()), -2), ((d([2, 3, 5, 7, 11, 13]),), 0),
                        ((2, 1, d()), 1)):
        x = g.f32(shape, -6, 6)
        ax = -1 if axis is None else axis
        xd = x.astype(np.float64)
        e = np.exp(xd - xd.max(axis=ax, keepdims=True))
        attrs = [] if axis is None else [I("axis", axis)]
        g.add("softmax", [x], f32(e / e.sum(axis=ax, keepdims=True)), attrs)

    for shape, axis, pshape_from, bias, eps, rms in (
            ((d(), d(), d([2, 3, 5, 7])), None, "last", True, None, 0),
            ((d(), d([2, 3]), d()), 1, "all", True, 1e-3, 0),
            ((d(), d(), d()), -2, "one", False, None, 0),
            ((d([2, 3]), d([2, 5])), 0, "all", False, 1e-2, 0),
            ((d([2, 3]), d(), d([3, 5])), 1, "bcast", True, None, 0),
            # RMSNorm: no mean subtracted.
            ((d(), d(), d([2, 3, 5, 7])), None, "last", False, 1e-6, 1),
            ((d(), d([2, 3]), d()), 1, "all", True, None, 1)):
        x = g.f32(shape)
        ax = x.ndim - 1 if axis is None else (axis % x.ndim)
        norm = shape[ax:]
        if pshape_from == "last":
            ps = (norm[-1],)
        elif pshape_from == "all":
            ps = norm
        elif pshape_from == "one":
            ps = (1,) * len(norm)
        else:
            ps = (norm[0], 1)
        scale = g.f32(ps)
        bvec = g.f32(ps) if bias else None
        xd = x.astype(np.float64)
        axes = tuple(range(ax, x.ndim))
        mean = 0.0 if rms else xd.mean(axis=axes, keepdims=True)
        var = ((xd - mean) ** 2).mean(axis=axes, keepdims=True)
        e = 1e-5 if eps is None else eps
        y = (xd - mean) / np.sqrt(var + e) * scale.astype(np.float64)
        if bias:
            y = y + bvec.astype(np.float64)
        attrs = ([] if axis is None else [I("axis", axis)]) + \
                ([] if eps is None else [F("epsilon", eps)]) + \
                ([I("rms", 1)] if rms else [])
        g.add("layer_norm", [x, ("const", scale)] + ([bvec] if bias else []), f32(y), attrs)

    for op, fn in (("reduce_sum", np.sum), ("reduce_mean", np.mean)):
        shape = (d(), d(), d([2, 3, 5]))
        for axes, keep in (([1], None), ([0, 2], 0), ([-1], 1), ([], 1), ([], 0),
                           (None, 0), ([2, 0, 1], 1), ([-3], 0)):
            x = g.f32(shape)
            attrs = []
            if axes is not None:
                attrs.append(IS("axes", axes))
            if keep is not None:
                attrs.append(I("keepdims", keep))
            ax = None if not axes else tuple(axes)
            k = True if keep is None else bool(keep)
            g.add(op, [x], f32(fn(x.astype(np.float64), axis=ax, keepdims=k)), attrs)
        x = g.f32((d(),))
        g.add(op, [x], f32(fn(x.astype(np.float64), keepdims=False)),
              [I("keepdims", 0)], tag="rank1")
    x = g.f32((d(), 0, 2))  # the sum over nothing is 0
    g.add("reduce_sum", [x], f32(np.sum(x.astype(np.float64), axis=1)),
          [IS("axes", [1]), I("keepdims", 0)], tag="empty")


# ---------------------------------------------------------------------------
# Shape ops (several dtypes: they move bytes)

def some_dtype(g, shape, k):
    dt = [np.float32, np.int64, np.int32, np.float16][k % 4]
    if dt == np.float16:
        return g.f32(shape).astype(np.float16)
    if dt == np.float32:
        return g.f32(shape)
    return g.ints(shape, dt, -1000, 1000)


def gen_shape_ops(g):
    d = g.dim
    k = 0
    # reshape: 0 copies a dim, -1 infers one.
    a, b, c = d([2, 3]), d([2, 5]), d([3, 7])
    for src, spec in (((a, b, c), (a, -1)), ((a, b, c), (0, 0, c)), ((a, b, c), (-1,)),
                      ((a, b, c), (0, -1, 1)), ((a * b,), (a, b)), ((a, b), (b, a))):
        x = some_dtype(g, src, k); k += 1
        out = tuple(src[i] if s == 0 else s for i, s in enumerate(spec))
        g.add("reshape", [x], x.reshape(out), [IS("shape", spec)])
    # flatten: default axis 1, 0, rank, negative.
    for shape, axis in (((a, b, c), None), ((a, b, c), 0), ((a, b, c), 3), ((a, b, c), -1),
                        ((a, b), 1), ((a, 1, b, c), 2)):
        x = some_dtype(g, shape, k); k += 1
        ax = 1 if axis is None else (axis + x.ndim if axis < 0 else axis)
        rows = int(np.prod(shape[:ax], dtype=np.int64))
        g.add("flatten", [x], x.reshape(rows, -1) if x.size else x.reshape(rows, 0),
              [] if axis is None else [I("axis", axis)])
    # transpose: default reverses.
    for shape, perm in (((a, b, c), None), ((a, b, c), (1, 0, 2)), ((a, b, c), (2, 0, 1)),
                        ((a, b), (1, 0)), ((a, 1, b, c), (3, 1, 0, 2)), ((c,), (0,))):
        x = some_dtype(g, shape, k); k += 1
        g.add("transpose", [x], np.transpose(x, perm).copy(),
              [] if perm is None else [IS("perm", perm)])
    # concat.
    for shapes, axis in ((((a, b), (a, c)), 1), (((a, b), (c, b), (1, b)), 0),
                         (((a, b, c), (a, b, 1), (a, b, 2)), -1), ((((b, c),)), 0),
                         (((a, 1, c), (a, 2, c)), -2)):
        xs = [some_dtype(g, s, k) for s in shapes]
        xs = [x.astype(xs[0].dtype) for x in xs]
        k += 1
        g.add("concat", list(xs), np.concatenate(xs, axis=axis), [I("axis", axis)])
    # slice: negative starts/ends, negative steps, clamping, axes subsets.
    big = 2 ** 62
    for shape, starts, ends, axes, steps in (
            ((7, 5), (1, 0), (5, 5), None, None),
            ((7, 5), (-3,), (big,), (0,), None),
            ((7, 5), (-1, 4), (-big, 0), (0, 1), (-1, -2)),
            ((6, 11, 3), (10, 1), (-100, 8), (-2, 0), (-3, 2)),
            ((6, 11, 3), (-20,), (20,), (2,), (2,)),
            ((6, 11, 3), (2, 0), (-1, 1), (1, 2), None),
            ((6, 11, 3), (4,), (1,), (0,), None),          # empty
            ((5,), (-2,), (-5,), (0,), (-1,)),
            ((13,), (0,), (13,), None, (5,))):
        x = some_dtype(g, shape, k); k += 1
        ax = list(range(len(starts))) if axes is None else list(axes)
        st = [1] * len(starts) if steps is None else list(steps)
        idx = [slice(None)] * x.ndim
        for s, e, axis, step in zip(starts, ends, ax, st):
            idx[axis] = slice(s, e, step)
        attrs = [IS("starts", starts), IS("ends", ends)]
        if axes is not None:
            attrs.append(IS("axes", axes))
        if steps is not None:
            attrs.append(IS("steps", steps))
        g.add("slice", [x], x[tuple(idx)].copy(), attrs)
    # squeeze / unsqueeze.
    for shape, axes in (((1, a, 1, b), None), ((1, a, 1, b), (0,)), ((1, a, 1, b), (-2, 0)),
                        ((a, 1), (1,)), ((1,), None)):
        x = some_dtype(g, shape, k); k += 1
        exp = np.squeeze(x) if axes is None else np.squeeze(x, axis=tuple(axes))
        g.add("squeeze", [x], exp.copy(),
              [] if axes is None else [IS("axes", axes)])
    for shape, axes in (((a, b), (0,)), ((a, b), (-1,)), ((a, b), (1, 3)), ((), (0,)),
                        ((a,), (0, -1)), ((a, b, c), (2, 0))):
        x = some_dtype(g, shape, k); k += 1
        g.add("unsqueeze", [x], np.expand_dims(x, tuple(axes)), [IS("axes", axes)])


# ---------------------------------------------------------------------------
# Every dtype the op table gives an op (bfloat16 aside: NumPy has none). The
# reference result is computed in float64 from the inputs as stored in the
# dtype, then rounded to it once, which is what ref does.

def typed(g, shape, dt, lo=-3.0, hi=3.0):
    """Random data of dtype `dt` (a name): floats in [lo, hi), integers in
    the part of [lo, hi] the dtype holds, bools half true."""
    if dt == "bool":
        return g.rng.integers(0, 2, size=shape).astype(bool)
    if dt.startswith("float"):
        return g.rng.uniform(lo, hi, size=shape).astype(dt)
    info = np.iinfo(dt)
    a, b = max(int(lo), int(info.min)), min(int(hi), int(info.max))
    return g.rng.integers(a, b, size=shape, endpoint=True).astype(dt)


def tol(dt):
    return {"float16": (2e-3, 1e-3), "float64": (1e-12, 1e-12)}.get(dt, (1e-5, 1e-6))


def add_typed(g, op, inputs, expected, dt, attrs=(), tag=""):
    rtol, atol = tol(dt)
    g.add(op, inputs, expected, attrs, tag=(dt + "_" + tag) if tag else dt,
          rtol=rtol, atol=atol)


def wide(x):
    return x.astype(np.float64)


def gen_dtype_sweep(g):
    d = g.dim
    sh = (d([2, 3]), d([3, 5]))
    unary_f = [
        ("sqrt", np.sqrt, (0.0, 4.0), ()),
        ("exp", np.exp, (-3.0, 3.0), ()),
        ("sigmoid", lambda x: 1 / (1 + np.exp(-x)), (-6.0, 6.0), ()),
        ("tanh", np.tanh, (-3.0, 3.0), ()),
        ("erf", erf, (-2.0, 2.0), ()),
        ("gelu", lambda x: gelu(x, "none"), (-3.0, 3.0), ()),
        ("leaky_relu", lambda x: np.where(x < 0, 0.01 * x, x), (-3.0, 3.0), ()),
        ("clip", lambda x: np.clip(x, -1.0, 1.5), (-3.0, 3.0),
         (F("min", -1.0), F("max", 1.5))),
        ("hard_swish", lambda x: x * np.clip(x / 6 + 0.5, 0, 1), (-5.0, 5.0), ()),
        ("neg", lambda x: -x, (-3.0, 3.0), ()),
        ("abs", np.abs, (-3.0, 3.0), ()),
        ("relu", lambda x: np.maximum(x, 0), (-3.0, 3.0), ()),
    ]
    for op, fn, (lo, hi), attrs in unary_f:
        for dt in (["float32"] if op == "hard_swish" else []) + FLOAT_X:
            x = typed(g, sh, dt, lo, hi)
            add_typed(g, op, [x], fn(wide(x)).astype(dt), dt, attrs)
    for dt in INTS:
        x = typed(g, sh, dt, -100, 100)
        with np.errstate(over="ignore"):
            add_typed(g, "abs", [x], np.abs(x).astype(dt), dt)
            if dt in SIGNED_INTS:
                add_typed(g, "neg", [x], (-x).astype(dt), dt)
                add_typed(g, "relu", [x], np.maximum(x, 0).astype(dt), dt)
    # Binary arithmetic, with broadcasting; integers wrap like NumPy's.
    for op, fn in BINARY.items():
        for dt in FLOAT_X + ([] if op == "pow" else INTS):
            a = typed(g, sh, dt, 0.5 if op == "pow" else -100, 3 if op == "pow" else 100)
            b = typed(g, (sh[1],), dt, -2 if op == "pow" else -100, 2 if op == "pow" else 100)
            if dt.startswith("float"):
                if op == "div":
                    b = np.where(np.abs(wide(b)) < 0.25, 1.0, b).astype(dt)
                exp = fn(wide(a), wide(b)).astype(dt)
            elif op == "div":
                b[b == 0] = 7
                ab = np.broadcast_to(a, sh)
                bb = np.broadcast_to(b, sh)
                exp = (int_trunc_div(ab, bb) if dt in SIGNED_INTS else ab // bb).astype(dt)
            else:
                with np.errstate(over="ignore"):
                    exp = fn(a, b).astype(dt)
            add_typed(g, op, [a, b], exp, dt)
    # Linear algebra, convolution, pooling, normalisation, reductions.
    for dt in FLOAT_X:
        m, k, n = d(), d(), d()
        a, b = typed(g, (2, m, k), dt), typed(g, (k, n), dt)
        add_typed(g, "matmul", [a, b], np.matmul(wide(a), wide(b)).astype(dt), dt)
        a, b, c = typed(g, (k, m), dt), typed(g, (k, n), dt), typed(g, (n,), dt)
        add_typed(g, "gemm", [a, b, c], (0.5 * wide(a).T @ wide(b) + wide(c)).astype(dt),
                  dt, (F("alpha", 0.5), I("transA", 1)))
        x, w, bias = typed(g, (1, 4, 6, 5), dt), typed(g, (6, 2, 3, 3), dt), typed(g, (6,), dt)
        exp = conv2d(x, w, bias, (1, 1, 0, 1), (1, 2), (1, 1), 2)
        add_typed(g, "conv2d", [x, w, bias], exp.astype(dt), dt,
                  (IS("pads", (1, 1, 0, 1)), IS("strides", (1, 2)), I("group", 2)))
        x = typed(g, (1, 2, 6, 7), dt)
        for kind in ("max", "avg"):
            exp = pool2d(x, kind, (3, 2), (1, 0, 1, 1), (2, 2), (1, 1), 0, 0)
            add_typed(g, kind + "_pool2d", [x], exp.astype(dt), dt,
                      (IS("kernel_shape", (3, 2)), IS("pads", (1, 0, 1, 1)),
                       IS("strides", (2, 2))))
        add_typed(g, "global_avg_pool", [x],
                  wide(x).mean(axis=(2, 3), keepdims=True).astype(dt), dt)
        x = typed(g, (2, 3, 4), dt)
        scale, bvec, mean = typed(g, (3,), dt), typed(g, (3,), dt), typed(g, (3,), dt)
        var = typed(g, (3,), dt, 0.2, 2.0)
        rs = lambda v: wide(v).reshape(1, 3, 1)
        exp = (wide(x) - rs(mean)) / np.sqrt(rs(var) + 1e-5) * rs(scale) + rs(bvec)
        add_typed(g, "batch_norm", [x, scale, bvec, mean, var], exp.astype(dt), dt)
        e = np.exp(wide(x) - wide(x).max(axis=1, keepdims=True))
        add_typed(g, "softmax", [x], (e / e.sum(axis=1, keepdims=True)).astype(dt), dt,
                  (I("axis", 1),))
        gamma = typed(g, (4,), dt)
        mu = wide(x).mean(axis=-1, keepdims=True)
        var = ((wide(x) - mu) ** 2).mean(axis=-1, keepdims=True)
        exp = (wide(x) - mu) / np.sqrt(var + 1e-5) * wide(gamma)
        add_typed(g, "layer_norm", [x, gamma], exp.astype(dt), dt)
        for op, fn in (("reduce_sum", np.sum), ("reduce_mean", np.mean)):
            add_typed(g, op, [x], fn(wide(x), axis=(0, 2), keepdims=True).astype(dt), dt,
                      (IS("axes", (0, 2)),))
    # Data movement: every dtype, bytes moved.
    for dt in ALL:
        x = typed(g, (2, 3, 4), dt, -100, 100)
        add_typed(g, "identity", [x], x.copy(), dt)
        add_typed(g, "reshape", [x], x.reshape(4, 6), dt, (IS("shape", (4, -1)),))
        add_typed(g, "flatten", [x], x.reshape(2, 12), dt)
        add_typed(g, "transpose", [x], x.transpose(2, 0, 1).copy(), dt,
                  (IS("perm", (2, 0, 1)),))
        y = typed(g, (2, 1, 4), dt, -100, 100)
        add_typed(g, "concat", [x, y], np.concatenate([x, y], axis=1), dt, (I("axis", 1),))
        add_typed(g, "slice", [x], x[:, 2:0:-1, 1:].copy(), dt,
                  (IS("starts", (2, 1)), IS("ends", (0, 4)), IS("axes", (1, 2)),
                   IS("steps", (-1, 1))))
        add_typed(g, "squeeze", [y], np.squeeze(y, 1), dt, (IS("axes", (1,)),))
        add_typed(g, "unsqueeze", [y], np.expand_dims(y, 0), dt, (IS("axes", (0,)),))
    # cast: from every dtype to every dtype. Floats going to unsigned
    # integers stay non-negative (the conversion of a negative float to an
    # unsigned integer is undefined in C and in ONNX).
    for src in ALL:
        for dst in ALL:
            lo = 0 if dst in UNSIGNED_INTS and src.startswith("float") else -100
            x = typed(g, (3, 4), src, lo, 100)
            with np.errstate(invalid="ignore", over="ignore"):
                exp = x.astype(dst)
            add_typed(g, "cast", [x], exp, dst, (S("to", dst),), tag="from_" + src)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: gen_cases.py OUT_DIR")
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    env = os.environ.get("VKPIPE_TEST_SEED")
    seed = int(env, 0) if env else secrets.randbits(63)
    seed %= 2 ** 63
    print("gen_cases: seed %d (set VKPIPE_TEST_SEED=%d to reproduce)" % (seed, seed), flush=True)
    g = Gen(out_dir, seed)
    gen_binary(g)
    gen_unary(g)
    gen_matmul(g)
    gen_gemm(g)
    gen_conv2d(g)
    gen_pool(g)
    gen_norm(g)
    gen_shape_ops(g)
    gen_dtype_sweep(g)
    # Op families keep their cases in cases_<family>.py next to this file,
    # each with a generate(g) that uses the helpers above.
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    for path in sorted(glob.glob(os.path.join(here, "cases_*.py"))):
        module = importlib.import_module(os.path.basename(path)[:-3])
        module.generate(g)
    with open(os.path.join(out_dir, "manifest.json"), "w") as f:
        json.dump({"seed": str(seed), "dtypes": list(DTYPES), "cases": g.cases},
                  f, indent=1)
    print("gen_cases: %d cases in %s" % (len(g.cases), out_dir))


if __name__ == "__main__":
    main()
