# SPDX-License-Identifier: Apache-2.0
"""NumPy cases for the fused attention op (docs/ops.md, "attention"):
S = scale * Q @ Kt; S = where((C != 0) == fill_where, fill, S); S = S + M;
Y = softmax(S) @ V. Imported by gen_cases.py, which calls generate(g)."""
import numpy as np

from gen_cases import F, I, FLOAT_X, tol, typed, wide


def np_attention(q, kt, v, scale=1.0, mask=None, cond=None, fill=0.0,
                 fill_where=1):
    s = np.matmul(wide(q), wide(kt)) * scale
    if cond is not None:
        s = np.where((cond != 0) == bool(fill_where), fill, s)
    if mask is not None:
        s = s + wide(mask)
    s = s - s.max(axis=-1, keepdims=True)
    p = np.exp(s)
    p /= p.sum(axis=-1, keepdims=True)
    return np.matmul(p, wide(v))


def case(g, dt, qs, kts, vs, ms=None, cs=None, scale=1.0, fill=-1e4,
         fill_where=1, cond_dt="bool", tag=""):
    q, kt, v = typed(g, qs, dt), typed(g, kts, dt), typed(g, vs, dt)
    inputs = [q, kt, v, None, None]
    attrs = [F("scale", scale)]
    m = c = None
    if ms is not None:
        m = typed(g, ms, dt, -4.0, 0.0)
        inputs[3] = m
    if cs is not None:
        c = (g.rng.uniform(size=cs) < 0.5).astype(cond_dt)
        # Keep the first key of every row: a row masked out entirely
        # depends on the order of the two masks.
        keep = np.zeros(cs, dtype=bool)
        keep[..., 0] = True
        unmasked = np.zeros_like(c) if fill_where else np.ones_like(c)
        c = np.where(keep, unmasked, c).astype(c.dtype)
        inputs[4] = c
        attrs += [F("fill", fill), I("fill_where", fill_where)]
    while inputs[-1] is None:
        inputs.pop()
    y = np_attention(q, kt, v, scale, m, c, fill, fill_where).astype(dt)
    rtol, atol = tol(dt)
    if dt == "float16":
        rtol, atol = 5e-3, 5e-3
    g.add("attention", inputs, y, attrs, tag=dt + ("_" + tag if tag else ""),
          rtol=rtol, atol=atol)


def generate(g):
    d = g.dim
    for dt in ["float32"] + FLOAT_X:
        b, h = d([1, 2]), d([2, 3])
        lq, lk, dd, dv = d([1, 3, 5]), d([2, 7, 11]), d([3, 5, 8]), d([2, 5, 7])
        # Plain [B, H, L, D] with a scale, no mask.
        case(g, dt, (b, h, lq, dd), (b, h, dd, lk), (b, h, lk, dv),
             scale=1 / np.sqrt(dd), tag="plain")
        # Additive [B, 1, 1, Lk] padding mask (BERT).
        case(g, dt, (b, h, lq, dd), (b, h, dd, lk), (b, h, lk, dv),
             ms=(b, 1, 1, lk), scale=0.5, tag="add")
        # Boolean [1, 1, Lq, Lk] condition filled where false (GPT-2), and
        # an additive mask after it.
        case(g, dt, (b, h, lq, dd), (b, h, dd, lk), (b, h, lk, dv),
             ms=(b, 1, 1, lk), cs=(1, 1, lq, lk), scale=0.25, fill=-1e4,
             fill_where=0, tag="where_add")
    # Batch broadcasting: K and V shared over heads; rank-3 and rank-2 forms.
    case(g, "float32", (2, 3, 4, 5), (2, 1, 5, 6), (1, 6, 3), tag="bcast")
    case(g, "float32", (3, 4, 5), (3, 5, 7), (3, 7, 2), ms=(4, 7), tag="rank3")
    case(g, "float32", (4, 5), (5, 7), (7, 2), tag="rank2")
    # A float condition filled where nonzero, a huge negative fill, and a
    # long key row (several blocks in the cpu kernel).
    case(g, "float32", (1, 2, 3, 16), (1, 2, 16, 300), (1, 2, 300, 8),
         cs=(1, 1, 3, 300), scale=0.25, fill=-3e38, fill_where=1,
         cond_dt="float32", tag="long")
