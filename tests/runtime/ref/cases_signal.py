# SPDX-License-Identifier: Apache-2.0
"""NumPy cases of the signal family and its neighbours (docs/ops.md): dft
(real and complex input, forward and inverse, onesided, zero-padded and
truncated lengths, power-of-two, composite and prime lengths, every axis),
stft (with and without a window, onesided or not, complex signals), det
(batched, singular) and max_unpool (1-D to 3-D, pads, a larger
output_shape). The references are numpy.fft and numpy.linalg."""
import numpy as np

from gen_cases import FLOAT_X, I, IS, add_typed, f32, typed


def to_complex(x):
    x = x.astype(np.float64)
    return x[..., 0] + 1j * x[..., 1] if x.shape[-1] == 2 else x[..., 0]


def from_complex(z):
    return np.stack([z.real, z.imag], axis=-1)


def dft(x, axis, length, inverse, onesided):
    z = to_complex(x)
    n = length or x.shape[axis]
    y = (np.fft.ifft if inverse else np.fft.fft)(z, n=n, axis=axis)
    if onesided:
        y = np.take(y, np.arange(n // 2 + 1), axis=axis)
    return from_complex(y)


def stft(x, step, window, length, onesided):
    z = to_complex(x)
    n = length if window is None else window.shape[0]
    frames = (x.shape[1] - n) // step + 1
    w = np.ones(n) if window is None else window.astype(np.float64)
    out = np.stack([np.fft.fft(z[:, f * step:f * step + n] * w, axis=1)
                    for f in range(frames)], axis=1)
    if onesided:
        out = out[:, :, :n // 2 + 1]
    return from_complex(out)


def gen_dft(g):
    d = g.dim
    configs = [
        # (shape without the complex dim, complex, axis, length, inverse, onesided)
        ((2, 16), 1, 1, 0, 0, 0),
        ((3, 12), 2, 1, 0, 0, 1),      # composite length
        ((2, 13, 3), 2, 1, 0, 1, 0),   # prime length, inner dims
        ((1, 64), 1, 1, 0, 0, 1),      # power of two, onesided
        ((2, 5, 8), 2, 2, 0, 1, 0),    # last signal axis
        ((2, 10, 3), 1, 1, 16, 0, 0),  # zero-padded to a power of two
        ((3, 20), 2, 1, 12, 0, 0),     # truncated
        ((2, 4, 7), 2, -2, 0, 0, 1),   # negative axis
        ((6, 5), 1, 0, 9, 1, 1),       # axis 0, inverse onesided
        ((1, 1), 2, 1, 0, 0, 0),       # length 1
        ((2, 96), 2, 1, 0, 0, 0),      # 2^5 * 3
        ((1, 400), 1, 1, 0, 0, 1),     # an audio n_fft: 2^4 * 5^2
        ((1, 512), 2, 1, 0, 1, 0),     # 2^9
    ]
    for shape, ch, axis, length, inverse, onesided in configs:
        x = g.f32(shape + (ch,))
        attrs = [I("axis", axis), I("inverse", inverse), I("onesided", onesided)]
        if length:
            attrs.append(I("length", length))
        y = dft(x, axis % (x.ndim), length, inverse, onesided)
        g.add("dft", [x], f32(y), attrs, tag="n%d" % (length or shape[axis % x.ndim]),
              rtol=1e-4, atol=1e-4)
    for dt in FLOAT_X:
        x = typed(g, (2, 8, 2), dt, -1, 1)
        add_typed(g, "dft", [x], dft(x, 1, 0, 0, 0).astype(dt), dt, [I("axis", 1)])


def gen_stft(g):
    d = g.dim
    configs = [
        # (batch, length, complex, step, frame length, window, onesided)
        (1, 64, 1, 8, 16, False, 1),
        (2, 50, 1, 5, 16, True, 1),
        (2, 41, 2, 7, 12, True, 0),
        (1, 30, 1, 3, 10, True, 1),
        (3, 33, 2, 4, 9, False, 0),
        (1, 1200, 1, 160, 400, True, 1),  # a speech front end's frames
    ]
    for b, length, ch, step, n, with_window, onesided in configs:
        length += d([0, 1, 2])
        x = g.f32((b, length, ch))
        w = g.f32((n,), 0, 1) if with_window else None
        attrs = [I("frame_step", step), I("onesided", onesided)]
        if not with_window or n % 2:
            attrs.append(I("frame_length", n))
        y = stft(x, step, w, n, onesided)
        g.add("stft", [x, w] if with_window else [x], f32(y), attrs,
              tag="n%d" % n, rtol=1e-4, atol=1e-4)
    for dt in FLOAT_X:
        x, w = typed(g, (1, 20, 1), dt, -1, 1), typed(g, (8,), dt, 0, 1)
        add_typed(g, "stft", [x, w], stft(x, 4, w, 8, 1).astype(dt), dt,
                  [I("frame_step", 4)])


def gen_det(g):
    d = g.dim
    for shape in [(3, 3), (d([2, 3]), 4, 4), (2, 2, 1, 1), (2, 2), (5, 5)]:
        x = g.f32(shape)
        g.add("det", [x], f32(np.linalg.det(x.astype(np.float64))), rtol=1e-4, atol=1e-5)
    x = g.f32((3, 3, 3))
    x[1, 2] = x[1, 0]  # singular
    x[2, :, 1] = 2 * x[2, :, 0]
    g.add("det", [x], f32(np.linalg.det(x.astype(np.float64))), tag="singular",
          rtol=1e-4, atol=1e-5)
    for dt in FLOAT_X:
        x = typed(g, (2, 3, 3), dt, -1, 1)
        add_typed(g, "det", [x], np.linalg.det(x.astype(np.float64)).astype(dt), dt)


def max_unpool(x, idx, k, strides, pads, out_shape):
    s = x.ndim - 2
    u = list(x.shape[:2]) + [(x.shape[2 + i] - 1) * strides[i] + k[i] - pads[i] - pads[s + i]
                             for i in range(s)]
    y = np.zeros(u, np.float64)
    y.reshape(-1)[idx.reshape(-1)] = x.reshape(-1)
    if out_shape is not None:
        full = np.zeros(out_shape)
        full[tuple(slice(v) for v in u)] = y
        y = full
    return y, u


def gen_max_unpool(g):
    configs = [
        # (spatial in, kernel, strides, pads, extra output)
        ((3,), (2,), (2,), (0, 0), None),
        ((3, 4), (2, 2), (2, 2), (0, 0, 0, 0), None),
        ((3, 3), (3, 2), (2, 1), (1, 0, 1, 1), None),
        ((2, 3), (2, 2), (2, 2), (0, 0, 0, 0), (1, 2)),
        ((2, 2, 3), (2, 2, 2), (2, 2, 1), (0, 0, 0, 0, 0, 0), None),
    ]
    for sp, k, strides, pads, extra in configs:
        n, c = g.dim([1, 2]), g.dim([1, 3])
        x = g.f32((n, c) + sp)
        s = len(sp)
        u = [(sp[i] - 1) * strides[i] + k[i] - pads[i] - pads[s + i] for i in range(s)]
        plane, per = int(np.prod(u)), int(np.prod(sp))
        idx = np.stack([p * plane + g.rng.choice(plane, per, replace=False)
                        for p in range(n * c)]).reshape(x.shape).astype(np.int64)
        attrs = [IS("kernel_shape", k), IS("strides", strides)]
        out_shape = None
        if extra is None:
            attrs.append(IS("pads", pads))
        else:
            out_shape = [n, c] + [u[i] + extra[i] for i in range(s)]
            attrs.append(IS("output_shape", out_shape))
        y, _ = max_unpool(x, idx, k, strides, pads if extra is None else [0] * 2 * s, out_shape)
        g.add("max_unpool", [x, idx], f32(y), attrs, tag="%dd" % s)
    for dt in FLOAT_X:
        x = typed(g, (1, 2, 2, 2), dt)
        idx = np.stack([p * 16 + g.rng.choice(16, 4, replace=False)
                        for p in range(2)]).reshape(x.shape).astype(np.int64)
        y, _ = max_unpool(x, idx, (2, 2), (2, 2), (0, 0, 0, 0), None)
        add_typed(g, "max_unpool", [x, idx], y.astype(dt), dt,
                  [IS("kernel_shape", (2, 2)), IS("strides", (2, 2))])


def generate(g):
    gen_dft(g)
    gen_stft(g)
    gen_det(g)
    gen_max_unpool(g)
