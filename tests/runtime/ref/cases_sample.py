# SPDX-License-Identifier: Apache-2.0
"""NumPy cases of the sampling family (docs/ops.md): grid_sample in 1-D, 2-D
and 3-D with linear and nearest interpolation and 2-D cubic, under every
padding_mode and both align_corners, with positions past the border; and
roi_align (avg and max, half_pixel and output_half_pixel, fixed and adaptive
sampling, spatial_scale) over regions inside, across and outside the image
and a degenerate one. The references below are written from PyTorch's
grid_sampler and ONNX Runtime's RoiAlign as documented, one sample at a time."""
import itertools
import math

import numpy as np

from gen_cases import FLOAT_X, F, I, S, add_typed, typed


# ---------------------------------------------------------------------------
# grid_sample

def unnormalize(c, n, align):
    return (c + 1) / 2 * (n - 1) if align else ((c + 1) * n - 1) / 2


def reflect(x, lo2, hi2):
    if lo2 == hi2:
        return 0.0
    lo, span = lo2 / 2, (hi2 - lo2) / 2
    x = abs(x - lo)
    flips, extra = math.floor(x / span), math.fmod(x, span)
    return extra + lo if flips % 2 == 0 else span - extra + lo


def pad_coord(x, n, padding, align):
    if padding == "border":
        return min(max(x, 0.0), n - 1.0)
    if padding == "reflection":
        x = reflect(x, 0, 2 * (n - 1)) if align else reflect(x, -1, 2 * n - 1)
        return min(max(x, 0.0), n - 1.0)
    return x


def cubic_w(t, a=-0.75):
    def near(d):
        return ((a + 2) * d - (a + 3)) * d * d + 1

    def far(d):
        return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a
    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def taps(c, n, mode, padding, align):
    """[(index or None, weight)] along one dim."""
    x = unnormalize(c, n, align)
    if mode == "cubic":
        x0 = math.floor(x)
        out = []
        for k, w in enumerate(cubic_w(x - x0)):
            i = x0 - 1 + k
            if padding != "zeros":
                i = math.trunc(pad_coord(float(i), n, padding, align))
            out.append((i if 0 <= i < n else None, w))
        return out
    x = pad_coord(x, n, padding, align)
    if mode == "nearest":
        i = int(np.rint(x))
        return [(i if 0 <= i < n else None, 1.0)]
    x0 = math.floor(x)
    return [(x0 if 0 <= x0 < n else None, 1 - (x - x0)),
            (x0 + 1 if 0 <= x0 + 1 < n else None, x - x0)]


def grid_sample(x, grid, mode, padding, align):
    n, c = x.shape[:2]
    sp = x.shape[2:]
    r = len(sp)
    outs = grid.shape[1:-1]
    y = np.zeros((n, c) + outs, dtype=np.float64)
    xw = x.astype(np.float64)
    for b in range(n):
        for o in itertools.product(*(range(k) for k in outs)):
            pos = grid[(b,) + o].astype(np.float64)
            per_dim = [taps(pos[r - 1 - d], sp[d], mode, padding, align) for d in range(r)]
            acc = np.zeros(c)
            for combo in itertools.product(*per_dim):
                if any(i is None for i, _ in combo):
                    continue
                w = np.prod([wt for _, wt in combo])
                acc += w * xw[(b, slice(None)) + tuple(i for i, _ in combo)]
            y[(b, slice(None)) + o] = acc
    return y.astype(x.dtype)


def gen_grid_sample(g):
    d = g.dim
    for spatial, mode, padding, align in (
            ((d([4, 5]),), "linear", "zeros", 0),
            ((d([4, 5]),), "nearest", "reflection", 1),
            ((d([3, 4]), d([4, 5])), "linear", "zeros", 0),
            ((d([3, 4]), d([4, 5])), "linear", "border", 1),
            ((d([3, 4]), d([4, 5])), "linear", "reflection", 0),
            ((d([3, 4]), d([4, 5])), "nearest", "zeros", 1),
            ((d([3, 4]), d([4, 5])), "nearest", "border", 0),
            ((d([3, 4]), d([4, 5])), "cubic", "zeros", 0),
            ((d([3, 4]), d([4, 5])), "cubic", "border", 1),
            ((d([3, 4]), d([4, 5])), "cubic", "reflection", 0),
            ((3, d([3, 4]), 4), "linear", "zeros", 1),
            ((3, 3, d([3, 4])), "nearest", "reflection", 0)):
        n, c = d([1, 2]), d([2, 3])
        x = typed(g, (n, c) + spatial, "float32")
        outs = tuple(d([2, 3]) for _ in spatial)
        grid = typed(g, (n,) + outs + (len(spatial),), "float32", -1.3, 1.3)
        attrs = [S("mode", mode), S("padding_mode", padding), I("align_corners", align)]
        add_typed(g, "grid_sample", [x, grid], grid_sample(x, grid, mode, padding, align),
                  "float32", attrs, tag="%dd_%s_%s" % (len(spatial), mode, padding))
    for dt in FLOAT_X:
        x = typed(g, (1, 2, 3, 4), dt)
        grid = typed(g, (1, 2, 3, 2), dt, -1.2, 1.2)
        add_typed(g, "grid_sample", [x, grid], grid_sample(x, grid, "linear", "zeros", 0), dt)


# ---------------------------------------------------------------------------
# roi_align

def bilinear(plane, y, x):
    h, w = plane.shape
    if y < -1.0 or y > h or x < -1.0 or x > w:
        return [0.0]
    y, x = max(y, 0.0), max(x, 0.0)
    yl, xl = int(y), int(x)
    if yl >= h - 1:
        yl = yh = h - 1
        y = float(yl)
    else:
        yh = yl + 1
    if xl >= w - 1:
        xl = xh = w - 1
        x = float(xl)
    else:
        xh = xl + 1
    ly, lx = y - yl, x - xl
    return [(1 - ly) * (1 - lx) * plane[yl, xl], (1 - ly) * lx * plane[yl, xh],
            ly * (1 - lx) * plane[yh, xl], ly * lx * plane[yh, xh]]


def roi_align(x, rois, bidx, mode, ctm, oh, ow, ratio, scale):
    k, c = rois.shape[0], x.shape[1]
    y = np.zeros((k, c, oh, ow))
    xw = x.astype(np.float64)
    off = 0.5 if ctm == "half_pixel" else 0.0
    for r in range(k):
        x1, y1, x2, y2 = (float(v) * scale - off for v in rois[r])
        rw, rh = x2 - x1, y2 - y1
        if ctm != "half_pixel":
            rw, rh = max(rw, 1.0), max(rh, 1.0)
        bw, bh = rw / ow, rh / oh
        gw = ratio if ratio > 0 else (math.ceil(bw) if bw > 0 else 0)
        gh = ratio if ratio > 0 else (math.ceil(bh) if bh > 0 else 0)
        count = max(gw * gh, 1)
        for ch in range(c):
            plane = xw[bidx[r], ch]
            for ph in range(oh):
                for pw in range(ow):
                    vals = []
                    for iy in range(gh):
                        yy = y1 + ph * bh + (iy + 0.5) * bh / gh
                        for ix in range(gw):
                            xx = x1 + pw * bw + (ix + 0.5) * bw / gw
                            vals.append(bilinear(plane, yy, xx))
                    if mode == "avg":
                        y[r, ch, ph, pw] = sum(sum(v) for v in vals) / count
                    elif vals:
                        y[r, ch, ph, pw] = max(max(v) for v in vals)
    return y.astype(x.dtype)


def gen_roi_align(g):
    d = g.dim
    for mode, ctm, oh, ow, ratio, scale in (
            ("avg", "half_pixel", 2, 3, 0, 1.0),
            ("avg", "output_half_pixel", 3, 2, 2, 0.5),
            ("max", "half_pixel", 2, 2, 2, 1.0),
            ("max", "output_half_pixel", 1, 3, 0, 0.5),
            ("avg", "half_pixel", 1, 1, 1, 0.25)):
        n, c, h, w = 2, d([2, 3]), d([5, 7]), d([6, 8])
        x = typed(g, (n, c, h, w), "float32")
        side = max(h, w) / scale
        rois = []
        for _ in range(d([3, 4])):
            x1, y1 = g.rng.uniform(-0.2 * side, 0.8 * side, size=2)
            bw, bh = g.rng.uniform(0.1 * side, 0.7 * side, size=2)
            rois.append([x1, y1, x1 + bw, y1 + bh])
        rois.append([0.6 * side, 0.5 * side, 0.4 * side, 0.45 * side])  # x2 < x1, y2 < y1
        rois.append([1.2 * side, 1.3 * side, 1.5 * side, 1.6 * side])  # outside the image
        rois = np.array(rois, dtype=np.float32)
        bidx = g.rng.integers(0, n, size=len(rois)).astype(np.int64)
        attrs = [S("mode", mode), S("coordinate_transformation_mode", ctm),
                 I("output_height", oh), I("output_width", ow), I("sampling_ratio", ratio),
                 F("spatial_scale", scale)]
        add_typed(g, "roi_align", [x, rois, bidx],
                  roi_align(x, rois, bidx, mode, ctm, oh, ow, ratio, scale), "float32", attrs,
                  tag="%s_%s" % (mode, ctm))
    for dt in FLOAT_X:
        x = typed(g, (1, 2, 5, 6), dt)
        rois = np.array([[0.5, 1.0, 4.0, 4.5], [2.0, 0.0, 5.5, 3.0]], dtype=dt)
        bidx = np.zeros(2, dtype=np.int32)
        add_typed(g, "roi_align", [x, rois, bidx],
                  roi_align(x, rois, bidx, "avg", "half_pixel", 2, 2, 0, 1.0), dt,
                  [I("output_height", 2), I("output_width", 2)])


def generate(g):
    gen_grid_sample(g)
    gen_roi_align(g)
