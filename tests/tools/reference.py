#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""NumPy evaluation of a vkpipe JSON graph, for tests/tools/test_tools.c.

    reference.py MODEL.json OUT_DIR NAME=FILE.npy ...

Reads the constants from the graph's .bin itself (independently of vkpipe's
loader) and writes OUT_DIR/<output>.npy for every graph output. Knows the ops
the examples use.
"""
import json
import os
import sys

import numpy as np

DTYPES = {"float32": "<f4", "float16": "<f2", "int64": "<i8", "int32": "<i4"}


def softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def attr(node, name, default):
    a = node.get("attrs", {}).get(name)
    return default if a is None else next(iter(a.values()))


def gemm(node, a, b, c=None):
    if attr(node, "transA", 0):
        a = a.T
    if attr(node, "transB", 0):
        b = b.T
    y = attr(node, "alpha", 1.0) * (a @ b)
    if c is not None:
        y = y + attr(node, "beta", 1.0) * c
    return y


OPS = {
    "add": lambda n, a, b: a + b,
    "sub": lambda n, a, b: a - b,
    "mul": lambda n, a, b: a * b,
    "relu": lambda n, x: np.maximum(x, 0),
    "matmul": lambda n, a, b: a @ b,
    "gemm": gemm,
    "softmax": lambda n, x: softmax(x, attr(n, "axis", -1)),
}


def main():
    model, out_dir = sys.argv[1], sys.argv[2]
    with open(model) as f:
        g = json.load(f)
    env = {}
    if g.get("constants"):
        with open(os.path.join(os.path.dirname(model), g["weights"]), "rb") as f:
            blob = f.read()
        for c in g["constants"]:
            raw = blob[c["offset"]:c["offset"] + c["length"]]
            env[c["name"]] = np.frombuffer(raw, dtype=DTYPES[c["dtype"]]).reshape(
                c["shape"]).astype(np.float64)
    for arg in sys.argv[3:]:
        name, path = arg.split("=", 1)
        env[name] = np.load(path).astype(np.float64)
    pending = list(g["nodes"])
    while pending:
        for node in pending:
            if all(i in env for i in node["inputs"]):
                args = [env[i] for i in node["inputs"]]
                env[node["outputs"][0]] = OPS[node["op"]](node, *args)
                pending.remove(node)
                break
        else:
            sys.exit("reference.py: cannot evaluate the remaining nodes")
    for out in g["outputs"]:
        name = out if isinstance(out, str) else out["name"]
        np.save(os.path.join(out_dir, name + ".npy"), env[name].astype(np.float32))


if __name__ == "__main__":
    main()
