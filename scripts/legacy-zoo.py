#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Old-opset versions of real exports: torchvision models (random weights)
exported at opset 9, taken down to opsets 6, 5, 3 and 1 with ONNX's version
converter, run with `vkpipe run` and compared with PyTorch.

  scripts/legacy-zoo.py BUILD_DIR OUT_DIR [--target cpu|ref|vulkan]

Prints one line per model and opset: the largest absolute error and the
output's scale, or why it did not run. Not part of ctest (it exports full
models); docs/onnx.md "Legacy opsets" quotes its results.
"""
import argparse
import glob
import os
import subprocess

import numpy as np
import onnx
import torch
import torchvision
from onnx import version_converter

MODELS = {
    "squeezenet1_0": lambda: torchvision.models.squeezenet1_0(),
    "resnet18": lambda: torchvision.models.resnet18(),
    "googlenet": lambda: torchvision.models.googlenet(aux_logits=False, init_weights=True),
    "mobilenet_v2": lambda: torchvision.models.mobilenet_v2(),
}
OPSETS = (6, 5, 3, 1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("out")
    ap.add_argument("--target", default="cpu")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    vkpipe = os.path.join(args.build, "tools", "vkpipe")
    torch.manual_seed(0)
    x = torch.randn(1, 3, 64, 64)
    xpath = os.path.join(args.out, "x.npy")
    np.save(xpath, x.numpy())
    for name, make in MODELS.items():
        m = make().eval()
        with torch.no_grad():
            want = m(x).numpy()
        base = os.path.join(args.out, name + "_op9.onnx")
        torch.onnx.export(m, x, base, opset_version=9)
        for opset in OPSETS:
            try:
                down = version_converter.convert_version(onnx.load(base), opset)
            except Exception as e:  # the converter lacks an adapter
                print("%-14s opset %d  not converted: %s" % (name, opset,
                                                             str(e).splitlines()[0][:100]))
                continue
            path = os.path.join(args.out, "%s_op%d.onnx" % (name, opset))
            onnx.save(down, path)
            run_dir = path + ".out"
            r = subprocess.run([vkpipe, "run", path, "--input", xpath, "--output-dir",
                                run_dir, "--target", args.target],
                               capture_output=True, text=True)
            outs = glob.glob(os.path.join(run_dir, "*.npy"))
            if r.returncode or not outs:
                print("%-14s opset %d  failed: %s" % (name, opset,
                                                      (r.stderr or r.stdout)[-300:]))
                continue
            got = np.load(outs[0])
            print("%-14s opset %d  max abs error %.2e (output scale %.2e)"
                  % (name, opset, np.abs(got - want).max(), np.abs(want).max()))


if __name__ == "__main__":
    main()
