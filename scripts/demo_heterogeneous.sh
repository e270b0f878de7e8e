#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# A second example, about heterogeneity rather than speed: the shipped small
# CNN cut by hand into two stages, its first convolution block on the Vulkan
# device and the rest on the CPU, run as a pipeline. Without a GPU the Vulkan
# device is Mesa's lavapipe, a software rasteriser on the same CPU cores, so
# this is slower than the CPU alone: it shows the mechanics (placement by
# --assign, staging rings, timeline semaphores, per-stage load), not a
# speed-up. scripts/demo.sh is the main job.
#
#   scripts/demo_heterogeneous.sh [vkpipe-bench options...]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
exec build/tools/vkpipe-bench examples/small_cnn.onnx --stages 2 \
  --assign 'block1*=vulkan' --assign 'pool1=vulkan' \
  --frames 200 --warmup 20 "$@"
