#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# A BERT-base-shaped transformer encoder layer (sequence 128, width 768, 12
# heads, FFN 3072, post-norm, erf GELU) written as ONNX by hand, float32 and
# in the QDQ layout ONNX Runtime's static quantization tool writes for
# MatMul (its Python tool is not installed here): every linear layer's input
# gets QuantizeLinear -> DequantizeLinear (uint8, per tensor, asymmetric,
# calibrated by min / max of a NumPy run of the float layer on the benchmark
# input), its weight becomes an int8 constant with one scale per output
# column (DequantizeLinear axis 1), its bias an int32 constant at scale
# sx * sw, and its output (after the bias Add) QuantizeLinear ->
# DequantizeLinear; attention, softmax, LayerNorm and GELU stay float. For
# the int8-vs-float and vs-ONNX-Runtime numbers of docs/benchmarks.md.
#
#   /usr/bin/python3 tools/bench/make_qdq_block.py OUT_DIR
#
# Writes OUT_DIR/qdq_block/model.onnx and OUT_DIR/float_block/model.onnx,
# each with input_input.npy (the layout tools/bench/threads_vs_ort.py reads).
import math
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

L, D, H, F = 128, 768, 12, 3072


def layer_norm(x, g, b):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(v + 1e-12) * g + b


def softmax(s):
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def gelu(x):
    erf = np.vectorize(math.erf)
    return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))


def main():
    out = sys.argv[1]
    rng = np.random.default_rng(14)
    p = {}
    for name, (k, n) in {"q": (D, D), "k": (D, D), "v": (D, D), "o": (D, D),
                         "f1": (D, F), "f2": (F, D)}.items():
        p["w" + name] = (rng.standard_normal((k, n)) / math.sqrt(k)).astype(np.float32)
        p["b" + name] = (0.02 * rng.standard_normal(n)).astype(np.float32)
    for name in ("ln1", "ln2"):
        p[name + "_g"] = (1.0 + 0.1 * rng.standard_normal(D)).astype(np.float32)
        p[name + "_b"] = (0.1 * rng.standard_normal(D)).astype(np.float32)
    x = rng.standard_normal((1, L, D)).astype(np.float32)

    # The float forward pass, keeping each linear layer's input and output
    # for calibration.
    act = {}

    def linear(name, a):
        y = a @ p["w" + name] + p["b" + name]
        act[name] = (a, y)
        return y

    def heads(t):
        return t.reshape(1, L, H, D // H).transpose(0, 2, 1, 3)

    q, k, v = (heads(linear(n, x)) for n in ("q", "k", "v"))
    ctx = softmax(q @ k.transpose(0, 1, 3, 2) * np.float32(0.125)) @ v
    ctx = ctx.transpose(0, 2, 1, 3).reshape(1, L, D)
    h = layer_norm(x + linear("o", ctx), p["ln1_g"], p["ln1_b"])
    f = linear("f2", gelu(linear("f1", h)))
    layer_norm(h + f, p["ln2_g"], p["ln2_b"])

    def scale_zp(a):
        lo, hi = min(float(a.min()), 0.0), max(float(a.max()), 0.0)
        s = np.float32((hi - lo) / 255.0)
        return s, np.uint8(np.clip(np.rint(-lo / s), 0, 255))

    for quantized in (False, True):
        nodes, inits = [], []
        mk = helper.make_node

        def const(name, value):
            inits.append(numpy_helper.from_array(np.asarray(value), name))
            return name

        def qdq(t, s, z):
            if any(t + "_dq" in n.output for n in nodes):  # q, k and v share x's
                return t + "_dq"
            const(t + "_s", s)
            const(t + "_z", z)
            nodes.append(mk("QuantizeLinear", [t, t + "_s", t + "_z"], [t + "_q"]))
            nodes.append(mk("DequantizeLinear", [t + "_q", t + "_s", t + "_z"], [t + "_dq"]))
            return t + "_dq"

        def lin(name, a):
            w, b = p["w" + name], p["b" + name]
            y = name + "_y"
            if not quantized:
                nodes.append(mk("MatMul", [a, const(name + "_w", w)], [name + "_mm"]))
                nodes.append(mk("Add", [name + "_mm", const(name + "_b", b)], [y]))
                return y
            sx, zx = scale_zp(act[name][0])
            a = qdq(a, sx, zx)
            sw = (np.abs(w).max(0) / 127.0).astype(np.float32)
            const(name + "_wq", np.clip(np.rint(w / sw), -127, 127).astype(np.int8))
            const(name + "_sw", sw)
            sb = (sx * sw).astype(np.float32)
            const(name + "_bq", np.rint(b / sb).astype(np.int32))
            const(name + "_sb", sb)
            nodes.append(mk("DequantizeLinear", [name + "_wq", name + "_sw"], [name + "_wd"],
                            axis=1))
            nodes.append(mk("DequantizeLinear", [name + "_bq", name + "_sb"], [name + "_bd"],
                            axis=0))
            nodes.append(mk("MatMul", [a, name + "_wd"], [name + "_mm"]))
            nodes.append(mk("Add", [name + "_mm", name + "_bd"], [y]))
            return qdq(y, *scale_zp(act[name][1]))

        def split(t, perm):
            nodes.append(mk("Reshape", [t, const(t + "_shape", np.array([1, L, H, D // H]))],
                            [t + "_r"]))
            nodes.append(mk("Transpose", [t + "_r"], [t + "_t"], perm=perm))
            return t + "_t"

        qh = split(lin("q", "input"), [0, 2, 1, 3])
        kh = split(lin("k", "input"), [0, 2, 3, 1])
        vh = split(lin("v", "input"), [0, 2, 1, 3])
        nodes += [mk("MatMul", [qh, kh], ["scores"]),
                  mk("Mul", ["scores", const("scale", np.float32(0.125))], ["scaled"]),
                  mk("Softmax", ["scaled"], ["probs"], axis=-1),
                  mk("MatMul", ["probs", vh], ["ctx"]),
                  mk("Transpose", ["ctx"], ["ctx_t"], perm=[0, 2, 1, 3]),
                  mk("Reshape", ["ctx_t", const("merge", np.array([1, L, D]))], ["ctx_m"])]
        nodes.append(mk("Add", ["input", lin("o", "ctx_m")], ["res1"]))
        nodes.append(mk("LayerNormalization", ["res1", const("ln1_g", p["ln1_g"]),
                                               const("ln1_b", p["ln1_b"])], ["h"],
                        axis=-1, epsilon=1e-12))
        f1 = lin("f1", "h")
        nodes += [mk("Div", [f1, const("sqrt2", np.float32(math.sqrt(2.0)))], ["g_div"]),
                  mk("Erf", ["g_div"], ["g_erf"]),
                  mk("Add", ["g_erf", const("one", np.float32(1.0))], ["g_add"]),
                  mk("Mul", [f1, "g_add"], ["g_mul"]),
                  mk("Mul", ["g_mul", const("half", np.float32(0.5))], ["gelu"])]
        nodes.append(mk("Add", ["h", lin("f2", "gelu")], ["res2"]))
        nodes.append(mk("LayerNormalization", ["res2", const("ln2_g", p["ln2_g"]),
                                               const("ln2_b", p["ln2_b"])], ["output"],
                        axis=-1, epsilon=1e-12))
        graph = helper.make_graph(
            nodes, "encoder_layer",
            [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, L, D])],
            [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, L, D])], inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        model.ir_version = 8
        onnx.checker.check_model(model)
        d = os.path.join(out, "qdq_block" if quantized else "float_block")
        os.makedirs(d, exist_ok=True)
        onnx.save(model, os.path.join(d, "model.onnx"))
        np.save(os.path.join(d, "input_input.npy"), x)
        print(f"wrote {d}/model.onnx ({len(nodes)} nodes)")


if __name__ == "__main__":
    main()
