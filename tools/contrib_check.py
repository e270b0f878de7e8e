#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Second implementation for the com.microsoft contrib-op models: runs every
model of tests/graph/onnx/models_contrib.py through ONNX Runtime (onnxruntime-node,
through tools/zoo/ort_run.js) and through 'vkpipe run' on each target, and
prints the largest absolute difference per model and op: vkpipe vs ORT, and
the test suite's NumPy expectation vs ORT. ORT is never a dependency of the
test suite; this script is run by hand:

  (mkdir -p /tmp/ort && cd /tmp/ort && npm install --ignore-scripts onnxruntime-node)
  /usr/bin/python3 tools/contrib_check.py --vkpipe build/tools/vkpipe \\
      [--targets ref,cpu] [--out /tmp/contrib_check] [--seed N]
"""
import argparse
import json
import os
import re
import subprocess
import sys

import numpy as np
from onnx import numpy_helper, TensorProto

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "onnx"))

import gen_models  # noqa: E402
import models_contrib  # noqa: E402


def safe_name(name):
    return re.sub(r"[^A-Za-z0-9._-]", "_", name)


def read_pb(path):
    t = TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vkpipe", required=True)
    ap.add_argument("--targets", default="ref,cpu")
    ap.add_argument("--out", default="/tmp/contrib_check")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--node-path", default="/tmp/ort/node_modules")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    w = gen_models.Writer(args.out, args.seed)
    models_contrib.generate(w)
    import onnx
    manifest = {"models": []}
    for name in models_contrib.MODELS:
        m = onnx.load(os.path.join(args.out, name + ".onnx"))
        inits = {i.name for i in m.graph.initializer}
        inputs = []
        for k, vi in enumerate(i for i in m.graph.input if i.name not in inits):
            f = "%s.in_%d.npy" % (name, k)
            np.save(os.path.join(args.out, f), read_pb(os.path.join(args.out,
                                                                   "%s.input_%d.pb" % (name, k))))
            inputs.append({"name": vi.name, "file": f})
        manifest["models"].append({"name": name, "file": name + ".onnx", "dir": name,
                                   "status": "ok", "inputs": inputs,
                                   "outputs": [o.name for o in m.graph.output]})
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump(manifest, f)
    env = dict(os.environ, NODE_PATH=args.node_path)
    subprocess.run(["node", os.path.join(HERE, "zoo", "ort_run.js"), args.out], env=env,
                   check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(args.out, "ort.json")) as f:
        ort = json.load(f)["models"]
    targets = [t for t in args.targets.split(",") if t]
    print("%-34s %-34s %12s %s" % ("model", "op", "numpy-ort",
                                   " ".join("%12s" % (t + "-ort") for t in targets)))
    worst = {}
    for model in manifest["models"]:
        name, op = model["name"], models_contrib.MODELS[model["name"]]
        r = ort.get(name, {})
        if r.get("status") != "ok":
            print("%-34s %-34s ORT failed: %s" % (name, op, r.get("reason")))
            continue
        ort_out = [np.load(os.path.join(args.out, r["outputs"][o]["file"]))
                   for o in model["outputs"]]
        expect = [read_pb(os.path.join(args.out, "%s.output_%d.pb" % (name, k)))
                  for k in range(len(ort_out))]
        errs = [max(float(np.abs(e.astype(np.float64) - o).max()) for e, o in zip(expect, ort_out))]
        for t in targets:
            out_dir = os.path.join(args.out, name, "vkpipe-" + t)
            argv = [args.vkpipe, "run", os.path.join(args.out, name + ".onnx"), "--target", t,
                    "--output-dir", out_dir]
            for i in model["inputs"]:
                argv += ["--input", "%s=%s" % (i["name"], os.path.join(args.out, i["file"]))]
            p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            if p.returncode != 0:
                errs.append(float("nan"))
                print("  %s on %s failed: %s" % (name, t, p.stderr.strip().splitlines()[-1:]))
                continue
            got = [np.load(os.path.join(out_dir, safe_name(o) + ".npy")) for o in model["outputs"]]
            errs.append(max(float(np.abs(g.astype(np.float64) - o).max())
                            for g, o in zip(got, ort_out)))
        print("%-34s %-34s %s" % (name, op, " ".join("%12.3g" % e for e in errs)))
        worst[op] = [max(a, b) for a, b in zip(worst.get(op, errs), errs)]
    print("\nper op, largest absolute difference from ONNX Runtime %s:" %
          json.load(open(os.path.join(args.out, "ort.json")))["onnxruntime"])
    for op, errs in sorted(worst.items()):
        print("%-34s %s" % (op, " ".join("%12.3g" % e for e in errs)))


if __name__ == "__main__":
    main()
