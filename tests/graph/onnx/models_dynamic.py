# SPDX-License-Identifier: Apache-2.0
"""ONNX models with data-dependent output shapes on run-time data (graph/
op_dynamic.c): NonZero, Compress (with and without axis) and Unique (sorted
and not, with and without axis, all four outputs), and the ops downstream
that take their bounded results, with NumPy's expected outputs. The inputs
are random, so the number of selected elements varies from seed to seed
(0 included). Imported by gen_models.py; test_onnx_dynamic.c loads them."""
import numpy as np
from onnx import TensorProto, helper

from gen_models import F32, I64, init, model, vi

BOOL = TensorProto.BOOL


def top_k_clamped(x, k, largest=True):
    """TopK over the last axis of a 1-D x, K clamped to its length, ties by
    index (ONNX's rule)."""
    key = -x if largest else x
    idx = np.argsort(key, kind="stable")[:min(k, len(x))]
    return x[idx], idx.astype(np.int64)


def unique_all(x, axis, sorted_):
    """np.unique's four results, reordered by first occurrence when not
    sorted (ONNX's sorted=0)."""
    y, idx, inv, cnt = np.unique(x, axis=axis, return_index=True,
                                 return_inverse=True, return_counts=True)
    inv = inv.reshape(-1)
    if not sorted_:
        order = np.argsort(idx, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        y = np.take(y, order, axis=0 if axis is None else axis)
        idx, cnt, inv = idx[order], cnt[order], rank[inv]
    return y, idx.astype(np.int64), inv.astype(np.int64), cnt.astype(np.int64)


def gen_non_zero(w):
    """x > 0 on random x: NonZero of a run-time mask, then the positions'
    values (Transpose + GatherND), elementwise ops with a static operand,
    Cast, reductions over the varying axis, Shape, TopK with K clamped,
    Concat along it and a Reshape with -1."""
    n = helper.make_node
    x = w.f32(3, 5)
    nodes = [
        n("Greater", ["x", "zero"], ["mask"]),
        n("NonZero", ["mask"], ["nz"]),                        # [2, <=15]
        n("Transpose", ["nz"], ["pos"], perm=[1, 0]),          # [<=15, 2]
        n("GatherND", ["x", "pos"], ["vals"]),                 # [<=15]
        n("Mul", ["vals", "scale"], ["scaled"]),               # static [1]
        n("Exp", ["scaled"], ["ex"]),
        n("Cast", ["nz"], ["nzf"], to=F32),
        n("ReduceSum", ["nzf", "ax1"], ["rows"], keepdims=0),  # static [2]
        n("ReduceMax", ["nzf"], ["cmax"], axes=[0], keepdims=1),  # [1, <=15]
        n("Shape", ["nz"], ["shp"]),
        n("TopK", ["vals", "k"], ["tv", "ti"]),
        n("Concat", ["vals", "ex"], ["cat"], axis=0),          # [<=30]
        n("Reshape", ["pos", "flat"], ["posflat"]),            # [<=30]
        n("Unsqueeze", ["vals", "ax0"], ["vals2"]),            # [1, <=15]
        n("Squeeze", ["vals2", "ax0"], ["vals1"]),
        n("Sub", ["vals1", "vals"], ["zeros"]),                # two bounded
    ]
    outs = ["nz", "vals", "ex", "rows", "cmax", "shp", "tv", "ti", "cat",
            "posflat", "zeros"]
    m = model(nodes, [vi("x", [3, 5])], [vi(o, None) for o in outs],
              [init("zero", np.array(0, np.float32)),
               init("scale", np.array([0.5], np.float32)),
               init("k", np.array([4], np.int64)),
               init("flat", np.array([-1], np.int64)),
               init("ax0", np.array([0], np.int64)),
               init("ax1", np.array([1], np.int64))], opset=13)
    nz = np.array(np.nonzero(x > 0), np.int64)
    vals = x[x > 0]
    ex = np.exp(vals * np.float32(0.5)).astype(np.float32)
    nzf = nz.astype(np.float32)
    tv, ti = top_k_clamped(vals, 4)
    cmax = nzf.max(axis=0, keepdims=True) if nz.shape[1] else np.zeros((1, 0), np.float32)
    w.save("dynamic_non_zero", m, [x],
           [nz, vals, ex, nzf.sum(axis=1), cmax, np.array(nz.shape, np.int64), tv, ti,
            np.concatenate([vals, ex]), nz.T.reshape(-1), vals - vals])


def gen_compress(w):
    """Compress on a run-time condition, along an axis and flattened; its
    result gathered again (GatherElements with bounded indices), added to a
    broadcast row, and ArgMax over a static axis."""
    n = helper.make_node
    x = w.f32(4, 6)
    cond = w.rng.integers(0, 2, size=4).astype(bool)
    cflat = w.rng.integers(0, 2, size=10).astype(bool)
    rows = w.rng.integers(0, 4, size=(4, 6)).astype(np.int64)
    nodes = [
        n("Compress", ["x", "cond"], ["c0"], axis=0),          # [<=4, 6]
        n("Compress", ["x", "cflat"], ["cf"]),                 # [<=10]
        n("Compress", ["rows", "cond"], ["ridx"], axis=-2),    # [<=4, 6] int64
        n("GatherElements", ["x", "ridx"], ["ge"], axis=0),    # [<=4, 6]
        n("Add", ["c0", "bias"], ["biased"]),                  # bias [6]
        n("ArgMax", ["c0"], ["am"], axis=1, keepdims=0),       # [<=4]
        n("ReduceMin", ["c0"], ["colmin"], axes=[0], keepdims=0),  # static [6]
    ]
    outs = ["c0", "cf", "ge", "biased", "am"]
    bias = w.f32(6)
    m = model(nodes, [vi("x", [4, 6]), vi("cond", [4], BOOL), vi("cflat", [10], BOOL)],
              [vi(o, None) for o in outs] + [vi("colmin", [6])],
              [init("rows", rows), init("bias", bias)], opset=13)
    c0 = x[cond]
    colmin = c0.min(axis=0) if len(c0) else np.full(6, np.inf, np.float32)
    outputs = [c0, x.reshape(-1)[:10][cflat], np.take_along_axis(x, rows[cond], 0),
               c0 + bias, np.argmax(c0, axis=1).astype(np.int64)]
    if len(c0):  # ReduceMin over an empty axis has no NumPy value to check
        outputs.append(colmin)
        w.save("dynamic_compress", m, [x, cond, cflat], outputs)
    else:
        m.graph.output.pop()
        m.graph.node.pop()
        w.save("dynamic_compress", m, [x, cond, cflat], outputs)


def gen_unique(w):
    """Unique of run-time int64 data: sorted and not, flattened, and along
    an axis of a matrix with repeated rows; every output."""
    n = helper.make_node
    v = w.rng.integers(0, 6, size=12).astype(np.int64)
    mat = w.rng.integers(0, 2, size=(6, 2)).astype(np.float32)
    nodes = [
        n("Unique", ["v"], ["y", "idx", "inv", "cnt"]),
        n("Unique", ["v"], ["uy", "uidx", "uinv", "ucnt"], sorted=0),
        n("Unique", ["mat"], ["my", "midx", "minv", "mcnt"], axis=0),
        n("Unique", ["mat"], ["ny", "", "", "ncnt"], axis=-1, sorted=0),
        n("ReduceSum", ["cnt"], ["total"], keepdims=0),
    ]
    outs = ["y", "idx", "inv", "cnt", "uy", "uidx", "uinv", "ucnt", "my", "midx",
            "minv", "mcnt", "ny", "ncnt", "total"]
    m = model(nodes, [vi("v", [12], I64), vi("mat", [6, 2])],
              [vi(o, None) for o in outs], opset=13)
    got = list(unique_all(v, None, True)) + list(unique_all(v, None, False))
    got += list(unique_all(mat, 0, True))
    ny, _, _, ncnt = unique_all(mat, 1, False)
    got += [ny, ncnt, np.array(12, np.int64)]
    w.save("dynamic_unique", m, [v, mat], got)


def gen_top_k_runtime_k(w):
    """TopK whose K is computed at run time, as detection heads do:
    K = min(Size of the scores kept by a threshold, 5), then TopK of the kept
    scores (bounded) and of a static row with the same run-time K, and a
    label tensor ConstantOfShape(Shape(top scores))."""
    n = helper.make_node
    s = w.f32(12)
    row = w.f32(2, 9)
    nodes = [
        n("Greater", ["s", "thr"], ["keep"]),
        n("Compress", ["s", "keep"], ["kept"], axis=0),        # [<=12]
        n("Shape", ["kept"], ["kshape"]),                       # run-time [1]
        n("Min", ["kshape", "five"], ["k"]),
        n("TopK", ["kept", "k"], ["tv", "ti"]),
        n("TopK", ["row", "k"], ["rv", "ri"], axis=1, largest=0),
        n("Shape", ["tv"], ["tshape"]),
        n("ConstantOfShape", ["tshape"], ["labels"],
          value=helper.make_tensor("v", TensorProto.INT64, [1], [7])),
    ]
    m = model(nodes, [vi("s", [12]), vi("row", [2, 9])],
              [vi(o, None) for o in ["tv", "ti", "rv", "ri", "labels"]],
              [init("thr", np.array(0.2, np.float32)),
               init("five", np.array([5], np.int64))], opset=13)
    kept = s[s > np.float32(0.2)]
    k = min(len(kept), 5)
    tv, ti = top_k_clamped(kept, k)
    order = np.argsort(row, axis=1, kind="stable")[:, :k]
    w.save("dynamic_top_k", m, [s, row],
           [tv, ti, np.take_along_axis(row, order, 1), order.astype(np.int64),
            np.full(len(tv), 7, np.int64)])


def gen_chain(w):
    """NonZero -> Gather -> ReduceSum and Compress -> elementwise on run-time
    data, for cpu against NumPy and ref, and for a two-stage pipeline that
    cuts across the bounded values (test_onnx_dynamic.c): the positive
    elements of x, their sum; the rows of x the condition keeps, through
    Mul, Sub, Relu and a broadcast Add, and their row sums."""
    n = helper.make_node
    x = w.f32(4, 6)
    cond = w.rng.integers(0, 2, size=4).astype(bool)
    nodes = [
        n("Reshape", ["x", "flat"], ["xf"]),                   # [24]
        n("Greater", ["xf", "zero"], ["keep"]),
        n("NonZero", ["keep"], ["nz"]),                        # [1, <=24]
        n("Reshape", ["nz", "flat"], ["idx"]),                 # [<=24]
        n("Gather", ["xf", "idx"], ["picked"], axis=0),        # [<=24]
        n("ReduceSum", ["picked"], ["total"], keepdims=0),     # static []
        n("Compress", ["x", "cond"], ["rows"], axis=0),        # [<=4, 6]
        n("Mul", ["rows", "rows"], ["sq"]),
        n("Sub", ["sq", "one"], ["shifted"]),
        n("Relu", ["shifted"], ["clipped"]),
        n("Add", ["clipped", "bias"], ["e"]),                  # bias [6]
        n("ReduceSum", ["e", "ax1"], ["esum"], keepdims=0),    # [<=4]
    ]
    bias = w.f32(6)
    m = model(nodes, [vi("x", [4, 6]), vi("cond", [4], BOOL)],
              [vi(o, None) for o in ["picked", "total", "e", "esum"]],
              [init("flat", np.array([-1], np.int64)),
               init("zero", np.array(0, np.float32)),
               init("one", np.array(1, np.float32)),
               init("ax1", np.array([1], np.int64)), init("bias", bias)], opset=13)
    xf = x.reshape(-1)
    picked = xf[xf > 0]
    e = (np.maximum(x[cond] * x[cond] - np.float32(1), 0) + bias).astype(np.float32)
    w.save("dynamic_chain", m, [x, cond],
           [picked, np.array(picked.sum(dtype=np.float32), np.float32), e,
            e.sum(axis=1).astype(np.float32)])


def gen_refused(w):
    """A consumer that does not take a data-dependent input: refused at
    import naming the node and the value."""
    n = helper.make_node
    nodes = [n("NonZero", ["x"], ["nz"]), n("Cast", ["nz"], ["nzf"], to=F32),
             n("Softmax", ["nzf"], ["sm"], axis=1)]
    m = model(nodes, [vi("x", [2, 3])], [vi("sm", None)], opset=13)
    w.save("dynamic_refused", m)


def gen_roi_head(w):
    """What torchvision's two-stage detectors do with the proposals they keep
    (graph/onnx_shape_expr.c): rows picked by NonZero feed Gemm, Softmax,
    LayerNormalization, MatMul and a Conv over a varying batch; a buffer made
    by ConstantOfShape of [Shape(rows)[0], D]; indices Expanded to a shape
    behind torch's Where(Equal(shape, -1), 1, shape) guard; ScatterElements
    into the buffer (rows reversed); a Reshape to [n, -1, 2]; and a Slice
    ending at the rows' own run-time count."""
    n = helper.make_node
    N, C, D = 7, 8, 6
    x = w.f32(N, C)
    mask = w.rng.integers(0, 2, size=N).astype(bool)
    mask[w.rng.integers(0, N)] = True  # at least one row
    wt, b = w.f32(C, D), w.f32(D)
    mm, g, beta = w.f32(C, 4), w.f32(C), w.f32(C)
    cw = w.f32(3, 2, 1, 1)
    nodes = [
        n("NonZero", ["mask"], ["nz"]),                          # [1, <=N]
        n("Reshape", ["nz", "m1"], ["idx"]),                     # [<=N]
        n("Gather", ["x", "idx"], ["rows"], axis=0),             # [<=N, C]
        n("Gemm", ["rows", "wt", "b"], ["fc"]),                  # [<=N, D]
        n("Softmax", ["fc"], ["prob"], axis=1),
        n("LayerNormalization", ["rows", "g", "beta"], ["ln"], axis=-1),
        n("MatMul", ["rows", "mm"], ["proj"]),                   # [<=N, 4]
        n("Reshape", ["rows", "img"], ["imgs"]),                 # [<=N, 2, 2, 2]
        n("Conv", ["imgs", "cw"], ["conv"]),                     # [<=N, 3, 2, 2]
        # n = Shape(rows)[0]; the buffer [n, D] and the shape [n, D] behind
        # torch's -1 guard.
        n("Shape", ["rows"], ["rshape"]),
        n("Gather", ["rshape", "zero_i"], ["count"], axis=0),   # scalar, run time
        n("Unsqueeze", ["count", "ax0"], ["count1"]),
        n("Concat", ["count1", "d1"], ["nd"], axis=0),          # [n, D]
        n("ConstantOfShape", ["nd"], ["buf"],
          value=helper.make_tensor("v", TensorProto.FLOAT, [1], [0.0])),
        n("Equal", ["nd", "minus1"], ["is_m1"]),
        n("Where", ["is_m1", "ones2", "nd"], ["nd_guarded"]),
        # Position of each row among the kept ones, reversed: n - 1 - pos.
        n("Cast", ["mask"], ["mask_i"], to=TensorProto.INT64),
        n("CumSum", ["mask_i", "zero_i"], ["csum"]),
        n("Gather", ["csum", "idx"], ["pos1"], axis=0),          # 1..n
        n("Sub", ["count1", "pos1"], ["rev"]),                  # n - pos1
        n("Reshape", ["rev", "col"], ["rev2"]),                 # [<=N, 1]
        n("Expand", ["rev2", "nd_guarded"], ["rev_nd"]),        # [<=N, D]
        n("ScatterElements", ["buf", "rev_nd", "prob"], ["scattered"], axis=0),
        n("Concat", ["count1", "m1", "two"], ["pairs_shape"], axis=0),
        n("Reshape", ["scattered", "pairs_shape"], ["pairs"]),  # [<=N, 3, 2]
        n("Add", ["zero_1", "count1"], ["end"]),
        n("Slice", ["fc", "zero_1", "end", "zero_1"], ["trimmed"]),
    ]
    outs = ["prob", "ln", "proj", "conv", "scattered", "pairs", "trimmed"]
    m = model(nodes, [vi("x", [N, C]), vi("mask", [N], BOOL)],
              [vi(o, None) for o in outs],
              [init("m1", np.array([-1], np.int64)),
               init("img", np.array([-1, 2, 2, 2], np.int64)),
               init("col", np.array([-1, 1], np.int64)),
               init("zero_i", np.array(0, np.int64)),
               init("zero_1", np.array([0], np.int64)),
               init("ax0", np.array([0], np.int64)),
               init("d1", np.array([D], np.int64)),
               init("two", np.array([2], np.int64)),
               init("minus1", np.array([-1, -1], np.int64)),
               init("ones2", np.array([1, 1], np.int64)),
               init("wt", wt), init("b", b), init("mm", mm), init("g", g),
               init("beta", beta), init("cw", cw)], opset=17)
    rows = x[mask]
    fc = (rows @ wt + b).astype(np.float32)
    e = np.exp(fc - fc.max(axis=1, keepdims=True))
    prob = (e / e.sum(axis=1, keepdims=True)).astype(np.float32)
    mu = rows.mean(axis=1, keepdims=True)
    var = ((rows - mu) ** 2).mean(axis=1, keepdims=True)
    ln = ((rows - mu) / np.sqrt(var + 1e-5) * g + beta).astype(np.float32)
    imgs = rows.reshape(-1, 2, 2, 2)
    conv = np.einsum("nchw,oc->nohw", imgs, cw[:, :, 0, 0]).astype(np.float32)
    scattered = prob[::-1].copy()
    w.save("dynamic_roi_head", m, [x, mask],
           [prob, ln, (rows @ mm).astype(np.float32), conv, scattered,
            scattered.reshape(-1, 3, 2), fc])


def gen_varying_batch(w):
    """A transformer block exported with a symbolic batch, loaded with the
    batch varying up to 3 (vkp_dim_binding_t.up_to) and run with 2: Q/K/V
    projections, the head split through Reshape(x, Concat(Slice(Shape(x),
    0, 2), [H, -1])) as torch's view does it, the fused attention (scale,
    Softmax, MatMul), the merge through flatten(2)'s Concat(Slice(Shape),
    [-1]), and LayerNormalization."""
    n = helper.make_node
    B, L, D, H = 2, 5, 8, 2
    x = w.f32(B, L, D)
    wq, wk, wv = w.f32(D, D), w.f32(D, D), w.f32(D, D)
    gamma = w.f32(D)
    nodes = [
        n("MatMul", ["x", "wq"], ["q"]), n("MatMul", ["x", "wk"], ["k"]),
        n("MatMul", ["x", "wv"], ["v"]),
        n("Shape", ["x"], ["xs"]),
        n("Slice", ["xs", "s0", "s2"], ["bl"]),                 # [batch, L]
        n("Concat", ["bl", "hd"], ["split_shape"], axis=0),     # [batch, L, H, -1]
        n("Reshape", ["q", "split_shape"], ["q4"]),
        n("Reshape", ["k", "split_shape"], ["k4"]),
        n("Reshape", ["v", "split_shape"], ["v4"]),
        n("Transpose", ["q4"], ["qh"], perm=[0, 2, 1, 3]),
        n("Transpose", ["k4"], ["kt"], perm=[0, 2, 3, 1]),
        n("Transpose", ["v4"], ["vh"], perm=[0, 2, 1, 3]),
        n("MatMul", ["qh", "kt"], ["sc"]),
        n("Div", ["sc", "sqrt_d"], ["scs"]),
        n("Softmax", ["scs"], ["p"], axis=-1),
        n("MatMul", ["p", "vh"], ["ctx"]),                      # [batch, H, L, D/H]
        n("Transpose", ["ctx"], ["ctx_t"], perm=[0, 2, 1, 3]),
        n("Shape", ["ctx_t"], ["cs"]),
        n("Slice", ["cs", "s0", "s2"], ["cbl"]),
        n("Concat", ["cbl", "m1"], ["merge_shape"], axis=0),    # [batch, L, -1]
        n("Reshape", ["ctx_t", "merge_shape"], ["merged"]),
        n("Add", ["merged", "x"], ["res"]),
        n("LayerNormalization", ["res", "gamma"], ["y"], axis=-1),
    ]
    m = model(nodes, [vi("x", ["batch", L, D])], [vi("y", ["batch", L, D])],
              [init("wq", wq), init("wk", wk), init("wv", wv), init("gamma", gamma),
               init("s0", np.array([0], np.int64)), init("s2", np.array([2], np.int64)),
               init("hd", np.array([H, -1], np.int64)), init("m1", np.array([-1], np.int64)),
               init("sqrt_d", np.array(np.sqrt(D // H), np.float32))], opset=17)
    def heads(t):
        return t.reshape(B, L, H, D // H).transpose(0, 2, 1, 3)
    q, k, v = heads(x @ wq), heads(x @ wk), heads(x @ wv)
    sc = q @ k.transpose(0, 1, 3, 2) / np.sqrt(D // H)
    e = np.exp(sc - sc.max(-1, keepdims=True))
    ctx = (e / e.sum(-1, keepdims=True)) @ v
    res = ctx.transpose(0, 2, 1, 3).reshape(B, L, D) + x
    mu = res.mean(-1, keepdims=True)
    var = ((res - mu) ** 2).mean(-1, keepdims=True)
    y = (res - mu) / np.sqrt(var + 1e-5) * gamma
    w.save("dynamic_varying_batch", m, [x], [y.astype(np.float32)])


def upsample2_linear(x):
    """Resize by 2 along the last two axes, linear, half_pixel: ONNX's taps
    (the source coordinate clamped into the input) written out in NumPy."""
    for axis in (2, 3):
        n = x.shape[axis]
        src = np.clip((np.arange(2 * n) + 0.5) / 2 - 0.5, 0, n - 1)
        lo = np.floor(src).astype(np.int64)
        hi = np.minimum(lo + 1, n - 1)
        frac = (src - lo).reshape([-1 if a == axis else 1 for a in range(4)])
        x = np.take(x, lo, axis) * (1 - frac) + np.take(x, hi, axis) * frac
    return x.astype(np.float32)


def gen_keypoint_upsample(w):
    """Keypoint R-CNN's keypoint predictor on the detections it kept: rows
    picked by NonZero become [<=N, C, 2, 2] maps, a ConvTranspose (stride 2)
    and a bilinear Resize by 2 (scales [1, 1, 2, 2], half_pixel) along the
    static axes, a nearest Resize by scales [1, 1, 3, 2], and Pads (zeros,
    edge) of the spatial axes, as Mask R-CNN pads its masks."""
    n = helper.make_node
    N, C, M = 6, 3, 2
    x = w.f32(N, C * 4)
    mask = w.rng.integers(0, 2, size=N).astype(bool)
    mask[w.rng.integers(0, N)] = True
    wt = w.f32(C, M, 2, 2)
    nodes = [
        n("NonZero", ["mask"], ["nz"]),
        n("Reshape", ["nz", "m1"], ["idx"]),
        n("Gather", ["x", "idx"], ["rows"], axis=0),             # [<=N, 12]
        n("Reshape", ["rows", "img"], ["maps"]),                 # [<=N, C, 2, 2]
        n("ConvTranspose", ["maps", "wt"], ["up"], strides=[2, 2]),  # [<=N, M, 4, 4]
        n("Resize", ["up", "", "scales"], ["lin"], mode="linear",
          coordinate_transformation_mode="half_pixel"),          # [<=N, M, 8, 8]
        n("Resize", ["maps", "", "near_scales"], ["near"], mode="nearest",
          coordinate_transformation_mode="asymmetric", nearest_mode="floor"),
        n("Pad", ["up", "pads"], ["padded"]),                    # [<=N, M, 6, 6]
        n("Pad", ["maps", "pads_edge"], ["edged"], mode="edge"),  # [<=N, C, 3, 4]
    ]
    m = model(nodes, [vi("x", [N, C * 4]), vi("mask", [N], BOOL)],
              [vi("lin", None), vi("near", None), vi("padded", None), vi("edged", None)],
              [init("m1", np.array([-1], np.int64)),
               init("img", np.array([-1, C, 2, 2], np.int64)),
               init("scales", np.array([1, 1, 2, 2], np.float32)),
               init("near_scales", np.array([1, 1, 3, 2], np.float32)),
               init("pads", np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64)),
               init("pads_edge", np.array([0, 0, 0, 1, 0, 0, 1, 1], np.int64)),
               init("wt", wt)], opset=13)
    maps = x[mask].reshape(-1, C, 2, 2)
    up = np.zeros((len(maps), M, 4, 4), np.float64)
    for i in range(2):
        for j in range(2):  # stride 2, kernel 2: each input pixel fills its own 2x2 block
            up[:, :, 2 * i:2 * i + 2, 2 * j:2 * j + 2] = np.einsum(
                "nc,cmhw->nmhw", maps[:, :, i, j], wt)
    near = np.repeat(np.repeat(maps, 3, axis=2), 2, axis=3)
    w.save("dynamic_keypoint_upsample", m, [x, mask],
           [upsample2_linear(up.astype(np.float32)), near.astype(np.float32),
            np.pad(up, ((0, 0), (0, 0), (1, 1), (1, 1))).astype(np.float32),
            np.pad(maps, ((0, 0), (0, 0), (0, 1), (1, 1)), mode="edge")])


def gen_arange_count(w):
    """torch.arange(n) over a run-time count, as Mask R-CNN indexes its kept
    detections (mask_prob[arange(n), labels]): Range(0, Shape(rows)[0], 1),
    stacked with each row's ArgMax into GatherND indices; the Range itself
    is an output too."""
    n = helper.make_node
    N, C = 7, 5
    x = w.f32(N, C)
    mask = w.rng.integers(0, 2, size=N).astype(bool)
    mask[w.rng.integers(0, N)] = True
    nodes = [
        n("NonZero", ["mask"], ["nz"]),
        n("Reshape", ["nz", "m1"], ["idx"]),
        n("Gather", ["x", "idx"], ["rows"], axis=0),             # [<=N, C]
        n("Shape", ["rows"], ["rs"]),
        n("Gather", ["rs", "zero"], ["count"], axis=0),           # scalar, run time
        n("Range", ["zero", "count", "one"], ["ar"]),            # [<=N]: 0..n-1
        n("ArgMax", ["rows"], ["lab"], axis=1, keepdims=0),      # [<=N]
        n("Unsqueeze", ["ar", "ax1"], ["ar1"]),
        n("Unsqueeze", ["lab", "ax1"], ["lab1"]),
        n("Concat", ["ar1", "lab1"], ["pairs"], axis=1),          # [<=N, 2]
        n("GatherND", ["rows", "pairs"], ["picked"]),             # [<=N]
    ]
    m = model(nodes, [vi("x", [N, C]), vi("mask", [N], BOOL)],
              [vi("ar", None), vi("picked", None)],
              [init("m1", np.array([-1], np.int64)), init("zero", np.array(0, np.int64)),
               init("one", np.array(1, np.int64)), init("ax1", np.array([1], np.int64))],
              opset=13)
    rows = x[mask]
    w.save("dynamic_arange_count", m, [x, mask],
           [np.arange(len(rows), dtype=np.int64), rows.max(axis=1)])


def gen_resize_refused(w):
    """Resizes of the axis NonZero made varying, refused at import: one that
    scales it, one given constant sizes (they fix its length)."""
    n = helper.make_node
    for name, extra, inputs in (
            ("scaled", init("scales", np.array([1, 1, 1, 2], np.float32)), ["", "scales"]),
            ("sizes", init("sizes", np.array([1, 1, 4, 6], np.int64)), ["", "", "sizes"])):
        nodes = [n("NonZero", ["x"], ["nz"]), n("Cast", ["nz"], ["nzf"], to=F32),
                 n("Unsqueeze", ["nzf", "ax"], ["n4"]),           # [1, 1, 2, <=6]
                 n("Resize", ["n4"] + inputs, ["r"], mode="nearest")]
        m = model(nodes, [vi("x", [2, 3])], [vi("r", None)],
                  [init("ax", np.array([0, 1], np.int64)), extra], opset=13)
        w.save(f"dynamic_resize_refused_{name}", m)


def generate(w):
    gen_non_zero(w)
    gen_compress(w)
    gen_unique(w)
    gen_top_k_runtime_k(w)
    gen_chain(w)
    gen_roi_head(w)
    gen_varying_batch(w)
    gen_refused(w)
    gen_keypoint_upsample(w)
    gen_resize_refused(w)
    gen_arange_count(w)
    gen_slice_runtime(w)
    gen_slice_runtime_two_axes(w)


def gen_slice_runtime(w):
    """Slice with starts and ends computed at run time (graph inputs drawn
    from -9..9 over axes of 5 and 7, so negative, clamped and empty ranges
    all occur across seeds): along axis 1 with step 1, along axis -2 with
    step 2 (int32 bounds), a ReduceSum over the sliced axis, and an
    EmbeddingBag as torch exports it: a Loop over the bags whose body slices
    the ids between two run-time offsets, gathers the rows and averages them."""
    n = helper.make_node
    x = w.f32(5, 7)
    s, e = (w.rng.integers(-9, 10, size=1).astype(np.int64) for _ in range(2))
    s32, e32 = (w.rng.integers(-9, 10, size=1).astype(np.int32) for _ in range(2))
    table = w.f32(20, 4)
    bags = 4
    cuts = np.sort(w.rng.choice(np.arange(1, 12), size=bags - 1, replace=False))
    offsets = np.concatenate(([0], cuts)).astype(np.int64)  # every bag non-empty
    ids = w.rng.integers(0, 20, size=12).astype(np.int64)
    body = helper.make_graph(
        [n("Gather", ["ends_all", "i"], ["lo"], axis=0),
         n("Add", ["i", "one"], ["i1"]),
         n("Gather", ["ends_all", "i1"], ["hi"], axis=0),
         n("Unsqueeze", ["lo", "ax0"], ["lo1"]),
         n("Unsqueeze", ["hi", "ax0"], ["hi1"]),
         n("Slice", ["ids", "lo1", "hi1", "ax0"], ["bag"]),
         n("Gather", ["table", "bag"], ["rows"], axis=0),
         n("ReduceMean", ["rows"], ["mean"], axes=[0], keepdims=0),
         n("Identity", ["cond"], ["cond_out"])],
        "bag_body",
        [vi("i", [], I64), vi("cond", [], BOOL)],
        [vi("cond_out", [], BOOL), vi("mean", [4])])
    nodes = [
        n("Slice", ["x", "s", "e", "ax1"], ["y1"]),
        n("Slice", ["x", "s32", "e32", "axm2", "two"], ["y2"]),
        n("ReduceSum", ["y1", "ax1"], ["rsum"], keepdims=0),
        n("Concat", ["offsets", "n_ids"], ["ends_all"], axis=0),
        n("Loop", ["n_bags", "yes"], ["pooled"], body=body),
    ]
    m = model(nodes, [vi("x", [5, 7]), vi("s", [1], I64), vi("e", [1], I64),
                      vi("s32", [1], TensorProto.INT32), vi("e32", [1], TensorProto.INT32),
                      vi("ids", [12], I64), vi("offsets", [bags], I64)],
              [vi("y1", None), vi("y2", None), vi("rsum", [5]), vi("pooled", [bags, 4])],
              [init("ax1", np.array([1], np.int64)), init("axm2", np.array([-2], np.int32)),
               init("two", np.array([2], np.int32)), init("ax0", np.array([0], np.int64)),
               init("one", np.array(1, np.int64)), init("n_ids", np.array([12], np.int64)),
               init("n_bags", np.array(bags, np.int64)), init("yes", np.array(True)),
               init("table", table)], opset=13)
    y1 = x[:, s[0]:e[0]]
    y2 = x[s32[0]:e32[0]:2]
    ends = np.concatenate((offsets, [12]))
    pooled = np.stack([table[ids[ends[b]:ends[b + 1]]].mean(axis=0) for b in range(bags)])
    w.save("dynamic_slice_runtime", m, [x, s, e, s32, e32, ids, offsets],
           [y1, y2, y1.sum(axis=1).astype(np.float32), pooled.astype(np.float32)])


def gen_slice_runtime_two_axes(w):
    """Run-time starts over two axes: refused, naming the node."""
    n = helper.make_node
    m = model([n("Slice", ["x", "s", "e"], ["y"], name="two_axes")],
              [vi("x", [4, 5]), vi("s", [2], I64), vi("e", [2], I64)], [vi("y", None)],
              opset=13)
    w.save("dynamic_slice_two_axes", m)
