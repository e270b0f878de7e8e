#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# The main job: sets up (scripts/setup.sh), writes ResNet-18 as ONNX (random
# weights; tools/bench/make_cnn.py, nothing downloaded), lets the partitioner
# choose the targets, the stages and the threads per stage from this
# machine's measured profile (the first run measures it, a few seconds, and
# caches it), and benchmarks the result: the pipelined throughput against the
# best single-target, single-stage run on this machine (the whole model on
# one target, with its best thread count and with one thread), both
# latencies (one frame alone, and with the rings full), per-stage load and
# the bottleneck bound. On a CPU-only machine the pipeline is CPU stages on
# separate cores; with a GPU the partitioner may give it work too.
#
#   scripts/demo.sh [--model mobilenet_v2] [vkpipe-bench options...]
#
# scripts/demo_heterogeneous.sh is the other example: one model split across
# the CPU and a Vulkan device by hand.
set -euo pipefail
cd "$(dirname "$0")/.."
model=resnet18
if [[ "${1:-}" == "--model" ]]; then model="$2"; shift 2; fi
scripts/setup.sh
mkdir -p build/demo
if [[ ! -f "build/demo/$model.onnx" ]]; then
  /usr/bin/python3 tools/bench/make_cnn.py build/demo --only "$model" >/dev/null
fi
exec build/tools/vkpipe-bench "build/demo/$model.onnx" --policy auto \
  --frames 60 --warmup 5 "$@"
