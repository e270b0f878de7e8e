# SPDX-License-Identifier: Apache-2.0
"""NumPy cases for the recurrent ops (lstm, gru, rnn), einsum, the losses
(softmax_cross_entropy_loss, negative_log_likelihood_loss) and quantization
(quantize_linear, dequantize_linear, dynamic_quantize_linear,
matmul_integer, conv_integer, qlinear_matmul, qlinear_conv), following
docs/ops.md. Imported by gen_cases.py, which calls generate(g).

The recurrent ops are checked against the step-by-step NumPy code below,
written from the ONNX operator spec: the whole batch advances one time step
at a time (a batch entry whose sequence has ended keeps its state), which is
not how vkpipe's kernels are organised."""
import numpy as np

from gen_cases import F, I, IS, S, FLOAT_X, conv2d, typed, tol, wide


def FS(name, v):
    return (name, "floats", [float(e) for e in v])


# ---------------------------------------------------------------------------
# Recurrent networks

ACTS = {
    "relu": lambda x, a, b: np.maximum(x, 0),
    "tanh": lambda x, a, b: np.tanh(x),
    "sigmoid": lambda x, a, b: 1 / (1 + np.exp(-x)),
    "affine": lambda x, a, b: a * x + b,
    "leaky_relu": lambda x, a, b: np.where(x >= 0, x, a * x),
    "thresholded_relu": lambda x, a, b: np.where(x > a, x, 0),
    "scaled_tanh": lambda x, a, b: a * np.tanh(b * x),
    "hard_sigmoid": lambda x, a, b: np.clip(a * x + b, 0, 1),
    "elu": lambda x, a, b: np.where(x >= 0, x, a * (np.exp(x) - 1)),
    "softsign": lambda x, a, b: x / (1 + np.abs(x)),
    "softplus": lambda x, a, b: np.log1p(np.exp(x)),
}
# ONNX's default alpha, beta (Affine's are ONNX Runtime's).
ACT_DEFAULTS = {"affine": (1.0, 0.0), "leaky_relu": (0.01, 0.0),
                "thresholded_relu": (1.0, 0.0), "scaled_tanh": (1.0, 1.0),
                "hard_sigmoid": (0.2, 0.5), "elu": (1.0, 0.0)}
GATES = {"lstm": 4, "gru": 3, "rnn": 1}
PER_DIR = {"lstm": ["sigmoid", "tanh", "tanh"], "gru": ["sigmoid", "tanh"], "rnn": ["tanh"]}


def np_rnn(op, X, W, R, B=None, lens=None, h0=None, c0=None, P=None,
           direction="forward", layout=0, clip=0.0, acts=None, alpha=None,
           beta=None, input_forget=0, linear_before_reset=0):
    """Y, Y_h, Y_c in float64 (Y_c None except for lstm)."""
    X, W, R = wide(X), wide(W), wide(R)
    if layout:
        X = X.transpose(1, 0, 2)
        h0 = None if h0 is None else h0.transpose(1, 0, 2)
        c0 = None if c0 is None else c0.transpose(1, 0, 2)
    S_, N, _ = X.shape
    D, H = W.shape[0], R.shape[2]
    GH = GATES[op] * H
    per = len(PER_DIR[op])
    acts = acts or PER_DIR[op] * D
    if len(acts) == per:
        acts = acts * D
    alpha = alpha or [ACT_DEFAULTS.get(a, (0, 0))[0] for a in acts]
    beta = beta or [ACT_DEFAULTS.get(a, (0, 0))[1] for a in acts]
    lens = np.full(N, S_) if lens is None else np.asarray(lens, dtype=np.int64)

    def cl(v):
        return np.clip(v, -clip, clip) if clip > 0 else v

    Y = np.zeros((S_, D, N, H))
    Yh, Yc = np.zeros((D, N, H)), np.zeros((D, N, H))
    for d in range(D):
        def act(k, v, d=d):
            i = d * per + k
            return ACTS[acts[i]](v, alpha[i], beta[i])
        rev = direction == "reverse" or d == 1
        Wb = np.zeros(GH) if B is None else wide(B)[d, :GH]
        Rb = np.zeros(GH) if B is None else wide(B)[d, GH:]
        h = np.zeros((N, H)) if h0 is None else wide(h0)[d].copy()
        c = np.zeros((N, H)) if c0 is None else wide(c0)[d].copy()
        for s in range(S_):
            active = s < lens
            t = np.where(rev, lens - 1 - s, s)
            t = np.clip(t, 0, S_ - 1)
            xt = X[t, np.arange(N)]
            xw = xt @ W[d].T + Wb
            if op == "lstm":
                g = xw + h @ R[d].T + Rb
                gi, go, gf, gc = (g[:, k * H:(k + 1) * H] for k in range(4))
                pi, po, pf = ((np.zeros(H),) * 3 if P is None else
                              (wide(P)[d, k * H:(k + 1) * H] for k in range(3)))
                i_ = act(0, cl(gi + pi * c))
                f_ = 1 - i_ if input_forget else act(0, cl(gf + pf * c))
                cn = f_ * c + i_ * act(1, cl(gc))
                o_ = act(0, cl(go + po * cn))
                hn = o_ * act(2, cn)
            elif op == "gru":
                Rz, Rr, Rh = (R[d][k * H:(k + 1) * H] for k in range(3))
                z = act(0, cl(xw[:, :H] + h @ Rz.T + Rb[:H]))
                r = act(0, cl(xw[:, H:2 * H] + h @ Rr.T + Rb[H:2 * H]))
                if linear_before_reset:
                    hh = act(1, cl(xw[:, 2 * H:] + r * (h @ Rh.T + Rb[2 * H:])))
                else:
                    hh = act(1, cl(xw[:, 2 * H:] + (r * h) @ Rh.T + Rb[2 * H:]))
                hn = (1 - z) * hh + z * h
                cn = c
            else:
                hn = act(0, cl(xw + h @ R[d].T + Rb))
                cn = c
            h = np.where(active[:, None], hn, h)
            c = np.where(active[:, None], cn, c)
            for b in np.nonzero(active)[0]:
                Y[t[b], d, b] = hn[b]
        Yh[d], Yc[d] = h, c
    if layout:
        Y = Y.transpose(2, 0, 1, 3)
        Yh, Yc = Yh.transpose(1, 0, 2), Yc.transpose(1, 0, 2)
    return Y, Yh, (Yc if op == "lstm" else None)


def gen_rnn(g):
    d = g.dim
    configs = [
        # (op, direction, layout, seq lens?, initial states?, clip, extras)
        ("lstm", "forward", 0, False, False, 0.0, {}),
        ("lstm", "bidirectional", 0, True, True, 0.0, {"peep": True}),
        ("lstm", "reverse", 1, True, True, 1.5, {}),
        ("lstm", "forward", 0, False, True, 0.0, {"input_forget": 1, "peep": True}),
        ("lstm", "bidirectional", 1, False, False, 0.0,
         {"acts": ["hard_sigmoid", "elu", "softsign", "sigmoid", "scaled_tanh", "affine"],
          "alpha": [0.3, 0.8, 0.0, 0.0, 0.9, 1.2], "beta": [0.4, 0.0, 0.0, 0.0, 1.1, -0.3]}),
        ("lstm", "forward", 0, True, False, 0.0, {"outputs": 2}),
        # More than 16 sequences: cpu's recurrence takes the GEMM.
        ("lstm", "bidirectional", 1, True, True, 0.0, {"batch": 18}),
        ("gru", "reverse", 0, True, True, 0.0, {"batch": 17, "lbr": 1}),
        ("gru", "forward", 0, False, False, 0.0, {}),
        ("gru", "bidirectional", 0, True, True, 0.0, {"lbr": 1}),
        ("gru", "reverse", 1, True, True, 0.8, {}),
        ("gru", "forward", 0, True, True, 0.0,
         {"acts": ["leaky_relu", "softplus"], "alpha": [0.1, 0.0], "beta": [0.0, 0.0]}),
        ("gru", "bidirectional", 1, False, True, 1.0, {"lbr": 1, "outputs": 1}),
        ("rnn", "forward", 0, False, False, 0.0, {}),
        ("rnn", "bidirectional", 0, True, True, 0.0, {}),
        ("rnn", "reverse", 1, True, True, 0.5, {"acts": ["relu"]}),
        ("rnn", "forward", 0, False, True, 0.0,
         {"acts": ["thresholded_relu"], "alpha": [0.2], "beta": [0.0]}),
    ]
    for op, direction, layout, with_lens, with_init, clip, ex in configs:
        cases = [("float32", np.float32)] + [(dt, None) for dt in FLOAT_X]
        for dt, _ in (cases if op != "lstm" or not ex else cases[:1]):
            seq, batch, inp, hid = d([2, 3, 5]), d([1, 2, 3]), d([2, 3, 5]), d([2, 3, 5])
            batch = ex.get("batch", batch)
            dirs = 2 if direction == "bidirectional" else 1
            gh = GATES[op] * hid
            X = typed(g, (batch, seq, inp) if layout else (seq, batch, inp), dt, -1, 1)
            W = typed(g, (dirs, gh, inp), dt, -0.8, 0.8)
            R = typed(g, (dirs, gh, hid), dt, -0.8, 0.8)
            B = typed(g, (dirs, 2 * gh), dt, -0.5, 0.5)
            lens = g.rng.integers(0, seq, size=batch, endpoint=True).astype(np.int32) \
                if with_lens else None
            hshape = (batch, dirs, hid) if layout else (dirs, batch, hid)
            h0 = typed(g, hshape, dt, -1, 1) if with_init else None
            c0 = typed(g, hshape, dt, -1, 1) if with_init and op == "lstm" else None
            P = typed(g, (dirs, 3 * hid), dt, -0.5, 0.5) if ex.get("peep") else None
            Y, Yh, Yc = np_rnn(op, X, W, R, B, lens, h0, c0, P, direction, layout, clip,
                               ex.get("acts"), ex.get("alpha"), ex.get("beta"),
                               ex.get("input_forget", 0), ex.get("lbr", 0))
            inputs = [X, W, R, B, lens, h0]
            if op == "lstm":
                inputs += [c0, P]
            while inputs[-1] is None:
                inputs.pop()
            outs = [Y, Yh] + ([Yc] if op == "lstm" else [])
            outs = [o.astype(dt) for o in outs[:ex.get("outputs", len(outs))]]
            attrs = [S("direction", direction), I("layout", layout)]
            if clip:
                attrs.append(F("clip", clip))
            if "acts" in ex:
                attrs.append(S("activations", ",".join(ex["acts"])))
            if "alpha" in ex:
                attrs += [FS("activation_alpha", ex["alpha"]), FS("activation_beta", ex["beta"])]
            if ex.get("input_forget"):
                attrs.append(I("input_forget", 1))
            if ex.get("lbr"):
                attrs.append(I("linear_before_reset", 1))
            rtol, atol = tol(dt)
            g.add(op, inputs, outs if len(outs) > 1 else outs[0], attrs,
                  tag=dt + "_" + direction, rtol=rtol, atol=max(atol, 1e-5))
    # hidden_size given, weights constant (as exported models have them).
    X = typed(g, (3, 2, 4), "float32", -1, 1)
    W, R = typed(g, (1, 12, 4), "float32", -1, 1), typed(g, (1, 12, 4), "float32", -1, 1)
    Y, Yh, _ = np_rnn("gru", X, W, R)
    g.add("gru", [X, ("const", W), ("const", R)], [Y.astype(np.float32), Yh.astype(np.float32)],
          (I("hidden_size", 4),), tag="const_weights", atol=1e-5)


# ---------------------------------------------------------------------------
# Einsum

EINSUM = [
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 2, 5)]),
    ("i,i->", [(7,), (7,)]),
    ("ij->ji", [(3, 5)]),
    ("ii->i", [(4, 4)]),
    ("ij->i", [(3, 5)]),
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]),
    ("ij,jk", [(3, 4), (4, 2)]),
    ("ii", [(5, 5)]),
    ("bii->bi", [(3, 4, 4)]),
    ("i,j->ij", [(3,), (4,)]),
    ("ijk->", [(2, 3, 4)]),
    ("abc,cd->abd", [(2, 3, 4), (4, 5)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
    ("...i,...i->...", [(2, 3, 4), (3, 4)]),
    (" b i j , b j k -> b k i ", [(2, 2, 3), (2, 3, 2)]),
]


def gen_einsum(g):
    for eq, shapes in EINSUM:
        for dt in ["float32"] + FLOAT_X:
            xs = [typed(g, s, dt, -2, 2) for s in shapes]
            exp = np.einsum(eq.replace(" ", ""), *[wide(x) for x in xs]).astype(dt)
            rtol, atol = tol(dt)
            g.add("einsum", xs, np.asarray(exp), (S("equation", eq),), tag=dt,
                  rtol=rtol * 10, atol=atol * 10)
    # Integers wrap around like NumPy's (products summed in int64, then
    # narrowed).
    for dt in ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]:
        for eq, shapes in (EINSUM[0], EINSUM[4], EINSUM[6]):
            xs = [typed(g, s, dt, -20, 20) for s in shapes]
            with np.errstate(over="ignore"):
                exp = np.einsum(eq, *[x.astype(np.int64) for x in xs]).astype(dt)
            g.add("einsum", xs, np.asarray(exp), (S("equation", eq),), tag=dt)


# ---------------------------------------------------------------------------
# Losses

def np_loss(x, labels, weights, reduction, ignore, softmax):
    x = wide(x)
    logp = x
    if softmax:
        m = x.max(axis=1, keepdims=True)
        logp = x - m - np.log(np.exp(x - m).sum(axis=1, keepdims=True))
    n, c = x.shape[:2]
    lp = logp.reshape(n, c, -1)
    lab = labels.reshape(n, -1).astype(np.int64)
    w = np.ones(c) if weights is None else wide(weights)
    loss = np.zeros(lab.shape)
    wsum = np.zeros(lab.shape)
    for i in range(n):
        for k in range(lab.shape[1]):
            if ignore is not None and lab[i, k] == ignore:
                continue
            wsum[i, k] = w[lab[i, k]]
            loss[i, k] = -w[lab[i, k]] * lp[i, lab[i, k], k]
    if reduction == "none":
        out = loss.reshape(labels.shape)
    elif reduction == "sum":
        out = np.array(loss.sum())
    else:
        out = np.array(loss.sum() / wsum.sum())
    return out, logp


def gen_losses(g):
    d = g.dim
    configs = [
        ((3, 5), "mean", None, False),
        ((3, 5), "sum", None, True),
        ((2, 4, 3), "none", 1, True),
        ((2, 3, 2, 3), "mean", 0, True),
        ((4, 3, 5), "mean", -1, False),
        ((2, 5, 2, 1, 2), "none", None, False),
        ((3, 4), "sum", 2, True),
    ]
    for shape, reduction, ignore, with_w in configs:
        for op in ("softmax_cross_entropy_loss", "negative_log_likelihood_loss"):
            for dt in ["float32"] + FLOAT_X:
                n, c = shape[0], shape[1]
                x = typed(g, shape, dt, -3, 3)
                lshape = (n,) + shape[2:]
                labels = g.rng.integers(0, c, size=lshape).astype(
                    np.int64 if d([1, 2]) == 1 else np.int32)
                if ignore is not None:
                    flat = labels.reshape(-1)
                    flat[g.rng.integers(0, flat.size)] = ignore  # at least one
                weights = typed(g, (c,), dt, 0.2, 2.0) if with_w else None
                softmax = op.startswith("softmax")
                out, logp = np_loss(x, labels, weights, reduction, ignore, softmax)
                attrs = [S("reduction", reduction)]
                if ignore is not None:
                    attrs.append(I("ignore_index", ignore))
                inputs = [x, labels] + ([weights] if with_w else [])
                exp = out.astype(dt)
                if softmax and reduction != "sum":
                    exp = [exp, logp.astype(dt)]
                rtol, atol = tol(dt)
                g.add(op, inputs, exp, attrs, tag=dt + "_" + reduction, rtol=rtol,
                      atol=atol * 10)


# ---------------------------------------------------------------------------
# Quantization

QRANGE = {"int8": (-128, 127), "uint8": (0, 255), "int16": (-32768, 32767),
          "uint16": (0, 65535), "int32": (-2 ** 31, 2 ** 31 - 1)}


def saturate(v, dt):
    lo, hi = QRANGE[dt]
    return np.clip(v, lo, hi).astype(dt)


def param_view(p, x_shape, axis, block):
    """The scale / zero point of every element of x, as an array of x's
    shape."""
    p = np.asarray(p)
    if block:
        return np.repeat(p, block, axis=axis).take(range(x_shape[axis]), axis=axis)
    if p.size == 1:
        return np.broadcast_to(p.reshape(()), x_shape)
    shape = [1] * len(x_shape)
    shape[axis] = -1
    return np.broadcast_to(p.reshape(shape), x_shape)


def gen_quant(g):
    # (x shape, axis, block, scale shape) per tensor, per axis, blocked.
    layouts = [((3, 4), 1, 0, ()), ((2, 3, 4), 1, 0, (3,)), ((2, 3, 4), -1, 0, (4,)),
               ((4, 6), 1, 4, (4, 2)), ((5, 2, 3), 0, 2, (3, 2, 3)), ((7,), 0, 0, (1,))]
    for xs, axis, block, ss in layouts:
        for xdt in ["float32"] + FLOAT_X:
            for qdt in ["uint8", "int8", "int16", "uint16"]:
                lo, hi = QRANGE[qdt]
                # float16: power-of-two scales, so x / scale is exact.
                if xdt == "float16":
                    scale = (2.0 ** g.rng.integers(-3, 2, size=ss)).astype(xdt)
                else:
                    scale = g.rng.uniform(0.02, 0.5, size=ss).astype(xdt)
                zp = g.rng.integers(max(lo, -20), min(hi, 20), size=ss,
                                    endpoint=True).astype(qdt)
                span = 150.0 * float(np.max(wide(scale)))
                x = typed(g, xs, xdt, -span, span)
                ax = axis % len(xs)
                s_el, z_el = param_view(scale, xs, ax, block), param_view(zp, xs, ax, block)
                q = np.rint((x / s_el).astype(xdt).astype(np.float64)) + z_el
                attrs = [I("axis", axis)] + ([I("block_size", block)] if block else [])
                zin = zp if qdt != "uint8" or len(ss) else None
                ins = [x, scale] + ([zp] if zin is not None else [])
                if zin is None:
                    q = q - z_el
                g.add("quantize_linear", ins, saturate(q, qdt), attrs,
                      tag="%s_to_%s" % (xdt, qdt))
            for qdt in ["uint8", "int8", "int16", "uint16", "int32"]:
                lo, hi = QRANGE[qdt]
                x = typed(g, xs, qdt, max(lo, -1000), min(hi, 1000))
                scale = g.rng.uniform(0.02, 0.5, size=ss).astype(xdt)
                zp = None if qdt == "int32" else g.rng.integers(
                    max(lo, -20), min(hi, 20), size=ss, endpoint=True).astype(qdt)
                ax = axis % len(xs)
                s_el = param_view(scale, xs, ax, block)
                z_el = 0 if zp is None else param_view(zp, xs, ax, block)
                y = (x.astype(np.int64) - z_el).astype(np.float64) * wide(s_el)
                attrs = [I("axis", axis)] + ([I("block_size", block)] if block else [])
                g.add("dequantize_linear", [x, scale] + ([] if zp is None else [zp]),
                      y.astype(xdt), attrs, tag="%s_to_%s" % (qdt, xdt), **dict(
                          zip(("rtol", "atol"), tol(xdt))))
    # quantize_linear with output_dtype and no zero point.
    x = typed(g, (4, 5), "float32", -30, 30)
    scale = np.float32(0.25)
    g.add("quantize_linear", [x, np.array(scale)], saturate(np.rint(x / scale), "int8"),
          (S("output_dtype", "int8"),), tag="output_dtype")
    # dynamic_quantize_linear: ONNX's reference, in float32.
    for shape, lo, hi in (((3, 4), -2, 3), ((2, 5), 0.5, 4), ((6,), -5, -1), ((2, 2), 0, 0)):
        x = typed(g, shape, "float32", lo, hi) if hi > lo else np.zeros(shape, np.float32)
        xmin = np.minimum(np.float32(0), np.min(x))
        xmax = np.maximum(np.float32(0), np.max(x))
        scale = np.float32((xmax - xmin) / np.float32(255))
        if scale > 0:
            zp = np.clip(np.rint((np.float32(0) - xmin) / scale), 0, 255)
            y = np.clip(np.rint(x / scale) + zp, 0, 255)
        else:
            zp, y = 0.0, np.zeros(shape)
        g.add("dynamic_quantize_linear", [x],
              [y.astype(np.uint8), np.array(scale, np.float32), np.array(zp).astype(np.uint8)],
              tag="range_%g_%g" % (lo, hi))
    gen_qmatmul(g)
    gen_qconv(g)


def qdata(g, shape, dt):
    lo, hi = QRANGE[dt]
    return g.rng.integers(lo, hi, size=shape, endpoint=True).astype(dt)


def gen_qmatmul(g):
    shapes = [((3, 5), (5, 4)), ((2, 3, 6), (6, 2)), ((2, 1, 2, 3), (3, 3, 4)),
              ((1, 7), (7, 9))]
    for (sa, sb) in shapes:
        m, n = sa[-2], sb[-1]
        for adt in ("uint8", "int8"):
            for bdt in ("int8", "uint8"):
                a, b = qdata(g, sa, adt), qdata(g, sb, bdt)
                per_row = g.rng.integers(0, 2) == 1
                azp = qdata(g, (m,) if per_row else (), adt)
                bzp = qdata(g, (n,) if per_row else (), bdt)
                acc = np.matmul(a.astype(np.int64) - (azp.reshape(-1, 1) if per_row else azp),
                                b.astype(np.int64) - bzp)
                g.add("matmul_integer", [a, b, azp, bzp], acc.astype(np.int32),
                      tag="%s_%s" % (adt, bdt))
                # Without zero points.
                g.add("matmul_integer", [a, b], np.matmul(a.astype(np.int64), b).astype(np.int32),
                      tag="%s_%s_nozp" % (adt, bdt))
                for ydt in ("uint8", "int8"):
                    sa_ = g.rng.uniform(0.01, 0.1, size=(m,) if per_row else ()).astype(np.float32)
                    sb_ = g.rng.uniform(0.01, 0.1, size=(n,) if per_row else ()).astype(np.float32)
                    sy = np.float32(g.rng.uniform(0.5, 2.0) * 0.01 * float(np.sqrt(sa[-1])))
                    yzp = qdata(g, (), ydt)
                    mult = ((sa_.reshape(-1, 1) if per_row else sa_) * sb_) / sy
                    y = np.rint(acc * mult.astype(np.float32).astype(np.float64)) + \
                        yzp.astype(np.float64)
                    g.add("qlinear_matmul", [a, np.array(sa_), azp, b, np.array(sb_), bzp,
                                             np.array(sy), yzp],
                          saturate(y, ydt), tag="%s_%s_to_%s" % (adt, bdt, ydt))


def gen_qconv(g):
    configs = [
        # (N, C, H, W, M, group, kh, kw, pads, strides, dilations)
        (1, 2, 5, 5, 3, 1, 3, 3, (1, 1, 1, 1), (1, 1), (1, 1)),
        (2, 4, 6, 5, 4, 2, 2, 3, (0, 1, 1, 0), (2, 1), (1, 1)),
        (1, 3, 7, 6, 2, 1, 3, 2, (2, 0, 1, 1), (1, 2), (2, 1)),
    ]
    for (nb, c, h, w_, m, grp, kh, kw, pads, strides, dil) in configs:
        for xdt in ("uint8", "int8"):
            for wdt in ("int8", "uint8"):
                x, w = qdata(g, (nb, c, h, w_), xdt), qdata(g, (m, c // grp, kh, kw), wdt)
                xzp = qdata(g, (), xdt)
                per_ch = g.rng.integers(0, 2) == 1
                wzp = qdata(g, (m,) if per_ch else (), wdt)
                wz = wzp.reshape(-1, 1, 1, 1) if per_ch else wzp
                acc = np.rint(conv2d(x.astype(np.int64) - xzp, w.astype(np.int64) - wz, None,
                                     pads, strides, dil, grp)).astype(np.int64)
                attrs = (IS("pads", pads), IS("strides", strides), IS("dilations", dil),
                         I("group", grp))
                g.add("conv_integer", [x, w, xzp, wzp], acc.astype(np.int32), attrs,
                      tag="%s_%s" % (xdt, wdt))
                g.add("conv_integer", [x, w],
                      np.rint(conv2d(x, w, None, pads, strides, dil, grp)).astype(np.int32),
                      attrs, tag="%s_%s_nozp" % (xdt, wdt))
                for ydt in ("uint8", "int8"):
                    sx = np.float32(g.rng.uniform(0.01, 0.1))
                    sw = g.rng.uniform(0.01, 0.1, size=(m,) if per_ch else ()).astype(np.float32)
                    sy = np.float32(g.rng.uniform(0.5, 2.0) * 0.01 * float(np.sqrt(c * kh * kw)))
                    yzp = qdata(g, (), ydt)
                    bias = g.rng.integers(-2000, 2000, size=(m,)).astype(np.int32)
                    mult = ((sx * sw) / sy).astype(np.float32).astype(np.float64)
                    mult = mult.reshape(1, -1, 1, 1) if per_ch else mult
                    y = np.rint((acc + bias.reshape(1, -1, 1, 1)) * mult) + yzp.astype(np.float64)
                    g.add("qlinear_conv", [x, np.array(sx), xzp, w, np.array(sw), wzp,
                                           np.array(sy), yzp, bias],
                          saturate(y, ydt), attrs, tag="%s_%s_to_%s" % (xdt, wdt, ydt))


def generate(g):
    gen_rnn(g)
    gen_einsum(g)
    gen_losses(g)
    gen_quant(g)
