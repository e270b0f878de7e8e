# SPDX-License-Identifier: Apache-2.0
"""ONNX models for the indexing family (graph/op_index.c,
graph/onnx_index.c), with NumPy's expected outputs. Imported by
gen_models.py, which calls generate(w); test_onnx_index.c loads them.

embed_ln is a transformer's input block as exporters write it: token ids
(a graph input) gather rows of a token embedding table; position ids come
from Shape -> Gather -> Range -> Unsqueeze on the ids (folded at import)
and gather rows of a position table; their sum feeds LayerNormalization.
index_ops runs GatherElements, GatherND, ScatterND (add), OneHot and
Compress on runtime data."""
import numpy as np
from onnx import TensorProto, helper

from gen_models import I64, init, model, vi

F32 = TensorProto.FLOAT


def layer_norm(x, g, b, eps):
    xd = x.astype(np.float64)
    mu = xd.mean(-1, keepdims=True)
    var = ((xd - mu) ** 2).mean(-1, keepdims=True)
    return (xd - mu) / np.sqrt(var + eps) * g + b


def gen_embed_ln(w):
    V, P, D, B, S = 17, 9, 8, 2, 6
    n = helper.make_node
    tok, pos = w.f32(V, D), w.f32(P, D)
    gamma, beta = w.f32(D, lo=0.5, hi=1.5), w.f32(D)
    ids = w.rng.integers(-V, V, size=(B, S)).astype(np.int64)
    nodes = [
        n("Gather", ["tok", "ids"], ["te"], name="tok_embed"),
        n("Shape", ["ids"], ["shp"]),
        n("Gather", ["shp", "one"], ["seq"], axis=0),
        n("Range", ["zero", "seq", "one"], ["pids"]),
        n("Unsqueeze", ["pids", "ax0"], ["pids2"]),
        n("Gather", ["pos", "pids2"], ["pe"], name="pos_embed"),
        n("Add", ["te", "pe"], ["h"]),
        n("LayerNormalization", ["h", "gamma", "beta"], ["y"], axis=-1, epsilon=1e-5),
    ]
    inits = [init("tok", tok), init("pos", pos), init("gamma", gamma), init("beta", beta),
             init("zero", np.array(0, np.int64)), init("one", np.array(1, np.int64)),
             init("ax0", np.array([0], np.int64))]
    m = model(nodes, [vi("ids", [B, S], I64)], [vi("y", [B, S, D])], inits, opset=17)
    h = tok[ids] + pos[np.arange(S)][None]
    w.save("embed_ln", m, [ids], [layer_norm(h, gamma, beta, 1e-5).astype(np.float32)])


def gen_index_ops(w):
    n = helper.make_node
    x = w.f32(3, 4)
    ge_idx = w.rng.integers(-4, 4, size=(3, 2)).astype(np.int64)
    nd_idx = np.array([[2, -1], [0, 1], [-3, 3]], np.int64)
    upd = w.f32(2)
    sc_idx = np.array([[1, 2], [1, 2]], np.int64)
    oh_idx = w.rng.integers(-5, 5, size=(3,)).astype(np.int64)
    cond = np.array([True, False, True], bool)
    nodes = [
        n("GatherElements", ["x", "ge_idx"], ["ge"], axis=1),
        n("GatherND", ["x", "nd_idx"], ["gnd"]),
        n("ScatterND", ["x", "sc_idx", "upd"], ["snd"], reduction="add"),
        n("OneHot", ["oh_idx", "depth", "values"], ["oh"], axis=0),
        n("Compress", ["x", "cond"], ["cx"], axis=0),
    ]
    inits = [init("depth", np.array(5, np.int64)),
             init("values", np.array([-1.0, 2.0], np.float32)), init("cond", cond)]
    inputs = [vi("x", [3, 4]), vi("ge_idx", [3, 2], I64), vi("nd_idx", [3, 2], I64),
              vi("sc_idx", [2, 2], I64), vi("upd", [2]), vi("oh_idx", [3], I64)]
    outputs = [vi("ge", [3, 2]), vi("gnd", [3]), vi("snd", [3, 4]), vi("oh", [5, 3]),
               vi("cx", [2, 4])]
    m = model(nodes, inputs, outputs, inits, opset=18)
    snd = x.copy()
    for i in range(2):
        snd[tuple(sc_idx[i])] += upd[i]
    k = np.where(oh_idx < 0, oh_idx + 5, oh_idx)
    oh = np.where(np.arange(5)[:, None] == k[None, :], 2.0, -1.0).astype(np.float32)
    want = [np.take_along_axis(x, ge_idx % 4, axis=1), x[nd_idx[:, 0], nd_idx[:, 1]],
            snd, oh, x[cond]]
    w.save("index_ops", m, [x, ge_idx, nd_idx, sc_idx, upd, oh_idx], want)


def generate(w):
    gen_embed_ln(w)
    gen_index_ops(w)
