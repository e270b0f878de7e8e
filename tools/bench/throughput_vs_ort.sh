#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Throughput on every core of this machine, same run, alternating: vkpipe's
# best configuration as `vkpipe-bench --policy auto` chooses it (with
# --refine, the default, with --no-refine, and with --replicas auto: copies
# of the stages as candidates too) against ONNX Runtime's best
# configuration on the same cores: one session with 2 intra-op threads, or
# two one-thread sessions in two processes fed concurrently (issue 15; the
# numbers are in docs/benchmarks.md). A benchmark, not a test.
#
#   [FRAMES=N] tools/bench/throughput_vs_ort.sh ZOO_DIR [ROUNDS] [MODEL...]
#
# ZOO_DIR is a tools/zoo/export_zoo.py folder (MODEL/model.onnx and its
# input_*.npy); onnxruntime-node under $NODE_PATH (default /tmp/ort/node_modules:
# (cd /tmp/ort && npm install --ignore-scripts onnxruntime-node)). Written for
# two cores; ORT's per-run times are read with three decimals (models under
# ~0.02 ms per frame are compared coarsely). The ratio is the best of ours
# over the best of ORT's.
set -euo pipefail
zoo=${1:?usage: $0 ZOO_DIR [ROUNDS] [MODEL...]}
rounds=${2:-2}
frames=${FRAMES:-300}  # frames (and ORT runs) per measurement
shift $(( $# >= 2 ? 2 : 1 ))
models=("$@")
[ ${#models[@]} -gt 0 ] || models=(squeezenet1_1 mobilenet_v2 resnet18)
root=$(cd "$(dirname "$0")/../.." && pwd)
bench=${VKPIPE_BENCH:-$root/build/tools/vkpipe-bench}
export NODE_PATH=${NODE_PATH:-/tmp/ort/node_modules}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fps_of() { python3 -c "import json,sys; print('%.1f' % json.load(sys.stdin)['pipelined']['throughput_fps'])"; }
median_ms() { grep -o 'median [0-9.]* ms' "$1" | head -1 | awk '{print $2}'; }
printf '%-5s %-16s %9s %9s %9s %9s %9s %7s\n' round model refine no-refine copies 'ORT 2T' \
  'ORT 2x1T' ratio
for round in $(seq 1 "$rounds"); do
  for m in "${models[@]}"; do
    dir=$zoo/$m
    ours=$("$bench" "$dir/model.onnx" --policy auto --frames "$frames" --no-single --json | fps_of)
    plain=$("$bench" "$dir/model.onnx" --policy auto --frames "$frames" --no-single --no-refine --json | fps_of)
    copies=$("$bench" "$dir/model.onnx" --policy auto --replicas auto --frames "$frames" --no-single \
             --json | fps_of)
    node "$root/tools/bench/ort_latency.js" "$dir/model.onnx" "$dir" 2 "$frames" > "$tmp/two" 2>&1
    node "$root/tools/bench/ort_latency.js" "$dir/model.onnx" "$dir" 1 "$frames" > "$tmp/a" 2>&1 &
    node "$root/tools/bench/ort_latency.js" "$dir/model.onnx" "$dir" 1 "$frames" > "$tmp/b" 2>&1
    wait
    python3 - "$round" "$m" "$ours" "$plain" "$copies" "$(median_ms "$tmp/two")" \
        "$(median_ms "$tmp/a")" "$(median_ms "$tmp/b")" <<'PY'
import sys
r, m, ours, plain, copies, two, a, b = sys.argv[1:]
t2, pair = 1000 / float(two), 1000 / float(a) + 1000 / float(b)
best = max(float(ours), float(plain), float(copies))
print('%-5s %-16s %9s %9s %9s %9.1f %9.1f %6.2fx' % (r, m, ours, plain, copies, t2, pair,
                                                     best / max(t2, pair)))
PY
  done
done
