# SPDX-License-Identifier: Apache-2.0
"""Model-local functions (graph/onnx_function.c) with NumPy's expected
outputs: nested functions called twice, attributes bound from the call
(ref_attr_name) or left to the op's default when the call omits them, an
omitted optional input, an unused output, a body at another opset than the
model's (ReduceMean with axes as an input, opset 18, in a model at 13), and
the call inside an If branch; and the refusals: a function that calls
itself, a call with more inputs than the function takes. The layout is the
one torch.onnx.export(..., export_modules_as_functions=...) writes.
Imported by gen_models.py; test_onnx_function.c loads them."""
import numpy as np
from onnx import TensorProto, helper

from gen_models import init, model, vi

n = helper.make_node
D = "my.funcs"


def ref_attr(name, ref, kind):
    a = helper.make_attribute(name, 0.0 if kind == "f" else 0)
    a.ClearField("f" if kind == "f" else "i")
    a.ref_attr_name = ref
    a.type = (helper.AttributeProto.FLOAT if kind == "f" else helper.AttributeProto.INT)
    return a


def fn(name, inputs, outputs, nodes, attrs=(), opset=13):
    return helper.make_function(D, name, inputs, outputs, nodes,
                                [helper.make_opsetid("", opset)], list(attrs))


def functions():
    swish = fn("Swish", ["X"], ["Y"], [n("Sigmoid", ["X"], ["s"]),
                                       n("Mul", ["X", "s"], ["Y"])])
    # Block(X, W, B; alpha, axis) -> (Y, Stats): Y = softmax(leaky(swish(XW + B)))
    # over `axis`; Stats = clip(mean over the last axis) (opset 18 ReduceMean,
    # Clip with its max omitted).
    leaky = n("LeakyRelu", ["sw"], ["lk"])
    leaky.attribute.append(ref_attr("alpha", "alpha", "f"))
    soft = n("Softmax", ["lk"], ["Y"])
    soft.attribute.append(ref_attr("axis", "axis", "i"))
    block = fn("Block", ["X", "W", "B"], ["Y", "Stats"], [
        n("MatMul", ["X", "W"], ["xw"]),
        n("Add", ["xw", "B"], ["h"]),
        n("Swish", ["h"], ["sw"], domain=D),
        leaky, soft,
        n("Constant", [], ["ax"], value=helper.make_tensor("ax", TensorProto.INT64, [1], [-1])),
        n("ReduceMean", ["Y", "ax"], ["m"], keepdims=1),
        n("Clip", ["m", "lo", ""], ["Stats"]),
    ], attrs=["alpha", "axis"], opset=18)
    # Function bodies are closed (no initializers, no outer names): Clip's
    # lower bound is a Constant of the body.
    block.node.insert(0, n("Constant", [], ["lo"], value=helper.make_tensor(
        "lo", TensorProto.FLOAT, [], [0.05])))
    return [swish, block]


def swish(x):
    return x / (1.0 + np.exp(-x))


def leaky(x, alpha):
    return np.where(x >= 0, x, alpha * x)


def softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def block(x, w, b, alpha, axis):
    y = softmax(leaky(swish(x @ w + b), alpha), axis)
    return y.astype(np.float32), np.maximum(y.mean(axis=-1, keepdims=True), 0.05).astype(np.float32)


def gen_nested(w):
    x = w.f32(2, 3, 4)
    w1, b1, w2, b2 = w.f32(4, 4), w.f32(4), w.f32(4, 4), w.f32(4)
    c1 = n("Block", ["x", "w1", "b1"], ["y1", "s1"], domain=D, alpha=0.3, axis=1)
    c2 = n("Block", ["y1", "w2", "b2"], ["y2"], domain=D)  # alpha, axis: defaults
    m = model([c1, c2, n("Add", ["y2", "s1"], ["out"])], [vi("x", [2, 3, 4])],
              [vi("out", None), vi("y1", None)],
              [init("w1", w1), init("b1", b1), init("w2", w2), init("b2", b2)])
    m.opset_import.append(helper.make_opsetid(D, 1))
    m.functions.extend(functions())
    y1, s1 = block(x, w1, b1, 0.3, 1)
    y2, _ = block(y1, w2, b2, 0.01, -1)  # LeakyRelu alpha 0.01, Softmax axis -1
    w.save("function_nested", m, [x], [y2 + s1, y1])


def gen_in_branch(w):
    """A call inside an If branch taken on a run-time condition."""
    x = w.f32(3, 4)
    then_b = helper.make_graph([n("Swish", ["x"], ["t"], domain=D)], "then", [],
                               [vi("t", [3, 4])])
    else_b = helper.make_graph([n("Neg", ["x"], ["e"])], "else", [], [vi("e", [3, 4])])
    m = model([n("If", ["c"], ["out"], then_branch=then_b, else_branch=else_b)],
              [vi("x", [3, 4]), vi("c", [], TensorProto.BOOL)], [vi("out", [3, 4])])
    m.opset_import.append(helper.make_opsetid(D, 1))
    m.functions.extend(functions())
    w.save("function_in_branch", m, [x, np.array(True)], [swish(x).astype(np.float32)])


def gen_refused(w):
    loop = fn("Loop1", ["X"], ["Y"], [n("Loop1", ["X"], ["Y"], domain=D)])
    m = model([n("Loop1", ["x"], ["y"], domain=D)], [vi("x", [2])], [vi("y", None)])
    m.opset_import.append(helper.make_opsetid(D, 1))
    m.functions.append(loop)
    w.save("function_recursive", m)
    m = model([n("Swish", ["x", "x"], ["y"], domain=D)], [vi("x", [2])], [vi("y", None)])
    m.opset_import.append(helper.make_opsetid(D, 1))
    m.functions.extend(functions())
    w.save("function_bad_arity", m)


def generate(w):
    gen_nested(w)
    gen_in_branch(w)
    gen_refused(w)
