# SPDX-License-Identifier: Apache-2.0
"""ONNX models of the signal family (graph/onnx_signal.c): an audio front
end as torchaudio-style exports build it (torch 1.13 cannot export
torch.stft to ONNX, so the graph is written here node by node the way
opset-17 exporters spell it): HannWindow -> STFT -> magnitude -> Log ->
Conv1d, and a log-mel branch (MelWeightMatrix -> MatMul); DFT at opset 20
(axis and dft_length inputs, inverse, onesided); Det and MaxUnpool after a
MaxPool's indices. Expected outputs come from numpy.fft and numpy.linalg.
Imported by gen_models.py, which calls generate(w); test_onnx_signal.c
loads them."""
import numpy as np
from onnx import helper

from gen_models import I64, init, model, vi


def hann(n):
    return 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n) / n)


def mel_matrix(n_mel, n_fft, rate, lo, hi):
    """ONNX MelWeightMatrix (its reference's rules)."""
    to_mel = lambda hz: 2595 * np.log10(1 + hz / 700)
    step = (to_mel(hi) - to_mel(lo)) / (n_mel + 2)
    mel = np.arange(n_mel + 2) * step + to_mel(lo)
    bins = np.floor((n_fft + 1) * (700 * (10 ** (mel / 2595) - 1)) / rate).astype(int)
    out = np.zeros((n_fft // 2 + 1, n_mel))
    for i in range(n_mel):
        a, c, b = bins[i], bins[i + 1], bins[i + 2]
        if c == a:
            out[c, i] = 1
        else:
            for j in range(a, c + 1):
                out[j, i] = (j - a) / (c - a)
        for j in range(c, b):
            out[j, i] = (b - j) / (b - c)
    return out


def conv1d(x, w, b):
    k = w.shape[2]
    out = np.zeros((x.shape[0], w.shape[0], x.shape[2] - k + 1))
    for t in range(k):
        out += np.einsum("bcl,mc->bml", x[:, :, t:t + out.shape[2]], w[:, :, t])
    return out + b[None, :, None]


def gen_audio_frontend(w):
    n = helper.make_node
    batch, length, n_fft, hop, n_mel = 2, 200, 32, 8, 6
    bins = n_fft // 2 + 1
    frames = (length - n_fft) // hop + 1
    wt = w.f32(4, bins, 3, lo=-0.5, hi=0.5)
    bias = w.f32(4)
    nodes = [
        n("Unsqueeze", ["x", "last"], ["sig"]),
        n("HannWindow", ["n_fft"], ["window"]),
        n("STFT", ["sig", "hop", "window"], ["spec"]),
        n("Gather", ["spec", "zero"], ["re"], axis=-1),
        n("Gather", ["spec", "one"], ["im"], axis=-1),
        n("Mul", ["re", "re"], ["re2"]),
        n("Mul", ["im", "im"], ["im2"]),
        n("Add", ["re2", "im2"], ["power"]),
        n("Add", ["power", "eps"], ["power_eps"]),
        n("Sqrt", ["power_eps"], ["mag"]),
        n("Log", ["mag"], ["log_mag"]),
        n("Transpose", ["log_mag"], ["feat"], perm=[0, 2, 1]),
        n("Conv", ["feat", "w", "b"], ["y"], kernel_shape=[3]),
        n("MelWeightMatrix", ["n_mel", "n_fft", "rate", "lo", "hi"], ["mel"]),
        n("MatMul", ["power", "mel"], ["mel_power"]),
        n("Add", ["mel_power", "eps"], ["mel_eps"]),
        n("Log", ["mel_eps"], ["log_mel"]),
    ]
    inits = [init("last", np.array([-1], np.int64)), init("n_fft", np.array(n_fft, np.int64)),
             init("hop", np.array(hop, np.int64)), init("zero", np.array(0, np.int64)),
             init("one", np.array(1, np.int64)), init("eps", np.array(1e-6, np.float32)),
             init("w", wt), init("b", bias), init("n_mel", np.array(n_mel, np.int64)),
             init("rate", np.array(16000, np.int64)), init("lo", np.array(0.0, np.float32)),
             init("hi", np.array(8000.0, np.float32))]
    m = model(nodes, [vi("x", [batch, length])],
              [vi("y", [batch, 4, frames - 2]), vi("log_mel", [batch, frames, n_mel])],
              inits, opset=17)
    x = w.f32(batch, length)
    win = hann(n_fft)
    spec = np.stack([np.fft.rfft(x[:, f * hop:f * hop + n_fft].astype(np.float64) * win, axis=1)
                     for f in range(frames)], axis=1)
    power = spec.real ** 2 + spec.imag ** 2
    feat = np.log(np.sqrt(power + 1e-6)).transpose(0, 2, 1)
    y = conv1d(feat, wt.astype(np.float64), bias.astype(np.float64))
    log_mel = np.log(power @ mel_matrix(n_mel, n_fft, 16000, 0.0, 8000.0) + 1e-6)
    w.save("signal_audio_frontend", m, [x], [y.astype(np.float32), log_mel.astype(np.float32)])


def gen_dft_opset20(w):
    n = helper.make_node
    # Real input transformed along axis 1 (an input) zero-padded to 16,
    # onesided; complex input, inverse along the last signal axis (-2,
    # the default) truncated to 6.
    nodes = [n("DFT", ["x", "len16", "ax1"], ["y"], onesided=1),
             n("DFT", ["z", "len6"], ["zi"], inverse=1)]
    m = model(nodes, [vi("x", [2, 12, 3, 1]), vi("z", [3, 7, 2])],
              [vi("y", [2, 9, 3, 2]), vi("zi", [3, 6, 2])],
              [init("len16", np.array(16, np.int64)), init("ax1", np.array(1, np.int64)),
               init("len6", np.array([6], np.int32))], opset=20)
    x, z = w.f32(2, 12, 3, 1), w.f32(3, 7, 2)
    y = np.fft.fft(x[..., 0].astype(np.float64), n=16, axis=1)[:, :9]
    zi = np.fft.ifft(z[..., 0] + 1j * z[..., 1].astype(np.float64), n=6, axis=1)
    w.save("signal_dft_opset20", m, [x, z],
           [np.stack([y.real, y.imag], -1).astype(np.float32),
            np.stack([zi.real, zi.imag], -1).astype(np.float32)])


def gen_det_unpool(w):
    n = helper.make_node
    # Det of a batch; MaxPool's indices unpooled into a larger output_shape.
    nodes = [n("Det", ["a"], ["d"]),
             n("MaxPool", ["x"], ["p", "i"], kernel_shape=[2, 2], strides=[2, 2]),
             n("MaxUnpool", ["p", "i", "shape"], ["u"], kernel_shape=[2, 2], strides=[2, 2])]
    m = model(nodes, [vi("a", [3, 4, 4]), vi("x", [1, 2, 4, 6])],
              [vi("d", [3]), vi("u", [1, 2, 5, 7])],
              [init("shape", np.array([1, 2, 5, 7], np.int64))], opset=11)
    a, x = w.f32(3, 4, 4), w.f32(1, 2, 4, 6)
    u = np.zeros((1, 2, 5, 7), np.float32)
    for c in range(2):
        for i in range(2):
            for j in range(3):
                blk = x[0, c, 2 * i:2 * i + 2, 2 * j:2 * j + 2]
                r, s = np.unravel_index(np.argmax(blk), (2, 2))
                u[0, c, 2 * i + r, 2 * j + s] = blk[r, s]
    w.save("signal_det_unpool", m, [a, x],
           [np.linalg.det(a.astype(np.float64)).astype(np.float32), u])


def gen_windows(w):
    n = helper.make_node
    # output_datatype double and periodic 0 (symmetric): folded constants
    # multiplying a float64 input.
    nodes = [n("HannWindow", ["size"], ["hann"], output_datatype=11),
             n("BlackmanWindow", ["size"], ["black"], periodic=0, output_datatype=11),
             n("HammingWindow", ["size"], ["hamm"], periodic=0, output_datatype=11),
             n("Mul", ["x", "hann"], ["y0"]), n("Mul", ["x", "black"], ["y1"]),
             n("Mul", ["x", "hamm"], ["y2"])]
    D = 11
    m = model(nodes, [vi("x", [10], D)], [vi("y0", [10], D), vi("y1", [10], D), vi("y2", [10], D)],
              [init("size", np.array(10, np.int32))], opset=17)
    x = w.rng.uniform(-1, 1, size=10)
    k = np.arange(10)
    hann = 0.5 - 0.5 * np.cos(2 * np.pi * k / 10)
    black = 0.42 - 0.5 * np.cos(2 * np.pi * k / 9) + 0.08 * np.cos(4 * np.pi * k / 9)
    hamm = 25 / 46 - 21 / 46 * np.cos(2 * np.pi * k / 9)
    w.save("signal_windows", m, [x], [x * hann, x * black, x * hamm])


def gen_runtime(w):
    n = helper.make_node
    # dft_length computed at run time decides the output shape: refused.
    m = model([n("DFT", ["x", "len"], ["y"])], [vi("x", [1, 8, 1]), vi("len", [], I64)],
              [vi("y", [1, 8, 2])], opset=17)
    w.save("signal_runtime", m)


def generate(w):
    gen_windows(w)
    gen_runtime(w)
    gen_audio_frontend(w)
    gen_dft_opset20(w)
    gen_det_unpool(w)
