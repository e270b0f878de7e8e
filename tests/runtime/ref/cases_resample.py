# SPDX-License-Identifier: Apache-2.0
"""NumPy cases of the padding and resampling family (docs/ops.md): pad in
every mode (constant, reflect, edge, wrap) with positive, zero, negative and
oversized pads on ranks 1 to 4; resize with nearest (every nearest_mode),
linear and cubic (cubic_coeff_a, exclude_outside) in 1-D, 2-D and 3-D under
every coordinate_transformation_mode, tf_crop_and_resize with roi and
extrapolation, antialiased downsampling; depth_to_space (DCR, CRD),
space_to_depth, tile, expand, trilu (upper / lower, every k) and eye_like.
Every op on every dtype the op table gives it. The resize reference below
follows ONNX's: neighbours chosen by distance in the edge-padded input,
one axis at a time."""
import numpy as np

from gen_cases import ALL, FLOAT_X, F, I, IS, S, add_typed, typed


def FS(name, v):
    return (name, "floats", [float(e) for e in v])


# ---------------------------------------------------------------------------
# Pad

def np_pad(x, pads, mode, value):
    r = x.ndim
    begin, end = list(pads[:r]), list(pads[r:])
    # Negative pads crop first (ONNX's reference), then NumPy pads.
    idx = tuple(slice(max(0, -b), x.shape[d] - max(0, -e))
                for d, (b, e) in enumerate(zip(begin, end)))
    x = x[idx]
    width = [(max(0, b), max(0, e)) for b, e in zip(begin, end)]
    if mode == "constant":
        return np.pad(x, width, mode="constant", constant_values=value)
    if mode == "wrap":
        # Periodic indices (NumPy 1.24's wrap repeats wrongly for pads wider
        # than the input).
        idx = [(np.arange(x.shape[k] + b + e) - b) % x.shape[k] for k, (b, e) in enumerate(width)]
        return x[np.ix_(*idx)]
    return np.pad(x, width, mode=mode)


def gen_pad(g):
    d = g.dim
    for shape, pads, mode, value in (
            ((d([3, 4]), d([3, 5])), (1, 2, 0, 3), "constant", 1.5),
            ((1, d([2, 3]), 4, 5), (0, 0, 1, 2, 0, 0, 2, 1), "constant", None),
            ((1, 2, 4, 5), (0, 0, 3, 1, 0, 0, 2, 3), "reflect", None),
            ((5,), (7, 9), "reflect", None),             # wider than the input
            ((2, 3, 4), (0, -1, 2, 1, 2, -2), "edge", None),
            ((2, d([3, 4]), 5), (1, 2, 3, 0, 4, 5), "wrap", None),
            ((7,), (12, 15), "wrap", None),
            ((3, 6), (-1, -2, 0, -3), "constant", 2.0),  # pure crop
            ((3, 6), (-1, 2, 1, -3), "reflect", None),   # crop one side, pad the other
            ((1, 4), (0, 3, 0, 3), "reflect", None),
            ((2, 1, 3), (0, 2, 0, 1, 2, 1), "edge", None)):
        x = typed(g, shape, "float32")
        attrs = [IS("pads", pads), S("mode", mode)]
        if value is not None:
            attrs.append(F("value", value))
        exp = np_pad(x, pads, mode, 0.0 if value is None else value)
        add_typed(g, "pad", [x], exp.astype(np.float32), "float32", attrs, tag=mode)
    for k, dt in enumerate(FLOAT_X + [t for t in ALL if t not in ("float32",) + tuple(FLOAT_X)]):
        mode = ["constant", "reflect", "edge", "wrap"][k % 4]
        x = typed(g, (3, 4), dt, 0, 9)
        pads = (1, 2, 2, 1)
        value = 1.0 if dt == "bool" else 3.0
        attrs = [IS("pads", pads), S("mode", mode), F("value", value)]
        add_typed(g, "pad", [x], np_pad(x, pads, mode, value).astype(dt), dt, attrs, tag=mode)


# ---------------------------------------------------------------------------
# Resize

def cubic_kernel(a, d):
    d = abs(d)
    if d <= 1:
        return (a + 2) * d ** 3 - (a + 3) * d ** 2 + 1
    if d < 2:
        return a * d ** 3 - 5 * a * d ** 2 + 8 * a * d - 4 * a
    return 0.0


def coeffs(mode, ratio, scale, a, antialias):
    """Weights of the 2 (linear) or 4 (cubic) neighbours, or of the wider
    antialiased window, for the fractional position `ratio` in (0, 1]."""
    if not antialias or scale >= 1:
        if mode == "linear":
            return np.array([1 - ratio, ratio])
        return np.array([cubic_kernel(a, ratio + 1), cubic_kernel(a, ratio),
                         cubic_kernel(a, 1 - ratio), cubic_kernel(a, 2 - ratio)])
    support = 1 if mode == "linear" else 2
    start = int(np.floor(-support / scale) + 1)
    args = [scale * (i - ratio) for i in range(start, 2 - start)]
    if mode == "linear":
        w = np.clip(1 - np.abs(args), 0, 1)
    else:
        w = np.array([cubic_kernel(a, x) for x in args])
    return w / w.sum()


def source_coord(ctm, x, scale, n_in, n_out, roi):
    resized = scale * n_in
    if ctm == "half_pixel":
        return (x + 0.5) / scale - 0.5
    if ctm == "half_pixel_symmetric":
        adjust = n_out / resized
        return n_in / 2 * (1 - adjust) + (x + 0.5) / scale - 0.5
    if ctm == "pytorch_half_pixel":
        return -0.5 if resized == 1 else (x + 0.5) / scale - 0.5
    if ctm == "align_corners":
        return 0.0 if resized == 1 else x * (n_in - 1) / (resized - 1)
    if ctm == "asymmetric":
        return x / scale
    if ctm == "tf_half_pixel_for_nn":
        return (x + 0.5) / scale
    start, end = roi
    if resized == 1:
        return (end - start) * (n_in - 1) / 2 + start * (n_in - 1)
    return start * (n_in - 1) + x * (end - start) * (n_in - 1) / (resized - 1)


def resize_1d(v, n_out, scale, ctm, mode, nearest_mode, a, exclude, antialias, roi):
    """Resizes the 1-D array v; returns the values and a mask of positions
    outside the input (tf_crop_and_resize)."""
    n_in = len(v)
    out = np.zeros(n_out)
    outside = np.zeros(n_out, dtype=bool)
    for x in range(n_out):
        c = source_coord(ctm, x, scale, n_in, n_out, roi)
        if ctm == "tf_crop_and_resize" and (c < 0 or c > n_in - 1):
            outside[x] = True
            continue
        if mode == "nearest":
            if nearest_mode == "floor":
                i = np.floor(c)
            elif nearest_mode == "ceil":
                i = np.ceil(c)
            elif c - np.floor(c) == 0.5:
                i = np.floor(c) if nearest_mode == "round_prefer_floor" else np.ceil(c)
            else:
                i = np.round(c)
            out[x] = v[int(min(max(i, 0), n_in - 1))]
            continue
        base = int(np.floor(c))
        ratio = 1.0 if c == base else c - base
        w = coeffs(mode, ratio, scale, a, antialias)
        n = len(w)
        # The n nearest positions of the edge-padded input, the lower first
        # on ties (ONNX's rule: ratio in (0, 1]).
        pad = int(np.ceil(n / 2))
        padded = np.pad(v, pad, mode="edge")
        pos = sorted(sorted(range(len(padded)), key=lambda i: (abs(c + pad - i), i))[:n])
        idx = np.array(pos) - pad
        pts = padded[pos]
        if exclude:
            w = np.where((idx < 0) | (idx >= n_in), 0.0, w)
            w = w / w.sum()
        out[x] = np.dot(w, pts)
    return out, outside


def np_resize(x, sizes, scales, ctm="half_pixel", mode="nearest",
              nearest_mode="round_prefer_floor", a=-0.75, exclude=0, antialias=0,
              roi=None, extrapolation=0.0):
    y = x.astype(np.float64)
    mask = np.zeros(tuple(sizes), dtype=bool)
    r = x.ndim
    for d in range(r):
        if scales[d] == 1 and ctm not in ("tf_crop_and_resize", "tf_half_pixel_for_nn",
                                          "half_pixel_symmetric"):
            continue
        axis_roi = (roi[d], roi[r + d]) if roi is not None else (0.0, 1.0)
        moved = np.moveaxis(y, d, -1)
        flat = moved.reshape(-1, moved.shape[-1])
        res = np.zeros((flat.shape[0], sizes[d]))
        outside = None
        for k in range(flat.shape[0]):
            res[k], outside = resize_1d(flat[k], sizes[d], scales[d], ctm, mode, nearest_mode,
                                        a, exclude, antialias, axis_roi)
        y = np.moveaxis(res.reshape(moved.shape[:-1] + (sizes[d],)), -1, d)
        shape = [1] * r
        shape[d] = sizes[d]
        mask = mask | outside.reshape(shape)
    y = np.where(mask, extrapolation, y)
    return y


def add_resize(g, x, scales, sizes=None, tag="", dt="float32", **kw):
    """scales: one per dim (float32 values, as ONNX stores them); sizes:
    the output shape, or None for floor(scale * dim)."""
    if sizes is None:
        scales = [float(np.float32(s)) for s in scales]
        out = [int(np.floor(s * n)) for s, n in zip(scales, x.shape)]
    else:
        out = list(sizes)
        scales = [o / n for o, n in zip(sizes, x.shape)]
    exp = np_resize(x, out, scales, **kw)
    names = {"ctm": ("coordinate_transformation_mode", S), "mode": ("mode", S),
             "nearest_mode": ("nearest_mode", S), "a": ("cubic_coeff_a", F),
             "exclude": ("exclude_outside", I), "antialias": ("antialias", I),
             "roi": ("roi", FS), "extrapolation": ("extrapolation_value", F)}
    attrs = [FS("scales", scales)]
    if sizes is not None:
        attrs.append(IS("sizes", sizes))
    for k, v in kw.items():
        name, make = names[k]
        attrs.append(make(name, v))
    add_typed(g, "resize", [x], exp.astype(dt), dt, attrs, tag=tag)


CTMS = ["half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
        "asymmetric", "tf_half_pixel_for_nn"]


def gen_resize(g):
    """About 40 cases (each is one compiled stage on cpu): every nearest_mode
    and every coordinate mode at least once per interpolation, up and down."""
    d = g.dim
    x4 = lambda h, w: typed(g, (1, d([1, 2]), h, w), "float32")
    modes = ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"]
    # Nearest: the coordinate modes cycle through the nearest_modes.
    for j, ctm in enumerate(CTMS + ["half_pixel", "asymmetric"]):
        scales = [1, 1, [2.0, 0.5, 1.5, 0.75, 3.0, 0.6][j % 6], [1.5, 2.0, 0.5, 2.5, 0.8, 1.0][j % 6]]
        add_resize(g, x4(4, 5), scales, ctm=ctm, mode="nearest", nearest_mode=modes[j % 4],
                   tag="nearest")
    # Linear and cubic under every coordinate mode; sizes for two of them.
    for mode in ("linear", "cubic"):
        for j, ctm in enumerate(CTMS):
            add_resize(g, x4(d([3, 4]), 5), [1, 1, [2.0, 0.6, 1.7][j % 3], [0.5, 3.0, 1.25][j % 3]],
                       ctm=ctm, mode=mode, tag=mode)
        for ctm in ("half_pixel", "align_corners"):
            add_resize(g, x4(5, 3), None, sizes=[1, 2, 7, 2], ctm=ctm, mode=mode,
                       tag=mode + "_sizes")
    for a, exclude in ((-0.5, 1), (-0.6, 0)):
        add_resize(g, x4(4, 4), [1, 1, 1.5, 0.75], mode="cubic", a=a, exclude=exclude,
                   tag="cubic_a")
    # 1-D, 3-D (trilinear), batch and channels, and a length-1 output.
    add_resize(g, typed(g, (7,), "float32"), [1.6], mode="linear", tag="1d")
    add_resize(g, typed(g, (1, 1, 3, 4, 5), "float32"), [1, 1, 2, 0.5, 1.4], mode="linear",
               tag="3d")
    add_resize(g, typed(g, (2, 3, 4, 2), "float32"), [1, 1, 2, 1.5], mode="nearest", tag="nchw")
    add_resize(g, x4(5, 4), None, sizes=[1, 1, 1, 3], ctm="pytorch_half_pixel", mode="cubic",
               tag="len1")
    # tf_crop_and_resize: roi inside and beyond the input, extrapolation.
    for roi, mode in (([0, 0, 0.4, 0.6, 1, 1, 0.6, 0.8], "linear"),
                      ([0, 0, 0.2, -0.5, 1, 1, 0.9, 1.5], "nearest"),
                      ([0, 0, -0.2, 0.3, 1, 1, 0.8, 1.2], "cubic")):
        add_resize(g, x4(5, 6), None, sizes=[1, 1, 4, 3], ctm="tf_crop_and_resize", mode=mode,
                   roi=roi, extrapolation=2.5, tag="crop")
    # Antialiased downsampling (linear, cubic; scales and sizes), and
    # upsampling (no effect).
    add_resize(g, x4(9, 8), [1, 1, 0.4, 0.6], mode="linear", antialias=1, tag="antialias")
    add_resize(g, x4(9, 8), None, sizes=[1, 1, 3, 5], mode="cubic", antialias=1,
               ctm="align_corners", tag="antialias")
    add_resize(g, x4(8, 9), [1, 1, 0.3, 0.75], mode="cubic", antialias=1, tag="antialias")
    add_resize(g, x4(3, 2), [1, 1, 2, 1.5], mode="linear", antialias=1, tag="antialias_up")
    for dt in FLOAT_X:
        x = typed(g, (1, 2, 3, 4), dt)
        add_resize(g, x, [1, 1, 2, 0.5], mode="linear", dt=dt)


# ---------------------------------------------------------------------------
# Block rearrangement, tile, expand, triangles, eye

def depth_to_space(x, bs, mode):
    n, c, h, w = x.shape
    if mode == "DCR":
        t = x.reshape(n, bs, bs, c // (bs * bs), h, w).transpose(0, 3, 4, 1, 5, 2)
    else:
        t = x.reshape(n, c // (bs * bs), bs, bs, h, w).transpose(0, 1, 4, 2, 5, 3)
    return t.reshape(n, c // (bs * bs), h * bs, w * bs)


def space_to_depth(x, bs):
    n, c, h, w = x.shape
    t = x.reshape(n, c, h // bs, bs, w // bs, bs).transpose(0, 3, 5, 1, 2, 4)
    return t.reshape(n, c * bs * bs, h // bs, w // bs)


def gen_layout(g):
    d = g.dim
    for k, dt in enumerate(ALL):
        float_case = dt == "float32"
        for bs, mode in ((2, "DCR"), (2, "CRD"), (3, "DCR"), (1, "CRD")) if float_case else \
                ((2, ["DCR", "CRD"][k % 2]),):
            x = typed(g, (d([1, 2]), bs * bs * d([1, 2, 3]), d([2, 3]), d([1, 3])), dt)
            add_typed(g, "depth_to_space", [x], depth_to_space(x, bs, mode), dt,
                      [I("blocksize", bs)] + ([] if mode == "DCR" and k % 3 else [S("mode", mode)]),
                      tag=mode)
        for bs in (2, 3) if float_case else (2,):
            x = typed(g, (d([1, 2]), d([1, 3]), bs * d([1, 2]), bs * d([2, 3])), dt)
            add_typed(g, "space_to_depth", [x], space_to_depth(x, bs), dt, [I("blocksize", bs)])
        for shape, reps in (((d([2, 3]), d([2, 5])), (2, 3)), ((3,), (4,)),
                            ((2, 1, 3), (1, 5, 2)), ((2, 3), (0, 2))) if float_case else \
                (((2, 3), (2, 2)),):
            x = typed(g, shape, dt)
            add_typed(g, "tile", [x], np.tile(x, reps), dt, [IS("repeats", reps)])
        for shape, target in (((3, 1), (2, 3, 4)), ((1, d([2, 5])), (3, 1)), ((2, 3), (1, 1, 1)),
                              ((4,), (2, 1, 4)), ((1, 3, 1), (5, 1, 3, 2))) if float_case else \
                (((3, 1), (2, 3, 4)),):
            x = typed(g, shape, dt)
            exp = x * np.ones(target, dtype=x.dtype) if dt != "bool" else \
                np.broadcast_to(x, np.broadcast_shapes(x.shape, target))
            add_typed(g, "expand", [x], np.ascontiguousarray(exp), dt, [IS("shape", target)])
        for shape, upper, kk in (((4, 5), 1, 0), ((4, 5), 0, 0), ((2, 3, 6), 1, 2), ((5, 3), 0, -1),
                                 ((3, 4), 1, -5), ((3, 4), 0, 9), ((2, 2, 3, 3), 0, 1)) \
                if float_case else (((3, 4), k % 2, k % 3 - 1),):
            x = typed(g, shape, dt)
            exp = np.triu(x, kk) if upper else np.tril(x, kk)
            attrs = ([] if upper == 1 and kk == 0 else [I("upper", upper)]) + \
                ([] if kk == 0 else [I("k", kk)])
            add_typed(g, "trilu", [x], exp, dt, attrs)
        for shape, kk, out_dt in (((3, 4), 0, None), ((4, 3), 1, "int32"), ((3, 5), -2, "float16")) \
                if float_case else (((3, 3), 0, None),):
            x = typed(g, shape, dt)
            odt = out_dt or dt
            attrs = [I("k", kk)] + ([] if out_dt is None else [S("dtype", out_dt)])
            add_typed(g, "eye_like", [x], np.eye(shape[0], shape[1], kk, dtype=odt), dt, attrs)


def generate(g):
    gen_pad(g)
    gen_resize(g)
    gen_layout(g)
