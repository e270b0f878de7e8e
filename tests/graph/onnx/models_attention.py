# SPDX-License-Identifier: Apache-2.0
"""ONNX models for the attention fusion (graph/onnx_fuse.c): scaled
dot-product attention as the exporters spell it out, with NumPy's expected
outputs, and patterns that must not fuse. Imported by gen_models.py, which
calls generate(w); test_onnx_fuse.c loads them."""
import math

import numpy as np
from onnx import TensorProto, helper

from gen_models import F32, init, model, softmax, vi

n = helper.make_node
B, H, L, D = 2, 3, 5, 4


def qkv(w):
    return w.f32(B, H, L, D), w.f32(B, H, L, D), w.f32(B, H, L, D)


def wide(*xs):
    return [x.astype(np.float64) for x in xs]


def io(extra=(), out_shape=(B, H, L, D), outs=("y",)):
    ins = [vi(t, [B, H, L, D]) for t in "qkv"] + list(extra)
    return ins, [vi(o, list(out_shape)) for o in outs]


def gen_bert(w):
    """BERT: MatMul(Q, Transpose(K)), Div by sqrt(d), Add a [B, 1, 1, L]
    padding mask (a runtime input), Softmax, MatMul by V."""
    q, k, v = qkv(w)
    mask = np.where(w.rng.uniform(size=(B, 1, 1, L)) < 0.3, -10000.0, 0.0).astype(np.float32)
    nodes = [n("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
             n("MatMul", ["q", "kt"], ["s"]),
             n("Div", ["s", "c"], ["ss"]),
             n("Add", ["ss", "mask"], ["sm"]),
             n("Softmax", ["sm"], ["p"], axis=-1),
             n("MatMul", ["p", "v"], ["y"])]
    ins, outs = io([vi("mask", [B, 1, 1, L])])
    m = model(nodes, ins, outs, [init("c", np.float32(math.sqrt(D)))])
    qd, kd, vd, md = wide(q, k, v, mask)
    y = softmax(qd @ kd.transpose(0, 1, 3, 2) / math.sqrt(D) + md, -1) @ vd
    w.save("att_bert", m, [q, k, v, mask], [y.astype(np.float32)])


def gen_gpt2(w):
    """GPT-2: Mul by a scale, Where(causal, S, lowest float) with the
    causal mask a constant bool, then an additive mask input; the mask on
    the left of the Add."""
    q, k, v = qkv(w)
    causal = np.tril(np.ones((L, L), dtype=bool)).reshape(1, 1, L, L)
    lowest = np.float32(np.finfo(np.float32).min)
    mask = np.where(w.rng.uniform(size=(B, 1, 1, L)) < 0.3, -10000.0, 0.0).astype(np.float32)
    mask[..., 0] = 0.0
    nodes = [n("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
             n("MatMul", ["q", "kt"], ["s"]),
             n("Mul", ["s", "c"], ["ss"]),
             n("Where", ["causal", "ss", "lowest"], ["sw"]),
             n("Add", ["mask", "sw"], ["sm"]),
             n("Softmax", ["sm"], ["p"], axis=3),
             n("MatMul", ["p", "v"], ["y"])]
    ins, outs = io([vi("mask", [B, 1, 1, L])])
    m = model(nodes, ins, outs, [init("c", np.float32(1 / math.sqrt(D))),
                                 init("causal", causal), init("lowest", lowest)])
    qd, kd, vd, md = wide(q, k, v, mask)
    s = np.where(causal, qd @ kd.transpose(0, 1, 3, 2) / math.sqrt(D), float(lowest)) + md
    y = softmax(s, -1) @ vd
    w.save("att_gpt2", m, [q, k, v, mask], [y.astype(np.float32)])


def gen_runtime_cond(w):
    """masked_fill(cond, lowest) with the condition computed at run time (a
    bool graph input [B, 1, L, L]: a causal mask or'ed with each row's left
    padding, as generation code builds it), filled where it is true."""
    q, k, v = qkv(w)
    lowest = np.float32(np.finfo(np.float32).min)
    cond = w.rng.uniform(size=(B, 1, L, L)) < 0.4
    cond[..., 0] = False  # every row keeps a key
    nodes = [n("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
             n("MatMul", ["q", "kt"], ["s"]),
             n("Div", ["s", "c"], ["ss"]),
             n("Where", ["cond", "lowest", "ss"], ["sw"]),
             n("Softmax", ["sw"], ["p"], axis=-1),
             n("MatMul", ["p", "v"], ["y"])]
    ins, outs = io([vi("cond", [B, 1, L, L], TensorProto.BOOL)])
    m = model(nodes, ins, outs, [init("c", np.float32(math.sqrt(D))), init("lowest", lowest)])
    qd, kd, vd = wide(q, k, v)
    s = np.where(cond, float(lowest), qd @ kd.transpose(0, 1, 3, 2) / math.sqrt(D))
    y = softmax(s, -1) @ vd
    w.save("att_runtime_cond", m, [q, k, v, cond], [y.astype(np.float32)])


def gen_sdpa(w):
    """torch's scaled_dot_product_attention export: Q and Kt each scaled by
    sqrt(scale) before the MatMul, a constant additive mask."""
    q, k, v = qkv(w)
    bias = w.f32(H, L, L)
    r = np.float32(math.sqrt(1 / math.sqrt(D)))
    nodes = [n("Mul", ["q", "r"], ["qs"]),
             n("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
             n("Mul", ["kt", "r"], ["kts"]),
             n("MatMul", ["qs", "kts"], ["s"]),
             n("Add", ["s", "bias"], ["sm"]),
             n("Softmax", ["sm"], ["p"], axis=-1),
             n("MatMul", ["p", "v"], ["y"])]
    ins, outs = io()
    m = model(nodes, ins, outs, [init("r", r), init("bias", bias)], opset=14)
    qd, kd, vd, bd = wide(q, k, v, bias)
    y = softmax((qd * r) @ (kd.transpose(0, 1, 3, 2) * r) + bd, -1) @ vd
    w.save("att_sdpa", m, [q, k, v], [y.astype(np.float32)])


def gen_mha(w):
    """nn.MultiheadAttention / ViT: Q divided by a constant first, Softmax
    with its opset-13 default axis, an eval-mode Dropout before the last
    MatMul, K and V shared by the heads ([B, 1, L, D])."""
    q = w.f32(B, H, L, D)
    k, v = w.f32(B, 1, L, D), w.f32(B, 1, L, D)
    nodes = [n("Div", ["q", "c"], ["qs"]),
             n("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
             n("MatMul", ["qs", "kt"], ["s"]),
             n("Softmax", ["s"], ["p"]),
             n("Dropout", ["p"], ["pd"]),
             n("MatMul", ["pd", "v"], ["y"])]
    ins = [vi("q", [B, H, L, D]), vi("k", [B, 1, L, D]), vi("v", [B, 1, L, D])]
    m = model(nodes, ins, [vi("y", [B, H, L, D])], [init("c", np.float32(2.0))])
    qd, kd, vd = wide(q, k, v)
    y = softmax((qd / 2.0) @ kd.transpose(0, 1, 3, 2), -1) @ vd
    w.save("att_mha", m, [q, k, v], [y.astype(np.float32)])


def gen_not_fused(w):
    """The probabilities are a graph output too (need_weights): no fusion,
    both outputs still right. And an opset-11 Softmax over axis 1, which
    normalises over [H, L, L], not over the keys."""
    q, k, v = qkv(w)
    nodes = [n("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
             n("MatMul", ["q", "kt"], ["s"]),
             n("Softmax", ["s"], ["p"], axis=-1),
             n("MatMul", ["p", "v"], ["y"])]
    ins, outs = io()
    outs.append(vi("p", [B, H, L, L]))
    m = model(nodes, ins, outs)
    qd, kd, vd = wide(q, k, v)
    p = softmax(qd @ kd.transpose(0, 1, 3, 2), -1)
    w.save("att_probs_out", m, [q, k, v], [(p @ vd).astype(np.float32),
                                           p.astype(np.float32)])
    nodes[2] = n("Softmax", ["s"], ["p"], axis=1)
    m = model(nodes, ins, io()[1], opset=11)
    s = qd @ kd.transpose(0, 1, 3, 2)
    p = softmax(s.reshape(B, -1), 1).reshape(s.shape)
    w.save("att_old_softmax", m, [q, k, v], [(p @ vd).astype(np.float32)])


def gen_computed_scale(w):
    """timm's ViT as torch.onnx.export writes it: the scale is d ** -0.5
    computed in the graph (Pow of two Constants), and a model whose scale
    comes from K's shape (Shape, Gather, Cast, Sqrt, Div): both fold to a
    constant at import, so both fuse."""
    q, k, v = qkv(w)
    c = lambda name, val: n("Constant", [], [name], value=helper.make_tensor(
        name, TensorProto.FLOAT, [], [val]))
    nodes = [n("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
             n("MatMul", ["q", "kt"], ["s"]),
             c("d", float(D)), c("e", -0.5),
             n("Pow", ["d", "e"], ["r"]),
             n("Mul", ["s", "r"], ["ss"]),
             n("Softmax", ["ss"], ["p"], axis=-1),
             n("MatMul", ["p", "v"], ["y"])]
    ins, outs = io()
    qd, kd, vd = wide(q, k, v)
    y = softmax(qd @ kd.transpose(0, 1, 3, 2) / math.sqrt(D), -1) @ vd
    w.save("att_pow_scale", model(nodes, ins, outs), [q, k, v], [y.astype(np.float32)])
    nodes = [n("Shape", ["k"], ["shp"]),
             n("Gather", ["shp", "last"], ["dim"], axis=0),
             n("Cast", ["dim"], ["dimf"], to=TensorProto.FLOAT),
             n("Sqrt", ["dimf"], ["sq"]),
             n("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
             n("MatMul", ["q", "kt"], ["s"]),
             n("Div", ["s", "sq"], ["ss"]),
             n("Softmax", ["ss"], ["p"], axis=-1),
             n("MatMul", ["p", "v"], ["y"])]
    m = model(nodes, ins, outs, [init("last", np.int64(3))])
    w.save("att_shape_scale", m, [q, k, v], [y.astype(np.float32)])


def generate(w):
    gen_bert(w)
    gen_gpt2(w)
    gen_runtime_cond(w)
    gen_sdpa(w)
    gen_mha(w)
    gen_not_fused(w)
    gen_computed_scale(w)
