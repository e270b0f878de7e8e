#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# Writes ResNet-18 and MobileNetV2 (batch 1, 3x224x224, random weights: nothing
# is downloaded) as ONNX files for bench_cpu_model and ort_latency.js, plus a
# random input x.npy. Needs Debian's python3-torch and python3-torchvision.
#
#   /usr/bin/python3 tools/bench/export_torchvision.py OUT_DIR
import os
import sys

import numpy as np
import torch
import torchvision


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    models = [("resnet18", torchvision.models.resnet18),
              ("mobilenet_v2", torchvision.models.mobilenet_v2)]
    for name, ctor in models:
        model = ctor().eval()
        x = torch.randn(1, 3, 224, 224)
        torch.onnx.export(model, x, os.path.join(out, name + ".onnx"),
                          opset_version=13, input_names=["input"],
                          output_names=["output"])
    np.random.seed(1)
    np.save(os.path.join(out, "x.npy"),
            np.random.randn(1, 3, 224, 224).astype(np.float32))


if __name__ == "__main__":
    main()
