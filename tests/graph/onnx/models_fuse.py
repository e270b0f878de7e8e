# SPDX-License-Identifier: Apache-2.0
"""ONNX models for the RMSNorm and tanh-GELU fusions (graph/onnx_fuse.c), in
the spellings exporters write, with NumPy's expected outputs. Imported by
gen_models.py, which calls generate(w); test_onnx_fuse.c loads them."""
import math

import numpy as np
from onnx import helper

from gen_models import init, model, vi

n = helper.make_node
SHAPE = [2, 5, 24]


def rms_ref(x, gamma, eps):
    xd = x.astype(np.float64)
    y = xd / np.sqrt((xd * xd).mean(axis=-1, keepdims=True) + eps)
    return (y * gamma if gamma is not None else y).astype(np.float32)


def gen_rms(w):
    """LLaMA/T5-style RMSNorm: x * 1 / sqrt(mean(x^2) + eps) * gamma, as
    torch writes it (Pow, ReduceMean, Add, Sqrt, Div(1, .), Mul, Mul), with
    Reciprocal, as a Div by the RMS, with Mul(x, x), and at opset 18 with the
    axes as an input."""
    x = w.f32(*SHAPE, lo=-3.0, hi=3.0)
    gamma = w.f32(SHAPE[-1])
    eps = 1e-6
    inits = [init("two", np.float32(2.0)), init("eps", np.float32(eps)),
             init("one", np.float32(1.0)), init("gamma", gamma)]
    head = [n("Pow", ["x", "two"], ["sq"]),
            n("ReduceMean", ["sq"], ["ms"], axes=[-1], keepdims=1),
            n("Add", ["ms", "eps"], ["mse"]),
            n("Sqrt", ["mse"], ["rms"])]
    forms = {
        "rms_torch": [n("Div", ["one", "rms"], ["inv"]),
                      n("Mul", ["x", "inv"], ["nx"]),
                      n("Mul", ["nx", "gamma"], ["y"])],
        "rms_reciprocal": [n("Reciprocal", ["rms"], ["inv"]),
                           n("Mul", ["inv", "x"], ["nx"]),
                           n("Mul", ["gamma", "nx"], ["y"])],
        "rms_div": [n("Div", ["x", "rms"], ["y"])],
    }
    for name, tail in forms.items():
        m = model(head + tail, [vi("x", SHAPE)], [vi("y", SHAPE)], inits, opset=17)
        g = None if name == "rms_div" else gamma
        w.save(name, m, [x], [rms_ref(x, g, eps)])
    # x * x and opset 18's axes input.
    head18 = [n("Mul", ["x", "x"], ["sq"]),
              n("ReduceMean", ["sq", "axes"], ["ms"], keepdims=1),
              n("Add", ["eps", "ms"], ["mse"]),
              n("Sqrt", ["mse"], ["rms"])]
    m = model(head18 + forms["rms_torch"], [vi("x", SHAPE)], [vi("y", SHAPE)],
              inits + [init("axes", np.array([-1], dtype=np.int64))], opset=18)
    w.save("rms_opset18", m, [x], [rms_ref(x, gamma, eps)])
    # Mean over a middle axis is not RMSNorm over trailing axes: not fused.
    mid = [n("Pow", ["x", "two"], ["sq"]),
           n("ReduceMean", ["sq"], ["ms"], axes=[1], keepdims=1)] + head[2:] + \
        [n("Div", ["x", "rms"], ["y"])]
    m = model(mid, [vi("x", SHAPE)], [vi("y", SHAPE)], inits, opset=17)
    xd = x.astype(np.float64)
    y = xd / np.sqrt((xd * xd).mean(axis=1, keepdims=True) + eps)
    w.save("rms_middle_axis", m, [x], [y.astype(np.float32)])


def gen_gelu_tanh(w):
    """tanh-approximated GELU as torch.nn.functional.gelu(approximate='tanh')
    exports it (x*x*x, 0.5 last) and as Hugging Face's NewGELU writes it
    (Pow(x, 3), x * 0.5 first)."""
    x = w.f32(*SHAPE, lo=-4.0, hi=4.0)
    xd = x.astype(np.float64)
    c = math.sqrt(2.0 / math.pi)
    y = (0.5 * xd * (1.0 + np.tanh(c * (xd + 0.044715 * xd ** 3)))).astype(np.float32)
    inits = [init("k", np.float32(0.044715)), init("c", np.float32(c)),
             init("one", np.float32(1.0)), init("half", np.float32(0.5)),
             init("three", np.float32(3.0))]
    torch_form = [n("Mul", ["x", "x"], ["x2"]),
                  n("Mul", ["x", "x2"], ["x3"]),
                  n("Mul", ["k", "x3"], ["kx3"]),
                  n("Add", ["x", "kx3"], ["in"]),
                  n("Mul", ["c", "in"], ["cin"]),
                  n("Tanh", ["cin"], ["t"]),
                  n("Add", ["one", "t"], ["t1"]),
                  n("Mul", ["x", "t1"], ["xt"]),
                  n("Mul", ["half", "xt"], ["y"])]
    hf_form = [n("Mul", ["x", "half"], ["hx"]),
               n("Pow", ["x", "three"], ["x3"]),
               n("Mul", ["x3", "k"], ["kx3"]),
               n("Add", ["kx3", "x"], ["in"]),
               n("Mul", ["in", "c"], ["cin"]),
               n("Tanh", ["cin"], ["t"]),
               n("Add", ["t", "one"], ["t1"]),
               n("Mul", ["hx", "t1"], ["y"])]
    for name, nodes in (("gelu_tanh_torch", torch_form), ("gelu_tanh_hf", hf_form)):
        m = model(nodes, [vi("x", SHAPE)], [vi("y", SHAPE)], inits, opset=17)
        w.save(name, m, [x], [y])


def gen_linear(w):
    """Linear layers with constant weights, for the cpu target's GEMM with B
    packed at load and its epilogue: a sequence-first [L, 1, E]-style input
    (a few rows per batch, the bias the only epilogue operand: one GEMM over
    all batches), a residual Add (varies per row: one GEMM per batch), and a
    Gemm with transB = 1."""
    x = w.f32(9, 3, 40)
    wt, b = w.f32(40, 50, lo=-0.3, hi=0.3), w.f32(50)
    m = model([n("MatMul", ["x", "w"], ["mm"]), n("Add", ["mm", "b"], ["y"])],
              [vi("x", [9, 3, 40])], [vi("y", [9, 3, 50])], [init("w", wt), init("b", b)])
    y = x.astype(np.float64) @ wt.astype(np.float64) + b
    w.save("linear_seq_first", m, [x], [y.astype(np.float32)])
    x = w.f32(2, 8, 40)
    wt, b = w.f32(40, 40, lo=-0.3, hi=0.3), w.f32(40)
    m = model([n("MatMul", ["x", "w"], ["mm"]), n("Add", ["mm", "b"], ["t"]),
               n("Add", ["t", "x"], ["y"])],
              [vi("x", [2, 8, 40])], [vi("y", [2, 8, 40])], [init("w", wt), init("b", b)])
    y = x.astype(np.float64) @ wt.astype(np.float64) + b + x
    w.save("linear_residual", m, [x], [y.astype(np.float32)])
    x = w.f32(10, 40)
    wt, b = w.f32(50, 40, lo=-0.3, hi=0.3), w.f32(50)
    m = model([n("Gemm", ["x", "w", "b"], ["y"], transB=1)], [vi("x", [10, 40])],
              [vi("y", [10, 50])], [init("w", wt), init("b", b)])
    y = x.astype(np.float64) @ wt.T.astype(np.float64) + b
    w.save("linear_gemm_trans_b", m, [x], [y.astype(np.float32)])


def generate(w):
    gen_linear(w)
    gen_rms(w)
    gen_gelu_tanh(w)
