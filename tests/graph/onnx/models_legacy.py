# SPDX-License-Identifier: Apache-2.0
"""Models of default-domain opsets 1 to 6 in the forms the ONNX node tests do
not cover (graph/onnx_legacy.c upgrades them), with NumPy's expected outputs.
Imported by gen_models.py; test_onnx_legacy.c loads them."""
import numpy as np
from onnx import TensorProto, helper

from gen_models import init, model, vi

n = helper.make_node


def legacy_model(nodes, inputs, outputs, inits=(), opset=5, name="legacy"):
    m = model(nodes, inputs, outputs, inits, opset=opset, name=name)
    m.ir_version = 3
    return m


def prelu_channel(x, slope):
    s = slope.reshape((1, -1) + (1,) * (x.ndim - 2))
    return np.where(x < 0, x * s, x)


def gen_caffe2_cnn(w):
    """A Caffe2-style CNN at opset 4: bias Add broadcast at axis 1, a
    Conv -> BatchNormalization pair with is_test and consumed_inputs, Mul by
    a [C, H] tensor at axis 1, Sub of a scalar, per-channel PRelu, Reshape
    with the `shape` attribute, Gemm with `broadcast`, Dropout with is_test,
    Relu/Sigmoid with consumed_inputs, and an Add whose B is a graph input
    broadcast at axis 1."""
    N, C, H, W = 2, 4, 5, 6
    x = w.f32(N, 3, H, W)
    cw = w.f32(C, 3, 3, 3, lo=-0.4, hi=0.4)
    bias = w.f32(C)
    bn = [w.f32(C, lo=0.5, hi=1.5), w.f32(C), w.f32(C), w.f32(C, lo=0.5, hi=2.0)]
    bn2 = [w.f32(C, lo=0.5, hi=1.5), w.f32(C), w.f32(C), w.f32(C, lo=0.5, hi=2.0)]
    mulc = w.f32(C, H, lo=0.5, hi=1.5)
    slope = w.f32(C, lo=0.1, hi=0.3)
    fw, fb = w.f32(C * H * W, 7, lo=-0.1, hi=0.1), w.f32(7)
    chan = w.f32(C)  # a graph input, broadcast at axis 1
    inits = [init("cw", cw), init("bias", bias), init("mulc", mulc),
             init("half", np.float32(0.5)), init("slope", slope),
             init("fw", fw), init("fb", fb)]
    for i, p in enumerate(bn + bn2):
        inits.append(init("bn%d" % i, p))
    nodes = [
        n("Conv", ["x", "cw"], ["c"], pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
        n("BatchNormalization", ["c", "bn0", "bn1", "bn2", "bn3"], ["b"],
          epsilon=1e-5, is_test=1, consumed_inputs=[0, 0, 0, 1, 1]),
        n("Add", ["b", "bias"], ["a"], broadcast=1, axis=1),
        n("Relu", ["a"], ["r"], consumed_inputs=[0]),
        n("Add", ["r", "chan"], ["rc"], broadcast=1, axis=1),
        n("BatchNormalization", ["rc", "bn4", "bn5", "bn6", "bn7"], ["b2"],
          epsilon=1e-3, momentum=0.9, spatial=1, is_test=1,
          consumed_inputs=[0, 0, 0, 1, 1]),
        n("Mul", ["b2", "mulc"], ["m"], broadcast=1, axis=1),
        n("Sub", ["m", "half"], ["s"], broadcast=1),
        n("PRelu", ["s", "slope"], ["p"]),
        n("Reshape", ["p"], ["f"], shape=[N, -1]),
        n("Gemm", ["f", "fw", "fb"], ["g"], broadcast=1),
        n("Dropout", ["g"], ["d"], is_test=1, ratio=0.3),
        n("Sigmoid", ["d"], ["y"], consumed_inputs=[0]),
    ]
    m = legacy_model(nodes, [vi("x", [N, 3, H, W]), vi("chan", [C])],
                     [vi("y", [N, 7])], inits, opset=4)

    def batchnorm(h, s, b, mean, var, eps):
        sh = (1, -1, 1, 1)
        return (h - mean.reshape(sh)) / np.sqrt(var.reshape(sh) + eps) * s.reshape(sh) \
            + b.reshape(sh)

    xd = x.astype(np.float64)
    xp = np.pad(xd, ((0, 0), (0, 0), (1, 1), (1, 1)))
    h = np.zeros((N, C, H, W))
    for i in range(3):
        for j in range(3):
            h += np.einsum("nchw,mc->nmhw", xp[:, :, i:i + H, j:j + W], cw[:, :, i, j])
    h = batchnorm(h, *bn, 1e-5) + bias.reshape(1, C, 1, 1)
    h = np.maximum(h, 0) + chan.reshape(1, C, 1, 1)
    h = batchnorm(h, *bn2, 1e-3)
    h = h * mulc.reshape(1, C, H, 1) - 0.5
    h = prelu_channel(h, slope)
    g = h.reshape(N, -1) @ fw + fb
    y = 1 / (1 + np.exp(-g))
    w.save("legacy_caffe2_cnn", m, [x, chan], [y.astype(np.float32)])


def gen_opset1(w):
    """Opset 1 forms: Pad's `paddings`, Split's sizes as input 1, Concat
    without axis (1), Tile's tiles and axis inputs, Cast's `to` as a type
    name, Upsample's height_scale/width_scale, Selu's opset-1 defaults."""
    x = w.f32(1, 2, 3, 4, lo=-5.0, hi=5.0)
    nodes = [
        n("Pad", ["x"], ["pd"], paddings=[0, 0, 1, 0, 0, 0, 2, 1], mode="constant",
          value=0.25),
        n("Split", ["pd", "sizes"], ["s0", "s1"], axis=2),
        n("Concat", ["s1", "s0"], ["cat"]),
        n("Tile", ["x", "tiles", "tax"], ["t"]),
        n("Cast", ["t"], ["ti"], to="INT32"),
        n("Cast", ["ti"], ["y2"], to="FLOAT"),
        n("Upsample", ["x"], ["y3"], height_scale=2.0, width_scale=3.0, mode="nearest"),
        n("Selu", ["x"], ["y4"]),
    ]
    inits = [init("sizes", np.array([3, 3], np.int64)),
             init("tiles", np.array(3, np.int64)), init("tax", np.array(3, np.int64))]
    m = legacy_model(nodes, [vi("x", [1, 2, 3, 4])],
                     [vi("cat", [1, 4, 3, 5]), vi("y2", [1, 2, 3, 12]),
                      vi("y3", [1, 2, 6, 12]), vi("y4", [1, 2, 3, 4])], inits, opset=1)
    pd = np.pad(x, ((0, 0), (0, 0), (1, 2), (0, 1)), constant_values=0.25)
    cat = np.concatenate([pd[:, :, 3:], pd[:, :, :3]], axis=1)
    t = np.tile(x, (1, 1, 1, 3))
    y2 = t.astype(np.int32).astype(np.float32)
    y3 = np.repeat(np.repeat(x, 2, axis=2), 3, axis=3)
    xd = x.astype(np.float64)
    y4 = 1.0507 * np.where(xd > 0, xd, 1.6732 * (np.exp(xd) - 1))
    w.save("legacy_opset1", m, [x],
           [cat.astype(np.float32), y2, y3, y4.astype(np.float32)])


def gen_bn_spatial0(w):
    """BatchNormalization spatial=0 (opset 6): statistics per activation."""
    N, C, H, W = 3, 2, 3, 4
    x = w.f32(N, C, H, W)
    s, b, mean = w.f32(C, H, W, lo=0.5, hi=1.5), w.f32(C, H, W), w.f32(C, H, W)
    var = w.f32(C, H, W, lo=0.5, hi=2.0)
    nodes = [n("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"], spatial=0,
               epsilon=1e-4, is_test=1)]
    m = legacy_model(nodes, [vi("x", [N, C, H, W])], [vi("y", [N, C, H, W])],
                     [init("s", s), init("b", b), init("m", mean), init("v", var)],
                     opset=6)
    y = (x.astype(np.float64) - mean) / np.sqrt(var.astype(np.float64) + 1e-4) * s + b
    w.save("legacy_bn_spatial0", m, [x], [y.astype(np.float32)])


def gen_experimental(w):
    """Opset 1's experimental ops at opset 8 (tiny-yolov2 and other Model
    Zoo models open with ImageScaler): ImageScaler, Affine, ScaledTanh,
    ParametricSoftplus, Scale, and Crop by border and by scale."""
    x = w.f32(2, 3, 6, 7, lo=0.0, hi=255.0)
    bias = [float(v) for v in w.f32(3)]
    nodes = [
        n("ImageScaler", ["x"], ["is"], scale=1.0 / 255, bias=bias),
        n("Affine", ["is"], ["af"], alpha=2.0, beta=-0.1),
        n("ScaledTanh", ["af"], ["st"], alpha=1.5, beta=0.7),
        n("ParametricSoftplus", ["st"], ["ps"], alpha=0.8, beta=1.2),
        n("Scale", ["ps"], ["y1"], scale=3.0),
        n("Crop", ["is"], ["y2"], border=[1, 2, 3, 1]),
        n("Crop", ["is"], ["y3"], border=[2, 1, 0, 0], scale=[4, 3]),
    ]
    m = legacy_model(nodes, [vi("x", [2, 3, 6, 7])],
                     [vi("y1", [2, 3, 6, 7]), vi("y2", [2, 3, 3, 3]),
                      vi("y3", [2, 3, 4, 3])], opset=8)
    xd = x.astype(np.float64)
    s = xd / 255 + np.array(bias).reshape(1, 3, 1, 1)
    a = 2.0 * s - 0.1
    t = 1.5 * np.tanh(0.7 * a)
    y1 = 3.0 * 0.8 * np.log(np.exp(1.2 * t) + 1)
    w.save("legacy_experimental", m, [x],
           [y1.astype(np.float32), s[:, :, 2:5, 1:4].astype(np.float32),
            s[:, :, 1:5, 2:5].astype(np.float32)])


def gen_mvn1(w):
    """MeanVarianceNormalization-1 (opset 8): per sample and channel, and
    across channels."""
    x = w.f32(2, 3, 4, 5)
    nodes = [n("MeanVarianceNormalization", ["x"], ["y1"]),
             n("MeanVarianceNormalization", ["x"], ["y2"], across_channels=1,
               normalize_variance=1)]
    m = legacy_model(nodes, [vi("x", [2, 3, 4, 5])],
                     [vi("y1", [2, 3, 4, 5]), vi("y2", [2, 3, 4, 5])], opset=8)
    xd = x.astype(np.float64)

    def mvn(axes):
        mu = xd.mean(axis=axes, keepdims=True)
        return (xd - mu) / np.sqrt(((xd - mu) ** 2).mean(axis=axes, keepdims=True))
    w.save("legacy_mvn1", m, [x],
           [mvn((2, 3)).astype(np.float32), mvn((1, 2, 3)).astype(np.float32)])


def gen_no_opset_import(w):
    """An IR version 2 model without opset_import: opset 1 (the ONNX
    checker's rule), so Add's broadcast at axis 1 applies."""
    x, b = w.f32(2, 3, 4), w.f32(3)
    nodes = [n("Add", ["x", "b"], ["y"], broadcast=1, axis=1)]
    m = legacy_model(nodes, [vi("x", [2, 3, 4])], [vi("y", [2, 3, 4])], [init("b", b)])
    del m.opset_import[:]
    m.ir_version = 2
    w.save("legacy_no_opset_import", m, [x], [x + b.reshape(1, 3, 1)])


def gen_refusals(w):
    """Legacy forms that cannot be mapped: each refused naming the node,
    the attribute and the opset."""
    nodes = [n("Add", ["x", "b"], ["y"], name="shapes_differ")]
    m = legacy_model(nodes, [vi("x", [2, 3]), vi("b", [3])], [vi("y", [2, 3])], opset=6)
    w.save("legacy_bad_broadcast0", m)
    nodes = [n("Mul", ["x", "b"], ["y"], name="axis_too_far", broadcast=1, axis=2)]
    m = legacy_model(nodes, [vi("x", [2, 3, 4]), vi("b", [3, 4])],
                     [vi("y", [2, 3, 4])], opset=4)
    w.save("legacy_bad_axis", m)
    nodes = [n("Cast", ["x"], ["y"], name="bad_type", to="REAL")]
    m = legacy_model(nodes, [vi("x", [2])], [vi("y", [2])], opset=3)
    w.save("legacy_bad_cast", m)
    nodes = [n("ImageScaler", ["x"], ["y"], name="too_new", scale=2.0)]
    m = legacy_model(nodes, [vi("x", [1, 2, 2, 2])], [vi("y", [1, 2, 2, 2])], opset=10)
    w.save("legacy_bad_experimental", m)
    # The default domain is not imported: its nodes are refused.
    g = helper.make_graph([n("Relu", ["x"], ["y"], name="relu")], "g",
                          [vi("x", [2])], [vi("y", [2])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("com.example", 1)])
    m.ir_version = 7
    w.save("legacy_no_default_domain", m)


def generate(w):
    gen_caffe2_cnn(w)
    gen_opset1(w)
    gen_bn_spatial0(w)
    gen_experimental(w)
    gen_mvn1(w)
    gen_no_opset_import(w)
    gen_refusals(w)
