# SPDX-License-Identifier: Apache-2.0
"""QDQ models (ONNX Runtime's quantization layout: QuantizeLinear ->
DequantizeLinear on activations, DequantizeLinear on constant int8
weights and int32 biases) around Conv and MatMul, for the QDQ folding of
graph/onnx_fuse.c + onnx_quant.c. Expected outputs come from a NumPy
integer implementation (int accumulators, requantization by the float32
multiplier sx * sw / sy, round half to even), so the folded graph must
match them bit for bit; each model is also saved as NAME_float with the
float model's output (no quantizers) for the quantization-error check.
Imported by gen_models.py (generate(w)); test_onnx_qdq.c loads them."""
import numpy as np
from onnx import helper

from gen_models import init, model, vi

RANGE = {np.uint8: (0, 255), np.int8: (-128, 127)}


def quantize(x, s, z, dt):
    lo, hi = RANGE[dt]
    q = np.rint(x.astype(np.float32) / np.float32(s)) + z
    return np.clip(q, lo, hi).astype(dt)


def requant(acc, mult, zy, dt):
    lo, hi = RANGE[dt]
    y = np.rint(acc.astype(np.float64) * mult.astype(np.float64)) + zy
    return np.clip(y, lo, hi).astype(dt)


def conv_int(x, w, pad, stride, group):
    """Integer-valued float64 direct convolution (exact for 8-bit data)."""
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh = (h + 2 * pad - kh) // stride + 1
    ow = (wd + 2 * pad - kw) // stride + 1
    y = np.zeros((n, m, oh, ow), np.float64)
    mg = m // group
    for g in range(group):
        xs = xp[:, g * cg:(g + 1) * cg]
        for i in range(kh):
            for j in range(kw):
                patch = xs[:, :, i:i + stride * oh:stride, j:j + stride * ow:stride]
                y[:, g * mg:(g + 1) * mg] += np.einsum(
                    "nchw,mc->nmhw", patch, w[g * mg:(g + 1) * mg, :, i, j])
    return y


def scale_for(a, dt):
    """Per-tensor activation scale and zero point covering a (min <= 0 <= max)."""
    lo, hi = RANGE[dt]
    amin, amax = min(float(a.min()), 0.0), max(float(a.max()), 0.0)
    s = np.float32((amax - amin) / (hi - lo))
    z = int(np.clip(np.rint(lo - amin / s), lo, hi))
    return s, z


def gen_qdq(w, name, x, wf, bf, act, per_channel, relu, conv, pad=1, stride=1,
            group=1, y_at_min=True, w_zero=False, form="matmul"):
    """One Q/DQ product: x (float input) -> Q(act) -> DQ -> Conv / MatMul
    (DQ(int8 weight), DQ(int32 bias)) [-> Relu] -> Q(act) -> DQ -> output.
    For a matmul, `form` picks the float op: "matmul" (a bias, if any, added
    by an Add after it), "gemm" (the bias as C), "gemm_t" (Gemm with transB =
    1: the weight stored as [N, K], per channel along axis 0)."""
    sx, zx = scale_for(x, act)
    top = 100 if w_zero else 127  # room for the zero point without clipping
    if conv:
        axis, red = 0, (1, 2, 3)
        sw = (np.abs(wf).max(axis=red) / top).astype(np.float32) if per_channel else \
            np.float32(np.abs(wf).max() / top)
        wq = np.clip(np.rint(wf / (sw.reshape(-1, 1, 1, 1) if per_channel else sw)),
                     -127, 127).astype(np.int8)
    else:
        axis, red = 1, 0
        sw = (np.abs(wf).max(axis=red) / top).astype(np.float32) if per_channel else \
            np.float32(np.abs(wf).max() / top)
        wq = np.clip(np.rint(wf / sw), -127, 127).astype(np.int8)
    channels = wq.shape[axis]
    # A per-channel weight zero point (ONNX Runtime's tool writes 0; the
    # folding takes any): the stored weight is wq + zw.
    zw = w.rng.integers(-20, 21, size=channels).astype(np.int8) if w_zero else None
    if w_zero:
        zshape = (-1, 1, 1, 1) if conv else (1, -1)
        wstored = np.clip(wq.astype(np.int32) + zw.reshape(zshape), -128, 127).astype(np.int8)
        wq = (wstored.astype(np.int32) - zw.reshape(zshape)).astype(np.int32)
    else:
        wstored = wq
    swc = np.broadcast_to(np.asarray(sw, np.float32), (channels,))
    sb = (np.float32(sx) * swc).astype(np.float32)
    bq = np.rint(bf / sb).astype(np.int32) if bf is not None else None
    # The integer implementation.
    xq = quantize(x, sx, zx, act)
    xi = xq.astype(np.float64) - zx
    wi = wq.astype(np.float64)
    if conv:
        acc = conv_int(xi, wi, pad, stride, group)
        if bq is not None:
            acc += bq.reshape(1, -1, 1, 1)
        yf_float = conv_int(x.astype(np.float64), wf.astype(np.float64), pad, stride, group)
        if bf is not None:
            yf_float += bf.reshape(1, -1, 1, 1)
        cshape = (1, -1, 1, 1)
    else:
        acc = xi @ wi
        if bq is not None:
            acc += bq
        yf_float = x.astype(np.float64) @ wf.astype(np.float64)
        if bf is not None:
            yf_float += bf
        cshape = (-1,)
    if relu:
        yf_float = np.maximum(yf_float, 0)
    # The output scale from the float result (as calibration would).
    sy, zy = scale_for(yf_float, act)
    if relu:
        zy = RANGE[act][0] + (0 if y_at_min else 10)
        sy = np.float32(max(float(yf_float.max()), 1e-3) / (RANGE[act][1] - zy))
    mult = (np.float32(sx) * swc / np.float32(sy)).astype(np.float32).reshape(cshape)
    yq = requant(acc, mult, zy, act)
    if relu and not y_at_min:
        # Not foldable: what the float path between the quantizers computes.
        xd = xi * np.float64(sx)
        wd = wi * swc.astype(np.float64).reshape((-1, 1, 1, 1) if conv else (1, -1))
        yd = conv_int(xd, wd, pad, stride, group) if conv else xd @ wd
        if bq is not None:
            yd += (bq * sb.astype(np.float64)).reshape(cshape)
        yq = quantize(np.maximum(yd, 0), sy, zy, act)
    out = ((yq.astype(np.float64) - zy) * np.float64(sy)).astype(np.float32)

    n = helper.make_node
    if form == "gemm_t":
        wstored = np.ascontiguousarray(wstored.T)
        axis = 0
    nodes = [n("QuantizeLinear", ["x", "sx", "zx"], ["xq"]),
             n("DequantizeLinear", ["xq", "sx", "zx"], ["xd"]),
             n("DequantizeLinear", ["wq", "sw"] + (["zw"] if w_zero else []), ["wd"],
               axis=axis)]
    prod_in = ["xd", "wd"]
    inits = [init("sx", np.float32(sx)), init("zx", np.array(zx, act)),
             init("wq", wstored), init("sw", sw), init("sy", np.float32(sy)),
             init("zy", np.array(zy, act))]
    if w_zero:
        inits.append(init("zw", zw))
    if bq is not None:
        nodes.append(n("DequantizeLinear", ["bq", "sb"], ["bd"], axis=0))
        inits += [init("bq", bq), init("sb", sb)]
        if conv or form != "matmul":
            prod_in.append("bd")
    if conv:
        nodes.append(n("Conv", prod_in, ["y"], pads=[pad] * 4, strides=[stride] * 2,
                       group=group, kernel_shape=list(wq.shape[2:])))
    elif form in ("gemm", "gemm_t"):
        nodes.append(n("Gemm", prod_in, ["y"], transB=int(form == "gemm_t")))
    elif bq is not None:
        nodes += [n("MatMul", prod_in, ["mm"]), n("Add", ["mm", "bd"], ["y"])]
    else:
        nodes.append(n("MatMul", prod_in, ["y"]))
    last = "y"
    if relu:
        nodes.append(n("Relu", ["y"], ["yr"]))
        last = "yr"
    nodes += [n("QuantizeLinear", [last, "sy", "zy"], ["yq"]),
              n("DequantizeLinear", ["yq", "sy", "zy"], ["out"])]
    m = model(nodes, [vi("x", list(x.shape))], [vi("out", list(out.shape))], inits)
    w.save(name, m, [x], [out])
    w.save(name + "_float", m, [x], [yf_float.astype(np.float32)])
    return float(sy)


def generate(w):
    # uint8 activations, per-channel int8 weights, int32 bias, Relu folded
    # (zy = 0), 3x3 pad 1.
    x = w.f32(2, 5, 7, 6, lo=-1.5, hi=2.0)
    gen_qdq(w, "qdq_conv_u8_per_channel", x, w.f32(6, 5, 3, 3, lo=-0.6, hi=0.6),
            w.f32(6, lo=-0.5, hi=0.5), np.uint8, True, True, True)
    # int8 activations, per-tensor weights, no bias, stride 2, two groups.
    x = w.f32(1, 4, 9, 8, lo=-1.0, hi=1.0)
    gen_qdq(w, "qdq_conv_s8_per_tensor", x, w.f32(6, 2, 3, 3, lo=-0.5, hi=0.5), None,
            np.int8, False, False, True, pad=1, stride=2, group=2)
    # int8 activations, per-channel weights with zero points, bias, Relu
    # (zy = -128), 3x3 stride 2 without padding.
    x = w.f32(1, 8, 6, 6, lo=-1.0, hi=1.0)
    gen_qdq(w, "qdq_conv_s8_weight_zero_point", x, w.f32(5, 8, 3, 3, lo=-0.5, hi=0.5),
            w.f32(5, lo=-0.3, hi=0.3), np.int8, True, True, True, pad=0, stride=2,
            w_zero=True)
    # MatMul: uint8 activations [2, 3, 16] by per-column int8 weights
    # [16, 12]; int8 activations with a per-tensor weight.
    x = w.f32(2, 3, 16, lo=-1.0, hi=1.0)
    gen_qdq(w, "qdq_matmul_u8_per_column", x, w.f32(16, 12, lo=-0.4, hi=0.4), None,
            np.uint8, True, False, False)
    x = w.f32(5, 16, lo=-1.0, hi=1.0)
    gen_qdq(w, "qdq_matmul_s8_per_tensor", x, w.f32(16, 7, lo=-0.4, hi=0.4), None,
            np.int8, False, False, False)
    # Sizes past the packed kernel's blocks (6 rows x 32 columns, k in 4s)
    # and split across threads; Gemm (C as the bias, B transposed or not)
    # and MatMul + Add(bias) fold too.
    x = w.f32(2, 24, 64, lo=-1.0, hi=1.0)
    gen_qdq(w, "qdq_matmul_add_u8_zero_point", x, w.f32(64, 96, lo=-0.4, hi=0.4),
            w.f32(96, lo=-0.3, hi=0.3), np.uint8, True, True, False, w_zero=True)
    x = w.f32(13, 70, lo=-1.0, hi=1.0)
    gen_qdq(w, "qdq_gemm_t_u8_per_channel", x, w.f32(70, 45, lo=-0.4, hi=0.4),
            w.f32(45, lo=-0.3, hi=0.3), np.uint8, True, False, False, form="gemm_t")
    x = w.f32(7, 33, lo=-1.0, hi=1.0)
    gen_qdq(w, "qdq_gemm_s8_relu", x, w.f32(33, 17, lo=-0.4, hi=0.4),
            w.f32(17, lo=-0.3, hi=0.3), np.int8, False, True, False, form="gemm")
    # A convolution large enough for the 8-bit GEMM to split across threads.
    x = w.f32(1, 8, 16, 16, lo=-1.0, hi=1.0)
    gen_qdq(w, "qdq_conv_u8_split", x, w.f32(32, 8, 3, 3, lo=-0.5, hi=0.5),
            w.f32(32, lo=-0.3, hi=0.3), np.uint8, True, True, True)
    # Depthwise (group = channels), as MobileNets quantize: uint8
    # activations, per-channel weights with zero points, bias, Relu folded,
    # 48 channels (split across threads); int8 activations, a 5x5 window at
    # stride 2, per-tensor weights, no bias.
    x = w.f32(1, 48, 8, 9, lo=-1.0, hi=1.5)
    gen_qdq(w, "qdq_conv_depthwise_u8", x, w.f32(48, 1, 3, 3, lo=-0.6, hi=0.6),
            w.f32(48, lo=-0.3, hi=0.3), np.uint8, True, True, True, group=48, w_zero=True)
    x = w.f32(1, 12, 11, 10, lo=-1.0, hi=1.0)
    gen_qdq(w, "qdq_conv_depthwise_s8_5x5", x, w.f32(12, 1, 5, 5, lo=-0.5, hi=0.5), None,
            np.int8, False, False, True, pad=2, stride=2, group=12)
    # A Relu before a quantizer whose zero point is not the lowest value:
    # not folded (the float Conv runs between the quantizers).
    x = w.f32(1, 3, 6, 6, lo=-1.0, hi=1.0)
    gen_qdq(w, "qdq_conv_relu_unfused", x, w.f32(4, 3, 3, 3, lo=-0.5, hi=0.5), None,
            np.uint8, True, True, True, y_at_min=False)
