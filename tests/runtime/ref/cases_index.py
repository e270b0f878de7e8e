# SPDX-License-Identifier: Apache-2.0
"""NumPy cases of the indexing family (graph/op_index.c): gather (embedding
tables, position ids, any axis, negative and scalar indices),
gather_elements, gather_nd (batch_dims), scatter_elements and scatter_nd
with every reduction, one_hot (indices of every numeric dtype, some out of
range), reverse_sequence (both axis orders, lengths 0 to the full time
axis). Data of every dtype; indices int32 and int64, fresh each run.
Written from the ONNX operator spec, element by element where NumPy has no
one-call equivalent."""
import itertools

import numpy as np

from gen_cases import ALL, FLOAT_X, I, INTS, S, UNSIGNED_INTS, add_typed, tol, typed

NUMERIC = ["float32"] + FLOAT_X + INTS


def indices(g, shape, dim, dt="int64"):
    """Random indices in [-dim, dim)."""
    return g.rng.integers(-dim, dim, size=shape).astype(dt)


def gen_gather(g):
    d = g.dim
    for dt in ALL:
        shape = (d([2, 3]), d([3, 5]), d([2, 7]))
        x = typed(g, shape, dt, -100, 100)
        axis = int(g.rng.integers(-3, 3))
        idx_dt = "int64" if g.rng.integers(0, 2) else "int32"
        idx = indices(g, (2, d([1, 3])), shape[axis], idx_dt)
        add_typed(g, "gather", [x, idx], np.take(x, idx, axis=axis), dt,
                  attrs=[I("axis", axis)])
    # An embedding table read by token ids, and a scalar index.
    table = g.f32((11, 7))
    ids = indices(g, (2, 5), 11)
    add_typed(g, "gather", [table, ids], np.take(table, ids, axis=0), "float32",
              tag="embedding")
    add_typed(g, "gather", [("const", table), ids], np.take(table, ids, axis=0), "float32",
              tag="const_table")
    x = g.f32((3, 5))
    k = np.array(-2, np.int64)
    add_typed(g, "gather", [x, k], np.take(x, k, axis=1), "float32",
              attrs=[I("axis", 1)], tag="scalar")


def gen_gather_elements(g):
    d = g.dim
    for dt in ALL:
        shape = (d([2, 3]), d([3, 5]), d([2, 7]))
        x = typed(g, shape, dt, -100, 100)
        axis = int(g.rng.integers(-3, 3))
        a = axis % 3
        ishape = tuple(int(g.rng.integers(1, s + 1)) if i != a else d([1, 4])
                       for i, s in enumerate(shape))
        idx = indices(g, ishape, shape[a], "int64" if dt != "bool" else "int32")
        sub = x[tuple(slice(0, s) if i != a else slice(None) for i, s in enumerate(ishape))]
        want = np.take_along_axis(sub, idx, axis=a)
        add_typed(g, "gather_elements", [x, idx], want, dt, attrs=[I("axis", axis)])


def gather_nd(x, idx, batch):
    bshape = idx.shape[:batch]
    k = idx.shape[-1]
    out = []
    for b in itertools.product(*[range(s) for s in bshape]):
        xb, ib = x[b], idx[b]
        flat = ib.reshape(-1, k)
        out.append(np.stack([xb[tuple(t)] for t in flat]).reshape(
            ib.shape[:-1] + xb.shape[k:]))
    return np.stack(out).reshape(idx.shape[:-1] + x.shape[batch + k:])


def gen_gather_nd(g):
    d = g.dim
    for dt in ALL:
        shape = (d([2, 3]), d([3, 5]), d([2, 7]))
        x = typed(g, shape, dt, -100, 100)
        batch = int(g.rng.integers(0, 2))
        k = int(g.rng.integers(1, 3 - batch + 1))
        q = (d([1, 3]),)
        cols = [indices(g, shape[:batch] + q + (1,), shape[batch + j]) for j in range(k)]
        idx = np.concatenate(cols, axis=-1)
        add_typed(g, "gather_nd", [x, idx], gather_nd(x, idx, batch), dt,
                  attrs=[I("batch_dims", batch)])


def reduce_into(out, at, v, reduction):
    if reduction == "none":
        out[at] = v
    elif reduction == "add":
        out[at] = out[at] + v
    elif reduction == "mul":
        out[at] = out[at] * v
    elif reduction == "max":
        if v > out[at]:
            out[at] = v
    else:
        if v < out[at]:
            out[at] = v


def scatter_elements(x, idx, upd, axis, reduction):
    out = x.copy()
    for pos in itertools.product(*[range(s) for s in idx.shape]):
        at = list(pos)
        at[axis] = int(idx[pos]) % x.shape[axis]
        reduce_into(out, tuple(at), upd[pos], reduction)
    return out


def scatter_nd(x, idx, upd, reduction):
    out = x.copy()
    k = idx.shape[-1]
    flat_idx = idx.reshape(-1, k)
    flat_upd = upd.reshape((-1,) + x.shape[k:])
    for t in range(flat_idx.shape[0]):
        at = tuple(int(c) % s for c, s in zip(flat_idx[t], x.shape))
        for e in itertools.product(*[range(s) for s in x.shape[k:]]):
            reduce_into(out, at + e, flat_upd[(t,) + e], reduction)
    return out


REDUCTIONS = ["none", "add", "mul", "max", "min"]


def gen_scatter(g):
    d = g.dim
    with np.errstate(over="ignore"):
        for dt in ALL:
            for red in (REDUCTIONS if dt != "bool" else ["none"]):
                shape = (d([2, 3]), d([3, 5]), d([2, 7]))
                lo, hi = (-3, 3) if red == "mul" else (-100, 100)
                x = typed(g, shape, dt, lo, hi)
                axis = int(g.rng.integers(-3, 3))
                a = axis % 3
                ishape = tuple(int(g.rng.integers(1, s + 1)) for s in shape)
                if red == "none":  # distinct targets: ONNX leaves repeats undefined
                    full = tuple(s if i == a else t for i, (s, t) in enumerate(zip(shape, ishape)))
                    perm = np.argsort(g.rng.random(size=full), axis=a)
                    idx = np.take(perm, range(ishape[a]), axis=a).astype(np.int64)
                    idx = np.where(g.rng.integers(0, 2, size=idx.shape) == 1,
                                   idx - shape[a], idx)
                else:
                    idx = indices(g, ishape, shape[a])
                upd = typed(g, ishape, dt, lo, hi)
                add_typed(g, "scatter_elements", [x, idx, upd],
                          scatter_elements(x, idx, upd, a, red), dt,
                          attrs=[I("axis", axis), S("reduction", red)], tag=red)
                k = int(g.rng.integers(1, 3))
                if red == "none":
                    cells = list(itertools.product(*[range(s) for s in shape[:k]]))
                    pick = g.rng.permutation(len(cells))[:d([1, 2, 3])]
                    idx = np.array([cells[p] for p in pick], np.int64).reshape(-1, k)
                else:
                    rows = d([2, 3])
                    idx = np.concatenate([indices(g, (rows, 1), shape[j])
                                          for j in range(k)], axis=-1)
                upd = typed(g, idx.shape[:-1] + shape[k:], dt, lo, hi)
                idx32 = idx.astype(np.int32) if g.rng.integers(0, 2) else idx
                add_typed(g, "scatter_nd", [x, idx32, upd], scatter_nd(x, idx, upd, red),
                          dt, attrs=[S("reduction", red)], tag=red)


def gen_one_hot(g):
    d = g.dim
    for dt in NUMERIC:
        depth = d([3, 5, 7])
        shape = (d([2, 3]), d([3, 5]))
        lo = 0 if dt in UNSIGNED_INTS else -depth - 2
        idx = g.rng.integers(lo, depth + 2, size=shape).astype(dt)
        if dt.startswith("float"):
            idx = (idx + g.rng.uniform(0, 0.9, size=shape) * np.sign(idx)).astype(dt)
        axis = int(g.rng.integers(-3, 3))
        values = typed(g, (2,), "float32", -5, 5)
        k = np.trunc(idx.astype(np.float64)).astype(np.int64)
        k = np.where(k < 0, k + depth, k)
        hot = k[..., None] == np.arange(depth)
        want = np.moveaxis(np.where(hot, values[1], values[0]), -1, axis)
        add_typed(g, "one_hot", [idx, values], want.astype(np.float32), dt,
                  attrs=[I("depth", depth), I("axis", axis)])
    idx = g.rng.integers(-4, 4, size=(5,)).astype(np.int64)
    values = np.array([0, 1], np.int64)
    k = np.where(idx < 0, idx + 4, idx)
    add_typed(g, "one_hot", [idx, values], (k[:, None] == np.arange(4)).astype(np.int64),
              "int64", attrs=[I("depth", 4)], tag="int_values")


def reverse_sequence(x, lens, batch_axis, time_axis):
    """ONNX ReverseSequence, entry by entry."""
    y = x.copy()
    for b, n in enumerate(lens):
        for t in range(int(n)):
            src = [slice(None)] * x.ndim
            dst = [slice(None)] * x.ndim
            src[batch_axis] = dst[batch_axis] = b
            src[time_axis], dst[time_axis] = int(n) - 1 - t, t
            y[tuple(dst)] = x[tuple(src)]
    return y


def gen_reverse_sequence(g):
    d = g.dim
    for dt in ALL:
        batch_axis = int(g.rng.integers(0, 2))
        time_axis = 1 - batch_axis
        shape = [0, 0] + [d([1, 3])] * int(g.rng.integers(0, 2))
        shape[batch_axis], shape[time_axis] = d([2, 3, 4]), d([3, 5])
        x = typed(g, tuple(shape), dt, -100, 100)
        lens = g.rng.integers(0, shape[time_axis] + 1, size=shape[batch_axis]).astype(np.int64)
        add_typed(g, "reverse_sequence", [x, lens],
                  reverse_sequence(x, lens, batch_axis, time_axis), dt,
                  attrs=[I("batch_axis", batch_axis), I("time_axis", time_axis)])


def generate(g):
    gen_gather(g)
    gen_gather_elements(g)
    gen_gather_nd(g)
    gen_scatter(g)
    gen_one_hot(g)
    gen_reverse_sequence(g)
