#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Sets up (scripts/setup.sh), then benchmarks the shipped small CNN split into
# a CPU stage and a Vulkan stage (lavapipe when there is no GPU): sequential
# vs pipelined throughput, latency percentiles and per-stage load.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
exec build/tools/vkpipe-bench examples/small_cnn.onnx --policy auto --stages 2 \
  --frames 200 --warmup 20 "$@"
