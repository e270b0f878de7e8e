# SPDX-License-Identifier: Apache-2.0
"""NumPy cases of the window ops over 1, 2 and 3 spatial dims (docs/ops.md):
conv2d (grouped, strided, dilated, padded), conv_transpose (groups,
strides, dilations, asymmetric pads, output_padding), max_pool2d (with its
indices output in both storage orders, int8 and uint8 data), avg_pool2d
(count_include_pad, ceil_mode, dilations) and lp_pool (p 1, 2, 3). Each
reference below is written for any spatial rank, independently of
vkpipe's kernels."""
import itertools

import numpy as np

from gen_cases import FLOAT_X, I, IS, add_typed, f32, typed


def conv_nd(x, w, b, pads, strides, dil, group):
    x = x.astype(np.float64)
    w = w.astype(np.float64)
    s = x.ndim - 2
    xp = np.pad(x, [(0, 0), (0, 0)] + [(pads[i], pads[s + i]) for i in range(s)])
    m, cg = w.shape[:2]
    out_sp = [(xp.shape[2 + i] - (dil[i] * (w.shape[2 + i] - 1) + 1)) // strides[i] + 1
              for i in range(s)]
    out = np.zeros([x.shape[0], m] + out_sp)
    mg = m // group
    for gi in range(group):
        xg = xp[:, gi * cg:(gi + 1) * cg]
        wg = w[gi * mg:(gi + 1) * mg]
        for tap in itertools.product(*[range(k) for k in w.shape[2:]]):
            sl = tuple(slice(tap[i] * dil[i], tap[i] * dil[i] + strides[i] * (out_sp[i] - 1) + 1,
                             strides[i]) for i in range(s))
            patch = xg[(slice(None), slice(None)) + sl]
            out[:, gi * mg:(gi + 1) * mg] += np.tensordot(
                wg[(slice(None), slice(None)) + tap], patch, axes=([1], [1])).swapaxes(0, 1)
    if b is not None:
        out += b.astype(np.float64).reshape([1, m] + [1] * s)
    return out


def conv_transpose_nd(x, w, b, pads, strides, dil, opad, group):
    """Scatter every input element through every tap, then crop the pads."""
    x = x.astype(np.float64)
    w = w.astype(np.float64)
    s = x.ndim - 2
    c, mg = w.shape[:2]
    cg = c // group
    full = [(x.shape[2 + i] - 1) * strides[i] + (w.shape[2 + i] - 1) * dil[i] + 1 + opad[i]
            for i in range(s)]
    out = np.zeros([x.shape[0], mg * group] + full)
    for gi in range(group):
        xg = x[:, gi * cg:(gi + 1) * cg]
        wg = w[gi * cg:(gi + 1) * cg]
        for tap in itertools.product(*[range(k) for k in w.shape[2:]]):
            contrib = np.tensordot(xg, wg[(slice(None), slice(None)) + tap], axes=([1], [0]))
            contrib = np.moveaxis(contrib, -1, 1)  # [N, MG, in...]
            sl = tuple(slice(tap[i] * dil[i], tap[i] * dil[i] + (x.shape[2 + i] - 1) * strides[i] + 1,
                             strides[i]) for i in range(s))
            out[(slice(None), slice(gi * mg, (gi + 1) * mg)) + sl] += contrib
    crop = tuple(slice(pads[i], full[i] - pads[s + i]) for i in range(s))
    out = out[(slice(None), slice(None)) + crop]
    if b is not None:
        out = out + b.astype(np.float64).reshape([1, mg * group] + [1] * s)
    return out


def window_out(size, pb, pe, k, st, dl, ceil):
    span = dl * (k - 1) + 1
    room = size + pb + pe - span
    o = (-(-room // st) if ceil else room // st) + 1
    if ceil and (o - 1) * st >= size + pb:
        o -= 1
    return o


def pool_nd(x, kind, k, pads, strides, dil, ceil, include_pad=0, p=2, col_major=False):
    """Returns (y, indices); indices are flat offsets into x."""
    s = x.ndim - 2
    sp = x.shape[2:]
    out_sp = [window_out(sp[i], pads[i], pads[s + i], k[i], strides[i], dil[i], ceil)
              for i in range(s)]
    n, c = x.shape[:2]
    xd = x.astype(np.float64)
    y = np.zeros([n, c] + out_sp)
    idx = np.zeros([n, c] + out_sp, dtype=np.int64)
    plane = int(np.prod(sp))
    for o in itertools.product(*[range(v) for v in out_sp]):
        taps, padded = [], 0
        for t in itertools.product(*[range(v) for v in k]):
            pos = [o[i] * strides[i] - pads[i] + t[i] * dil[i] for i in range(s)]
            if any(pos[i] >= sp[i] + pads[s + i] for i in range(s)):
                continue
            padded += 1
            if all(0 <= pos[i] < sp[i] for i in range(s)):
                taps.append(tuple(pos))
        vals = np.stack([xd[(slice(None), slice(None)) + t] for t in taps], axis=-1)
        at = (slice(None), slice(None)) + o
        if kind == "max":
            best = np.argmax(vals, axis=-1)  # the first maximum
            y[at] = np.take_along_axis(vals, best[..., None], -1)[..., 0]
            flat = []
            for t in taps:
                if col_major:
                    f, mul = 0, 1
                    for i in range(s):
                        f += t[i] * mul
                        mul *= sp[i]
                else:
                    f = int(np.ravel_multi_index(t, sp))
                flat.append(f)
            base = (np.arange(n)[:, None] * c + np.arange(c)[None, :]) * plane
            idx[at] = base + np.asarray(flat)[best]
        elif kind == "avg":
            y[at] = vals.sum(-1) / (padded if include_pad else len(taps))
        else:
            y[at] = np.sum(np.abs(vals) ** p, axis=-1) ** (1.0 / p)
    return y, idx


def window_attrs(pads, strides, dil):
    return [IS("pads", pads), IS("strides", strides), IS("dilations", dil)]


def gen_conv(g):
    d = g.dim
    configs = [
        # (spatial input, C, M, group, kernel, pads, strides, dilations, bias)
        ((9,), 3, 4, 1, (3,), (1, 1), (1,), (1,), True),
        ((12,), 4, 6, 2, (5,), (2, 0), (2,), (2,), False),
        ((10,), 4, 4, 4, (3,), (1, 1), (1,), (1,), True),          # depthwise 1-D
        ((5, 6, 5), 2, 3, 1, (3, 2, 3), (1, 0, 1, 1, 1, 0), (1, 2, 1), (1, 1, 1), True),
        ((6, 5, 7), 4, 4, 2, (2, 2, 3), (0, 1, 1, 0, 0, 2), (2, 1, 2), (2, 1, 1), False),
        ((4, 5, 6), 3, 6, 3, (3, 3, 3), (1, 1, 1, 1, 1, 1), (1, 1, 2), (1, 2, 1), True),  # depthwise
        ((3, 7, 7), 3, 5, 1, (1, 3, 3), (0, 1, 1, 0, 1, 1), (1, 1, 1), (1, 1, 1), False),  # (2+1)-D
        ((6, 4, 4), 4, 3, 1, (3, 1, 1), (1, 0, 0, 1, 0, 0), (2, 1, 1), (1, 1, 1), True),   # temporal
    ]
    for sp, c, m, group, k, pads, strides, dil, bias in configs:
        sp = tuple(v + d([0, 1, 2]) for v in sp)
        x = g.f32((d([1, 2]), c) + sp)
        w = g.f32((m, c // group) + k, -1, 1)
        b = g.f32((m,)) if bias else None
        inputs = [x, ("const", w)] + ([("const", b)] if bias else [])
        g.add("conv2d", inputs, f32(conv_nd(x, w, b, pads, strides, dil, group)),
              window_attrs(pads, strides, dil) + [I("group", group)],
              tag="%dd" % len(sp), rtol=1e-4, atol=1e-5)


def gen_conv_transpose(g):
    d = g.dim
    configs = [
        # (spatial input, C, M/G, group, kernel, pads, strides, dilations, output_padding, bias)
        ((4, 5), 3, 2, 1, (3, 3), (0, 0, 0, 0), (1, 1), (1, 1), (0, 0), True),
        ((4, 3), 4, 3, 2, (3, 2), (1, 0, 0, 1), (2, 3), (1, 1), (1, 2), False),
        ((5, 4), 2, 2, 1, (2, 3), (1, 1, 1, 1), (2, 2), (2, 1), (1, 0), True),
        ((6,), 3, 2, 1, (4,), (1, 2), (2,), (1,), (1,), True),
        ((7,), 4, 1, 4, (3,), (0, 0), (3,), (2,), (0,), False),     # depthwise 1-D
        ((3, 4, 3), 2, 2, 1, (2, 3, 2), (0, 1, 1, 1, 0, 0), (2, 1, 2), (1, 1, 2), (1, 0, 0), True),
        ((2, 3, 3), 4, 1, 2, (3, 2, 2), (1, 0, 0, 0, 0, 1), (1, 2, 1), (1, 1, 1), (0, 1, 0), False),
        # >= 8 output channels per group: the implicit GEMM per output phase on vulkan
        ((3, 4), 3, 9, 1, (2, 2), (0, 0, 0, 0), (2, 2), (1, 1), (0, 0), True),
        ((2, 3, 3), 2, 8, 2, (3, 2, 2), (1, 0, 1, 0, 1, 1), (2, 1, 2), (1, 2, 1), (1, 0, 1), False),
        # >= 8 input channels per group: GEMM + col2im on cpu (DCGAN's 4x4
        # stride-2 upsampling, grouped, 1-D and 3-D)
        ((5, 4), 16, 4, 1, (4, 4), (1, 1, 1, 1), (2, 2), (1, 1), (0, 0), True),
        ((3, 4), 16, 3, 2, (3, 3), (1, 0, 0, 1), (2, 1), (1, 2), (1, 0), False),
        ((6,), 8, 4, 1, (5,), (2, 1), (3,), (1,), (2,), True),
        ((2, 3, 2), 8, 2, 1, (2, 2, 2), (0, 0, 0, 0, 0, 0), (2, 2, 2), (1, 1, 1), (0, 0, 0), True),
    ]
    for k_i, (sp, c, mg, group, k, pads, strides, dil, opad, bias) in enumerate(configs):
        sp = tuple(v + d([0, 1]) for v in sp)
        x = g.f32((d([1, 2]), c) + sp)
        w = g.f32((c, mg) + k, -1, 1)
        b = g.f32((mg * group,)) if bias else None
        attrs = window_attrs(pads, strides, dil) + [IS("output_padding", opad),
                                                     I("group", group)]
        if k_i == 0:
            attrs = []  # every default
        inputs = [x, ("const", w)] + ([("const", b)] if bias else [])
        if k_i == 2:
            inputs = [x, w, b]  # weights as graph inputs
        g.add("conv_transpose", inputs,
              f32(conv_transpose_nd(x, w, b, pads, strides, dil, opad, group)), attrs,
              tag="%dd" % len(sp), rtol=1e-4, atol=1e-5)


def gen_pool(g):
    d = g.dim
    configs = [
        # (spatial input, kernel, pads, strides, dilations, ceil_mode)
        ((9,), (3,), (1, 1), (2,), (1,), 0),
        ((10,), (2,), (0, 1), (3,), (2,), 1),
        ((6, 7), (3, 2), (1, 0, 1, 1), (2, 1), (1, 2), 1),
        ((5, 6, 5), (2, 3, 2), (0, 1, 1, 1, 1, 0), (2, 2, 1), (1, 1, 2), 0),
        ((4, 5, 6), (3, 2, 2), (1, 0, 0, 1, 1, 1), (2, 1, 2), (1, 1, 1), 1),
    ]
    for kind in ("max", "avg", "lp"):
        for k_i, (sp, k, pads, strides, dil, ceil) in enumerate(configs):
            sp = tuple(v + d([0, 1, 2]) for v in sp)
            x = g.f32((d([1, 2]), d([1, 3])) + sp)
            attrs = [IS("kernel_shape", k)] + window_attrs(pads, strides, dil) + [
                I("ceil_mode", ceil)]
            tag = "%dd" % len(sp)
            if kind == "max":
                col = k_i % 2 == 1
                y, idx = pool_nd(x, kind, k, pads, strides, dil, ceil, col_major=col)
                g.add("max_pool2d", [x], f32(y), attrs, tag=tag)
                if len(sp) != 2:  # 2-D indices are the node tests'; all orders here
                    g.add("max_pool2d", [x], [f32(y), idx],
                          attrs + [I("storage_order", int(col))], tag=tag + "_indices")
            elif kind == "avg":
                include = k_i % 2
                y, _ = pool_nd(x, kind, k, pads, strides, dil, ceil, include_pad=include)
                g.add("avg_pool2d", [x], f32(y), attrs + [I("count_include_pad", include)],
                      tag=tag)
            else:
                p = (1, 2, 3)[k_i % 3]
                y, _ = pool_nd(x, kind, k, pads, strides, dil, ceil, p=p)
                g.add("lp_pool", [x], f32(y), attrs + [I("p", p)], tag=tag,
                      rtol=1e-4, atol=1e-5)
    # 2-D indices in both storage orders, and the default p.
    x = g.f32((2, 3, 5 + d([0, 1, 2]), 6))
    for col in (0, 1):
        y, idx = pool_nd(x, "max", (2, 3), (1, 0, 0, 1), (2, 2), (1, 1), 1, col_major=col)
        g.add("max_pool2d", [x], [f32(y), idx],
              [IS("kernel_shape", (2, 3)), IS("pads", (1, 0, 0, 1)), IS("strides", (2, 2)),
               I("ceil_mode", 1), I("storage_order", col)], tag="2d_indices")
    y, _ = pool_nd(x, "lp", (3, 3), (1, 1, 1, 1), (1, 1), (1, 1), 0, p=2)
    g.add("lp_pool", [x], f32(y), [IS("kernel_shape", (3, 3)), IS("pads", (1, 1, 1, 1))],
          tag="default_p", rtol=1e-4, atol=1e-5)
    # Integer max pooling (int8 and uint8 are in the op table), 2-D with
    # indices and 1-D with windows that hold no input tap (dilation 4 over
    # pads of 3: the type's lowest value, index -1).
    for dt, lo, hi in (("int8", -128, 127), ("uint8", 0, 255)):
        x = g.ints((1, 2, 5, 6), dt, lo, hi)
        y, idx = pool_nd(x, "max", (2, 2), (0, 0, 1, 1), (2, 2), (1, 1), 0)
        g.add("max_pool2d", [x], [y.astype(dt), idx],
              [IS("kernel_shape", (2, 2)), IS("pads", (0, 0, 1, 1)), IS("strides", (2, 2))],
              tag=dt)
        x = g.ints((2, 3, 2), dt, lo, hi)
        y = np.full((2, 3, 4), lo, dtype=dt)
        idx = np.full((2, 3, 4), -1, dtype=np.int64)
        for nn in range(2):
            for c in range(3):
                for o in range(4):
                    taps = [t for t in (o - 3, o + 1) if 0 <= t < 2]
                    if taps:
                        t = taps[int(np.argmax([x[nn, c, t] for t in taps]))]
                        y[nn, c, o], idx[nn, c, o] = x[nn, c, t], (nn * 3 + c) * 2 + t
        g.add("max_pool2d", [x], [y, idx],
              [IS("kernel_shape", (2,)), IS("pads", (3, 3)), IS("dilations", (4,))],
              tag=dt + "_empty_windows")
    # NaN in two of three channels (wins its windows, as in NumPy's argmax):
    # the cpu kernel takes plain maxima in a channel without one, and both
    # column passes (stride 1, stride 2) are wide enough for vectors.
    x = g.f32((1, 3, 9, 37))
    x[0, 1, 4, 20] = np.nan
    x[0, 2, 0, 0] = np.nan
    for st in (1, 2):
        y, _ = pool_nd(x, "max", (3, 3), (1, 1, 1, 1), (st, st), (1, 1), 0)
        g.add("max_pool2d", [x], f32(y),
              [IS("kernel_shape", (3, 3)), IS("pads", (1, 1, 1, 1)), IS("strides", (st, st))],
              tag="nan_stride%d" % st)


def gen_typed(g):
    for dt in FLOAT_X:
        x, w, b = typed(g, (1, 4, 3, 4), dt), typed(g, (4, 1, 2, 3), dt), typed(g, (2,), dt)
        pads, strides, dil, opad = (1, 0, 0, 1), (2, 1), (1, 1), (1, 0)
        exp = conv_transpose_nd(x, w, b, pads, strides, dil, opad, 2)
        add_typed(g, "conv_transpose", [x, w, b], exp.astype(dt), dt,
                  window_attrs(pads, strides, dil) + [IS("output_padding", opad),
                                                       I("group", 2)])
        x = typed(g, (1, 2, 7), dt)
        y, _ = pool_nd(x, "lp", (3,), (1, 1), (2,), (1,), 0, p=2)
        add_typed(g, "lp_pool", [x], y.astype(dt), dt,
                  [IS("kernel_shape", (3,)), IS("pads", (1, 1)), IS("strides", (2,))])


def generate(g):
    gen_typed(g)
    gen_conv(g)
    gen_conv_transpose(g)
    gen_pool(g)
