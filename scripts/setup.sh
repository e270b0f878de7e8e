#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Installs the Debian 12 packages vkpipe needs (only those missing), then
# configures and builds into ./build. Idempotent: with everything in place it
# only runs an incremental build.
#
#   scripts/setup.sh [--tests] [--build-dir DIR] [-- extra cmake args]
#
# --tests also installs what only the test suite uses: Debian's PyTorch and
# torchvision, from which tests/python/test_torchvision.py exports real
# models at test time.
set -euo pipefail

cd "$(dirname "$0")/.."
build_dir=build
with_tests=0
cmake_args=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build-dir) build_dir="$2"; shift 2 ;;
    --tests) with_tests=1; shift ;;
    --) shift; cmake_args+=("$@"); break ;;
    -h|--help) sed -n '3,12p' "$0"; exit 0 ;;
    *) echo "setup.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done

packages=(
  build-essential cmake pkg-config git
  libcjson-dev libdlpack-dev libcriterion-dev libsodium-dev
  libvulkan-dev mesa-vulkan-drivers vulkan-validationlayers vulkan-tools
  glslc libshaderc-dev spirv-tools
  protobuf-c-compiler libprotobuf-c-dev libonnx-dev libonnx-testdata
  python3 python3-dev python3-numpy python3-onnx python3-pytest
  libopenblas-dev
  openmpi-bin libopenmpi-dev
)
if [[ $with_tests == 1 ]]; then
  packages+=(python3-torch python3-torchvision)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [[ ${#missing[@]} -gt 0 ]]; then
  echo "setup: installing ${missing[*]}"
  sudo=""
  if [[ $(id -u) -ne 0 ]]; then
    if command -v sudo >/dev/null; then sudo="sudo"; else
      echo "setup: need root (or sudo) to install: ${missing[*]}" >&2; exit 1
    fi
  fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

jobs=$(nproc 2>/dev/null || echo 2)
# Configure every time: cheap when nothing changed, and it repairs a build
# directory whose earlier configure failed (a cache without a build system).
mkdir -p "$build_dir"
if [[ ! -f "$build_dir/CMakeCache.txt" ]]; then
  cmake_args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "${cmake_args[@]}")
fi
cmake -S . -B "$build_dir" "${cmake_args[@]}" >"$build_dir/configure.log" 2>&1 ||
  { cat "$build_dir/configure.log" >&2; exit 1; }
log="$build_dir/build.log"
if ! cmake --build "$build_dir" -j "$jobs" >"$log" 2>&1; then
  grep -E "error|Error" -A4 "$log" | head -60 >&2 || true
  echo "setup: build failed (full log: $log)" >&2
  exit 1
fi
echo "setup: built in $build_dir"
