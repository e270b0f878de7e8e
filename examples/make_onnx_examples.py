#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the shipped ONNX examples with a fixed seed.

  examples/small_cnn.onnx  a PyTorch-style CNN (Conv, BatchNormalization, Relu,
                           MaxPool, Add, GlobalAveragePool, Flatten, Gemm,
                           Softmax) on a 1x3x32x32 image
  examples/mlp.onnx        a three-layer perceptron (MatMul, Add, Relu,
                           Softmax) on a 1x256 vector

Run with Debian's python3 (python3-onnx, python3-numpy):
  /usr/bin/python3 examples/make_onnx_examples.py [OUT_DIR]
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 13


def _init(name, array):
    return numpy_helper.from_array(np.asarray(array, dtype=np.float32), name)


def small_cnn(rng):
    nodes, inits = [], []

    def conv_bn_relu(x, cin, cout, tag):
        w = rng.standard_normal((cout, cin, 3, 3)) * np.sqrt(2.0 / (cin * 9))
        inits.append(_init(f"{tag}.weight", w))
        inits.append(_init(f"{tag}.bias", rng.standard_normal(cout) * 0.05))
        nodes.append(helper.make_node(
            "Conv", [x, f"{tag}.weight", f"{tag}.bias"], [f"{tag}.conv"],
            name=f"{tag}.conv", kernel_shape=[3, 3], pads=[1, 1, 1, 1]))
        inits.append(_init(f"{tag}.bn.scale", 1.0 + 0.1 * rng.standard_normal(cout)))
        inits.append(_init(f"{tag}.bn.bias", 0.1 * rng.standard_normal(cout)))
        inits.append(_init(f"{tag}.bn.mean", 0.1 * rng.standard_normal(cout)))
        inits.append(_init(f"{tag}.bn.var", rng.uniform(0.5, 1.5, cout)))
        nodes.append(helper.make_node(
            "BatchNormalization",
            [f"{tag}.conv", f"{tag}.bn.scale", f"{tag}.bn.bias",
             f"{tag}.bn.mean", f"{tag}.bn.var"],
            [f"{tag}.bn"], name=f"{tag}.bn", epsilon=1e-5))
        nodes.append(helper.make_node("Relu", [f"{tag}.bn"], [f"{tag}.relu"],
                                      name=f"{tag}.relu"))
        return f"{tag}.relu"

    h = conv_bn_relu("image", 3, 16, "block1")
    nodes.append(helper.make_node("MaxPool", [h], ["pool1"], name="pool1",
                                  kernel_shape=[2, 2], strides=[2, 2]))
    h = conv_bn_relu("pool1", 16, 32, "block2")
    # A residual block: two convs and a skip connection.
    r = conv_bn_relu(h, 32, 32, "res.a")
    r = conv_bn_relu(r, 32, 32, "res.b")
    nodes.append(helper.make_node("Add", [h, r], ["res.sum"], name="res.add"))
    nodes.append(helper.make_node("MaxPool", ["res.sum"], ["pool2"], name="pool2",
                                  kernel_shape=[2, 2], strides=[2, 2]))
    h = conv_bn_relu("pool2", 32, 64, "block3")
    nodes.append(helper.make_node("GlobalAveragePool", [h], ["gap"], name="gap"))
    nodes.append(helper.make_node("Flatten", ["gap"], ["flat"], name="flatten",
                                  axis=1))
    inits.append(_init("fc.weight", rng.standard_normal((10, 64)) * 0.1))
    inits.append(_init("fc.bias", rng.standard_normal(10) * 0.01))
    nodes.append(helper.make_node("Gemm", ["flat", "fc.weight", "fc.bias"],
                                  ["logits"], name="fc", transB=1))
    nodes.append(helper.make_node("Softmax", ["logits"], ["probs"],
                                  name="softmax", axis=1))
    graph = helper.make_graph(
        nodes, "small_cnn",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, 32, 32])],
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT, [1, 10])],
        inits)
    return graph


def mlp(rng):
    nodes, inits = [], []
    sizes = [256, 512, 512, 10]
    x = "features"
    for i in range(3):
        w = rng.standard_normal((sizes[i], sizes[i + 1])) * np.sqrt(2.0 / sizes[i])
        inits.append(_init(f"fc{i + 1}.weight", w))
        inits.append(_init(f"fc{i + 1}.bias", rng.standard_normal(sizes[i + 1]) * 0.01))
        nodes.append(helper.make_node("MatMul", [x, f"fc{i + 1}.weight"],
                                      [f"fc{i + 1}.mm"], name=f"fc{i + 1}.matmul"))
        nodes.append(helper.make_node("Add", [f"fc{i + 1}.mm", f"fc{i + 1}.bias"],
                                      [f"fc{i + 1}.out"], name=f"fc{i + 1}.bias"))
        x = f"fc{i + 1}.out"
        if i < 2:
            nodes.append(helper.make_node("Relu", [x], [f"act{i + 1}"],
                                          name=f"act{i + 1}"))
            x = f"act{i + 1}"
    nodes.append(helper.make_node("Softmax", [x], ["probs"], name="softmax",
                                  axis=-1))
    return helper.make_graph(
        nodes, "mlp",
        [helper.make_tensor_value_info("features", TensorProto.FLOAT, [1, 256])],
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT, [1, 10])],
        inits)


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    rng = np.random.default_rng(20261122)
    for name, build in (("small_cnn", small_cnn), ("mlp", mlp)):
        model = helper.make_model(build(rng), producer_name="vkpipe-examples",
                                  opset_imports=[helper.make_opsetid("", OPSET)])
        model.ir_version = 8
        onnx.checker.check_model(model)
        path = os.path.join(out_dir, f"{name}.onnx")
        onnx.save(model, path)
        print(f"wrote {path} ({os.path.getsize(path)} bytes)")


if __name__ == "__main__":
    main()
