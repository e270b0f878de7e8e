#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Fused against unfused attention on the cpu target.

Exports multi-head scaled-dot-product attention the way model code writes it
(q @ k^T * d^-0.5, softmax, @ v; PyTorch's exporter, random inputs, nothing
downloaded) at a few shapes, then times each model with vkpipe-bench as one
cpu stage, imported with the attention fusion (graph/onnx_fuse.c) and with
--no-fuse, alternating the two so that a noisy machine hurts both alike. Prints
the best per-frame stage time of each side over the rounds and the ratio.

    /usr/bin/python3 tools/bench/bench_attention.py [--bench build/tools/vkpipe-bench]
        [--rounds 5] [--frames 30] [--out /tmp/vkpipe-attention]

Needs Debian's python3-torch. A benchmark, not a test: nothing here asserts a time.
"""
import argparse
import json
import os
import subprocess
import sys

import torch

SHAPES = [  # name, batch, heads, sequence length, head size
    ("vit_b16", 1, 12, 197, 64),
    ("bert_base_128", 1, 12, 128, 64),
    ("long_1024", 1, 8, 1024, 64),
]


class Attention(torch.nn.Module):
    def forward(self, q, k, v):
        s = (q @ k.transpose(-2, -1)) * (q.shape[-1] ** -0.5)
        return s.softmax(-1) @ v


def export(path, b, h, length, d):
    x = tuple(torch.randn(b, h, length, d) for _ in range(3))
    torch.onnx.export(Attention(), x, path, opset_version=17,
                      input_names=["q", "k", "v"], output_names=["y"])


def stage_ms(bench, model, frames, extra):
    cmd = [bench, model, "--policy", "cpu", "--stages", "1", "--frames",
           str(frames), "--no-single", "--json"] + extra
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)["stages"][0]["busy_ms"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bench", default="build/tools/vkpipe-bench")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--frames", type=int, default=30)
    ap.add_argument("--out", default="/tmp/vkpipe-attention")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    torch.manual_seed(0)
    print("| shape [B, H, L, D] | fused ms | unfused ms | unfused / fused |")
    print("|---|---:|---:|---:|")
    for name, b, h, length, d in SHAPES:
        path = os.path.join(a.out, name + ".onnx")
        export(path, b, h, length, d)
        fused, unfused = [], []
        for _ in range(a.rounds):
            fused.append(stage_ms(a.bench, path, a.frames, []))
            unfused.append(stage_ms(a.bench, path, a.frames, ["--no-fuse"]))
        f, u = min(fused), min(unfused)
        print(f"| {name} [{b}, {h}, {length}, {d}] | {f:.2f} | {u:.2f} | "
              f"{u / f:.2f}x |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
