# SPDX-License-Identifier: Apache-2.0
"""ONNX Runtime's com.microsoft contrib ops (graph/onnx_contrib.c), one model
each, with expected outputs from NumPy written from the contrib spec
(onnxruntime docs/ContribOperators.md and its CPU kernels), and a model with
an op that stays refused. Imported by gen_models.py; test_onnx_contrib.c
loads them; tools/contrib_check.js runs the same models through ONNX Runtime.
"""
import math

import numpy as np
from onnx import TensorProto, helper

from gen_models import init, model, vi

MS = "com.microsoft"
ERF = np.vectorize(math.erf)

# Every model of this file, for tools/contrib_check.js: name -> op.
MODELS = {}


def ms_model(nodes, inputs, outputs, inits=(), opset=17):
    m = model(nodes, inputs, outputs, inits, opset=opset)
    m.opset_import.append(helper.make_opsetid(MS, 1))
    return m


def node(op, ins, outs, **attrs):
    return helper.make_node(op, ins, outs, domain=MS, **attrs)


def save(w, name, op, m, inputs, outputs):
    MODELS[name] = op
    w.save(name, m, inputs, [np.asarray(o, np.float32) for o in outputs])


def gelu_erf(x):
    return 0.5 * x * (1.0 + ERF(x / math.sqrt(2.0)))


def gelu_tanh(x):
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def layer_norm(s, gamma, beta, eps):
    mean = s.mean(-1, keepdims=True)
    var = ((s - mean) ** 2).mean(-1, keepdims=True)
    inv = 1.0 / np.sqrt(var + eps)
    y = (s - mean) * inv * gamma
    return (y + beta if beta is not None else y), mean, inv


def rms_norm(s, gamma, eps):
    inv = 1.0 / np.sqrt((s * s).mean(-1, keepdims=True) + eps)
    return s * inv * gamma, inv


def gen_activations(w):
    x = w.f32(2, 3, 8, lo=-3, hi=3).astype(np.float64)
    b = w.f32(8).astype(np.float64)
    X = [vi("x", [2, 3, 8])]
    xd = x.astype(np.float32)
    save(w, "ms_gelu", "Gelu", ms_model([node("Gelu", ["x"], ["y"])], X, [vi("y", None)]),
         [xd], [gelu_erf(x)])
    save(w, "ms_bias_gelu", "BiasGelu",
         ms_model([node("BiasGelu", ["x", "b"], ["y"])], X, [vi("y", None)],
                  [init("b", b.astype(np.float32))]),
         [xd], [gelu_erf(x + b)])
    save(w, "ms_fast_gelu", "FastGelu",
         ms_model([node("FastGelu", ["x"], ["y"])], X, [vi("y", None)]), [xd], [gelu_tanh(x)])
    save(w, "ms_fast_gelu_bias", "FastGelu",
         ms_model([node("FastGelu", ["x", "b"], ["y"])], X, [vi("y", None)],
                  [init("b", b.astype(np.float32))]),
         [xd], [gelu_tanh(x + b)])
    save(w, "ms_quick_gelu", "QuickGelu",
         ms_model([node("QuickGelu", ["x"], ["y"])], X, [vi("y", None)]),
         [xd], [x * sigmoid(1.702 * x)])
    save(w, "ms_quick_gelu_alpha", "QuickGelu",
         ms_model([node("QuickGelu", ["x"], ["y"], alpha=0.75)], X, [vi("y", None)]),
         [xd], [x * sigmoid(0.75 * x)])
    skip = w.f32(2, 3, 8)
    save(w, "ms_bias_add", "BiasAdd",
         ms_model([node("BiasAdd", ["x", "b", "skip"], ["y"])],
                  X + [vi("skip", [2, 3, 8])], [vi("y", None)],
                  [init("b", b.astype(np.float32))]),
         [xd, skip], [x + b + skip])


def gen_fused_matmul(w):
    cases = [
        ("ms_fused_matmul", dict(alpha=0.5), (2, 3, 4), (2, 4, 5)),
        ("ms_fused_matmul_ta", dict(transA=1), (2, 4, 3), (4, 5)),
        ("ms_fused_matmul_tb", dict(transB=1, alpha=1.25), (2, 3, 4), (2, 5, 4)),
        ("ms_fused_matmul_batch", dict(transBatchA=1, transBatchB=1, transB=1),
         (3, 2, 4), (5, 2, 4)),
        ("ms_fused_matmul_batch_ta", dict(transBatchA=1, transA=1), (4, 2, 3, 5), (2, 3, 4, 6)),
    ]
    for name, attrs, sa, sb in cases:
        a, b = w.f32(*sa).astype(np.float64), w.f32(*sb).astype(np.float64)

        def op(t, trans, batch):
            r = t.ndim
            if batch:
                t = np.transpose(t, list(range(1, r - 1)) + [0, r - 1])
            if trans:
                t = np.swapaxes(t, -1, -2)
            return t

        y = attrs.get("alpha", 1.0) * (op(a, attrs.get("transA", 0), attrs.get("transBatchA", 0))
                                        @ op(b, attrs.get("transB", 0),
                                             attrs.get("transBatchB", 0)))
        m = ms_model([node("FusedMatMul", ["a", "b"], ["y"], **attrs)],
                     [vi("a", list(sa)), vi("b", list(sb))], [vi("y", None)])
        save(w, name, "FusedMatMul", m, [a.astype(np.float32), b.astype(np.float32)], [y])


def conv2d_same(x, wt, b):
    n, c, h, wd = x.shape
    m, _, kh, kw = wt.shape
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    y = np.zeros((n, m, h, wd))
    for i in range(kh):
        for j in range(kw):
            y += np.einsum("nchw,mc->nmhw", xp[:, :, i:i + h, j:j + wd], wt[:, :, i, j])
    return y + b.reshape(1, -1, 1, 1)


def gen_fused_conv(w):
    x = w.f32(1, 3, 5, 5).astype(np.float64)
    wt = w.f32(4, 3, 3, 3, lo=-0.5, hi=0.5).astype(np.float64)
    b = w.f32(4).astype(np.float64)
    z = w.f32(1, 4, 5, 5).astype(np.float64)
    base = conv2d_same(x, wt, b)
    acts = [
        ("relu", dict(activation="Relu"), lambda v: np.maximum(v, 0), False),
        ("leaky", dict(activation="LeakyRelu", activation_params=[0.2]),
         lambda v: np.where(v >= 0, v, 0.2 * v), False),
        ("clip", dict(activation="Clip", activation_params=[-0.5, 0.7]),
         lambda v: np.clip(v, -0.5, 0.7), False),
        ("hsig", dict(activation="HardSigmoid", activation_params=[0.3, 0.4]),
         lambda v: np.clip(0.3 * v + 0.4, 0, 1), False),
        ("sigmoid_z", dict(activation="Sigmoid"), sigmoid, True),
        ("tanh", dict(activation="Tanh"), np.tanh, False),
        ("none_z", dict(), lambda v: v, True),
    ]
    for name, attrs, f, with_z in acts:
        ins = ["x", "w", "b"] + (["z"] if with_z else [])
        m = ms_model([node("FusedConv", ins, ["y"], pads=[1, 1, 1, 1], kernel_shape=[3, 3],
                           **attrs)],
                     [vi("x", [1, 3, 5, 5])] + ([vi("z", [1, 4, 5, 5])] if with_z else []),
                     [vi("y", None)],
                     [init("w", wt.astype(np.float32)), init("b", b.astype(np.float32))])
        inputs = [x.astype(np.float32)] + ([z.astype(np.float32)] if with_z else [])
        save(w, "ms_fused_conv_" + name, "FusedConv", m, inputs,
             [f(base + z if with_z else base)])


def gen_norms(w):
    B, S, H = 2, 3, 16
    eps = 1e-5
    x, skip = w.f32(B, S, H).astype(np.float64), w.f32(B, S, H).astype(np.float64)
    gamma = w.f32(H, lo=0.5, hi=1.5).astype(np.float64)
    beta, bias = w.f32(H).astype(np.float64), w.f32(H).astype(np.float64)
    f = lambda a: a.astype(np.float32)  # noqa: E731
    inits = [init("gamma", f(gamma)), init("beta", f(beta)), init("bias", f(bias))]
    XS = [vi("x", [B, S, H]), vi("skip", [B, S, H])]
    s = x + skip + bias
    y, mean, inv = layer_norm(s, gamma, beta, eps)
    m = ms_model([node("SkipLayerNormalization", ["x", "skip", "gamma", "beta", "bias"],
                       ["y", "mean", "inv", "sum"], epsilon=eps)],
                 XS, [vi("y", None), vi("mean", None), vi("inv", None), vi("sum", None)], inits)
    save(w, "ms_skip_layer_norm", "SkipLayerNormalization", m, [f(x), f(skip)],
         [y, mean, inv, s])
    # no beta, no bias, a 2-D skip broadcast over the batch
    skip2 = w.f32(S, H).astype(np.float64)
    y2, _, _ = layer_norm(x + skip2, gamma, None, 1e-6)
    m = ms_model([node("SkipLayerNormalization", ["x", "skip", "gamma"], ["y"], epsilon=1e-6)],
                 [vi("x", [B, S, H]), vi("skip", [S, H])], [vi("y", None)], inits[:1])
    save(w, "ms_skip_layer_norm_plain", "SkipLayerNormalization", m, [f(x), f(skip2)], [y2])
    ys, invs = rms_norm(s, gamma, eps)
    m = ms_model([node("SkipSimplifiedLayerNormalization", ["x", "skip", "gamma", "bias"],
                       ["y", "", "inv", "sum"], epsilon=eps)],
                 XS, [vi("y", None), vi("inv", None), vi("sum", None)], inits)
    save(w, "ms_skip_simplified_layer_norm", "SkipSimplifiedLayerNormalization", m,
         [f(x), f(skip)], [ys, invs, s])
    yr, invr = rms_norm(x, gamma, 1e-6)
    for name, dom in (("ms_simplified_layer_norm", MS), ("simplified_layer_norm", "")):
        nd = helper.make_node("SimplifiedLayerNormalization", ["x", "gamma"], ["y", "inv"],
                              domain=dom, epsilon=1e-6, axis=-1)
        m = ms_model([nd], [vi("x", [B, S, H])], [vi("y", None), vi("inv", None)], inits[:1])
        save(w, name, "SimplifiedLayerNormalization", m, [f(x)], [yr, invr])
    yl, meanl, invl = layer_norm(x, gamma, beta, eps)
    m = ms_model([node("LayerNormalization", ["x", "gamma", "beta"], ["y"], epsilon=eps)],
                 [vi("x", [B, S, H])], [vi("y", None)], inits)
    save(w, "ms_layer_norm", "LayerNormalization", m, [f(x)], [yl])


def softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def attention_ref(q, k, v, heads, scale, mask, causal):
    """ORT's CPU kernel: scores = scale * Q Kᵀ + mask, where mask holds 0,
    mask_filter_value for masked keys and the lowest float after the query
    (unidirectional); softmax; @ V. mask broadcasts to [B, N, S, T]."""
    B, S, D = q.shape
    T, Dv = k.shape[1], v.shape[2]
    split = lambda t, d: t.reshape(B, -1, heads, d // heads).transpose(0, 2, 1, 3)  # noqa: E731
    qh, kh, vh = split(q, D), split(k, D), split(v, Dv)
    m = np.zeros((B, 1, S, T)) + (mask if mask is not None else 0.0)
    if causal:
        m = np.where(np.triu(np.ones((S, T), bool), 1), np.finfo(np.float32).min, m)
    scale = scale if scale else 1.0 / math.sqrt(D // heads)
    p = softmax(scale * qh @ kh.transpose(0, 1, 3, 2) + m)
    return (p @ vh).transpose(0, 2, 1, 3).reshape(B, S, Dv)


def key_mask(mask, B, S, T, filt=-10000.0):
    """mask_index in each of its forms -> the additive [B, 1, S or 1, T] mask."""
    t = np.arange(T)
    if mask.ndim == 1:
        keep = t[None, :] < mask[:B, None]
        if mask.shape[0] == 2 * B:
            keep &= t[None, :] >= mask[B:, None]
        return np.where(keep, 0.0, filt)[:, None, None, :]
    if mask.ndim == 2:
        return np.where(mask > 0, 0.0, filt)[:, None, None, :]
    if mask.ndim == 3:
        return np.where(mask > 0, 0.0, filt)[:, None, :, :]
    return np.where(mask[:, :, :S, :T] > 0, 0.0, filt)


def gen_attention(w):
    B, S, Hin, N = 2, 5, 8, 2
    I32 = TensorProto.INT32
    rng = w.rng
    f = lambda a: a.astype(np.float32)  # noqa: E731
    lens = rng.integers(1, S + 1, size=B).astype(np.int32)
    starts = np.array([rng.integers(0, l_) for l_ in lens], np.int32)
    raw2 = (rng.uniform(size=(B, S)) > 0.3).astype(np.int32)
    raw2[:, 0] = 1
    raw3 = (rng.uniform(size=(B, S, S)) > 0.3).astype(np.int32)
    raw3[:, :, 0] = 1
    raw4 = (rng.uniform(size=(B, 1, 7, 7)) > 0.3).astype(np.int32)
    raw4[..., 0] = 1
    cases = [
        ("ms_attention", {}, None, None, (8, 8, 8)),
        ("ms_attention_causal", dict(unidirectional=1), None, None, (8, 8, 8)),
        ("ms_attention_lens", {}, lens, None, (8, 8, 8)),
        ("ms_attention_start_end", {}, np.concatenate([lens, starts]), None, (8, 8, 8)),
        ("ms_attention_raw2d_causal", dict(unidirectional=1, mask_filter_value=-500.0), raw2,
         None, (8, 8, 8)),
        ("ms_attention_raw3d", {}, raw3, None, (8, 8, 8)),
        ("ms_attention_raw4d", {}, raw4, None, (8, 8, 8)),
        ("ms_attention_sizes_bias", dict(qkv_hidden_sizes=[8, 8, 4], scale=0.3), raw2,
         w.f32(1, N, S, S), (8, 8, 4)),
    ]
    for name, attrs, mask, abias, sizes in cases:
        x = w.f32(B, S, Hin).astype(np.float64)
        wt = w.f32(Hin, sum(sizes), lo=-0.5, hi=0.5).astype(np.float64)
        b = w.f32(sum(sizes)).astype(np.float64)
        qkv = x @ wt + b
        q, k, v = np.split(qkv, [sizes[0], 2 * sizes[0]], axis=-1)
        filt = attrs.get("mask_filter_value", -10000.0)
        m = key_mask(mask, B, S, S, filt) if mask is not None else None
        if abias is not None:
            m = (m if m is not None else 0.0) + abias
        y = attention_ref(q, k, v, N, attrs.get("scale"), m, attrs.get("unidirectional", 0))
        ins = ["x", "w", "b", "mask" if mask is not None else "", "",
               "abias" if abias is not None else ""]
        while not ins[-1]:
            ins.pop()
        inputs = [vi("x", [B, S, Hin])]
        data = [f(x)]
        if mask is not None:
            inputs.append(vi("mask", list(mask.shape), I32))
            data.append(mask)
        if abias is not None:
            inputs.append(vi("abias", list(abias.shape)))
            data.append(abias)
        mdl = ms_model([node("Attention", ins, ["y"], num_heads=N, **attrs)], inputs,
                       [vi("y", None)], [init("w", f(wt)), init("b", f(b))])
        save(w, name, "Attention", mdl, data, [y])


def gen_multi_head_attention(w):
    B, S, L, D, Dv, N = 2, 4, 6, 8, 4, 2
    I32 = TensorProto.INT32
    f = lambda a: a.astype(np.float32)  # noqa: E731
    pad2 = (w.rng.uniform(size=(B, L)) > 0.3).astype(np.int32)
    pad2[:, 0] = 1
    lens = w.rng.integers(1, L + 1, size=B).astype(np.int32)
    cases = [
        ("ms_mha", {}, None, None, False),
        ("ms_mha_bias_pad", dict(scale=0.5), pad2, w.f32(B, 1, S, L), True),
        ("ms_mha_lens", dict(mask_filter_value=-1000.0), lens, None, True),
    ]
    for name, attrs, mask, abias, with_bias in cases:
        q, k, v = (w.f32(B, S, D).astype(np.float64), w.f32(B, L, D).astype(np.float64),
                   w.f32(B, L, Dv).astype(np.float64))
        b = w.f32(2 * D + Dv).astype(np.float64)
        qb, kb, vb = (q + b[:D], k + b[D:2 * D], v + b[2 * D:]) if with_bias else (q, k, v)
        filt = attrs.get("mask_filter_value", -10000.0)
        m = key_mask(mask, B, S, L, filt) if mask is not None else None
        if abias is not None:
            m = (m if m is not None else 0.0) + abias
        y = attention_ref(qb, kb, vb, N, attrs.get("scale"), m, False)
        ins = ["q", "k", "v", "b" if with_bias else "", "mask" if mask is not None else "",
               "abias" if abias is not None else ""]
        while not ins[-1]:
            ins.pop()
        inputs = [vi("q", [B, S, D]), vi("k", [B, L, D]), vi("v", [B, L, Dv])]
        data = [f(q), f(k), f(v)]
        if mask is not None:
            inputs.append(vi("mask", list(mask.shape), I32))
            data.append(mask)
        if abias is not None:
            inputs.append(vi("abias", list(abias.shape)))
            data.append(abias)
        mdl = ms_model([node("MultiHeadAttention", ins, ["y"], num_heads=N, **attrs)], inputs,
                       [vi("y", None)], [init("b", f(b))] if with_bias else [])
        save(w, name, "MultiHeadAttention", mdl, data, [y])


def gen_group_query_attention(w):
    """GroupQueryAttention on a prompt without past state: causal, keys past
    seqlens_k[b] left out, query head h reading key/value head h // (N / kvN);
    present_key/value are K and V as [B, kvN, S, H]."""
    B, S, N, KVN, H = 2, 5, 4, 2, 8
    I32 = TensorProto.INT32
    f = lambda a: a.astype(np.float32)  # noqa: E731
    for name, packed, scale, short in (("ms_gqa", False, None, False),
                                       ("ms_gqa_packed", True, 0.4, True)):
        q = w.f32(B, S, N * H).astype(np.float64)
        k = w.f32(B, S, KVN * H).astype(np.float64)
        v = w.f32(B, S, KVN * H).astype(np.float64)
        qh = q.reshape(B, S, N, H).transpose(0, 2, 1, 3)
        kh = k.reshape(B, S, KVN, H).transpose(0, 2, 1, 3)
        vh = v.reshape(B, S, KVN, H).transpose(0, 2, 1, 3)
        kr, vr = np.repeat(kh, N // KVN, axis=1), np.repeat(vh, N // KVN, axis=1)
        sc = scale if scale else 1.0 / math.sqrt(H)
        scores = sc * qh @ kr.transpose(0, 1, 3, 2)
        # Keys past seqlens_k[b] are left out (right padding), as are
        # later ones (causal).
        seqlens = np.array([S - 1, S - 3] if short else [S - 1] * B, np.int32)
        pad = np.arange(S)[None, :] > seqlens[:, None]
        scores = np.where(np.triu(np.ones((S, S), bool), 1) | pad[:, None, None, :], -np.inf,
                          scores)
        y = (softmax(scores) @ vr).transpose(0, 2, 1, 3).reshape(B, S, N * H)
        attrs = dict(num_heads=N, kv_num_heads=KVN)
        if scale:
            attrs["scale"] = scale
        if packed:
            ins, inputs, data = (["qkv", "", "", "", "", "seqlens", "total"],
                                 [vi("qkv", [B, S, (N + 2 * KVN) * H])],
                                 [f(np.concatenate([q, k, v], axis=-1))])
        else:
            ins, inputs, data = (["q", "k", "v", "", "", "seqlens", "total"],
                                 [vi("q", [B, S, N * H]), vi("k", [B, S, KVN * H]),
                                  vi("v", [B, S, KVN * H])], [f(q), f(k), f(v)])
        m = ms_model([node("GroupQueryAttention", ins, ["y", "pk", "pv"], **attrs)],
                     inputs + [vi("seqlens", [B], I32)],
                     [vi("y", None), vi("pk", None), vi("pv", None)],
                     [init("total", np.array(S, np.int32))])
        save(w, name, "GroupQueryAttention", m, data + [seqlens], [y, kh, vh])


def gen_embed_layer_norm(w):
    B, S, H, V, P, G = 2, 5, 8, 11, 7, 2
    I32 = TensorProto.INT32
    f = lambda a: a.astype(np.float32)  # noqa: E731
    word, pos, seg = (w.f32(V, H).astype(np.float64), w.f32(P, H).astype(np.float64),
                      w.f32(G, H).astype(np.float64))
    gamma, beta = w.f32(H, lo=0.5, hi=1.5).astype(np.float64), w.f32(H).astype(np.float64)
    ids = w.rng.integers(0, V, size=(B, S)).astype(np.int32)
    sids = w.rng.integers(0, G, size=(B, S)).astype(np.int32)
    mask = (w.rng.uniform(size=(B, S)) > 0.4).astype(np.int32)
    pids = w.rng.integers(0, P, size=(B, S)).astype(np.int32)
    inits = [init("word", f(word)), init("pos", f(pos)), init("seg", f(seg)),
             init("gamma", f(gamma)), init("beta", f(beta))]
    eps = 1e-12
    # segments, mask, every output
    s_ = word[ids] + pos[:S] + seg[sids]
    y, _, _ = layer_norm(s_, gamma, beta, eps)
    m = ms_model([node("EmbedLayerNormalization",
                       ["ids", "sids", "word", "pos", "seg", "gamma", "beta", "mask"],
                       ["y", "mask_index", "sum"], epsilon=eps)],
                 [vi("ids", [B, S], I32), vi("sids", [B, S], I32), vi("mask", [B, S], I32)],
                 [vi("y", None), vi("mask_index", None, I32), vi("sum", None)], inits)
    MODELS["ms_embed_layer_norm"] = "EmbedLayerNormalization"
    w.save("ms_embed_layer_norm", m, [ids, sids, mask],
           [f(y), (mask == 1).sum(1).astype(np.int32), f(s_)])
    # no segments, no mask, position_ids, epsilon 1e-5
    s2 = word[ids] + pos[pids]
    y2, _, _ = layer_norm(s2, gamma, beta, 1e-5)
    m = ms_model([node("EmbedLayerNormalization",
                       ["ids", "", "word", "pos", "", "gamma", "beta", "", "pids"],
                       ["y", "mask_index"], epsilon=1e-5)],
                 [vi("ids", [B, S], I32), vi("pids", [B, S], I32)],
                 [vi("y", None), vi("mask_index", None, I32)], inits)
    MODELS["ms_embed_layer_norm_pids"] = "EmbedLayerNormalization"
    w.save("ms_embed_layer_norm_pids", m, [ids, pids], [f(y2), np.zeros(B, np.int32)])


def rotary_ref(x, pos, cos, sin, interleaved, rot, heads):
    three_d = x.ndim == 3
    if three_d:
        B, S, D = x.shape
        x = x.reshape(B, S, heads, D // heads).transpose(0, 2, 1, 3)
    half = rot // 2
    c, s = cos[pos], sin[pos]  # [B or 1, S, half]
    c, s = c[:, None], s[:, None]
    y = x.copy()
    if interleaved:
        x1, x2 = x[..., 0:rot:2], x[..., 1:rot:2]
        y[..., 0:rot:2] = x1 * c - x2 * s
        y[..., 1:rot:2] = x2 * c + x1 * s
    else:
        x1, x2 = x[..., :half], x[..., half:rot]
        y[..., :half] = x1 * c - x2 * s
        y[..., half:rot] = x2 * c + x1 * s
    if three_d:
        y = y.transpose(0, 2, 1, 3).reshape(B, S, -1)
    return y


def gen_rotary(w):
    B, N, S, H, P = 2, 2, 4, 8, 10
    I64 = TensorProto.INT64
    f = lambda a: a.astype(np.float32)  # noqa: E731
    cases = [
        ("ms_rotary", {}, 4, H, "bs"),
        ("ms_rotary_interleaved", dict(interleaved=1), 4, H, "bs"),
        ("ms_rotary_3d_partial", dict(num_heads=N, rotary_embedding_dim=4), 3, 4, "offset"),
        ("ms_rotary_3d_interleaved", dict(num_heads=N, interleaved=1), 3, H, "bs"),
    ]
    for name, attrs, rank, rot, pform in cases:
        x = (w.f32(B, N, S, H) if rank == 4 else w.f32(B, S, N * H)).astype(np.float64)
        ang = w.rng.uniform(0, 6.3, size=(P, rot // 2))
        cos, sin = np.cos(ang), np.sin(ang)
        if pform == "bs":
            pids = w.rng.integers(0, P, size=(B, S)).astype(np.int64)
            pos = pids
        else:
            pids = np.array([3], np.int64)
            pos = (3 + np.arange(S))[None, :]
        y = rotary_ref(x, pos, cos, sin, attrs.get("interleaved", 0), rot, N)
        m = ms_model([node("RotaryEmbedding", ["x", "pids", "cos", "sin"], ["y"], **attrs)],
                     [vi("x", list(x.shape)), vi("pids", list(pids.shape), I64)],
                     [vi("y", None)], [init("cos", f(cos)), init("sin", f(sin))])
        save(w, name, "RotaryEmbedding", m, [f(x), pids], [y])


def quant(v, scale, zp, dtype):
    """ONNX's QuantizeLinear in float32: round half to even, saturate."""
    info = np.iinfo(dtype)
    q = np.rint(np.float32(v) / np.float32(scale)) + zp
    return np.clip(q, info.min, info.max).astype(dtype)


def dequant(q, scale, zp):
    return ((q.astype(np.int32) - zp).astype(np.float32) * np.float32(scale)).astype(np.float32)


def gen_qoperator(w):
    """QLinear* ops: expected = quantize(float op(dequantize(inputs))), all
    in float32 like the ops the importer emits; the C test allows 1 unit in
    the last place of the quantized result (ORT's own kernels round their
    fixed-point forms to within 1 of this)."""
    U8, I8 = TensorProto.UINT8, TensorProto.INT8
    f32 = np.float32
    rng = w.rng
    for dt, ttype, tag in ((np.uint8, U8, "u8"), (np.int8, I8, "s8")):
        info = np.iinfo(dt)
        a = rng.integers(info.min, info.max + 1, size=(2, 3, 4, 4)).astype(dt)
        b = rng.integers(info.min, info.max + 1, size=(3, 1, 1)).astype(dt)
        sa, sb, sc = f32(0.02), f32(0.05), f32(0.03)
        za, zb, zc = (dt(rng.integers(info.min // 2 + 1, info.max // 2)) for _ in range(3))
        qin = [init("sa", sa), init("za", np.array(za, dt)), init("sb", sb),
               init("zb", np.array(zb, dt)), init("sc", sc), init("zc", np.array(zc, dt))]
        da, db = dequant(a, sa, za), dequant(b, sb, zb)
        for op, fn in (("QLinearAdd", lambda x, y: x + y), ("QLinearMul", lambda x, y: x * y)):
            name = "ms_%s_%s" % (op[7:].lower(), tag)
            m = ms_model([node(op, ["a", "sa", "za", "b", "sb", "zb", "sc", "zc"], ["y"])],
                         [vi("a", [2, 3, 4, 4], ttype), vi("b", [3, 1, 1], ttype)],
                         [vi("y", None, ttype)], qin)
            MODELS[name] = op
            w.save(name, m, [a, b], [quant(fn(da, db), sc, zc, dt)])
        sig = (1.0 / (1.0 + np.exp(-da.astype(np.float64)))).astype(np.float32)
        m = ms_model([node("QLinearSigmoid", ["a", "sa", "za", "sc", "zc"], ["y"])],
                     [vi("a", [2, 3, 4, 4], ttype)], [vi("y", None, ttype)], qin)
        MODELS["ms_sigmoid_" + tag] = "QLinearSigmoid"
        w.save("ms_sigmoid_" + tag, m, [a], [quant(sig, sc, zc, dt)])
        lk = np.where(da >= 0, da, f32(0.1) * da).astype(np.float32)
        m = ms_model([node("QLinearLeakyRelu", ["a", "sa", "za", "sc", "zc"], ["y"], alpha=0.1)],
                     [vi("a", [2, 3, 4, 4], ttype)], [vi("y", None, ttype)], qin)
        MODELS["ms_leaky_" + tag] = "QLinearLeakyRelu"
        w.save("ms_leaky_" + tag, m, [a], [quant(lk, sc, zc, dt)])
        a2 = rng.integers(info.min, info.max + 1, size=(2, 2, 4, 4)).astype(dt)
        cat = np.concatenate([da, dequant(a2, sb, zb)], axis=1)
        m = ms_model([node("QLinearConcat", ["sc", "zc", "a", "sa", "za", "a2", "sb", "zb"], ["y"],
                           axis=1)],
                     [vi("a", [2, 3, 4, 4], ttype), vi("a2", [2, 2, 4, 4], ttype)],
                     [vi("y", None, ttype)], qin)
        MODELS["ms_concat_" + tag] = "QLinearConcat"
        w.save("ms_concat_" + tag, m, [a, a2], [quant(cat, sc, zc, dt)])
        gap = da.astype(np.float64).mean(axis=(2, 3), keepdims=True).astype(np.float32)
        m = ms_model([node("QLinearGlobalAveragePool", ["a", "sa", "za", "sc", "zc"], ["y"])],
                     [vi("a", [2, 3, 4, 4], ttype)], [vi("y", None, ttype)], qin)
        MODELS["ms_gap_" + tag] = "QLinearGlobalAveragePool"
        w.save("ms_gap_" + tag, m, [a], [quant(gap, sc, zc, dt)])
        ap = da.astype(np.float64).reshape(2, 3, 2, 2, 2, 2).mean(axis=(3, 5)).astype(np.float32)
        m = ms_model([node("QLinearAveragePool", ["a", "sa", "za", "sc", "zc"], ["y"],
                           kernel_shape=[2, 2], strides=[2, 2])],
                     [vi("a", [2, 3, 4, 4], ttype)], [vi("y", None, ttype)], qin)
        MODELS["ms_avgpool_" + tag] = "QLinearAveragePool"
        w.save("ms_avgpool_" + tag, m, [a], [quant(ap, sc, zc, dt)])


def gen_integer_matmuls(w):
    U8, I8 = TensorProto.UINT8, TensorProto.INT8
    rng = w.rng
    M, K, N = 3, 16, 5
    af = w.f32(2, M, K, lo=-2, hi=2)
    bq = rng.integers(-128, 128, size=(K, N)).astype(np.int8)
    bs = w.f32(N, lo=0.01, hi=0.05)
    bz = rng.integers(-5, 5, size=N).astype(np.int8)
    bias = w.f32(N)
    # DynamicQuantizeMatMul: A to uint8 as DynamicQuantizeLinear does.
    lo, hi = min(0.0, float(af.min())), max(0.0, float(af.max()))
    a_s = np.float32((hi - lo) / 255)
    a_z = np.uint8(np.clip(np.rint(-lo / a_s), 0, 255))
    aq = quant(af, a_s, a_z, np.uint8)
    acc = (aq.astype(np.int64) - a_z) @ (bq.astype(np.int64) - bz)
    y = acc.astype(np.float32) * (a_s * bs) + bias
    m = ms_model([node("DynamicQuantizeMatMul", ["a", "b", "bs", "bz", "bias"], ["y"])],
                 [vi("a", [2, M, K])], [vi("y", None)],
                 [init("b", bq), init("bs", bs), init("bz", bz), init("bias", bias)])
    save(w, "ms_dynamic_quantize_matmul", "DynamicQuantizeMatMul", m, [af], [y])
    # MatMulIntegerToFloat: uint8 A with a zero point, per-column B scale.
    a8 = rng.integers(0, 256, size=(2, M, K)).astype(np.uint8)
    az, asc = np.uint8(rng.integers(100, 150)), np.float32(0.02)
    acc = (a8.astype(np.int64) - az) @ (bq.astype(np.int64) - bz)
    y = acc.astype(np.float32) * (asc * bs) + bias
    m = ms_model([node("MatMulIntegerToFloat", ["a", "b", "as", "bs", "az", "bz", "bias"], ["y"])],
                 [vi("a", [2, M, K], U8)], [vi("y", None)],
                 [init("b", bq), init("as", asc), init("bs", bs), init("az", np.array(az)),
                  init("bz", bz), init("bias", bias)])
    save(w, "ms_matmul_integer_to_float", "MatMulIntegerToFloat", m, [a8], [y])
    _ = I8


def gen_matmul_nbits(w):
    rng = w.rng
    for name, K, N, bits, block, zp_kind, bias in (
            ("ms_matmul_nbits", 64, 6, 4, 32, "none", False),
            ("ms_matmul_nbits_zp", 48, 5, 4, 16, "u8", True),
            ("ms_matmul_nbits_8bit", 32, 4, 8, 16, "u8", False)):
        blocks = -(-K // block)
        q = rng.integers(0, 1 << bits, size=(N, blocks * block)).astype(np.uint8)
        per = 8 // bits
        packed = np.zeros((N, blocks * block // per), np.uint8)
        for j in range(per):
            packed |= (q[:, j::per] << (j * bits)).astype(np.uint8)
        scales = w.f32(N, blocks, lo=0.01, hi=0.1)
        if zp_kind == "none":
            z = np.full((N, blocks), 1 << (bits - 1))
            zinit, zname = [], ""
        else:
            z = rng.integers(0, 1 << bits, size=(N, blocks))
            row = -(-blocks * bits // 8)
            zp = np.zeros((N, row), np.uint8)
            for blk in range(blocks):
                zp[:, blk * bits // 8] |= (z[:, blk] << ((blk * bits) % 8)).astype(np.uint8)
            zinit, zname = [init("zp", zp.reshape(-1))], "zp"
        wt = ((q[:, :K].astype(np.float64) - np.repeat(z, block, axis=1)[:, :K])
              * np.repeat(scales, block, axis=1)[:, :K]).astype(np.float32)
        a = w.f32(2, 3, K)
        bvec = w.f32(N)
        y = a.astype(np.float64) @ wt.T.astype(np.float64) + (bvec if bias else 0)
        ins = ["a", "b", "scales", zname, "", "bias" if bias else ""]
        while not ins[-1]:
            ins.pop()
        m = ms_model([node("MatMulNBits", ins, ["y"], K=K, N=N, bits=bits, block_size=block)],
                     [vi("a", [2, 3, K])], [vi("y", None)],
                     [init("b", packed.reshape(N, blocks, -1)), init("scales", scales.reshape(-1)),
                      init("bias", bvec)][:3 if not bias else 4] + zinit)
        save(w, name, "MatMulNBits", m, [a], [y])


def gen_quantize_linear(w):
    """com.microsoft QuantizeLinear / DequantizeLinear (per axis)."""
    x = w.f32(2, 3, 4, lo=-2, hi=2)
    sc = w.f32(3, lo=0.01, hi=0.03)
    zp = w.rng.integers(100, 150, size=3).astype(np.uint8)
    q = quant(x, sc[None, :, None], zp[None, :, None].astype(np.int32), np.uint8)
    y = dequant(q, sc[None, :, None], zp[None, :, None].astype(np.int32))
    m = ms_model([node("QuantizeLinear", ["x", "sc", "zp"], ["q"], axis=1),
                  node("DequantizeLinear", ["q", "sc", "zp"], ["y"], axis=1)],
                 [vi("x", [2, 3, 4])], [vi("q", None, TensorProto.UINT8), vi("y", None)],
                 [init("sc", sc), init("zp", zp)])
    MODELS["ms_quantize_linear"] = "QuantizeLinear"
    w.save("ms_quantize_linear", m, [x], [q, y])


def gen_refused(w):
    m = ms_model([node("CDist", ["x", "x"], ["y"])], [vi("x", [2, 3])], [vi("y", None)])
    w.save("ms_refused", m)
    # Forms that stay refused, each naming the reason.
    wt = init("w", np.zeros((8, 24), np.float32))
    m = ms_model([node("Attention", ["x", "w", "", "", "past"], ["y", "present"], num_heads=2)],
                 [vi("x", [1, 3, 8]), vi("past", [2, 1, 2, 2, 4])],
                 [vi("y", None), vi("present", None)], [wt])
    w.save("ms_refused_attention_past", m)
    m = ms_model([node("FusedConv", ["x", "cw"], ["y"], activation="Gelu")],
                 [vi("x", [1, 1, 3, 3])], [vi("y", None)],
                 [init("cw", np.ones((1, 1, 1, 1), np.float32))])
    w.save("ms_refused_fused_conv", m)
    m = ms_model([node("Attention", ["x", "w"], ["y"])], [vi("x", [1, 3, 8])], [vi("y", None)],
                 [wt])
    w.save("ms_refused_attention_heads", m)


def generate(w):
    gen_activations(w)
    gen_fused_matmul(w)
    gen_fused_conv(w)
    gen_norms(w)
    gen_attention(w)
    gen_multi_head_attention(w)
    gen_group_query_attention(w)
    gen_embed_layer_norm(w)
    gen_rotary(w)
    gen_qoperator(w)
    gen_integer_matmuls(w)
    gen_matmul_nbits(w)
    gen_quantize_linear(w)
    gen_refused(w)
