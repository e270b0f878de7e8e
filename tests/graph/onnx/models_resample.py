# SPDX-License-Identifier: Apache-2.0
"""ONNX models for the importer of the padding and resampling family
(graph/onnx_resample.c) in the forms the node tests do not cover: Pad's
attributes (opset 7) and its axes input (18), Upsample-7's scales attribute
and Upsample-9's input, Resize-10, Resize-18's axes, antialias and
keep_aspect_ratio_policy, Trilu's k input, Tile, Expand, EyeLike's dtype,
DepthToSpace CRD and SpaceToDepth on runtime data; and a Resize whose sizes
are a graph input (refused). Expected outputs from NumPy (the references of
tests/runtime/ref/cases_resample.py). Imported by gen_models.py; test_onnx_resample.c
loads them."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper

from gen_models import I64, init, model, vi

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "runtime", "ref"))
from cases_resample import depth_to_space, np_pad, np_resize, space_to_depth  # noqa: E402


def f32(a):
    return np.asarray(a, dtype=np.float64).astype(np.float32)


def gen_opset7(w):
    """Pad with attributes (reflect), Upsample-7 nearest with a scales
    attribute (NumPy's repeat)."""
    n = helper.make_node
    x = w.f32(1, 2, 3, 4)
    nodes = [n("Pad", ["x"], ["p"], mode="reflect", pads=[0, 0, 2, 1, 0, 0, 1, 3]),
             n("Upsample", ["x"], ["u"], mode="nearest", scales=[1.0, 1.0, 2.0, 3.0])]
    m = model(nodes, [vi("x", [1, 2, 3, 4])], [vi("p", [1, 2, 6, 8]), vi("u", [1, 2, 6, 12])],
              opset=7)
    w.save("resample_opset7", m, [x],
           [f32(np_pad(x, [0, 0, 2, 1, 0, 0, 1, 3], "reflect", 0)),
            x.repeat(2, axis=2).repeat(3, axis=3)])


def gen_opset9_10(w):
    """Upsample-9 linear and Resize-10 nearest, scales as initializers
    (asymmetric coordinates, nearest rounds down)."""
    n = helper.make_node
    x = w.f32(1, 2, 3, 4)
    up = [1.0, 1.0, 2.0, 1.5]
    m = model([n("Upsample", ["x", "s"], ["y"], mode="linear")], [vi("x", [1, 2, 3, 4])],
              [vi("y", [1, 2, 6, 6])], [init("s", np.array(up, np.float32))], opset=9)
    w.save("resample_opset9", m, [x],
           [f32(np_resize(x, [1, 2, 6, 6], up, ctm="asymmetric", mode="linear"))])
    down = [1.0, 1.0, 0.7, 2.5]
    m = model([n("Resize", ["x", "s"], ["y"], mode="nearest")], [vi("x", [1, 2, 3, 4])],
              [vi("y", [1, 2, 2, 10])], [init("s", np.array(down, np.float32))], opset=10)
    s32 = [float(np.float32(v)) for v in down]
    w.save("resample_opset10", m, [x],
           [f32(np_resize(x, [1, 2, 2, 10], s32, ctm="asymmetric", nearest_mode="floor"))])


def gen_opset18(w):
    """Pad with an axes input and a constant value; Resize with axes and
    sizes under keep_aspect_ratio_policy not_larger; antialiased linear
    downsampling by scales over axes (-2, -1)."""
    n = helper.make_node
    x = w.f32(1, 2, 4, 5)
    nodes = [
        n("Pad", ["x", "pads", "cv", "axes"], ["p"], mode="constant"),
        n("Resize", ["x", "", "", "sizes"], ["r"], mode="cubic", axes=[2, 3],
          keep_aspect_ratio_policy="not_larger"),
        n("Resize", ["x", "", "scales"], ["a"], mode="linear", axes=[-2, -1], antialias=1),
    ]
    inits = [init("pads", np.array([1, -1, 2, 0], np.int64)), init("axes", np.array([3, 1], np.int64)),
             init("cv", np.array(0.25, np.float32)), init("sizes", np.array([3, 12], np.int64)),
             init("scales", np.array([0.5, 0.6], np.float32))]
    m = model(nodes, [vi("x", [1, 2, 4, 5])],
              [vi("p", [1, 1, 4, 8]), vi("r", [1, 2, 3, 4]), vi("a", [1, 2, 2, 3])], inits,
              opset=18)
    s = [1.0, 1.0, float(np.float32(0.5)), float(np.float32(0.6))]
    w.save("resample_opset18", m, [x],
           [f32(np_pad(x, [0, -1, 0, 1, 0, 0, 0, 2], "constant", 0.25)),
            f32(np_resize(x, [1, 2, 3, 4], [1, 1, 0.75, 0.75], mode="cubic")),
            f32(np_resize(x, [1, 2, 2, 3], s, mode="linear", antialias=1))])


def gen_layout(w):
    """Trilu with a k input, Tile, Expand, EyeLike with a dtype (opset 14);
    DepthToSpace CRD and SpaceToDepth."""
    n = helper.make_node
    x, z = w.f32(2, 3, 4), w.f32(1, 8, 2, 2)
    nodes = [
        n("Trilu", ["x", "k"], ["t"], upper=0),
        n("Tile", ["x", "reps"], ["tl"]),
        n("Expand", ["x", "shape"], ["e"]),
        n("Flatten", ["x"], ["f"], axis=2),
        n("EyeLike", ["f"], ["eye"], dtype=TensorProto.FLOAT, k=1),
    ]
    inits = [init("k", np.array(-1, np.int64)), init("reps", np.array([1, 2, 3], np.int64)),
             init("shape", np.array([2, 1, 1, 4], np.int64))]
    m = model(nodes, [vi("x", [2, 3, 4])],
              [vi("t", [2, 3, 4]), vi("tl", [2, 6, 12]), vi("e", [2, 2, 3, 4]),
               vi("eye", [6, 4])], inits, opset=14)
    w.save("resample_layout", m, [x],
           [np.tril(x, -1), np.tile(x, (1, 2, 3)), x * np.ones((2, 1, 1, 4), np.float32),
            np.eye(6, 4, 1, dtype=np.float32)])
    m = model([n("DepthToSpace", ["z"], ["d"], blocksize=2, mode="CRD"),
               n("SpaceToDepth", ["z"], ["s"], blocksize=2)],
              [vi("z", [1, 8, 2, 2])], [vi("d", [1, 2, 4, 4]), vi("s", [1, 32, 1, 1])],
              opset=13)
    w.save("resample_blocks", m, [z], [depth_to_space(z, 2, "CRD"), space_to_depth(z, 2)])


def gen_refused(w):
    """Resize whose sizes are a graph input: the output shape would depend
    on run-time data."""
    n = helper.make_node
    m = model([n("Resize", ["x", "", "", "sizes"], ["y"])],
              [vi("x", [1, 1, 2, 2]), vi("sizes", [4], I64)], [vi("y", None)])
    w.save("resize_runtime_sizes", m)


def generate(w):
    gen_opset7(w)
    gen_opset9_10(w)
    gen_opset18(w)
    gen_layout(w)
    gen_refused(w)
