# SPDX-License-Identifier: Apache-2.0
"""ONNX models of the window ops over 1 to 3 spatial dims (graph/onnx_ops.c:
Conv, ConvTranspose, MaxPool, AveragePool, LpPool and the Global pools),
with NumPy's expected outputs (the N-d references of tests/runtime/ref/
cases_window.py). Imported by gen_models.py, which calls generate(w);
test_onnx_window.c runs them on every target."""
import os
import sys

import numpy as np
from onnx import helper

from gen_models import init, model, vi

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "runtime", "ref"))
from cases_window import conv_nd, conv_transpose_nd, pool_nd  # noqa: E402


def relu(x):
    return np.maximum(x, 0.0)


def gen_audio_convnet(w):
    """A tiny 1-D audio classifier as torch.onnx exports one: Conv1d ->
    BatchNorm1d (folded into the convolution at import) -> ReLU ->
    MaxPool1d -> grouped, dilated Conv1d with auto_pad SAME_UPPER -> ReLU ->
    AvgPool1d -> GlobalAveragePool -> Flatten -> Gemm -> LogSoftmax."""
    n = helper.make_node
    L = 64 + int(w.rng.integers(0, 4))
    x = w.f32(2, 1, L)
    w1, b1 = w.f32(8, 1, 5), w.f32(8)
    scale, shift = w.f32(8, lo=0.5, hi=1.5), w.f32(8)
    mean, var = w.f32(8), w.f32(8, lo=0.5, hi=1.5)
    w2, b2 = w.f32(8, 4, 3), w.f32(8)
    wf, bf = w.f32(4, 8), w.f32(4)
    nodes = [
        n("Conv", ["x", "w1", "b1"], ["c1"], pads=[2, 2], strides=[2], kernel_shape=[5]),
        n("BatchNormalization", ["c1", "scale", "shift", "mean", "var"], ["bn"], epsilon=1e-5),
        n("Relu", ["bn"], ["r1"]),
        n("MaxPool", ["r1"], ["p1"], kernel_shape=[3], strides=[2], pads=[1, 1]),
        n("Conv", ["p1", "w2", "b2"], ["c2"], group=2, dilations=[2], auto_pad="SAME_UPPER"),
        n("Relu", ["c2"], ["r2"]),
        n("AveragePool", ["r2"], ["p2"], kernel_shape=[2], strides=[2]),
        n("GlobalAveragePool", ["p2"], ["gp"]),
        n("Flatten", ["gp"], ["f"]),
        n("Gemm", ["f", "wf", "bf"], ["logits"], transB=1),
        n("LogSoftmax", ["logits"], ["y"], axis=1),
    ]
    m = model(nodes, [vi("x", [2, 1, L])], [vi("y", [2, 4])],
              [init("w1", w1), init("b1", b1), init("scale", scale), init("shift", shift),
               init("mean", mean), init("var", var), init("w2", w2), init("b2", b2),
               init("wf", wf), init("bf", bf)])
    c1 = conv_nd(x, w1, b1, (2, 2), (2,), (1,), 1)
    bn = (c1 - mean[:, None]) / np.sqrt(var[:, None] + 1e-5) * scale[:, None] + shift[:, None]
    p1, _ = pool_nd(relu(bn), "max", (3,), (1, 1), (2,), (1,), 0)
    # SAME_UPPER, stride 1, span 5: 2 on each side.
    r2 = relu(conv_nd(p1, w2, b2, (2, 2), (1,), (2,), 2))
    p2, _ = pool_nd(r2, "avg", (2,), (0, 0), (2,), (1,), 0)
    logits = p2.mean(axis=2) @ wf.astype(np.float64).T + bf
    y = logits - logits.max(1, keepdims=True)
    y = y - np.log(np.exp(y).sum(1, keepdims=True))
    w.save("window_audio_1d", m, [x], [y.astype(np.float32)])


def gen_unet(w):
    """A tiny U-Net: two encoder convolutions around a MaxPool, a
    ConvTranspose (stride 2) back up, a skip Concat, a decoder convolution
    and a 1x1 head with a Sigmoid."""
    n = helper.make_node
    H = 8 + 2 * int(w.rng.integers(0, 2))
    x = w.f32(1, 2, H, H)
    we1, be1 = w.f32(4, 2, 3, 3), w.f32(4)
    we2, be2 = w.f32(8, 4, 3, 3), w.f32(8)
    wt, bt = w.f32(8, 4, 2, 2), w.f32(4)
    wd, bd = w.f32(4, 8, 3, 3), w.f32(4)
    wh, bh = w.f32(1, 4, 1, 1), w.f32(1)
    nodes = [
        n("Conv", ["x", "we1", "be1"], ["e1c"], pads=[1, 1, 1, 1]),
        n("Relu", ["e1c"], ["e1"]),
        n("MaxPool", ["e1"], ["d1"], kernel_shape=[2, 2], strides=[2, 2]),
        n("Conv", ["d1", "we2", "be2"], ["e2c"], pads=[1, 1, 1, 1]),
        n("Relu", ["e2c"], ["e2"]),
        n("ConvTranspose", ["e2", "wt", "bt"], ["up"], strides=[2, 2], kernel_shape=[2, 2]),
        n("Concat", ["up", "e1"], ["cat"], axis=1),
        n("Conv", ["cat", "wd", "bd"], ["dc"], pads=[1, 1, 1, 1]),
        n("Relu", ["dc"], ["dr"]),
        n("Conv", ["dr", "wh", "bh"], ["hc"]),
        n("Sigmoid", ["hc"], ["y"]),
    ]
    m = model(nodes, [vi("x", [1, 2, H, H])], [vi("y", [1, 1, H, H])],
              [init("we1", we1), init("be1", be1), init("we2", we2), init("be2", be2),
               init("wt", wt), init("bt", bt), init("wd", wd), init("bd", bd),
               init("wh", wh), init("bh", bh)])
    e1 = relu(conv_nd(x, we1, be1, (1, 1, 1, 1), (1, 1), (1, 1), 1))
    d1, _ = pool_nd(e1, "max", (2, 2), (0, 0, 0, 0), (2, 2), (1, 1), 0)
    e2 = relu(conv_nd(d1, we2, be2, (1, 1, 1, 1), (1, 1), (1, 1), 1))
    up = conv_transpose_nd(e2, wt, bt, (0, 0, 0, 0), (2, 2), (1, 1), (0, 0), 1)
    cat = np.concatenate([up, e1], axis=1)
    dr = relu(conv_nd(cat, wd, bd, (1, 1, 1, 1), (1, 1), (1, 1), 1))
    hc = conv_nd(dr, wh, bh, (0, 0, 0, 0), (1, 1), (1, 1), 1)
    y = 1.0 / (1.0 + np.exp(-hc))
    w.save("window_unet", m, [x], [y.astype(np.float32)])


def gen_volume_and_pools(w):
    """3-D: Conv -> MaxPool -> ConvTranspose with output_shape (odd depth:
    output_padding at import) added back to the input; and a 2-D branch
    with LpPool (p 3), GlobalMaxPool and GlobalLpPool (p 2)."""
    n = helper.make_node
    x = w.f32(1, 2, 5, 6, 6)
    wc, bc = w.f32(4, 2, 3, 3, 3), w.f32(4)
    wt = w.f32(4, 2, 2, 2, 2)
    z = w.f32(2, 3, 7, 6)
    nodes = [
        n("Conv", ["x", "wc", "bc"], ["c"], pads=[1, 1, 1, 1, 1, 1]),
        n("MaxPool", ["c"], ["p"], kernel_shape=[2, 2, 2], strides=[2, 2, 2]),
        n("ConvTranspose", ["p", "wt"], ["u"], strides=[2, 2, 2], output_shape=[5, 6, 6]),
        n("Add", ["u", "x"], ["y"]),
        n("LpPool", ["z"], ["lp"], kernel_shape=[3, 2], strides=[2, 2], pads=[1, 0, 1, 1], p=3),
        n("GlobalMaxPool", ["z"], ["gmax"]),
        n("GlobalLpPool", ["z"], ["glp"], p=2),
    ]
    m = model(nodes, [vi("x", [1, 2, 5, 6, 6]), vi("z", [2, 3, 7, 6])],
              [vi("y", [1, 2, 5, 6, 6]), vi("lp", None), vi("gmax", [2, 3, 1, 1]),
               vi("glp", [2, 3, 1, 1])],
              [init("wc", wc), init("bc", bc), init("wt", wt)])
    c = conv_nd(x, wc, bc, (1,) * 6, (1, 1, 1), (1, 1, 1), 1)
    p, _ = pool_nd(c, "max", (2, 2, 2), (0,) * 6, (2, 2, 2), (1, 1, 1), 0)
    # Depth 2 -> full 4, wanted 5: one more row, which output_padding gives.
    u = conv_transpose_nd(p, wt, None, (0,) * 6, (2, 2, 2), (1, 1, 1), (1, 0, 0), 1)
    y = u + x
    lp, _ = pool_nd(z, "lp", (3, 2), (1, 0, 1, 1), (2, 2), (1, 1), 0, p=3)
    zd = z.astype(np.float64)
    gmax = zd.max(axis=(2, 3), keepdims=True)
    glp = np.sqrt((zd * zd).sum(axis=(2, 3), keepdims=True))
    w.save("window_volume_pools", m, [x, z],
           [y.astype(np.float32), lp.astype(np.float32), gmax.astype(np.float32),
            glp.astype(np.float32)])


def gen_refused(w):
    """Window models the importer must refuse, each with a reason: a 4-D
    window (rank 6), an output_shape of the wrong length, a ConvTranspose
    weight whose channels do not match the input."""
    n = helper.make_node
    m = model([n("MaxPool", ["x"], ["y"], kernel_shape=[2, 2, 2, 2])],
              [vi("x", [1, 1, 3, 3, 3, 3])], [vi("y", None)])
    w.save("window_bad_rank6", m)
    m = model([n("ConvTranspose", ["x", "w"], ["y"], output_shape=[4, 4, 4])],
              [vi("x", [1, 2, 3, 3])], [vi("y", None)], [init("w", w.f32(2, 1, 2, 2))])
    w.save("window_bad_output_shape", m)
    m = model([n("ConvTranspose", ["x", "w"], ["y"])],
              [vi("x", [1, 3, 3, 3])], [vi("y", None)], [init("w", w.f32(2, 1, 2, 2))])
    w.save("window_bad_channels", m)


def generate(w):
    gen_refused(w)
    gen_audio_convnet(w)
    gen_unet(w)
    gen_volume_and_pools(w)
