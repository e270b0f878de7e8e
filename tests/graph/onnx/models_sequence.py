# SPDX-License-Identifier: Apache-2.0
"""ONNX sequences and optionals, resolved at import (graph/onnx_sequence.c),
with expected outputs from PyTorch or NumPy: torch.split into a list and
torch.cat of a list built element by element, as torch.jit.script exports
it (SplitToSequence, a Loop of SequenceAt/SequenceInsert,
ConcatFromSequence) and as tracing exports it (Split, Concat); every
sequence op on run-time tensors (SequenceConstruct, Insert, Erase, At with
negative positions, Length, ConcatFromSequence with new_axis,
SplitToSequence with sizes and without, SequenceMap with a tensor input);
optionals with and without an element; an If on a folded condition
returning a sequence; sequence graph inputs and outputs (one graph
input or output per element); and the refusal of a run-time position. Imported by gen_models.py; test_onnx_sequence.c loads them."""
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
    class SplitScaleCat(torch.nn.Module):
        """Chunks of two columns, each through sigmoid and scaled by its
        position, concatenated back."""

        def forward(self, x):
            parts = torch.split(x, 2, dim=1)
            out = []
            for i in range(len(parts)):
                out.append(torch.sigmoid(parts[i]) * float(i + 1))
            return torch.cat(out, dim=1)

    class SplitCatTraced(torch.nn.Module):
        def forward(self, x):
            parts = torch.split(x, [1, 2, 3], dim=1)
            return torch.cat([torch.relu(p) * (i + 1) for i, p in enumerate(parts)], dim=1)


def gen_torch_split(w):
    if torch is None:
        return
    import onnx
    x = w.f32(3, 6)
    for name, mod in (("seq_torch_script", torch.jit.script(SplitScaleCat())),
                      ("seq_torch_traced", SplitCatTraced())):
        path = os.path.join(w.out, name + ".onnx")
        torch.onnx.export(mod, (torch.from_numpy(x),), path, opset_version=13,
                          input_names=["x"], output_names=["y"])
        want = mod(torch.from_numpy(x)).detach().numpy()
        w.save(name, onnx.load(path), [x], [want])


def gen_seq_ops(w):
    a, b, c, d = (w.f32(2, 3) for _ in range(4))
    x, t = w.f32(6, 3), w.f32(3)
    map_body = helper.make_graph(
        [n("Relu", ["e"], ["r"]), n("Add", ["r", "t_in"], ["o"])],
        "map_body", [vi("e", ["k", 3]), vi("t_in", [3])], [vi("o", ["k", 3])])
    then_b = helper.make_graph([n("SequenceConstruct", ["a", "b"], ["s_then"])], "then", [],
                               [helper.make_tensor_sequence_value_info("s_then", F32, None)])
    else_b = helper.make_graph([n("SequenceConstruct", ["c"], ["s_else"])], "else", [],
                               [helper.make_tensor_sequence_value_info("s_else", F32, None)])
    nodes = [
        # [a, b, c] -> insert d at 1 -> [a, d, b, c] -> erase the last -> [a, d, b]
        n("SequenceConstruct", ["a", "b", "c"], ["s3"]),
        n("SequenceInsert", ["s3", "d", "one"], ["s4"]),
        n("SequenceErase", ["s4", "minus_one"], ["s5"]),
        n("SequenceAt", ["s5", "minus_two"], ["at"]),        # d
        n("SequenceLength", ["s5"], ["len"]),                # 3
        n("ConcatFromSequence", ["s5"], ["stacked"], axis=1, new_axis=1),  # [2, 3, 3]
        # x split into rows [1, 2, 3], each relu(e) + t, concatenated again.
        n("SplitToSequence", ["x", "sizes"], ["parts"], axis=0),
        n("SequenceMap", ["parts", "t"], ["mapped"], body=map_body),
        n("ConcatFromSequence", ["mapped"], ["remapped"], axis=0),
        # Unit split without keepdims: the rows of x, the last one taken.
        n("SplitToSequence", ["x"], ["rows"], axis=0, keepdims=0),
        n("SequenceAt", ["rows", "minus_one"], ["last_row"]),
        # An optional holding a, and an empty one.
        n("Optional", ["a"], ["opt"]),
        n("OptionalHasElement", ["opt"], ["has"]),
        n("OptionalGetElement", ["opt"], ["got"]),
        n("Optional", [], ["none"], type=helper.make_tensor_type_proto(F32, [2, 3])),
        n("OptionalHasElement", ["none"], ["has_none"]),
        n("Add", ["got", "at"], ["got_plus"]),
        # If on a folded condition (the length is 3) returning a sequence.
        n("Equal", ["len", "three"], ["is3"]),
        n("If", ["is3"], ["branch_seq"], then_branch=then_b, else_branch=else_b),
        n("ConcatFromSequence", ["branch_seq"], ["branch_cat"], axis=0),
    ]
    m = model(nodes, [vi(k, [2, 3]) for k in "abcd"] + [vi("x", [6, 3]), vi("t", [3])],
              [vi("at", [2, 3]), vi("len", [], I64), vi("stacked", [2, 3, 3]),
               vi("remapped", [6, 3]), vi("last_row", [3]), vi("has", [], BOOL),
               vi("has_none", [], BOOL), vi("got_plus", [2, 3]), vi("branch_cat", [4, 3])],
              [init("one", np.array(1, np.int64)), init("minus_one", np.array(-1, np.int64)),
               init("minus_two", np.array(-2, np.int32)), init("three", np.array(3, np.int64)),
               init("sizes", np.array([1, 2, 3], np.int64))], opset=17)
    want = [d, np.array(3, np.int64), np.stack([a, d, b], axis=1),
            np.maximum(x, 0) + t, x[-1], np.array(True), np.array(False), a + d,
            np.concatenate([a, b], axis=0)]
    w.save("seq_ops", m, [a, b, c, d, x, t], want)


def gen_refused(w):
    nodes = [n("SequenceConstruct", ["a", "a"], ["s"]),
             n("SequenceAt", ["s", "p"], ["y"], name="runtime_position")]
    m = model(nodes, [vi("a", [2]), vi("p", [], I64)], [vi("y", [2])])
    w.save("seq_runtime_position", m)
    # A sequence graph output: one graph output per element, "s[k]".
    a = w.f32(2)
    nodes = [n("SplitToSequence", ["a"], ["s"], axis=0, name="to_output")]
    m = model(nodes, [vi("a", [2])],
              [helper.make_tensor_sequence_value_info("s", F32, None)])
    w.save("seq_graph_output", m, [a], [a[:1], a[1:]])
    # A sequence graph input of symbolic length and element shape: given by
    # the load options, one graph input per element.
    nodes = [n("SequenceLength", ["xs"], ["len"]),
             n("ConcatFromSequence", ["xs"], ["cat"], axis=0)]
    m = model(nodes, [helper.make_tensor_sequence_value_info("xs", F32, ["k"])],
              [vi("len", [], I64), vi("cat", ["n"])])
    x0, x1, x2 = w.f32(2), w.f32(3), w.f32(1)
    w.save("seq_graph_input", m, [x0, x1, x2],
           [np.array(3, np.int64), np.concatenate([x0, x1, x2])])


def generate(w):
    gen_torch_split(w)
    gen_seq_ops(w)
    gen_refused(w)
