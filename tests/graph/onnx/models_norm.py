# SPDX-License-Identifier: Apache-2.0
"""ONNX models for the importer of the reduction, softmax-family and
normalisation ops (graph/onnx_norm.c) and of PyTorch's GroupNorm pattern
(graph/onnx_fuse.c), with NumPy's expected outputs. Imported by
gen_models.py, which calls generate(w); test_onnx_norm.c and
test_onnx_fuse.c load them."""
import numpy as np
from onnx import helper, numpy_helper

from gen_models import I64, init, model, vi


def group_norm_ref(x, groups, gamma, beta, eps):
    xd = x.astype(np.float64)
    g = xd.reshape(x.shape[0], groups, -1)
    mu = g.mean(-1, keepdims=True)
    y = ((g - mu) / np.sqrt(((g - mu) ** 2).mean(-1, keepdims=True) + eps)).reshape(x.shape)
    sh = (1, -1) + (1,) * (x.ndim - 2)
    return y * gamma.reshape(sh) + beta.reshape(sh)


def gen_group_norm(w):
    """nn.GroupNorm(4, 8) exactly as torch.onnx.export writes it (opset 13,
    constants folded): Reshape(x, [0, G, -1]) -> InstanceNormalization with
    unit scale and zero bias -> Reshape(., Shape(x)) -> Mul(gamma [C, 1, 1])
    -> Add(beta [C, 1, 1]); a variant with gamma and beta as graph inputs
    (Mul's operands swapped, the shapes as initializers); and one whose
    InstanceNormalization scale is not 1 (not a GroupNorm: imported as is)."""
    N, C, H, W, G = 2, 8, 5, 3, 4
    n = helper.make_node

    def const(name, a):
        return n("Constant", [], [name], name=name.replace("_output_0", ""),
                 value=numpy_helper.from_array(np.asarray(a), name))

    x = w.f32(N, C, H, W, lo=-2, hi=2)
    gamma, beta = w.f32(C, lo=0.5, hi=1.5), w.f32(C)
    nodes = [
        const("/gn/Constant_output_0", np.array([0, G, -1], np.int64)),
        n("Reshape", ["input", "/gn/Constant_output_0"], ["/gn/Reshape_output_0"],
          name="/gn/Reshape"),
        const("/gn/Constant_1_output_0", np.ones(G, np.float32)),
        const("/gn/Constant_2_output_0", np.zeros(G, np.float32)),
        n("InstanceNormalization", ["/gn/Reshape_output_0", "/gn/Constant_1_output_0",
                                    "/gn/Constant_2_output_0"],
          ["/gn/InstanceNormalization_output_0"], name="/gn/InstanceNormalization",
          epsilon=1e-5),
        n("Shape", ["input"], ["/gn/Shape_output_0"], name="/gn/Shape"),
        n("Reshape", ["/gn/InstanceNormalization_output_0", "/gn/Shape_output_0"],
          ["/gn/Reshape_1_output_0"], name="/gn/Reshape_1"),
        n("Mul", ["/gn/Reshape_1_output_0", "onnx::Mul_9"], ["/gn/Mul_output_0"],
          name="/gn/Mul"),
        n("Add", ["/gn/Mul_output_0", "onnx::Add_10"], ["output"], name="/gn/Add"),
    ]
    m = model(nodes, [vi("input", [N, C, H, W])], [vi("output", [N, C, H, W])],
              [init("onnx::Mul_9", gamma.reshape(C, 1, 1)),
               init("onnx::Add_10", beta.reshape(C, 1, 1))], name="torch_jit")
    y = group_norm_ref(x, G, gamma, beta, 1e-5)
    w.save("group_norm_torch", m, [x], [y.astype(np.float32)])

    x = w.f32(3, 6, 7, lo=-2, hi=2)
    gamma, beta = w.f32(6, 1), w.f32(6, 1)
    nodes = [
        n("Reshape", ["x", "grouped"], ["r"]),
        n("InstanceNormalization", ["r", "ones", "zeros"], ["in"], epsilon=1e-3),
        n("Reshape", ["in", "back"], ["nr"]),
        n("Mul", ["gamma", "nr"], ["m"]),
        n("Add", ["beta", "m"], ["y"]),
    ]
    m = model(nodes, [vi("x", [3, 6, 7]), vi("gamma", [6, 1]), vi("beta", [6, 1])],
              [vi("y", [3, 6, 7])],
              [init("grouped", np.array([3, 2, -1], np.int64)),
               init("back", np.array([0, 6, 7], np.int64)),
               init("ones", np.ones(2, np.float32)), init("zeros", np.zeros(2, np.float32))])
    y = group_norm_ref(x, 2, gamma, beta, 1e-3)
    w.save("group_norm_inputs", m, [x, gamma, beta], [y.astype(np.float32)])

    x = w.f32(2, 4, 3)
    nodes = [
        n("Reshape", ["x", "grouped"], ["r"]),
        n("InstanceNormalization", ["r", "scale", "zeros"], ["in"]),
        n("Reshape", ["in", "back"], ["y"]),
    ]
    scale = np.array([1.0, 2.0], np.float32)
    m = model(nodes, [vi("x", [2, 4, 3])], [vi("y", [2, 4, 3])],
              [init("grouped", np.array([0, 2, -1], np.int64)),
               init("back", np.array([2, 4, 3], np.int64)),
               init("scale", scale), init("zeros", np.zeros(2, np.float32))])
    y = group_norm_ref(x, 2, np.repeat(scale, 2), np.zeros(4), 1e-5)
    w.save("group_norm_scaled", m, [x], [y.astype(np.float32)])


def gen_norm_opsets(w):
    """The reduction and normalisation mappers across opsets: axes as
    attributes (11) and as inputs (18), noop_with_empty_axes, the softmax
    family's 2-D coercion before 13, GroupNormalization with per-group (18,
    a constant scale and a runtime bias) and per-channel (21) parameters,
    BatchNormalization of 1-D data, LpNormalization, MeanVarianceNormalization,
    LRN, InstanceNormalization; and a runtime axes input, refused."""
    n = helper.make_node
    x = w.f32(2, 3, 4, lo=-3, hi=3)
    nodes = [n("LogSoftmax", ["x"], ["y0"], axis=1), n("Hardmax", ["x"], ["y1"], axis=1),
             n("ReduceL2", ["x"], ["y2"], axes=[2, 0], keepdims=0),
             n("ReduceMax", ["x"], ["y3"], axes=[-1])]
    m = model(nodes, [vi("x", [2, 3, 4])],
              [vi("y0", [2, 3, 4]), vi("y1", [2, 3, 4]), vi("y2", [3]), vi("y3", [2, 3, 1])],
              opset=11)
    xd = x.astype(np.float64).reshape(2, 12)
    ls = xd - xd.max(1, keepdims=True)
    ls = ls - np.log(np.exp(ls).sum(1, keepdims=True))
    hm = np.zeros_like(xd)
    hm[np.arange(2), xd.argmax(1)] = 1
    ys = [ls.reshape(2, 3, 4), hm.reshape(2, 3, 4),
          np.sqrt((x.astype(np.float64) ** 2).sum(axis=(0, 2))), x.max(-1, keepdims=True)]
    w.save("norm_opset11", m, [x], [y.astype(np.float32) for y in ys])

    x, b, v = w.f32(2, 6, 3, 2), w.f32(3), w.f32(5)
    s = w.f32(3, lo=0.5, hi=1.5)
    bn = [w.f32(1) for _ in range(3)] + [w.f32(1, lo=0.5, hi=1.5)]
    nodes = [n("GroupNormalization", ["x", "s", "b"], ["y0"], num_groups=3, epsilon=1e-3),
             n("BatchNormalization", ["v", "bs", "bb", "bm", "bv"], ["y1"]),
             n("ReduceProd", ["x", "ax13"], ["y2"], keepdims=0),
             n("ReduceLogSumExp", ["x"], ["lse"], noop_with_empty_axes=1),
             n("Neg", ["lse"], ["y3"])]
    m = model(nodes, [vi("x", [2, 6, 3, 2]), vi("b", [3]), vi("v", [5])],
              [vi("y0", [2, 6, 3, 2]), vi("y1", [5]), vi("y2", [2, 3]), vi("y3", [2, 6, 3, 2])],
              [init("s", s), init("ax13", np.array([1, 3], np.int64)),
               init("bs", bn[0]), init("bb", bn[1]), init("bm", bn[2]), init("bv", bn[3])],
              opset=18)
    ys = [group_norm_ref(x, 3, np.repeat(s, 2), np.repeat(b, 2), 1e-3),
          (v - bn[2]) / np.sqrt(bn[3] + 1e-5) * bn[0] + bn[1],
          np.prod(x.astype(np.float64), axis=(1, 3)), -x]
    w.save("norm_opset18", m, [x, b, v], [y.astype(np.float32) for y in ys])

    x = w.f32(2, 4, 3, 3)
    s, b = w.f32(4), w.f32(4)
    nodes = [n("LpNormalization", ["x"], ["y0"], axis=1, p=1),
             n("MeanVarianceNormalization", ["x"], ["y1"]),
             n("LRN", ["x"], ["y2"], size=3, alpha=0.01, beta=0.5, bias=2.0),
             n("InstanceNormalization", ["x", "s", "b"], ["y3"], epsilon=1e-3)]
    m = model(nodes, [vi("x", [2, 4, 3, 3])], [vi("y%d" % i, [2, 4, 3, 3]) for i in range(4)],
              [init("s", s), init("b", b)], opset=18)
    xd = x.astype(np.float64)
    mu = xd.mean(axis=(0, 2, 3), keepdims=True)
    mvn = (xd - mu) / (np.sqrt(((xd - mu) ** 2).mean(axis=(0, 2, 3), keepdims=True)) + 1e-9)
    sq = np.stack([(xd[:, max(0, c - 1):c + 2] ** 2).sum(1) for c in range(4)], 1)
    ys = [xd / np.abs(xd).sum(1, keepdims=True), mvn, xd / (2.0 + 0.01 / 3 * sq) ** 0.5,
          group_norm_ref(x, 4, s, b, 1e-3)]
    w.save("norm_opset18b", m, [x], [y.astype(np.float32) for y in ys])

    x = w.f32(2, 6, 5)
    s, b = w.f32(6), w.f32(6)
    nodes = [n("GroupNormalization", ["x", "s", "b"], ["y0"], num_groups=2, stash_type=1),
             n("ReduceMin", ["x", "none"], ["y1"]),
             n("ReduceSumSquare", ["x", "ax1"], ["y2"])]
    m = model(nodes, [vi("x", [2, 6, 5])],
              [vi("y0", [2, 6, 5]), vi("y1", [1, 1, 1]), vi("y2", [2, 1, 5])],
              [init("s", s), init("b", b), init("none", np.zeros(0, np.int64)),
               init("ax1", np.array([1], np.int64))], opset=21)
    ys = [group_norm_ref(x, 2, s, b, 1e-5), x.min(keepdims=True),
          (x.astype(np.float64) ** 2).sum(1, keepdims=True)]
    w.save("norm_opset21", m, [x], [y.astype(np.float32) for y in ys])

    m = model([n("ReduceMax", ["x", "axes"], ["y"])],
              [vi("x", [2, 3]), vi("axes", [1], I64)], [vi("y", [2, 1])], opset=18)
    w.save("reduce_runtime_axes", m)


def generate(w):
    gen_group_norm(w)
    gen_norm_opsets(w)
