# SPDX-License-Identifier: Apache-2.0
"""ONNX models for the importer of the recurrent ops, Einsum, the losses and
quantization (graph/onnx_rnn.c, onnx_einsum.c, onnx_loss.c, onnx_quant.c),
with NumPy's expected outputs. Imported by gen_models.py, which calls
generate(w); test_onnx_seq.c loads them."""
import numpy as np
from onnx import TensorProto, helper

from gen_models import F32, init, model, vi

# (name, equation, input shapes): lowered to IR matmul/reduce/transpose
# unless the name says "kept" (then the IR's einsum).
EINSUMS = [
    ("einsum_bmm", "bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("einsum_attention", "bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 2, 5)]),
    ("einsum_dot", "i,i->", [(7,), (7,)]),
    ("einsum_transpose", "ij->ji", [(3, 5)]),
    ("einsum_rowsum", "ij->i", [(3, 5)]),
    ("einsum_implicit", "ij,jk", [(3, 4), (4, 2)]),
    ("einsum_outer", "i,j->ij", [(3,), (4,)]),
    ("einsum_merge", "abc,cd->abd", [(2, 3, 4), (4, 5)]),
    ("einsum_swap", "bij,bjk->bki", [(2, 2, 3), (2, 3, 4)]),
    ("einsum_sum_first", "ijk,kl->l", [(2, 3, 4), (4, 5)]),
    ("einsum_kept_diagonal", "ii->i", [(4, 4)]),
    ("einsum_kept_broadcast", "...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]),
    ("einsum_kept_three", "ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
]


def gen_einsum(w):
    for name, eq, shapes in EINSUMS:
        xs = [w.f32(*s) for s in shapes]
        names = ["x%d" % i for i in range(len(xs))]
        y = np.einsum(eq, *[x.astype(np.float64) for x in xs]).astype(np.float32)
        m = model([helper.make_node("Einsum", names, ["y"], equation=eq)],
                  [vi(n, list(x.shape)) for n, x in zip(names, xs)],
                  [vi("y", list(y.shape))], opset=12)
        w.save(name, m, xs, [y])


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def gen_lstm(w):
    """A forward LSTM with ONNX-named activations whose alpha and beta lists
    are consumed in order by the activations that take them; Y omitted."""
    seq, batch, inp, hid = 4, 2, 3, 5
    x, wt, r = w.f32(seq, batch, inp), w.f32(1, 4 * hid, inp), w.f32(1, 4 * hid, hid)
    node = helper.make_node("LSTM", ["x", "w", "r"], ["", "y_h", "y_c"], hidden_size=hid,
                            activations=["HardSigmoid", "Tanh", "ScaledTanh"],
                            activation_alpha=[0.3, 0.7], activation_beta=[0.4, 1.2])
    m = model([node], [vi("x", [seq, batch, inp])],
              [vi("y_h", [1, batch, hid]), vi("y_c", [1, batch, hid])],
              [init("w", wt), init("r", r)], opset=14)
    f = lambda v: np.clip(0.3 * v + 0.4, 0, 1)
    h_act = lambda v: 0.7 * np.tanh(1.2 * v)
    h, c = np.zeros((batch, hid)), np.zeros((batch, hid))
    for t in range(seq):
        g = x[t].astype(np.float64) @ wt[0].T + h @ r[0].T
        i, o, fg, cc = (g[:, k * hid:(k + 1) * hid] for k in range(4))
        c = f(fg) * c + f(i) * np.tanh(cc)
        h = f(o) * h_act(c)
    w.save("lstm_activations", m, [x], [h[None].astype(np.float32), c[None].astype(np.float32)])


def gen_unused_outputs(w):
    """An LSTM whose Y_h and Y_c are named but read by nothing, and a MaxPool
    whose Indices nothing reads: the importer drops both outputs."""
    seq, batch, inp, hid = 3, 2, 4, 3
    x, wt, r = w.f32(seq, batch, inp), w.f32(1, 4 * hid, inp), w.f32(1, 4 * hid, hid)
    p = w.f32(1, 2, 4, 6)
    nodes = [helper.make_node("LSTM", ["x", "w", "r"], ["y", "y_h", "y_c"], hidden_size=hid),
             helper.make_node("MaxPool", ["p"], ["pooled", "indices"], kernel_shape=[2, 2],
                              strides=[2, 2])]
    m = model(nodes, [vi("x", [seq, batch, inp]), vi("p", [1, 2, 4, 6])],
              [vi("y", [seq, 1, batch, hid]), vi("pooled", [1, 2, 2, 3])],
              [init("w", wt), init("r", r)], opset=14)
    h, c = np.zeros((batch, hid)), np.zeros((batch, hid))
    ys = []
    for t in range(seq):
        g = x[t].astype(np.float64) @ wt[0].T + h @ r[0].T
        i, o, fg, cc = (g[:, k * hid:(k + 1) * hid] for k in range(4))
        c = sigmoid(fg) * c + sigmoid(i) * np.tanh(cc)
        h = sigmoid(o) * np.tanh(c)
        ys.append(h)
    y = np.stack(ys)[:, None].astype(np.float32)
    pooled = p.reshape(1, 2, 2, 2, 3, 2).max(axis=(3, 5))
    w.save("unused_outputs", m, [x, p], [y, pooled])


def gen_quant(w):
    """QuantizeLinear with a block size and an output dtype (opset 21), then
    DequantizeLinear per axis (opset 13 form) back."""
    x = w.f32(3, 8, lo=-4, hi=4)
    scale = w.rng.uniform(0.02, 0.1, size=(3, 2)).astype(np.float32)
    nodes = [helper.make_node("QuantizeLinear", ["x", "s"], ["q"], axis=1, block_size=4,
                              output_dtype=TensorProto.INT8),
             helper.make_node("DequantizeLinear", ["q", "s2", "z2"], ["y"], axis=0)]
    s2 = np.array([0.05, 0.1, 0.2], np.float32)
    z2 = np.array([1, -2, 3], np.int8)
    m = model(nodes, [vi("x", [3, 8])], [vi("y", [3, 8]), vi("q", [3, 8], TensorProto.INT8)],
              [init("s", scale), init("s2", s2), init("z2", z2)], opset=21)
    se = np.repeat(scale, 4, axis=1)
    q = np.clip(np.rint((x / se).astype(np.float32)), -128, 127).astype(np.int8)
    y = (q.astype(np.float64) - z2.reshape(3, 1)) * s2.reshape(3, 1)
    w.save("quant_blocked", m, [x], [y.astype(np.float32), q])


def gen_sce(w):
    """SoftmaxCrossEntropyLoss with its log_prob output and ignore_index."""
    x = w.f32(3, 4, 2, lo=-3, hi=3)
    labels = w.rng.integers(0, 4, size=(3, 2)).astype(np.int64)
    labels[1, 0] = -1
    node = helper.make_node("SoftmaxCrossEntropyLoss", ["x", "l"], ["loss", "logp"],
                            reduction="mean", ignore_index=-1)
    m = model([node], [vi("x", [3, 4, 2]), vi("l", [3, 2], TensorProto.INT64)],
              [vi("loss", []), vi("logp", [3, 4, 2])], opset=13)
    xd = x.astype(np.float64)
    logp = xd - xd.max(1, keepdims=True)
    logp -= np.log(np.exp(logp).sum(1, keepdims=True))
    keep = labels != -1
    picked = np.take_along_axis(logp, np.where(keep, labels, 0)[:, None], 1)[:, 0]
    loss = -(picked * keep).sum() / keep.sum()
    w.save("sce_log_prob", m, [x, labels],
           [np.array(loss, np.float32), logp.astype(np.float32)])


def generate(w):
    gen_einsum(w)
    gen_lstm(w)
    gen_unused_outputs(w)
    gen_quant(w)
    gen_sce(w)
