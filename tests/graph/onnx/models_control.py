# SPDX-License-Identifier: Apache-2.0
"""ONNX If (graph/onnx_control.c) and NonMaxSuppression (graph/op_dynamic.c)
with NumPy's expected outputs: a condition folded at import (its branch
inlined, the other never read), a run-time condition with a nested If whose
branch reads a value of the enclosing branch and a graph input, torchvision's
batched_nms guard (an empty branch beside NonMaxSuppression of a bounded
selection) on data that selects boxes and data that selects none, and
an untaken branch that would fail (a Gather index past the end, the guard's
purpose), and the guard exporters put around squeezing a data-dependent value (its
condition folds from a static dim of a bounded shape), and branches whose
ranks differ on a run-time condition (refused). Imported by gen_models.py;
test_onnx_control.c loads them."""
import numpy as np
from onnx import TensorProto, helper

from gen_models import F32, I64, batchnorm, conv2d, init, model, vi

BOOL = TensorProto.BOOL
n = helper.make_node


def branch(name, nodes, outputs, inits=()):
    return helper.make_graph(nodes, name, [], outputs, initializer=list(inits))


def nms(boxes, scores, max_out, iou):
    """NonMaxSuppression of one batch and class, corner boxes, no score
    threshold: indices kept, in order (written from the ONNX description)."""
    b = boxes.astype(np.float64)
    y1, y2 = np.minimum(b[:, 0], b[:, 2]), np.maximum(b[:, 0], b[:, 2])
    x1, x2 = np.minimum(b[:, 1], b[:, 3]), np.maximum(b[:, 1], b[:, 3])
    area = (y2 - y1) * (x2 - x1)
    kept = []
    for i in np.lexsort((np.arange(len(scores)), -scores.astype(np.float64))):
        if len(kept) >= max_out:
            break
        ok = True
        for j in kept:
            ih = max(min(y2[i], y2[j]) - max(y1[i], y1[j]), 0.0)
            iw = max(min(x2[i], x2[j]) - max(x1[i], x1[j]), 0.0)
            inter = ih * iw
            union = area[i] + area[j] - inter
            if area[i] > 0 and area[j] > 0 and inter > 0 and inter / union > iou:
                ok = False
                break
        if ok:
            kept.append(i)
    return np.array(kept, np.int64)


def gen_if_const(w):
    """cond = (Shape(x)[0] == 3) folds to true: the then branch (reading x
    and y from the graph) is inlined; the else branch holds an op of a
    domain vkpipe does not know, which must never be read."""
    x, y = w.f32(3, 4), w.f32(3, 4)
    then_b = branch("then", [n("Relu", ["x"], ["r"]), n("Add", ["r", "y"], ["t"])],
                    [vi("t", [3, 4])])
    else_b = branch("else", [n("Foo", ["x"], ["e"], domain="my.domain")],
                    [vi("e", [3, 4])])
    nodes = [
        n("Shape", ["x"], ["shp"]),
        n("Gather", ["shp", "zero"], ["rows"], axis=0),
        n("Equal", ["rows", "three"], ["cond"]),
        n("If", ["cond"], ["out"], then_branch=then_b, else_branch=else_b),
    ]
    m = model(nodes, [vi("x", [3, 4]), vi("y", [3, 4])], [vi("out", [3, 4])],
              [init("zero", np.array(0, np.int64)), init("three", np.array(3, np.int64))])
    m.opset_import.append(helper.make_opsetid("my.domain", 1))
    w.save("if_const", m, [x, y], [np.maximum(x, 0) + y])


def if_runtime_model():
    """out = cond ? (c2 ? (x + y) * y : -(x + y)) : (x - y) * 2, and
    shp = cond ? [7, 7] : Shape(x): the nested If's branches read t, defined
    by the enclosing then branch, and y, a graph input."""
    inner_then = branch("inner_then", [n("Mul", ["t", "y"], ["it"])], [vi("it", [3, 4])])
    inner_else = branch("inner_else", [n("Neg", ["t"], ["ie"])], [vi("ie", [3, 4])])
    then_b = branch("then", [
        n("Add", ["x", "y"], ["t"]),
        n("If", ["c2"], ["tt"], then_branch=inner_then, else_branch=inner_else),
        n("Constant", [], ["seven"], value=helper.make_tensor("v", I64, [2], [7, 7])),
    ], [vi("tt", [3, 4]), vi("seven", [2], I64)])
    else_b = branch("else", [
        n("Sub", ["x", "y"], ["d"]),
        n("Mul", ["d", "two"], ["e"]),
        n("Shape", ["x"], ["xs"]),
    ], [vi("e", [3, 4]), vi("xs", [2], I64)], [init("two", np.array(2, np.float32))])
    nodes = [n("If", ["cond"], ["out", "shp"], then_branch=then_b, else_branch=else_b)]
    return model(nodes, [vi("cond", [], BOOL), vi("c2", [], BOOL), vi("x", [3, 4]),
                         vi("y", [3, 4])],
                 [vi("out", [3, 4]), vi("shp", [2], I64)])


def gen_if_runtime(w):
    m = if_runtime_model()
    for cond, c2 in ((True, True), (True, False), (False, True)):
        x, y = w.f32(3, 4), w.f32(3, 4)
        if cond:
            out = (x + y) * y if c2 else -(x + y)
            shp = np.array([7, 7], np.int64)
        else:
            out = (x - y) * np.float32(2)
            shp = np.array([3, 4], np.int64)
        w.save("if_runtime_%d%d" % (cond, c2), m,
               [np.array(cond), np.array(c2), x, y], [out.astype(np.float32), shp])


def gen_if_guard(w):
    """torchvision's batched_nms guard on the boxes scoring above 0.5
    (Compress: a bounded selection): Shape -> ReduceProd -> Equal 0 decides
    at run time between an empty keep list and NonMaxSuppression of the
    selection; then the first two kept (Slice of the bounded result) and
    their scores (Gather)."""
    then_b = branch("then", [
        n("Constant", [], ["empty"], value=helper.make_tensor("v", I64, [0], [])),
    ], [vi("empty", [0], I64)])
    else_b = branch("else", [
        n("Unsqueeze", ["sel_boxes", "ax0"], ["b3"]),
        n("Unsqueeze", ["sel_scores", "ax0"], ["s2"]),
        n("Unsqueeze", ["s2", "ax0"], ["s3"]),
        n("NonMaxSuppression", ["b3", "s3", "max_out", "iou"], ["sel"]),
        n("Gather", ["sel", "two"], ["col"], axis=1),
        n("Squeeze", ["col", "ax1"], ["keep"]),
    ], [vi("keep", ["k"], I64)])
    nodes = [
        n("Greater", ["scores", "half"], ["mask"]),
        n("Compress", ["boxes", "mask"], ["sel_boxes"], axis=0),
        n("Compress", ["scores", "mask"], ["sel_scores"], axis=0),
        n("Shape", ["sel_boxes"], ["shp"]),
        n("ReduceProd", ["shp"], ["numel"], keepdims=0),
        n("Equal", ["numel", "zero"], ["none"]),
        n("If", ["none"], ["kept"], then_branch=then_b, else_branch=else_b),
        n("Slice", ["kept", "s0", "s2", "ax0"], ["top"]),
        n("Gather", ["sel_scores", "top"], ["top_scores"], axis=0),
    ]
    m = model(nodes, [vi("boxes", [8, 4]), vi("scores", [8])],
              [vi("kept", ["k"], I64), vi("top", ["t"], I64), vi("top_scores", ["t"])],
              [init("half", np.array(0.5, np.float32)),
               init("zero", np.array(0, np.int64)),
               init("ax0", np.array([0], np.int64)),
               init("ax1", np.array([1], np.int64)),
               init("two", np.array([2], np.int64)),
               init("s0", np.array([0], np.int64)),
               init("s2", np.array([2], np.int64)),
               init("max_out", np.array([5], np.int64)),
               init("iou", np.array([0.3], np.float32))])
    for tag, hi in (("some", 1.0), ("none", 0.5)):
        boxes = w.rng.uniform(0, 4, size=(8, 4)).astype(np.float32)
        scores = w.rng.uniform(0, hi, size=8).astype(np.float32)
        mask = scores > np.float32(0.5)
        sb, ss = boxes[mask], scores[mask]
        kept = nms(sb, ss, 5, np.float64(np.float32(0.3))) if mask.any() \
            else np.zeros(0, np.int64)
        top = kept[:2]
        w.save("if_guard_" + tag, m, [boxes, scores], [kept, top, ss[top]])


def gen_if_reads_conv(w):
    """A Conv whose output feeds a BatchNormalization and is read inside an
    If branch: the BatchNormalization must not fold into the Conv (the
    branch needs the Conv's own output)."""
    x = w.f32(1, 2, 4, 4)
    wt, b = w.f32(3, 2, 3, 3), w.f32(3)
    s, bb, mean = w.f32(3), w.f32(3), w.f32(3)
    var = w.f32(3, lo=0.5, hi=1.5)
    then_b = branch("then", [n("Relu", ["c"], ["r"])], [vi("r", [1, 3, 4, 4])])
    else_b = branch("else", [n("Neg", ["c"], ["ng"])], [vi("ng", [1, 3, 4, 4])])
    nodes = [
        n("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
        n("BatchNormalization", ["c", "s", "bb", "mean", "var"], ["y"]),
        n("If", ["cond"], ["z"], then_branch=then_b, else_branch=else_b),
    ]
    m = model(nodes, [vi("x", [1, 2, 4, 4]), vi("cond", [], BOOL)],
              [vi("y", [1, 3, 4, 4]), vi("z", [1, 3, 4, 4])],
              [init("w", wt), init("b", b), init("s", s), init("bb", bb),
               init("mean", mean), init("var", var)])
    c = conv2d(x, wt, b, 1)
    y = batchnorm(c, s, bb, mean, var, 1e-5)
    w.save("if_reads_conv", m, [x, np.array(False)],
           [y.astype(np.float32), (-c).astype(np.float32)])


def gen_if_guarded_gather(w):
    """If idx >= 4 (past x's end) then [-1] else x[idx]: Gather with the
    index out of range sits in the untaken branch, which must not run."""
    then_b = branch("then", [
        n("Constant", [], ["none"], value=helper.make_tensor("v", F32, [1], [-1.0])),
    ], [vi("none", [1])])
    else_b = branch("else", [n("Gather", ["x", "idx"], ["g"], axis=0)], [vi("g", [1])])
    nodes = [
        n("GreaterOrEqual", ["idx", "four"], ["past"]),
        n("Squeeze", ["past", "ax0"], ["cond"]),
        n("If", ["cond"], ["y"], then_branch=then_b, else_branch=else_b),
    ]
    m = model(nodes, [vi("x", [4]), vi("idx", [1], I64)], [vi("y", [1])],
              [init("four", np.array([4], np.int64)), init("ax0", np.array([0], np.int64))])
    x = w.f32(4)
    w.save("if_gather_past_end", m, [x, np.array([7], np.int64)],
           [np.array([-1.0], np.float32)])
    w.save("if_gather_inside", m, [x, np.array([2], np.int64)], [x[2:3]])


def gen_if_squeeze_guard(w):
    """The exporter's guard around squeezing a data-dependent [<=6, 1]
    (torchvision's MultiScaleRoIAlign): If(Shape(v)[1] == 1, Squeeze(v, 1),
    Identity(v)). Shape(v)[1] is a static dim of v, so the condition folds
    and the Squeeze branch is inlined (the branches' ranks differ)."""
    then_b = branch("then", [n("Squeeze", ["v", "ax1"], ["sq"])], [vi("sq", ["k"], I64)])
    else_b = branch("else", [n("Identity", ["v"], ["id"])], [vi("id", ["k", 1], I64)])
    nodes = [
        n("Greater", ["x", "zero"], ["mask"]),
        n("NonZero", ["mask"], ["nz"]),                  # [1, <=6]
        n("Transpose", ["nz"], ["v"], perm=[1, 0]),      # [<=6, 1]
        n("Shape", ["v"], ["shp"]),
        n("Gather", ["shp", "one"], ["cols"], axis=0),
        n("Equal", ["cols", "one"], ["cond"]),
        n("If", ["cond"], ["idx"], then_branch=then_b, else_branch=else_b),
    ]
    m = model(nodes, [vi("x", [6])], [vi("idx", ["k"], I64)],
              [init("zero", np.array(0, np.float32)), init("one", np.array(1, np.int64)),
               init("ax1", np.array([1], np.int64))])
    x = w.f32(6)
    w.save("if_squeeze_guard", m, [x], [np.nonzero(x > 0)[0].astype(np.int64)])


def gen_reshape_runtime_dim(w):
    """Reshape of a bounded [<=6, 2] to [Shape(v)[0], 1, 2], the shape built
    as exporters do (Concat of Unsqueeze(Gather(Shape(v), 0)) and constants):
    one entry known only at run time becomes -1 (RetinaNet's head)."""
    nodes = [
        n("Greater", ["x", "zero"], ["mask"]),
        n("NonZero", ["mask"], ["nz"]),                  # [2, <=6]
        n("Transpose", ["nz"], ["v"], perm=[1, 0]),      # [<=6, 2]
        n("Shape", ["v"], ["shp"]),
        n("Gather", ["shp", "zero_i"], ["rows"], axis=0),
        n("Unsqueeze", ["rows", "ax0"], ["rows1"]),
        n("Concat", ["rows1", "one_two"], ["target"], axis=0),
        n("Reshape", ["v", "target"], ["y"]),
    ]
    m = model(nodes, [vi("x", [2, 3])], [vi("y", ["k", 1, 2], I64)],
              [init("zero", np.array(0, np.float32)), init("zero_i", np.array(0, np.int64)),
               init("ax0", np.array([0], np.int64)),
               init("one_two", np.array([1, 2], np.int64))])
    x = w.f32(2, 3)
    v = np.array(np.nonzero(x > 0), np.int64).T
    w.save("reshape_runtime_dim", m, [x], [v.reshape(-1, 1, 2)])


def gen_if_refused(w):
    """Branches of different ranks on a run-time condition: refused,
    naming the If node."""
    then_b = branch("then", [n("Relu", ["x"], ["r"])], [vi("r", [3])])
    else_b = branch("else", [n("Unsqueeze", ["x", "ax"], ["u"])], [vi("u", [3, 1])])
    nodes = [n("If", ["cond"], ["out"], then_branch=then_b, else_branch=else_b,
               name="rank_mismatch")]
    m = model(nodes, [vi("cond", [], BOOL), vi("x", [3])], [vi("out", None)],
              [init("ax", np.array([1], np.int64))])
    w.save("if_refused", m)


def generate(w):
    gen_if_const(w)
    gen_if_runtime(w)
    gen_if_guard(w)
    gen_if_reads_conv(w)
    gen_if_guarded_gather(w)
    gen_if_squeeze_guard(w)
    gen_reshape_runtime_dim(w)
    gen_if_refused(w)
