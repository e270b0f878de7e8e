#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# Writes ResNet-18 and MobileNetV2 as ONNX with seeded random weights, built
# with the onnx package alone (Debian's python3-onnx; no torch needed), for
# benchmarks and the demo. The graphs are what torchvision's models export to
# in inference mode: batch norm folded into the convolutions' weights and
# biases, ReLU / Clip(0, 6), the residual Adds, global average pooling, one
# Gemm. Input "input" 1x3x224x224 float32, output "logits" 1x1000.
#
#   /usr/bin/python3 tools/bench/make_cnn.py OUT_DIR [--only resnet18,mobilenet_v2]
#
# Writes OUT_DIR/<name>.onnx. The numbers are random (He-scaled, so
# activations stay in range); timing, not accuracy, is what they are for.
import argparse
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


class Builder:
    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.nodes = []
        self.inits = []
        self.count = 0

    def name(self, prefix):
        self.count += 1
        return f"{prefix}{self.count}"

    def const(self, prefix, array):
        n = self.name(prefix)
        self.inits.append(numpy_helper.from_array(array.astype(np.float32), n))
        return n

    def conv(self, x, cin, cout, k, stride=1, group=1, act="relu"):
        fan_in = cin // group * k * k
        w = self.rng.normal(0, np.sqrt(2.0 / fan_in) * 0.7, (cout, cin // group, k, k))
        b = self.rng.normal(0, 0.01, (cout,))
        y = self.name("conv")
        self.nodes.append(helper.make_node(
            "Conv", [x, self.const("w", w), self.const("b", b)], [y], name=y,
            kernel_shape=[k, k], strides=[stride, stride], pads=[k // 2] * 4,
            group=group))
        return self.act(y, act)

    def act(self, x, act):
        if act is None:
            return x
        y = self.name(act)
        if act == "relu":
            self.nodes.append(helper.make_node("Relu", [x], [y], name=y))
        else:  # relu6
            lo = self.const("lo", np.array(0.0))
            hi = self.const("hi", np.array(6.0))
            self.nodes.append(helper.make_node("Clip", [x, lo, hi], [y], name=y))
        return y

    def add(self, a, b, act=None):
        y = self.name("add")
        self.nodes.append(helper.make_node("Add", [a, b], [y], name=y))
        return self.act(y, act)

    def head(self, x, channels):
        p = self.name("gap")
        self.nodes.append(helper.make_node("GlobalAveragePool", [x], [p], name=p))
        f = self.name("flatten")
        self.nodes.append(helper.make_node("Flatten", [p], [f], name=f, axis=1))
        w = self.rng.normal(0, np.sqrt(1.0 / channels), (1000, channels))
        b = self.rng.normal(0, 0.01, (1000,))
        self.nodes.append(helper.make_node(
            "Gemm", [f, self.const("fc_w", w), self.const("fc_b", b)], ["logits"],
            name="fc", transB=1))

    def model(self, graph_name):
        graph = helper.make_graph(
            self.nodes, graph_name,
            [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 224, 224])],
            [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 1000])],
            self.inits)
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                              producer_name="vkpipe tools/bench/make_cnn.py")
        onnx.checker.check_model(m)
        return m


def resnet18():
    b = Builder(18)
    x = b.conv("input", 3, 64, 7, stride=2)
    y = b.name("maxpool")
    b.nodes.append(helper.make_node("MaxPool", [x], [y], name=y, kernel_shape=[3, 3],
                                    strides=[2, 2], pads=[1, 1, 1, 1]))
    x, cin = y, 64
    for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
        for block in range(2):
            s = stride if block == 0 else 1
            h = b.conv(x, cin, cout, 3, stride=s)
            h = b.conv(h, cout, cout, 3, act=None)
            short = b.conv(x, cin, cout, 1, stride=s, act=None) if (s != 1 or cin != cout) else x
            x, cin = b.add(h, short, act="relu"), cout
    b.head(x, 512)
    return b.model("resnet18")


def mobilenet_v2():
    b = Builder(2)
    x, cin = b.conv("input", 3, 32, 3, stride=2, act="relu6"), 32
    for t, c, n, s in ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                       (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)):
        for i in range(n):
            stride = s if i == 0 else 1
            hidden = cin * t
            h = b.conv(x, cin, hidden, 1, act="relu6") if t != 1 else x
            h = b.conv(h, hidden, hidden, 3, stride=stride, group=hidden, act="relu6")
            h = b.conv(h, hidden, c, 1, act=None)
            x = b.add(h, x) if stride == 1 and cin == c else h
            cin = c
    x = b.conv(x, cin, 1280, 1, act="relu6")
    b.head(x, 1280)
    return b.model("mobilenet_v2")


MODELS = {"resnet18": resnet18, "mobilenet_v2": mobilenet_v2}


def main():
    ap = argparse.ArgumentParser(description="ResNet-18 and MobileNetV2 as ONNX, random weights")
    ap.add_argument("out_dir")
    ap.add_argument("--only", default=",".join(MODELS))
    args = ap.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    for name in args.only.split(","):
        if name not in MODELS:
            sys.exit(f"make_cnn.py: unknown model '{name}' (known: {', '.join(MODELS)})")
        path = os.path.join(args.out_dir, f"{name}.onnx")
        onnx.save(MODELS[name](), path)
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
