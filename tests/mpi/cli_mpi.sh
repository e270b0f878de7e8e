#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `vkpipe run --plan` (and a .vkp from `vkpipe build --rank`) with a stage
# on rank 1 under mpirun, both as run + serve (MPMD) and as run on every
# rank: the output equals the single-process run of the same plan without
# ranks, byte for byte.
#   cli_mpi.sh VKPIPE MPIRUN SOURCE_DIR
set -euo pipefail
vkpipe=$1 mpirun=$2 src=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
cp "$src/examples/mlp.json" "$src/examples/mlp.bin" .
"$vkpipe" partition mlp.json --policy cpu --stages 2 -o plan.json >/dev/null
/usr/bin/python3 - <<'PY'
import json, numpy as np
p = json.load(open("plan.json"))
assert len(p["stages"]) == 2, p
p["stages"][1]["rank"] = 1
json.dump(p, open("plan_ranks.json", "w"))
np.save("x.npy", np.random.default_rng().uniform(-1, 1, (1, 64)).astype(np.float32))
PY
"$vkpipe" run --plan plan.json --input x.npy --output-dir local >/dev/null
mpi=("$mpirun" --oversubscribe --allow-run-as-root)
"${mpi[@]}" -np 1 "$vkpipe" run --plan plan_ranks.json --input x.npy \
    --output-dir mpmd : -np 1 "$vkpipe" serve plan_ranks.json >/dev/null
"${mpi[@]}" -np 2 "$vkpipe" run --plan plan_ranks.json --input x.npy \
    --output-dir spmd >/dev/null
cmp local/y.npy mpmd/y.npy
cmp local/y.npy spmd/y.npy
# vkpipe partition --ranks 2 places the stages on both ranks by itself; the
# plan runs under mpirun and matches the reference interpreter.
"$vkpipe" partition mlp.json --policy cpu --ranks 2 -o plan_auto.json >partition.txt
grep -q "ranks: 2" partition.txt
/usr/bin/python3 - <<'PY'
import json
p = json.load(open("plan_auto.json"))
ranks = sorted({s.get("rank", 0) for s in p["stages"]})
assert ranks == [0, 1], ranks
PY
"$vkpipe" run mlp.json --input x.npy --output-dir ref >/dev/null
"${mpi[@]}" -np 2 "$vkpipe" run --plan plan_auto.json --input x.npy \
    --output-dir auto >/dev/null
/usr/bin/python3 - <<'PY'
import numpy as np
a, b = np.load("ref/y.npy"), np.load("auto/y.npy")
assert a.shape == b.shape and np.allclose(a, b, rtol=1e-5, atol=1e-6), (a, b)
PY
# vkpipe run --target auto --ranks 2: rank 0 partitions and shares the plan,
# rank 1 serves its stage; vkpipe build --ranks 2 keeps the placement.
"${mpi[@]}" -np 2 "$vkpipe" run mlp.json --target auto --ranks 2 --input x.npy \
    --output-dir auto_run >auto_run.txt
grep -q "rank 0) -> .*rank 1)" auto_run.txt
"$vkpipe" build mlp.json --policy cpu --ranks 2 -o ranks.vkp >/dev/null
"$vkpipe" inspect ranks.vkp | grep -q "ranks: stage0 on rank 0, stage1 on rank 1"
"${mpi[@]}" -np 2 "$vkpipe" run ranks.vkp --input x.npy --output-dir auto_art >/dev/null
/usr/bin/python3 - <<'PY'
import numpy as np
a = np.load("ref/y.npy")
for d in ("auto_run", "auto_art"):
    b = np.load(d + "/y.npy")
    assert a.shape == b.shape and np.allclose(a, b, rtol=1e-5, atol=1e-6), (d, a, b)
PY
if "$vkpipe" run mlp.json --target auto --ranks 2 --input x.npy --output-dir x1 2>err.txt; then
  echo "--ranks ran without mpirun" >&2; exit 1
fi
grep -q "runs under mpirun" err.txt
if "${mpi[@]}" -np 3 "$vkpipe" run mlp.json --target auto --ranks 2 --input x.npy \
    --output-dir x2 2>err.txt >/dev/null; then
  echo "--ranks 2 ran on 3 ranks" >&2; exit 1
fi
grep -q "mpirun started 3 ranks" err.txt
# A .vkp artifact keeps the rank (vkpipe build --rank) and runs the same;
# without mpirun it is refused, naming the stage and the rank.
"$vkpipe" build mlp.json --policy cpu --stages 2 --rank stage1=1 -o mlp.vkp >/dev/null
"${mpi[@]}" -np 1 "$vkpipe" run mlp.vkp --input x.npy --output-dir art \
    : -np 1 "$vkpipe" serve mlp.vkp >/dev/null
cmp local/y.npy art/y.npy
if "$vkpipe" run mlp.vkp --input x.npy --output-dir alone 2>err.txt; then
  echo "a plan with ranks ran without mpirun" >&2; exit 1
fi
grep -q "stage 'stage1' is placed on rank 1" err.txt
# A bad input on rank 0 ends the job with an error instead of a hang.
if timeout 60 "${mpi[@]}" -np 2 "$vkpipe" run --plan plan_ranks.json \
    --input mlp.json --output-dir bad >/dev/null 2>&1; then
  echo "a bad input was accepted" >&2; exit 1
fi
echo "cli_mpi: ok"
