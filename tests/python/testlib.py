# SPDX-License-Identifier: Apache-2.0
"""Small models written on the spot (vkpipe JSON graphs with random weights)
and their NumPy references, for the Python binding's tests."""
import json
import os
import tempfile
import unittest

import numpy as np

SOURCE_DIR = os.environ.get(
    "VKPIPE_SOURCE_DIR",
    os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))
SEED = int(os.environ.get("VKPIPE_TEST_SEED", "1234"))


def rng(salt=0):
    return np.random.default_rng(SEED + salt)


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def write_graph(directory, name, inputs, constants, nodes, outputs):
    """Writes <directory>/<name>.json (+ .bin). inputs/outputs: (name, dtype,
    shape); constants: (name, array); nodes: (name, op, inputs, outputs,
    attrs dict of {"int": ..} / {"float": ..} / {"ints": ..})."""
    blob = bytearray()
    consts = []
    for cname, arr in constants:
        arr = np.ascontiguousarray(arr)
        consts.append({"name": cname, "dtype": str(arr.dtype), "shape": list(arr.shape),
                       "offset": len(blob), "length": arr.nbytes})
        blob += arr.tobytes()
    doc = {
        "format": "vkpipe-graph", "version": 1, "name": name,
        "weights": name + ".bin",
        "inputs": [{"name": n, "dtype": d, "shape": list(s)} for n, d, s in inputs],
        "constants": consts,
        "nodes": [dict({"name": n, "op": op, "inputs": i, "outputs": o},
                       **({"attrs": a} if a else {}))
                  for n, op, i, o, a in nodes],
        "outputs": [dict({"name": n, "dtype": d}, **({"shape": list(s)} if s else {}))
                    for n, d, s in outputs],
    }
    path = os.path.join(directory, name + ".json")
    with open(path, "w") as f:
        json.dump(doc, f)
    with open(os.path.join(directory, name + ".bin"), "wb") as f:
        f.write(bytes(blob))
    return path


class Mlp:
    """x[2,16] -> matmul+add -> relu (output "h") -> matmul+add (output "y")."""

    def __init__(self, directory, batch=2):
        r = rng(1)
        self.w1 = r.standard_normal((16, 32)).astype(np.float32)
        self.b1 = r.standard_normal(32).astype(np.float32)
        self.w2 = r.standard_normal((32, 8)).astype(np.float32)
        self.b2 = r.standard_normal(8).astype(np.float32)
        self.batch = batch
        self.path = write_graph(
            directory, "mlp",
            [("x", "float32", (batch, 16))],
            [("w1", self.w1), ("b1", self.b1), ("w2", self.w2), ("b2", self.b2)],
            [("fc1", "matmul", ["x", "w1"], ["fc1.mm"], None),
             ("fc1.bias", "add", ["fc1.mm", "b1"], ["fc1.out"], None),
             ("act", "relu", ["fc1.out"], ["h"], None),
             ("fc2", "matmul", ["h", "w2"], ["fc2.mm"], None),
             ("fc2.bias", "add", ["fc2.mm", "b2"], ["y"], None)],
            [("h", "float32", (batch, 32)), ("y", "float32", (batch, 8))])

    def input(self, salt=0):
        return rng(100 + salt).standard_normal((self.batch, 16)).astype(np.float32)

    def reference(self, x):
        h = np.maximum(x @ self.w1 + self.b1, 0)
        return {"h": h, "y": h @ self.w2 + self.b2}


def write_div(directory):
    """Two int32 inputs a, b [4] -> a / b (integer division: a zero in b
    fails that frame) and a float input c [4] -> c * 2."""
    return write_graph(
        directory, "div",
        [("a", "int32", (4,)), ("b", "int32", (4,)), ("c", "float32", (4,))],
        [("two", np.full(4, 2.0, np.float32))],
        [("q", "div", ["a", "b"], ["q"], None),
         ("d", "mul", ["c", "two"], ["d"], None)],
        [("q", "int32", (4,)), ("d", "float32", (4,))])


def write_identity(directory, dtype, shape=(3, 5)):
    return write_graph(directory, "id_" + dtype, [("x", dtype, shape)], [],
                       [("id", "identity", ["x"], ["y"], None)],
                       [("y", dtype, shape)])


class TempDirTest(unittest.TestCase):
    """A test case with a fresh temporary directory in self.dir."""

    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="vkpipe_py_")
        self.dir = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()
