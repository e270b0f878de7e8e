# SPDX-License-Identifier: Apache-2.0
"""ONNX Loop and Scan, unrolled at import (graph/onnx_control.c), with
expected outputs from PyTorch or NumPy: a torch.jit.script'ed `for` loop
over range(x.size(0)) carrying a tensor (exported with a symbolic time dim
that --dim binds, so the trip count folds), a while-style Loop (huge M, a
condition that folds per iteration) with a scan output reading the graph's
inputs from the body, a Loop nested in a Loop's body reading the outer
iteration number, a Scan with reversed and non-zero axes, and the
refusals: a run-time trip count, a run-time condition, a loop past the
unrolling limit. Imported by gen_models.py; test_onnx_control.c loads
them."""
import os

import numpy as np
from onnx import TensorProto, helper

from gen_models import F32, I64, init, model, vi

BOOL = TensorProto.BOOL
n = helper.make_node

try:
    import torch  # type: ignore
except ImportError:  # Debian's python3-torch is optional: those models are skipped
    torch = None


if torch is not None:
    class RecurrentTanh(torch.nn.Module):
        """h <- tanh(h @ w + x[i]) for every step i of x [T, B, D]."""

        def forward(self, x, w):
            h = x[0]
            for i in range(x.size(0)):
                h = torch.tanh(h @ w + x[i])
            return h


def gen_torch_loop(w):
    if torch is None:
        return
    x, wt = w.f32(3, 2, 4), w.f32(4, 4, lo=-0.5, hi=0.5)
    path = os.path.join(w.out, "loop_torch.onnx")
    torch.onnx.export(torch.jit.script(RecurrentTanh()),
                      (torch.from_numpy(x), torch.from_numpy(wt)), path,
                      opset_version=13, input_names=["x", "w"], output_names=["h"],
                      dynamic_axes={"x": {0: "T"}})
    want = RecurrentTanh()(torch.from_numpy(x), torch.from_numpy(wt)).detach().numpy()
    import onnx
    w.save("loop_torch", onnx.load(path), [x, wt], [want])


def while_body():
    """(i, c, acc) -> (i + 1 < 4, acc * 0.5 + x[i], acc * 0.5 + x[i]): reads
    the graph input x from the body."""
    nodes = [
        n("Gather", ["x", "i"], ["row"], axis=0),
        n("Mul", ["acc", "half"], ["decayed"]),
        n("Add", ["decayed", "row"], ["acc_out"]),
        n("Identity", ["acc_out"], ["scan_out"]),
        n("Add", ["i", "one"], ["next"]),
        n("Less", ["next", "four"], ["c_out"]),
    ]
    return helper.make_graph(
        nodes, "body",
        [vi("i", [], I64), vi("c", [], BOOL), vi("acc", [3])],
        [vi("c_out", [], BOOL), vi("acc_out", [3]), vi("scan_out", [3])],
        initializer=[init("half", np.array(0.5, np.float32)),
                     init("one", np.array(1, np.int64)),
                     init("four", np.array(4, np.int64))])


def gen_while_loop(w):
    x, a0 = w.f32(6, 3), w.f32(3)
    nodes = [n("Loop", ["big", "yes", "a0"], ["acc", "steps"], body=while_body(),
               name="while")]
    m = model(nodes, [vi("x", [6, 3]), vi("a0", [3])], [vi("acc", [3]), vi("steps", [4, 3])],
              [init("big", np.array(2**63 - 1, np.int64)), init("yes", np.array(True))])
    acc, steps = a0.astype(np.float64), []
    for i in range(4):
        acc = acc * 0.5 + x[i]
        steps.append(acc)
    w.save("loop_while", m, [x, a0],
           [acc.astype(np.float32), np.array(steps, np.float32)])


def gen_scan(w):
    """Scan (opset 11) over axis 1 of xs [3, 5], read last step first:
    s <- s + x_t; y_t = s * 2 stacked along axis 0 (forward), z_t = s - x_t
    stacked along axis 1 and reversed."""
    body = helper.make_graph(
        [n("Add", ["s", "xt"], ["s_out"]), n("Mul", ["s_out", "two"], ["y"]),
         n("Sub", ["s_out", "xt"], ["z"])],
        "scan_body", [vi("s", [3]), vi("xt", [3])],
        [vi("s_out", [3]), vi("y", [3]), vi("z", [3])],
        initializer=[init("two", np.array(2, np.float32))])
    nodes = [n("Scan", ["s0", "xs"], ["s_final", "ys", "zs"], body=body, num_scan_inputs=1,
               scan_input_axes=[1], scan_input_directions=[1], scan_output_axes=[0, -1],
               scan_output_directions=[0, 1])]
    m = model(nodes, [vi("s0", [3]), vi("xs", [3, 5])],
              [vi("s_final", [3]), vi("ys", [5, 3]), vi("zs", [3, 5])], opset=11)
    s0, xs = w.f32(3), w.f32(3, 5)
    s, ys, zs = s0.astype(np.float64), [], []
    for t in range(5):
        xt = xs[:, 4 - t]
        s = s + xt
        ys.append(s * 2)
        zs.append(s - xt)
    zs = zs[::-1]
    w.save("scan_reverse", m, [s0, xs],
           [s.astype(np.float32), np.array(ys, np.float32),
            np.array(zs, np.float32).T.copy()])


def gen_nested(w):
    """Loop j < 3 inside Loop i < 2: acc += x[i] * (j + 1), the inner body
    reading the outer iteration number and the graph input x; the inner
    loop's scan output (acc after each step) stacked, then the outer one's."""
    inner = helper.make_graph(
        [n("Gather", ["x", "i"], ["row"], axis=0),
         n("Add", ["j", "one"], ["j1"]), n("Cast", ["j1"], ["jf"], to=F32),
         n("Mul", ["row", "jf"], ["inc"]), n("Add", ["acc_in", "inc"], ["acc_out"]),
         n("Identity", ["acc_out"], ["inner_scan"]), n("Identity", ["cj"], ["cj_out"])],
        "inner", [vi("j", [], I64), vi("cj", [], BOOL), vi("acc_in", [3])],
        [vi("cj_out", [], BOOL), vi("acc_out", [3]), vi("inner_scan", [3])],
        initializer=[init("one", np.array(1, np.int64))])
    outer = helper.make_graph(
        [n("Loop", ["three", "", "acc"], ["acc_next", "steps"], body=inner),
         n("Identity", ["c"], ["c_out"])],
        "outer", [vi("i", [], I64), vi("c", [], BOOL), vi("acc", [3])],
        [vi("c_out", [], BOOL), vi("acc_next", [3]), vi("steps", [3, 3])],
        initializer=[init("three", np.array(3, np.int64))])
    nodes = [n("Loop", ["two", "", "a0"], ["acc", "all_steps"], body=outer)]
    m = model(nodes, [vi("x", [2, 3]), vi("a0", [3])],
              [vi("acc", [3]), vi("all_steps", [2, 3, 3])],
              [init("two", np.array(2, np.int64))])
    x, a0 = w.f32(2, 3), w.f32(3)
    acc, steps = a0.astype(np.float64), []
    for i in range(2):
        inner_steps = []
        for j in range(3):
            acc = acc + x[i] * (j + 1)
            inner_steps.append(acc)
        steps.append(inner_steps)
    w.save("loop_nested", m, [x, a0], [acc.astype(np.float32), np.array(steps, np.float32)])


def gen_refused(w):
    body = helper.make_graph(
        [n("Add", ["v", "one"], ["v_out"]), n("Identity", ["c"], ["c_out"])],
        "body", [vi("i", [], I64), vi("c", [], BOOL), vi("v", [2])],
        [vi("c_out", [], BOOL), vi("v_out", [2])],
        initializer=[init("one", np.array(1, np.float32))])
    # The trip count is a graph input: known only at run time.
    m = model([n("Loop", ["m", "", "v0"], ["v"], body=body, name="runtime_trip")],
              [vi("m", [], I64), vi("v0", [2])], [vi("v", [2])])
    w.save("loop_runtime_trip", m)
    # 100000 iterations of a two-node body: past the unrolling limit.
    m = model([n("Loop", ["m", "", "v0"], ["v"], body=body, name="too_long")],
              [vi("v0", [2])], [vi("v", [2])], [init("m", np.array(100000, np.int64))])
    w.save("loop_too_long", m)
    # The body's condition reads run-time data.
    cbody = helper.make_graph(
        [n("Add", ["v", "one"], ["v_out"]), n("ReduceSum", ["v_out"], ["tot"], keepdims=0),
         n("Less", ["tot", "ten"], ["c_out"])],
        "body", [vi("i", [], I64), vi("c", [], BOOL), vi("v", [2])],
        [vi("c_out", [], BOOL), vi("v_out", [2])],
        initializer=[init("one", np.array(1, np.float32)),
                     init("ten", np.array(10, np.float32))])
    m = model([n("Loop", ["", "", "v0"], ["v"], body=cbody, name="runtime_cond")],
              [vi("v0", [2])], [vi("v", [2])])
    w.save("loop_runtime_cond", m)


def generate(w):
    gen_torch_loop(w)
    gen_while_loop(w)
    gen_scan(w)
    gen_nested(w)
    gen_refused(w)
