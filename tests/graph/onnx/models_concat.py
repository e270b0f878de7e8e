# SPDX-License-Identifier: Apache-2.0
"""A Concat of 100 inputs (DenseNet's blocks concatenate dozens), with NumPy's
expected output. Imported by gen_models.py; test_onnx_ops.c loads it."""
import numpy as np
from onnx import helper

from gen_models import init, model, vi

N = 100


def generate(w):
    x = w.f32(1, 2, 3, 4)
    scales = w.f32(N, lo=0.5, hi=2.0)
    nodes = [helper.make_node("Mul", ["x", "s%d" % i], ["m%d" % i]) for i in range(N)]
    nodes.append(helper.make_node("Concat", ["m%d" % i for i in range(N)], ["y"], axis=1))
    inits = [init("s%d" % i, np.float32(scales[i])) for i in range(N)]
    m = model(nodes, [vi("x", [1, 2, 3, 4])], [vi("y", [1, 2 * N, 3, 4])], inits)
    y = np.concatenate([x * scales[i] for i in range(N)], axis=1)
    w.save("concat_100", m, [x], [y.astype(np.float32)])
