#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Runs the soak program (tests/soak/soak.c) for a long time: pipelines made
# and destroyed (some with frames in flight), random timeouts, every result
# checked exactly once and in order, resident memory printed every minute
# and checked flat at the end.
#
#   scripts/soak.sh [--build-dir DIR] [--seconds N] [-- soak args]
#
# Default: build/, 3600 s, the example MLP in the mix.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=build
seconds=3600
extra=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build-dir) build_dir="$2"; shift 2 ;;
    --seconds) seconds="$2"; shift 2 ;;
    --) shift; extra+=("$@"); break ;;
    -h|--help) sed -n '3,12p' "$0"; exit 0 ;;
    *) echo "soak.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
cmake --build "$build_dir" --target vkp_soak >/dev/null
exec "$build_dir/tests/soak/vkp_soak" --seconds "$seconds" \
     --model examples/mlp.json "${extra[@]}"
