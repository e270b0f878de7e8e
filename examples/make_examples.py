#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the example graphs of this folder (docs/graph-format.md).

    /usr/bin/python3 examples/make_examples.py [OUT_DIR]

mlp.json + mlp.bin: a small MLP, x[1,64] -> gemm(32, transB) -> relu ->
matmul(10) + bias -> softmax. The seed is fixed, so the files are reproducible
and checked in.
"""
import json
import os
import re
import sys

import numpy as np

ALIGN = 16


class Weights:
    """Collects constants into one little-endian buffer and its JSON entries."""

    def __init__(self):
        self.blob = bytearray()
        self.entries = []

    def add(self, name, array):
        array = np.ascontiguousarray(array)
        dtype = {np.dtype(np.float32): "float32", np.dtype(np.int64): "int64",
                 np.dtype(np.int32): "int32"}[array.dtype]
        self.blob.extend(b"\0" * (-len(self.blob) % ALIGN))
        data = array.astype(array.dtype.newbyteorder("<")).tobytes()
        self.entries.append({"name": name, "dtype": dtype,
                             "shape": list(array.shape),
                             "offset": len(self.blob), "length": len(data)})
        self.blob.extend(data)


def write_graph(out_dir, stem, graph, weights):
    graph = dict(graph)
    graph["weights"] = stem + ".bin"
    graph["constants"] = weights.entries
    order = ["format", "version", "name", "doc", "weights", "inputs",
             "constants", "nodes", "outputs"]
    graph = {k: graph[k] for k in order if k in graph}
    text = json.dumps(graph, indent=2)
    # Keep lists of numbers and short lists of strings on one line.
    text = re.sub(r"\[\s*([^\[\]{}]*?)\s*\]",
                  lambda m: "[" + re.sub(r",\s+", ", ", m.group(1)) + "]", text)
    # Typed attribute values, {"int": 1}, on one line too.
    text = re.sub(r'\{\s*("(?:int|float|ints|floats|string)": [^\n{}]*?)\s*\}',
                  r"{\1}", text)
    with open(os.path.join(out_dir, stem + ".json"), "w") as f:
        f.write(text + "\n")
    with open(os.path.join(out_dir, stem + ".bin"), "wb") as f:
        f.write(bytes(weights.blob))


def make_mlp(out_dir):
    rng = np.random.default_rng(20261122)
    w = Weights()
    # fc1 stores its weight as [out, in] (transB = 1), fc2 as [in, out].
    w.add("fc1.weight", (rng.standard_normal((32, 64)) / 8).astype(np.float32))
    w.add("fc1.bias", (rng.standard_normal(32) / 10).astype(np.float32))
    w.add("fc2.weight", (rng.standard_normal((32, 10)) / 6).astype(np.float32))
    w.add("fc2.bias", (rng.standard_normal(10) / 10).astype(np.float32))
    graph = {
        "format": "vkpipe-graph",
        "version": 1,
        "name": "mlp",
        "doc": "1x64 -> 32 -> relu -> 10 -> softmax; made by make_examples.py",
        "inputs": [{"name": "x", "dtype": "float32", "shape": [1, 64]}],
        "nodes": [
            {"name": "fc1", "op": "gemm",
             "inputs": ["x", "fc1.weight", "fc1.bias"], "outputs": ["fc1.out"],
             "attrs": {"transB": {"int": 1}, "alpha": {"float": 1.0}}},
            {"name": "act1", "op": "relu", "inputs": ["fc1.out"],
             "outputs": ["act1.out"]},
            {"name": "fc2", "op": "matmul",
             "inputs": ["act1.out", "fc2.weight"], "outputs": ["fc2.mm"]},
            {"name": "fc2.bias_add", "op": "add",
             "inputs": ["fc2.mm", "fc2.bias"], "outputs": ["logits"]},
            {"name": "probs", "op": "softmax", "inputs": ["logits"],
             "outputs": ["y"], "attrs": {"axis": {"int": -1}}},
        ],
        "outputs": [{"name": "y", "dtype": "float32", "shape": [1, 10]}],
    }
    write_graph(out_dir, "mlp", graph, w)


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(
        os.path.abspath(__file__))
    make_mlp(out_dir)


if __name__ == "__main__":
    main()
