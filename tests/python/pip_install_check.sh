#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `pip install ./python` works offline (no index, no build isolation) into a
# fresh virtual environment that sees Debian's NumPy, and the installed
# package runs a model.
#   pip_install_check.sh PYTHON SOURCE_DIR BUILD_DIR
set -euo pipefail
python=$1 src=$2 build=$3
work=$(mktemp -d "$build/pip_check.XXXXXX")
trap 'rm -rf "$work" "$src/python/vkpipe.egg-info" "$src/python/build"' EXIT
"$python" -m venv --system-site-packages "$work/venv"
# -O0: this checks the packaging, not the code (the CMake build tests that).
CFLAGS="-O0 -g0" VKPIPE_BUILD_DIR="$build" "$work/venv/bin/pip" install --quiet --no-index \
  --no-build-isolation --no-cache-dir "$src/python"
cd "$work"
"$work/venv/bin/python" - "$src" <<'PY'
import os, sys
import numpy as np
import vkpipe
assert "venv" in vkpipe.__file__, vkpipe.__file__
model = vkpipe.load(os.path.join(sys.argv[1], "examples", "mlp.json"))
x = np.random.default_rng(0).standard_normal(model.inputs[0].shape).astype(np.float32)
with model.pipeline(policy="ref") as pipe:
    y = pipe.infer(x=x)["y"]
np.testing.assert_allclose(y, model.run(x=x)["y"], rtol=1e-6)
print("pip install ./python: ok,", vkpipe.__file__)
PY
