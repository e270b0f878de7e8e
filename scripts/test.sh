#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Sets up (scripts/setup.sh --tests: the build, and the packages only the
# tests use) and runs the whole test suite through ctest.
#
#   scripts/test.sh [ctest args...]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --tests
cd build
exec ctest --output-on-failure --timeout 600 -j "$(nproc 2>/dev/null || echo 2)" "$@"
