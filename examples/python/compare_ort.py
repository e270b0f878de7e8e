#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Run an ONNX model with vkpipe on every available target and compare each
with the reference interpreter, and with ONNX Runtime when it is installed.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/compare_ort.py \\
        examples/small_cnn.onnx"""
import argparse
import sys

import numpy as np

import vkpipe


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model")
    a = ap.parse_args()
    model = vkpipe.load(a.model)
    rng = np.random.default_rng(0)
    inputs = {s.name: rng.standard_normal(s.shape).astype(s.dtype) for s in model.inputs}
    ref = model.run(inputs, target="ref")
    worst = 0.0
    for dev in vkpipe.devices():
        if not dev.available:
            print(f"{dev.target:<7} unavailable: {dev.reason}")
            continue
        with model.pipeline(policy=dev.target) as pipe:
            out = pipe.infer(inputs)
        diff = max(float(np.abs(out[k] - ref[k]).max()) for k in ref)
        worst = max(worst, diff)
        print(f"{dev.target:<7} max |diff| vs ref = {diff:.2e}")
    try:
        import onnxruntime as ort
    except ImportError:
        print("onnxruntime not installed: skipping that comparison")
    else:
        sess = ort.InferenceSession(a.model, providers=["CPUExecutionProvider"])
        names = [o.name for o in sess.get_outputs()]
        for name, value in zip(names, sess.run(None, inputs)):
            print(f"ort     max |diff| vs ref on '{name}' = {np.abs(value - ref[name]).max():.2e}")
    return 0 if worst < 1e-3 else 1


if __name__ == "__main__":
    sys.exit(main())
