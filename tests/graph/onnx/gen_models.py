#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the ONNX import test models with the `onnx` package, and their
expected outputs computed here with NumPy (independently of vkpipe).

  gen_models.py OUT_DIR

For every model NAME.onnx the inputs are NAME.input_<k>.pb and the expected
outputs NAME.output_<k>.pb (TensorProto). Inputs are fresh random data: the
seed comes from $VKPIPE_TEST_SEED when set, else from the OS; it is printed
and written to OUT_DIR/seed.txt. Also writes the malformed models the
bad-input tests expect to be refused (bad_*.onnx).
"""
import glob
import importlib
import math
import os
import secrets
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F32 = TensorProto.FLOAT
I64 = TensorProto.INT64


class Writer:
    def __init__(self, out_dir, seed):
        self.out = out_dir
        self.rng = np.random.default_rng(seed)

    def f32(self, *shape, lo=-1.0, hi=1.0):
        return self.rng.uniform(lo, hi, size=shape).astype(np.float32)

    def save(self, name, model, inputs=(), outputs=()):
        onnx.save(model, os.path.join(self.out, name + ".onnx"))
        # (np.ascontiguousarray makes a scalar 1-D: keep rank 0 as it is, for
        # inputs and outputs.)
        for k, a in enumerate(inputs):
            a = np.asarray(a)
            t = numpy_helper.from_array(a if a.ndim == 0 else np.ascontiguousarray(a),
                                        "input_%d" % k)
            with open(os.path.join(self.out, "%s.input_%d.pb" % (name, k)), "wb") as f:
                f.write(t.SerializeToString())
        for k, a in enumerate(outputs):
            a = np.asarray(a)
            t = numpy_helper.from_array(a if a.ndim == 0 else np.ascontiguousarray(a),
                                        "output_%d" % k)
            with open(os.path.join(self.out, "%s.output_%d.pb" % (name, k)), "wb") as f:
                f.write(t.SerializeToString())


def model(nodes, inputs, outputs, inits=(), opset=13, name="g"):
    g = helper.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def vi(name, shape, elem=F32):
    return helper.make_tensor_value_info(name, elem, shape)


def init(name, a):
    return numpy_helper.from_array(np.asarray(a), name)


# --- NumPy reference implementations ----------------------------------------
def conv2d(x, w, b, pad, stride=1):
    n, c, h, wd = x.shape
    m, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh = (h + 2 * pad - kh) // stride + 1
    ow = (wd + 2 * pad - kw) // stride + 1
    y = np.zeros((n, m, oh, ow), np.float64)
    for i in range(kh):
        for j in range(kw):
            patch = xp[:, :, i:i + stride * oh:stride, j:j + stride * ow:stride]
            y += np.einsum("nchw,mc->nmhw", patch, w[:, :, i, j])
    return y + b.reshape(1, -1, 1, 1)


def batchnorm(x, s, b, mean, var, eps):
    sh = (1, -1) + (1,) * (x.ndim - 2)
    return (x - mean.reshape(sh)) / np.sqrt(var.reshape(sh) + eps) * s.reshape(sh) + b.reshape(sh)


def maxpool2(x):
    n, c, h, w = x.shape
    return x.reshape(n, c, h // 2, 2, w // 2, 2).max(axis=(3, 5))


def softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def gelu(x):
    erf = np.vectorize(math.erf)
    return x * 0.5 * (1.0 + erf(x / math.sqrt(2.0)))


def layernorm(x, g, b, eps):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * g + b


# --- models ------------------------------------------------------------------
def gen_cnn(w):
    """PyTorch-style CNN: Conv, BatchNormalization, Relu, MaxPool, Add,
    GlobalAveragePool, Flatten, Gemm (plus Dropout and Identity)."""
    x = w.f32(2, 3, 8, 8)
    c1w, c1b = w.f32(8, 3, 3, 3, lo=-0.5, hi=0.5), w.f32(8)
    c2w, c2b = w.f32(8, 8, 3, 3, lo=-0.3, hi=0.3), w.f32(8)
    bns = []
    for _ in range(3):
        bns.append((w.f32(8, lo=0.5, hi=1.5), w.f32(8), w.f32(8),
                    w.f32(8, lo=0.5, hi=2.0)))
    fw, fb = w.f32(10, 8), w.f32(10)
    inits = [init("c1w", c1w), init("c1b", c1b), init("c2w", c2w), init("c2b", c2b),
             init("fw", fw), init("fb", fb)]
    for i, (s, b, m, v) in enumerate(bns):
        inits += [init("bn%d_s" % i, s), init("bn%d_b" % i, b),
                  init("bn%d_m" % i, m), init("bn%d_v" % i, v)]

    def bn(i, src, dst):
        return helper.make_node("BatchNormalization",
                                [src, "bn%d_s" % i, "bn%d_b" % i, "bn%d_m" % i, "bn%d_v" % i],
                                [dst], epsilon=1e-5)

    nodes = [
        helper.make_node("Conv", ["x", "c1w", "c1b"], ["c1"], pads=[1, 1, 1, 1],
                         kernel_shape=[3, 3]),
        bn(0, "c1", "b1"),
        helper.make_node("Relu", ["b1"], ["r1"]),
        helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "c2w", "c2b"], ["c2"], auto_pad="SAME_UPPER"),
        bn(1, "c2", "b2"),
        helper.make_node("Add", ["b2", "p1"], ["a2"]),
        bn(2, "a2", "n2"),  # not after a Conv: stays a batch_norm
        helper.make_node("Relu", ["n2"], ["r2"]),
        helper.make_node("Dropout", ["r2"], ["d2"]),
        helper.make_node("GlobalAveragePool", ["d2"], ["g"]),
        helper.make_node("Flatten", ["g"], ["f"]),
        helper.make_node("Identity", ["f"], ["fi"]),
        helper.make_node("Gemm", ["fi", "fw", "fb"], ["y"], transB=1),
    ]
    m = model(nodes, [vi("x", [2, 3, 8, 8])], [vi("y", [2, 10])], inits, name="cnn")
    xd = x.astype(np.float64)
    h = conv2d(xd, c1w, c1b, 1)
    h = np.maximum(batchnorm(h, *bns[0], 1e-5), 0)
    p = maxpool2(h)
    h = batchnorm(conv2d(p, c2w, c2b, 1), *bns[1], 1e-5) + p
    h = np.maximum(batchnorm(h, *bns[2], 1e-5), 0)
    y = h.mean(axis=(2, 3)) @ fw.T.astype(np.float64) + fb
    w.save("cnn", m, [x], [y.astype(np.float32)])
    np.save(os.path.join(w.out, "cnn.x.npy"), x)  # for `vkpipe run`


def gen_transformer(w):
    """A transformer encoder layer as PyTorch exports it: the head reshape
    goes through Shape/Gather/Unsqueeze/Concat, and LayerNorm is expanded
    into ReduceMean, Sub, Pow, Sqrt, Div."""
    B, S, D, H = 2, 5, 16, 2
    Dh = D // H
    x = w.f32(B, S, D)
    p = {n: w.f32(D, D, lo=-0.3, hi=0.3) for n in ("wq", "wk", "wv", "wo")}
    p.update({n: w.f32(D, lo=-0.1, hi=0.1) for n in ("bq", "bk", "bv", "bo", "b2")})
    p["w1"] = w.f32(D, 32, lo=-0.3, hi=0.3)
    p["b1"] = w.f32(32, lo=-0.1, hi=0.1)
    p["w2"] = w.f32(32, D, lo=-0.3, hi=0.3)
    p["g1"], p["be1"] = w.f32(D, lo=0.5, hi=1.5), w.f32(D)
    p["g2"], p["be2"] = w.f32(D, lo=0.5, hi=1.5), w.f32(D)
    inits = [init(k, v) for k, v in p.items()]
    inits += [init("two", np.float32(2.0)), init("eps", np.float32(1e-5)),
              init("scale", np.float32(math.sqrt(Dh))),
              init("i0", np.int64(0)), init("i1", np.int64(1)),
              init("heads", np.array([H], np.int64)), init("dh", np.array([Dh], np.int64)),
              init("dm", np.array([D], np.int64)), init("ax0", np.array([0], np.int64))]
    n = helper.make_node
    nodes = [
        # batch and sequence sizes, the exporter's way
        n("Shape", ["x"], ["xs"]),
        n("Gather", ["xs", "i0"], ["nb"], axis=0),
        n("Gather", ["xs", "i1"], ["ns"], axis=0),
        n("Unsqueeze", ["nb", "ax0"], ["nb1"]),
        n("Unsqueeze", ["ns", "ax0"], ["ns1"]),
        n("Concat", ["nb1", "ns1", "heads", "dh"], ["hshape"], axis=0),
        n("Concat", ["nb1", "ns1", "dm"], ["mshape"], axis=0),
    ]
    for t in "qkv":
        nodes += [
            n("MatMul", ["x", "w" + t], [t + "m"]),
            n("Add", [t + "m", "b" + t], [t + "a"]),
            n("Reshape", [t + "a", "hshape"], [t + "r"]),
            n("Transpose", [t + "r"], [t + "h"], perm=[0, 2, 1, 3]),
        ]
    nodes += [
        n("Transpose", ["kh"], ["kt"], perm=[0, 1, 3, 2]),
        n("MatMul", ["qh", "kt"], ["sc"]),
        n("Div", ["sc", "scale"], ["scs"]),
        n("Softmax", ["scs"], ["pr"], axis=-1),
        n("MatMul", ["pr", "vh"], ["ctx"]),
        n("Transpose", ["ctx"], ["ctt"], perm=[0, 2, 1, 3]),
        n("Reshape", ["ctt", "mshape"], ["ctr"]),
        n("MatMul", ["ctr", "wo"], ["om"]),
        n("Add", ["om", "bo"], ["oa"]),
        n("Add", ["x", "oa"], ["res1"]),
    ]

    def ln(src, g, b, dst, tag):
        return [
            n("ReduceMean", [src], [tag + "mu"], axes=[-1]),
            n("Sub", [src, tag + "mu"], [tag + "d"]),
            n("Pow", [tag + "d", "two"], [tag + "sq"]),
            n("ReduceMean", [tag + "sq"], [tag + "var"], axes=[-1]),
            n("Add", [tag + "var", "eps"], [tag + "ve"]),
            n("Sqrt", [tag + "ve"], [tag + "sd"]),
            n("Div", [tag + "d", tag + "sd"], [tag + "nm"]),
            n("Mul", [tag + "nm", g], [tag + "sc"]),
            n("Add", [tag + "sc", b], [dst]),
        ]

    nodes += ln("res1", "g1", "be1", "ln1", "l1")
    # GELU as torch.onnx exports it (opset < 20): x * (erf(x / sqrt 2) + 1) * 0.5
    inits += [init("sqrt2", np.float32(math.sqrt(2.0))), init("one", np.float32(1.0)),
              init("half", np.float32(0.5))]
    nodes += [
        n("MatMul", ["ln1", "w1"], ["f1"]),
        n("Add", ["f1", "b1"], ["f1b"]),
        n("Div", ["f1b", "sqrt2"], ["gd"]),
        n("Erf", ["gd"], ["ge"]),
        n("Add", ["ge", "one"], ["ga"]),
        n("Mul", ["f1b", "ga"], ["gm"]),
        n("Mul", ["gm", "half"], ["f1r"]),
        n("MatMul", ["f1r", "w2"], ["f2"]),
        n("Add", ["f2", "b2"], ["f2b"]),
        n("Add", ["ln1", "f2b"], ["res2"]),
    ]
    nodes += ln("res2", "g2", "be2", "y", "l2")
    m = model(nodes, [vi("x", [B, S, D])], [vi("y", [B, S, D])], inits,
              name="transformer")
    P = {k: v.astype(np.float64) for k, v in p.items()}
    xd = x.astype(np.float64)

    def heads(t):
        return (xd @ P["w" + t] + P["b" + t]).reshape(B, S, H, Dh).transpose(0, 2, 1, 3)

    q, k, v = heads("q"), heads("k"), heads("v")
    pr = softmax(q @ k.transpose(0, 1, 3, 2) / math.sqrt(Dh), -1)
    ctx = (pr @ v).transpose(0, 2, 1, 3).reshape(B, S, D)
    h1 = layernorm(xd + ctx @ P["wo"] + P["bo"], P["g1"], P["be1"], 1e-5)
    f = gelu(h1 @ P["w1"] + P["b1"]) @ P["w2"] + P["b2"]
    y = layernorm(h1 + f, P["g2"], P["be2"], 1e-5)
    w.save("transformer", m, [x], [y.astype(np.float32)])


def gen_softmax_opsets(w):
    """Softmax's axis before opset 13 coerces the input to 2-D."""
    x = w.f32(2, 3, 4, lo=-3, hi=3)
    for opset in (11, 13):
        m = model([helper.make_node("Softmax", ["x"], ["y"], axis=1)],
                  [vi("x", [2, 3, 4])], [vi("y", [2, 3, 4])], opset=opset)
        if opset < 13:
            y = softmax(x.reshape(2, 12), 1).reshape(2, 3, 4)
        else:
            y = softmax(x, 1)
        w.save("softmax_opset%d" % opset, m, [x], [y.astype(np.float32)])


def gen_ln_not_trailing(w):
    """An expanded normalisation over a middle axis: not a layer_norm (the IR
    normalises trailing axes), so it stays elementwise and still matches."""
    x = w.f32(2, 3, 4)
    n = helper.make_node
    nodes = [
        n("ReduceMean", ["x"], ["mu"], axes=[1]),
        n("Sub", ["x", "mu"], ["d"]),
        n("Pow", ["d", "two"], ["sq"]),
        n("ReduceMean", ["sq"], ["var"], axes=[1]),
        n("Add", ["var", "eps"], ["ve"]),
        n("Sqrt", ["ve"], ["sd"]),
        n("Div", ["d", "sd"], ["y"]),
    ]
    m = model(nodes, [vi("x", [2, 3, 4])], [vi("y", [2, 3, 4])],
              [init("two", np.float32(2.0)), init("eps", np.float32(1e-5))])
    xd = x.astype(np.float64)
    mu = xd.mean(1, keepdims=True)
    y = (xd - mu) / np.sqrt(((xd - mu) ** 2).mean(1, keepdims=True) + 1e-5)
    w.save("ln_middle_axis", m, [x], [y.astype(np.float32)])


def gen_old_opset(w):
    """Opset 9 forms: Slice, Clip, Squeeze, Unsqueeze, Split and ReduceSum
    take their parameters as attributes, MaxPool has no dilations."""
    x = w.f32(4, 6)
    n = helper.make_node
    nodes = [
        n("Slice", ["x"], ["s"], starts=[1, 0], ends=[3, 100], axes=[0, 1]),
        n("Clip", ["s"], ["c"], min=-0.5, max=0.5),
        n("Unsqueeze", ["c"], ["u"], axes=[0]),
        n("Squeeze", ["u"], ["y1"], axes=[0]),
        n("Split", ["x"], ["y2", "y3"], axis=1, split=[2, 4]),
        n("ReduceSum", ["x"], ["y4"], axes=[1], keepdims=0),
    ]
    m = model(nodes, [vi("x", [4, 6])],
              [vi("y1", [2, 6]), vi("y2", [4, 2]), vi("y3", [4, 4]), vi("y4", [4])],
              opset=9)
    ys = [np.clip(x[1:3, :], -0.5, 0.5), x[:, :2], x[:, 2:], x.sum(1)]
    w.save("opset9", m, [x], [y.astype(np.float32) for y in ys])


def gen_new_opset(w):
    """Opset 21 forms: Split by num_outputs with an uneven last part,
    Squeeze/Unsqueeze axes as inputs, Cast with saturate, LayerNormalization,
    Identity; and a dynamic batch axis bound at load time."""
    x = w.f32(2, 7, 4)
    n = helper.make_node
    nodes = [
        n("Split", ["x"], ["a", "b", "c"], axis=1, num_outputs=3),
        n("Unsqueeze", ["c", "ax0"], ["u"]),
        n("Squeeze", ["u", "ax0"], ["y3"]),
        n("LayerNormalization", ["a", "gamma"], ["ln"], axis=-1, epsilon=1e-5),
        n("Cast", ["ln"], ["y1"], to=TensorProto.FLOAT, saturate=1),
        n("Identity", ["b"], ["y2"]),
    ]
    gamma = w.f32(4)
    m = model(nodes, [vi("x", ["batch", 7, 4])],
              [vi("y1", ["batch", 3, 4]), vi("y2", ["batch", 3, 4]),
               vi("y3", ["batch", 1, 4])],
              [init("ax0", np.array([0], np.int64)), init("gamma", gamma)], opset=21)
    a = x[:, :3].astype(np.float64)
    mu = a.mean(-1, keepdims=True)
    ln = (a - mu) / np.sqrt(((a - mu) ** 2).mean(-1, keepdims=True) + 1e-5) * gamma
    w.save("opset21", m, [x],
           [ln.astype(np.float32), x[:, 3:6].copy(), x[:, 6:7].copy()])
    np.save(os.path.join(w.out, "opset21.x.npy"), x)
    # Opset 22 only widened type constraints (bfloat16 on many ops): the same
    # graph, same results.
    m.opset_import[0].version = 22
    w.save("opset22", m, [x],
           [ln.astype(np.float32), x[:, 3:6].copy(), x[:, 6:7].copy()])


def gen_conformance_dir(w):
    """A small ONNX-backend-style folder for the conformance runner itself:
    one test that passes, one whose expected output is wrong, one with an
    unsupported op, one whose Reshape shape is a graph input (frozen by the
    runner)."""
    root = os.path.join(w.out, "conformance")
    n = helper.make_node

    def case(name, m, inputs, outputs):
        d = os.path.join(root, name)
        os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
        onnx.save(m, os.path.join(d, "model.onnx"))
        for kind, arrays in (("input", inputs), ("output", outputs)):
            for k, a in enumerate(arrays):
                t = numpy_helper.from_array(np.asarray(a), "%s_%d" % (kind, k))
                with open(os.path.join(d, "test_data_set_0", "%s_%d.pb" % (kind, k)), "wb") as f:
                    f.write(t.SerializeToString())

    x = w.f32(3, 4)
    relu = model([n("Relu", ["x"], ["y"])], [vi("x", [3, 4])], [vi("y", [3, 4])])
    case("test_relu_ok", relu, [x], [np.maximum(x, 0)])
    case("test_relu_wrong", relu, [x], [np.maximum(x, 0) + 1])
    case("test_tfidf_unsupported",
         model([n("TfIdfVectorizer", ["x"], ["y"])], [vi("x", [3, 4])], [vi("y", [3, 4])]),
         [x], [x])
    case("test_reshape_shape_input",
         model([n("Reshape", ["x", "s"], ["y"])], [vi("x", [3, 4]), vi("s", [2], I64)],
               [vi("y", [4, 3])]),
         [x, np.array([4, 3], np.int64)], [x.reshape(4, 3)])


def gen_fold(w):
    """A constant expression through every folded op, added to the input: the
    imported graph is one IR add."""
    x = w.f32(2, 3)
    n = helper.make_node
    i64 = lambda name, v: init(name, np.array(v, np.int64))
    inits = [i64("r0", 0), i64("r6", 6), i64("r1", 1), i64("s32", [3, 2]),
             i64("idx", [[1, 0]]), i64("ax0", [0]), i64("ax1", [1]),
             i64("m1", [-1]), i64("m100", [-100]), i64("z", [0]), i64("two", [2]),
             i64("shape21", [2, 1]), i64("num", [7, -7]), i64("den", [2, 2])]
    half = helper.make_tensor("half", F32, [1], [0.5])
    nodes = [
        n("Range", ["r0", "r6", "r1"], ["r"]),                      # [0..5]
        n("Cast", ["r"], ["rf"], to=F32),
        n("Reshape", ["rf", "s32"], ["rr"]),                        # [3,2]
        n("Transpose", ["rr"], ["rt"], perm=[1, 0]),                # [2,3]
        n("Gather", ["rt", "idx"], ["g"], axis=0),                  # [1,2,3]
        n("Squeeze", ["g", "ax0"], ["gs"]),                         # [2,3]
        n("Slice", ["gs", "m1", "m100", "ax1", "m1"], ["rev"]),     # columns reversed
        n("Slice", ["rev", "z", "two", "ax1"], ["left"]),           # [2,2]
        n("ConstantOfShape", ["shape21"], ["cs"], value=half),      # [2,1] of 0.5
        n("Concat", ["left", "cs"], ["cc"], axis=1),                # [2,3]
        n("Div", ["num", "den"], ["q"]),                            # [3,-3]
        n("Cast", ["q"], ["qf"], to=F32),
        n("Unsqueeze", ["qf", "ax1"], ["qu"]),                      # [2,1]
        n("Mul", ["cc", "qu"], ["m"]),
        n("Size", ["x"], ["sz"]),
        n("Cast", ["sz"], ["szf"], to=F32),
        n("Add", ["m", "szf"], ["a"]),
        n("Add", ["x", "a"], ["y"]),
    ]
    m = model(nodes, [vi("x", [2, 3])], [vi("y", [2, 3])], inits)
    rt = np.arange(6, dtype=np.float32).reshape(3, 2).T
    gs = rt[[1, 0]]
    cc = np.concatenate([gs[:, ::-1][:, :2], np.full((2, 1), 0.5, np.float32)], 1)
    a = cc * np.array([[3.0], [-3.0]], np.float32) + 6.0
    w.save("fold", m, [x], [(x + a).astype(np.float32)])


def gen_fold_select(w):
    """Comparisons, logic, Where, Expand, Max/Min, Floor/Ceil on constants."""
    x = w.f32(2, 3)
    n = helper.make_node
    inits = [init("c1", np.array([0, 1, 2], np.int64)), init("c2", np.array([2, 1, 0], np.int64)),
             init("ten", np.array([10.0], np.float32)), init("m1", np.array([-1.0], np.float32)),
             init("s21", np.array([2, 1], np.int64)), init("h", np.array([0.5], np.float32)),
             init("p", np.array([1.7], np.float32)), init("q", np.array([-1.2], np.float32))]
    nodes = [
        n("Equal", ["c1", "c2"], ["eq"]), n("Less", ["c1", "c2"], ["lt"]),
        n("Greater", ["c1", "c2"], ["gt"]), n("And", ["gt", "eq"], ["none"]),
        n("Or", ["eq", "lt"], ["o"]), n("Or", ["o", "none"], ["o2"]), n("Not", ["o2"], ["no"]),
        n("Where", ["no", "ten", "m1"], ["wv"]), n("Expand", ["wv", "s21"], ["ex"]),
        n("Max", ["ex", "h"], ["mx"]), n("Floor", ["p"], ["fl"]), n("Ceil", ["q"], ["ce"]),
        n("Min", ["fl", "ce"], ["mn"]), n("Add", ["mx", "mn"], ["a"]), n("Add", ["x", "a"], ["y"]),
    ]
    m = model(nodes, [vi("x", [2, 3])], [vi("y", [2, 3])], inits)
    a = np.maximum(np.broadcast_to(np.array([-1.0, -1.0, 10.0], np.float32), (2, 3)), 0.5) - 1.0
    w.save("fold_select", m, [x], [(x + a).astype(np.float32)])


def gen_elementwise(w):
    """Elementwise and logic ops on runtime tensors (opset 18): Clip with a
    runtime min and a constant max, Mod, Selu's attribute, Max and Sum of
    three inputs, Mean, comparisons, Xor, Not, Where, Mish, and Dropout with
    its mask; then the integer ops: BitwiseAnd/Not, BitShift, Pow with an
    integer base, Sign."""
    x, y = w.f32(2, 3, 4, lo=-2.0, hi=2.0), w.f32(3, 4, lo=0.5, hi=1.5)
    y *= w.rng.choice([-1.0, 1.0], size=y.shape).astype(np.float32)
    lo = np.float32(w.rng.uniform(-1.0, 0.0))
    n = helper.make_node
    nodes = [
        n("Clip", ["x", "lo", ""], ["c1"]), n("Clip", ["x", "", "hi"], ["c2"]),
        n("Mod", ["x", "y"], ["md"], fmod=1), n("Selu", ["x"], ["se"], alpha=1.5),
        n("Max", ["c1", "c2", "y"], ["mx"]), n("Mean", ["x", "y"], ["mn"]),
        n("Less", ["x", "y"], ["lt"]), n("GreaterOrEqual", ["x", "y"], ["ge"]),
        n("Xor", ["lt", "ge"], ["xo"]), n("Not", ["xo"], ["nx"]),
        n("Where", ["lt", "md", "se"], ["wh"]), n("Dropout", ["wh"], ["d", "mask"]),
        n("Mish", ["mn"], ["mi"]), n("Sum", ["d", "mx", "mi"], ["out"]),
    ]
    m = model(nodes, [vi("x", [2, 3, 4]), vi("y", [3, 4]), vi("lo", [])],
              [vi("out", [2, 3, 4]), vi("mask", [2, 3, 4], TensorProto.BOOL),
               vi("nx", [2, 3, 4], TensorProto.BOOL)],
              [init("hi", np.float32(0.5))], opset=18)
    xd, yd = x.astype(np.float64), y.astype(np.float64)
    selu = 1.05070102214813232421875 * np.where(xd <= 0, 1.5 * np.expm1(xd), xd)
    wh = np.where(xd < yd, np.fmod(xd, yd), selu)
    mx = np.maximum(np.maximum(np.maximum(xd, lo), np.minimum(xd, 0.5)), yd)
    mn = (xd + yd) / 2
    mish = mn * np.tanh(np.log1p(np.exp(-np.abs(mn))) + np.maximum(mn, 0))
    w.save("elementwise", m, [x, y, np.array(lo, np.float32)],
           [(wh + mx + mish).astype(np.float32), np.ones((2, 3, 4), bool),
            np.zeros((2, 3, 4), bool)])

    a = w.rng.integers(-40, 40, size=6, dtype=np.int32)
    b = w.rng.integers(-40, 40, size=6, dtype=np.int32)
    u = w.rng.integers(0, 255, size=6, dtype=np.uint8)
    sh = w.rng.integers(0, 10, size=6, dtype=np.uint8)
    e = w.rng.integers(0, 4, size=6, dtype=np.int64)
    nodes = [n("BitwiseAnd", ["a", "b"], ["ba"]), n("BitwiseNot", ["ba"], ["bn"]),
             n("BitShift", ["u", "sh"], ["sr"], direction="RIGHT"),
             n("Pow", ["a", "e"], ["pw"]), n("Sign", ["b"], ["sg"])]
    I32, U8 = TensorProto.INT32, TensorProto.UINT8
    m = model(nodes, [vi("a", [6], I32), vi("b", [6], I32), vi("u", [6], U8),
                      vi("sh", [6], U8)],
              [vi("bn", [6], I32), vi("sr", [6], U8), vi("pw", [6], I32), vi("sg", [6], I32)],
              [init("e", e)], opset=18)
    w.save("bitwise", m, [a, b, u, sh],
           [np.invert(a & b), np.right_shift(u, sh),
            (a.astype(np.int64) ** e).astype(np.int32), np.sign(b)])


def gen_dropout(w):
    """Dropout with training_mode: an identity (and an all-true mask) when
    the ratio is a constant 0, whatever the runtime training_mode; refused
    when a runtime ratio could make it drop."""
    x = w.f32(3, 4)
    n = helper.make_node
    B = TensorProto.BOOL
    m = model([n("Dropout", ["x", "zero", "t"], ["y", "mask"])],
              [vi("x", [3, 4]), vi("t", [], B)], [vi("y", [3, 4]), vi("mask", [3, 4], B)],
              [init("zero", np.float32(0.0))])
    w.save("dropout_ratio0", m, [x, np.array(True)], [x, np.ones((3, 4), bool)])
    m = model([n("Dropout", ["x", "r", "t"], ["y"])],
              [vi("x", [3, 4]), vi("r", []), vi("t", [], B)], [vi("y", [3, 4])])
    w.save("dropout_training", m)


def gen_tensor_files(w):
    """TensorProto files in each storage form the reader handles."""
    vals = [i * 0.5 - 1.0 for i in range(6)]
    files = {
        "float_data": helper.make_tensor("t", F32, [2, 3], vals),
        "raw_float": helper.make_tensor("t", F32, [2, 3], np.array(vals, np.float32).tobytes(), raw=True),
        "int64_data": helper.make_tensor("t", I64, [2, 3], [int(2 * v) for v in vals]),
        "int32_data": helper.make_tensor("t", TensorProto.INT32, [2, 3], [int(2 * v) for v in vals]),
        "float16_bits": helper.make_tensor("t", TensorProto.FLOAT16, [2, 3], np.array(vals, np.float16)),
        "scalar": helper.make_tensor("t", F32, [], [2.5]),
        "double": helper.make_tensor("t", TensorProto.DOUBLE, [2, 3], vals),
        "bool": helper.make_tensor("t", TensorProto.BOOL, [2, 3], [v > 0 for v in vals]),
        "string": helper.make_tensor("t", TensorProto.STRING, [2], [b"a", b"bc"]),
    }
    bad = helper.make_tensor("t", F32, [2, 3], vals)
    del bad.float_data[3:]
    files["short"] = bad
    for name, t in files.items():
        with open(os.path.join(w.out, "tensor_%s.pb" % name), "wb") as f:
            f.write(t.SerializeToString())


def gen_refusals(w):
    """One model with several unsupported nodes: the error lists them all."""
    n = helper.make_node
    nodes = [
        n("Relu", ["x"], ["a"], name="fine"),
        n("TfIdfVectorizer", ["a"], ["b"], name="no_such_op"),
        n("LeakyRelu", ["x"], ["c"], name="odd_attr", beta=2.0),
        n("Relu", ["b"], ["d"], name="downstream"),  # of a refused node: silent
        n("MyOp", ["x"], ["e"], name="custom", domain="com.example"),
        n("Add", ["c", "e"], ["f"], name="join"),
    ]
    m = model(nodes, [vi("x", [2, 3]), vi("z", [2], TensorProto.COMPLEX64)],
              [vi("d", [2, 3]), vi("f", [2, 3])])
    w.save("refuse", m)
    # 500+ problems of three kinds, each followed by a node that is fine but
    # depends on it: the error must group them and leave nothing out.
    nodes = []
    for i in range(300):
        nodes.append(n("Foo", ["x"], ["f%d" % i], name="foo%d" % i, domain="com.example"))
        nodes.append(n("Relu", ["f%d" % i], ["fr%d" % i], name="after_foo%d" % i))
    for i in range(200):
        nodes.append(n("NoSuchOp", ["x"], ["u%d" % i], name="unknown%d" % i))
    for i in range(20):
        nodes.append(n("LeakyRelu", ["x"], ["l%d" % i], name="leaky%d" % i, beta=1.0))
    outs = ["fr%d" % i for i in range(300)] + ["u%d" % i for i in range(200)] + \
        ["l%d" % i for i in range(20)]
    m = model(nodes, [vi("x", ["batch", 3])], [vi(o, [2, 3]) for o in outs])
    w.save("many_problems", m)
    # Unnamed and duplicated node names get unique generated names.
    nodes = [n("Relu", ["x"], ["a"]), n("Relu", ["a"], ["b"], name="dup"),
             n("Neg", ["b"], ["c"], name="dup"), n("Abs", ["c"], ["y"], name="")]
    w.save("names", model(nodes, [vi("x", [3])], [vi("y", [3])]))


def gen_bad(w):
    """Malformed models: each must be refused with an error naming the
    problem."""
    n = helper.make_node
    out = w.out

    def save(name, m):
        # Bypass onnx.save's checks: these are wrong on purpose.
        with open(os.path.join(out, name + ".onnx"), "wb") as f:
            f.write(m.SerializeToString())

    relu_w = [n("Add", ["x", "w"], ["y"])]
    io = ([vi("x", [2, 3])], [vi("y", [2, 3])])

    t = init("w", np.zeros((2, 3), np.float32))
    del t.dims[:]
    t.dims.extend([-2, 3])
    save("bad_negative_dims", model(relu_w, *io, [t]))
    t = init("w", np.zeros((2, 3), np.float32))
    del t.dims[:]
    t.dims.extend([1 << 40, 1 << 40, 1 << 20])
    save("bad_huge_dims", model(relu_w, *io, [t]))
    t = init("w", np.zeros((2, 3), np.float32))
    t.raw_data = t.raw_data[:10]
    save("bad_raw_length", model(relu_w, *io, [t]))
    save("bad_missing_initializer", model(relu_w, *io))
    save("bad_cycle", model([n("Relu", ["b"], ["a"], name="r1"),
                             n("Relu", ["a"], ["b"], name="r2"),
                             n("Add", ["x", "a"], ["y"], name="r3")], *io))
    save("bad_type_mismatch",
         model(relu_w, *io, [init("w", np.zeros((2, 3), np.int64))]))
    save("bad_opset", model([n("Relu", ["x"], ["y"])], *io, opset=23))
    save("bad_shape_mismatch",
         model(relu_w, *io, [init("w", np.zeros((4, 5), np.float32))]))
    # External data: a location outside the model's folder, a missing file,
    # and a good one.
    for name, loc in (("bad_external_escape", "../outside.bin"),
                      ("bad_external_missing", "no_such_file.bin"),
                      ("external_ok", "external_ok.bin")):
        t = TensorProto()
        t.name, t.data_type = "w", F32
        t.dims.extend([2, 3])
        t.data_location = TensorProto.EXTERNAL
        for k, v in (("location", loc), ("offset", "8"), ("length", "24")):
            e = t.external_data.add()
            e.key, e.value = k, v
        save(name, model(relu_w, *io, [t]))
    wv = w.f32(2, 3)
    with open(os.path.join(out, "external_ok.bin"), "wb") as f:
        f.write(b"\0" * 8 + wv.tobytes())
    x = w.f32(2, 3)
    for k, a in enumerate([x]):
        with open(os.path.join(out, "external_ok.input_%d.pb" % k), "wb") as f:
            f.write(numpy_helper.from_array(a, "x").SerializeToString())
    with open(os.path.join(out, "external_ok.output_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(x + wv, "y").SerializeToString())
    # Absurd sizes and values.
    y = [vi("y", [2, 3])]
    save("bad_huge_input", model([n("Relu", ["x"], ["y"])],
                                 [vi("x", [1 << 40, 1 << 40])], y))
    save("bad_huge_kernel", model([n("MaxPool", ["x"], ["y"], kernel_shape=[1 << 40, 2])],
                                  [vi("x", [1, 1, 4, 4])], y))
    save("bad_huge_constant", model([n("ConstantOfShape", ["s"], ["y"])], [], y,
                                    [init("s", np.array([1 << 30, 1 << 30], np.int64))]))
    save("bad_huge_range", model([n("Range", ["a", "b", "c"], ["y"])], [], y,
                                 [init("a", np.int64(0)), init("b", np.int64(1 << 62)),
                                  init("c", np.int64(1))]))
    # Extreme but legal: INT64_MIN/MAX slice bounds and step import fine.
    save("extreme_slice", model(
        [n("Slice", ["x", "s", "e", "a", "st"], ["y"])], [vi("x", [3, 2])], y,
        [init("s", np.array([-(1 << 63)], np.int64)), init("e", np.array([(1 << 63) - 1], np.int64)),
         init("a", np.array([0], np.int64)), init("st", np.array([-(1 << 63)], np.int64))]))
    with open(os.path.join(out, "bad_not_protobuf.onnx"), "wb") as f:
        f.write(b"\xff\xff\xff\xff this is not a model")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    env = os.environ.get("VKPIPE_TEST_SEED")
    seed = int(env) if env else secrets.randbits(63)
    print("gen_models.py: seed %d (set VKPIPE_TEST_SEED to repeat)" % seed)
    with open(os.path.join(out, "seed.txt"), "w") as f:
        f.write("%d\n" % seed)
    w = Writer(out, seed)
    gen_cnn(w)
    gen_transformer(w)
    gen_softmax_opsets(w)
    gen_ln_not_trailing(w)
    gen_old_opset(w)
    gen_new_opset(w)
    gen_conformance_dir(w)
    gen_fold(w)
    gen_fold_select(w)
    gen_elementwise(w)
    gen_dropout(w)
    gen_tensor_files(w)
    gen_refusals(w)
    gen_bad(w)
    # Op families keep their models in models_<family>.py next to this file,
    # each with a generate(w) that uses the helpers above.
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    for path in sorted(glob.glob(os.path.join(here, "models_*.py"))):
        importlib.import_module(os.path.basename(path)[:-3]).generate(w)


if __name__ == "__main__":
    main()
