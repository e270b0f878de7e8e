#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Sets up (scripts/setup.sh), then benchmarks the shipped small CNN as a
# two-stage pipeline: its first convolution block on the Vulkan device
# (lavapipe when there is no GPU), the rest on the CPU. Prints sequential vs
# pipelined throughput, latency percentiles, per-stage load, the bottleneck
# bound, and the whole model on each single target for comparison.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
exec build/tools/vkpipe-bench examples/small_cnn.onnx --stages 2 \
  --assign 'block1*=vulkan' --assign 'pool1=vulkan' \
  --frames 200 --warmup 20 "$@"
