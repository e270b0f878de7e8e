#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Fuzzes vkpipe's readers with libFuzzer (clang), from the corpus kept in
# tests/fuzz/corpus/<reader>/, and prints executions and findings per reader.
#
#   scripts/fuzz.sh [--build-dir DIR] [--seconds N] [--jobs J] [--merge]
#                   [--no-merge] [READER ...]
#
# READER: json onnx npy plan vkp (default: all). The build directory
# (default build-fuzz) is configured with clang, -DVKPIPE_FUZZ=ON and
# address,undefined sanitizers when new, and the readers' fuzz targets are
# rebuilt first whenever the source is newer. Each reader
# runs for N seconds (default 60) in a scratch copy of its corpus; --merge
# adds the inputs that found new coverage to the kept corpus (minimised by
# libFuzzer's -merge). A crash, leak or timeout is saved under
# DIR/fuzz-findings/<reader>/ and makes the script exit 1.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=build-fuzz
seconds=60
jobs=1
merge=0
readers=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build-dir) build_dir="$2"; shift 2 ;;
    --seconds) seconds="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --merge) merge=1; shift ;;
    --no-merge) merge=0; shift ;;
    -h|--help) sed -n '3,16p' "$0"; exit 0 ;;
    json|onnx|npy|plan|vkp) readers+=("$1"); shift ;;
    *) echo "fuzz.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[[ ${#readers[@]} -gt 0 ]] || readers=(json onnx npy plan vkp)

if [[ ! -f "$build_dir/CMakeCache.txt" ]]; then
  command -v clang >/dev/null || { echo "fuzz.sh: needs clang (apt-get install clang)" >&2; exit 2; }
  cmake -S . -B "$build_dir" -DCMAKE_C_COMPILER=clang -DVKPIPE_FUZZ=ON \
        -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
# Always brought up to date (a no-op when it is): fuzzing a binary older
# than the source reports what the source has already fixed.
targets=()
for r in "${readers[@]}"; do targets+=("fuzz_$r"); done
cmake --build "$build_dir" -j"$(nproc)" --target "${targets[@]}" >/dev/null

export LSAN_OPTIONS="suppressions=$PWD/tests/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
status=0
for r in "${readers[@]}"; do
  work=$(mktemp -d "${TMPDIR:-/tmp}/vkpipe-fuzz-$r-XXXXXX")
  findings="$build_dir/fuzz-findings/$r"
  mkdir -p "$findings"
  log="$work.log"
  # -timeout: one input may take at most 10 s; -rss_limit_mb: 2 GiB.
  parallel=()
  [[ "$jobs" -gt 1 ]] && parallel=(-fork="$jobs")
  if ! "$build_dir/tests/fuzz/fuzz_$r" -max_total_time="$seconds" -timeout=10 \
         -rss_limit_mb=2048 -print_final_stats=1 "${parallel[@]}" \
         -artifact_prefix="$findings/" "$work" "tests/fuzz/corpus/$r" >"$log" 2>&1; then
    status=1
  fi
  execs=$(grep -h 'stat::number_of_executed_units' "$log" | awk '{s += $2} END {print s + 0}')
  [[ "$execs" != 0 ]] || execs=$(grep -ho '^#[0-9]*' "$log" | tail -1 | tr -d '#')
  found=$(find "$findings" -type f | wc -l)
  printf '%-5s %12s executions in %ss, %d finding(s)%s\n' "$r" "$execs" "$seconds" \
         "$found" "$([[ $found -gt 0 ]] && echo " in $findings" || true)"
  if [[ $found -gt 0 ]]; then
    status=1
    grep -m1 -h -A12 'ERROR: \|==ERROR\|deadly signal\|SUMMARY' "$log" | head -40 || true
  fi
  if [[ $merge -eq 1 ]]; then
    "$build_dir/tests/fuzz/fuzz_$r" -merge=1 "tests/fuzz/corpus/$r" "$work" >/dev/null 2>&1 || true
  fi
  rm -rf "$work" "$log"
done
exit $status
