#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Export a torchvision model on the spot, run it with vkpipe, compare with
PyTorch (and ONNX Runtime when installed).

    PYTHONPATH=build/python /usr/bin/python3 examples/python/torchvision_export.py \\
        --model resnet18 --batch 1 --size 64

Needs PyTorch and torchvision (Debian: python3-torch, python3-torchvision);
the weights are random (no download), which is enough to compare backends.
Without them it says so and exits."""
import argparse
import os
import sys
import tempfile

import numpy as np

import vkpipe


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="resnet18")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--policy", default="auto")
    a = ap.parse_args()
    try:
        import torch
        import torchvision
    except ImportError:
        print("torchvision_export: PyTorch/torchvision not installed; skipping")
        return 0

    net = getattr(torchvision.models, a.model)(weights=None).eval()
    x = torch.randn(a.batch, 3, a.size, a.size)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, a.model + ".onnx")
        torch.onnx.export(net, x, path, input_names=["x"], output_names=["y"],
                          dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}},
                          opset_version=13)
        model = vkpipe.load(path, dims={"batch": a.batch})
        with model.pipeline(policy=a.policy) as pipe:
            print(pipe.plan)
            y = pipe.infer(x=x)["y"]            # a torch tensor goes in via DLPack
        with torch.no_grad():
            want = net(x).numpy()
        print(f"vkpipe vs PyTorch: max |diff| = {np.abs(y - want).max():.2e}")
        try:
            import onnxruntime as ort
        except ImportError:
            print("onnxruntime not installed: skipping that comparison")
        else:
            sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
            ref = sess.run(None, {"x": x.numpy()})[0]
            print(f"vkpipe vs ONNX Runtime: max |diff| = {np.abs(y - ref).max():.2e}")
        return 0 if np.allclose(y, want, rtol=1e-3, atol=1e-3) else 1


if __name__ == "__main__":
    sys.exit(main())
