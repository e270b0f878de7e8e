#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Resource failures are named for what they are: `vkpipe run` on cpu and on
# vulkan under a ladder of address-space limits (ulimit -v) either succeeds
# or fails with exit 1 and an error that names memory (out of memory, the
# limit, or the compiler's own out-of-memory line), never a crash and never a
# complaint about the input.
# usage: memory_limits.sh VKPIPE SOURCE_DIR SCRATCH
set -u
vkpipe=$1 src=$2 scratch=$3
rm -rf "$scratch" && mkdir -p "$scratch" || exit 1
python3 - "$scratch/x.npy" <<'PY' || exit 1
import struct, sys, random
# A float32 [1, 64] .npy written by hand: no NumPy needed.
header = "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 64), }"
header += " " * (63 - (10 + len(header)) % 64) + "\n"
with open(sys.argv[1], "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
    f.write(struct.pack("<64f", *[random.uniform(-1, 1) for _ in range(64)]))
PY
failures=0 named=0 passed=0
for target in cpu vulkan; do
  for kib in 60000 100000 200000 300000 400000 500000 700000 900000; do
    out=$(ulimit -v $kib; XDG_CACHE_HOME="$scratch/cache-$target-$kib" VKPIPE_PROFILE=default \
          "$vkpipe" run "$src/examples/mlp.json" --target $target --input x="$scratch/x.npy" \
          --output-dir "$scratch/out-$target-$kib" 2>&1)
    rc=$?
    if [[ $rc == 0 ]]; then passed=$((passed + 1)); continue; fi
    if [[ $rc != 1 ]]; then
      echo "FAIL: $target at ${kib} KiB: exit $rc (a crash?): $out"; failures=$((failures + 1))
    elif ! grep -qiE "out of memory|address-space limit|OUT_OF_(HOST|DEVICE)_MEMORY" <<<"$out"; then
      echo "FAIL: $target at ${kib} KiB: the error does not name memory: $out"
      failures=$((failures + 1))
    elif grep -qiE "not a valid|corrupt|does not compile" <<<"$out"; then
      echo "FAIL: $target at ${kib} KiB: a resource failure blamed on the input: $out"
      failures=$((failures + 1))
    else
      named=$((named + 1))
    fi
  done
done
echo "memory limits: $passed runs succeeded, $named failed naming memory, $failures wrong"
# The ladder must reach both outcomes, or it tests nothing.
[[ $failures == 0 && $named -gt 0 && $passed -gt 0 ]]
