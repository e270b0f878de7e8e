#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# Quantizes a float CNN (Conv / Relu / MaxPool / Add / GlobalAveragePool /
# Flatten / Gemm, as torchvision's ResNet-18 exports) to the QDQ layout that
# ONNX Runtime's static quantization tool writes (its Python tool is not
# installed here), for the int8 ResNet-18 of docs/benchmarks.md:
#   - every Conv input and every Conv (or Conv -> Relu) output gets
#     QuantizeLinear -> DequantizeLinear, uint8, per tensor, asymmetric, the
#     range calibrated by min / max over a few random inputs (the range
#     always holds 0);
#   - Conv weights become int8 constants, symmetric, one scale per output
#     channel (DequantizeLinear axis 0); biases int32 at scale sx * sw;
#   - Add, pooling and the final Gemm stay float between the quantizers.
# Calibration runs the float model with a small NumPy interpreter.
#
#   /usr/bin/python3 tools/bench/quantize_qdq.py IN.onnx OUT.onnx [N_CALIB]
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper


def conv(x, w, b, pads, strides, group):
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    assert group == 1
    xp = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    oh = (h + pads[0] + pads[2] - kh) // strides[0] + 1
    ow = (wd + pads[1] + pads[3] - kw) // strides[1] + 1
    cols = np.empty((n, c, kh, kw, oh, ow), np.float32)
    for i in range(kh):
        for j in range(kw):
            cols[:, :, i, j] = xp[:, :, i:i + strides[0] * oh:strides[0],
                                  j:j + strides[1] * ow:strides[1]]
    y = np.einsum("mk,nkp->nmp", w.reshape(m, -1), cols.reshape(n, c * kh * kw, -1))
    y = y.reshape(n, m, oh, ow)
    return y + b.reshape(1, -1, 1, 1) if b is not None else y


def maxpool(x, k, pads, strides):
    xp = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])),
                constant_values=-np.inf)
    n, c, h, w = x.shape
    oh = (h + pads[0] + pads[2] - k[0]) // strides[0] + 1
    ow = (w + pads[1] + pads[3] - k[1]) // strides[1] + 1
    y = np.full((n, c, oh, ow), -np.inf, np.float32)
    for i in range(k[0]):
        for j in range(k[1]):
            y = np.maximum(y, xp[:, :, i:i + strides[0] * oh:strides[0],
                                 j:j + strides[1] * ow:strides[1]])
    return y


def attrs(node):
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def run(graph, consts, x):
    env = dict(consts)
    env[graph.input[0].name] = x
    for node in graph.node:
        a = attrs(node)
        i = [env[n] if n else None for n in node.input]
        op = node.op_type
        if op == "Conv":
            y = conv(i[0], i[1], i[2] if len(i) > 2 else None, a.get("pads", [0] * 4),
                     a.get("strides", [1, 1]), a.get("group", 1))
        elif op == "Relu":
            y = np.maximum(i[0], 0)
        elif op == "Add":
            y = i[0] + i[1]
        elif op == "Identity":
            y = i[0]
        elif op == "MaxPool":
            y = maxpool(i[0], a["kernel_shape"], a.get("pads", [0] * 4), a["strides"])
        elif op == "GlobalAveragePool":
            y = i[0].mean(axis=(2, 3), keepdims=True)
        elif op == "Flatten":
            y = i[0].reshape(i[0].shape[0], -1)
        elif op == "Gemm":
            y = i[0] @ (i[1].T if a.get("transB", 0) else i[1]) + i[2]
        else:
            raise SystemExit("quantize_qdq.py: no calibration kernel for " + op)
        env[node.output[0]] = y.astype(np.float32)
    return env


def main():
    src, dst = sys.argv[1], sys.argv[2]
    n_calib = int(sys.argv[3]) if len(sys.argv) > 3 else 4
    m = onnx.load(src)
    g = m.graph
    consts = {t.name: numpy_helper.to_array(t) for t in g.initializer}
    for node in g.node:  # Identity of an initializer (the exporter's)
        if node.op_type == "Identity" and node.input[0] in consts:
            consts[node.output[0]] = consts[node.input[0]]
    # The tensors to quantize: Conv inputs, Conv (or Conv -> Relu) outputs.
    consumers = {}
    for node in g.node:
        for n in node.input:
            consumers.setdefault(n, []).append(node)
    targets = []
    for node in g.node:
        if node.op_type != "Conv":
            continue
        targets.append(node.input[0])
        out = node.output[0]
        users = consumers.get(out, [])
        if len(users) == 1 and users[0].op_type == "Relu":
            out = users[0].output[0]
        targets.append(out)
    targets = list(dict.fromkeys(targets))
    rng = np.random.default_rng(0)
    lo = {t: 0.0 for t in targets}
    hi = {t: 0.0 for t in targets}
    shape = [d.dim_value for d in g.input[0].type.tensor_type.shape.dim]
    for _ in range(n_calib):
        env = run(g, consts, rng.standard_normal(shape).astype(np.float32))
        for t in targets:
            lo[t] = min(lo[t], float(env[t].min()))
            hi[t] = max(hi[t], float(env[t].max()))
    act = {}
    for t in targets:
        s = np.float32(max(hi[t] - lo[t], 1e-8) / 255.0)
        z = np.uint8(np.clip(np.rint(-lo[t] / s), 0, 255))
        act[t] = (s, z)

    inits = [t for t in g.initializer]
    nodes = []
    rename = {}
    def qdq(t):
        s, z = act[t]
        sn, zn, qn, dn = t + "_scale", t + "_zero_point", t + "_quantized", t + "_dequantized"
        inits.extend([numpy_helper.from_array(np.array(s, np.float32), sn),
                      numpy_helper.from_array(np.array(z, np.uint8), zn)])
        rename[t] = dn
        return [helper.make_node("QuantizeLinear", [t, sn, zn], [qn], name=t + "_QuantizeLinear"),
                helper.make_node("DequantizeLinear", [qn, sn, zn], [dn],
                                 name=t + "_DequantizeLinear")]
    if g.input[0].name in act:
        nodes += qdq(g.input[0].name)
    for node in g.node:
        ins = [rename.get(n, n) for n in node.input]
        if node.op_type == "Conv":
            w = consts[node.input[1]]
            b = consts[node.input[2]] if len(node.input) > 2 else np.zeros(w.shape[0], np.float32)
            sw = (np.abs(w).reshape(w.shape[0], -1).max(axis=1) / 127.0).astype(np.float32)
            sw = np.maximum(sw, np.float32(1e-12))
            wq = np.clip(np.rint(w / sw.reshape(-1, 1, 1, 1)), -127, 127).astype(np.int8)
            sx = act[node.input[0]][0]
            sb = (np.float32(sx) * sw).astype(np.float32)
            bq = np.rint(b / sb).astype(np.int32)
            base = node.name or node.output[0]
            wn, bn = base + "_weight", base + "_bias"
            inits.extend([numpy_helper.from_array(wq, wn + "_quantized"),
                          numpy_helper.from_array(sw, wn + "_scale"),
                          numpy_helper.from_array(bq, bn + "_quantized"),
                          numpy_helper.from_array(sb, bn + "_scale")])
            nodes.append(helper.make_node("DequantizeLinear", [wn + "_quantized", wn + "_scale"],
                                          [wn + "_dequantized"], axis=0))
            nodes.append(helper.make_node("DequantizeLinear", [bn + "_quantized", bn + "_scale"],
                                          [bn + "_dequantized"], axis=0))
            ins = [ins[0], wn + "_dequantized", bn + "_dequantized"]
        new = helper.make_node(node.op_type, ins, list(node.output), name=node.name)
        new.attribute.extend(node.attribute)
        nodes.append(new)
        for o in node.output:
            if o in act:
                nodes += qdq(o)
    used = {n for node in nodes for n in node.input}
    inits = [t for t in inits if t.name in used]
    graph = helper.make_graph(nodes, g.name, list(g.input), list(g.output), inits)
    out = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    out.ir_version = m.ir_version
    onnx.checker.check_model(out)
    onnx.save(out, dst)
    print("quantize_qdq.py: %d tensors quantized, wrote %s" % (len(targets), dst))


if __name__ == "__main__":
    main()
