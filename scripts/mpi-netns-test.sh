#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The MPI tests over real network links (docs/scale-out.md): three network
# namespaces ("hosts") joined by veth pairs to a bridge, one MPI rank in
# each, Open MPI's TCP transport restricted to those links. Not part of
# ctest (namespaces need root, which CI may not give); run by hand:
#
#   sudo scripts/mpi-netns-test.sh [BUILD_DIR] [--bench]
#
# Runs test_mpi at -np 2 and -np 3, the vkpipe CLI test (tests/mpi/cli_mpi.sh)
# and the dead-rank test with one rank per namespace, and with --bench also
# tests/mpi/bench_link (a binding against raw MPI over the link). Prints
# "SKIP: ..." and exits 0 where namespaces cannot be made.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
bench=0
[ "${2:-}" = "--bench" ] && bench=1
skip() { echo "mpi-netns-test: SKIP: $*"; exit 0; }
[ "$(id -u)" = 0 ] || skip "needs root to make network namespaces"
command -v ip >/dev/null || skip "needs iproute2 (ip)"
command -v mpirun >/dev/null || skip "needs Open MPI's mpirun"
[ -x "$build/tests/mpi/test_mpi" ] || { echo "no $build/tests/mpi/test_mpi (build with MPI first)" >&2; exit 2; }

# Names unique to this run (interface names stay under 15 characters).
tag=vn$$
net=10.233.0
hosts=3
work=$(mktemp -d)
cleanup() {
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^${tag}(h[0-9]+|hub)$"); do
    ip netns del "$ns" 2>/dev/null || true
  done
  rm -rf "$work"
}
trap cleanup EXIT
ip netns add "${tag}hub" 2>/dev/null || skip "cannot make a network namespace here"
ip netns exec "${tag}hub" ip link add br0 type bridge || skip "cannot make a bridge"
ip netns exec "${tag}hub" ip link set br0 up
for i in $(seq 1 $hosts); do
  ip netns add "${tag}h$i"
  ip link add "${tag}a$i" type veth peer name "${tag}b$i" || skip "cannot make veth pairs"
  ip link set "${tag}a$i" netns "${tag}h$i"
  ip link set "${tag}b$i" netns "${tag}hub"
  ip netns exec "${tag}hub" ip link set "${tag}b$i" master br0 up
  ip netns exec "${tag}h$i" ip addr add "$net.$i/24" dev "${tag}a$i"
  ip netns exec "${tag}h$i" ip link set "${tag}a$i" up
  ip netns exec "${tag}h$i" ip link set lo up
done
# Open MPI starts its daemons through this "rsh": into the namespace of the
# host whose address it is given, in the same directory.
cat >"$work/rsh" <<AGENT
#!/bin/sh
host=\$1; shift
exec ip netns exec "${tag}h\${host##*.}" /bin/sh -c "\$*"
AGENT
chmod +x "$work/rsh"
# mpirun run from host 1, one slot per host, TCP over the bridge only.
cat >"$work/mpirun" <<WRAP
#!/bin/sh
exec ip netns exec "${tag}h1" mpirun --mca plm_rsh_agent "$work/rsh" \\
  --mca btl tcp,self --mca btl_tcp_if_include $net.0/24 \\
  --mca oob_tcp_if_include $net.0/24 --host $net.1,$net.2,$net.3 "\$@"
WRAP
chmod +x "$work/mpirun"
mpi=("$work/mpirun" --allow-run-as-root)

echo "== test_mpi, 2 ranks on 2 hosts"
"${mpi[@]}" -np 2 "$build/tests/mpi/test_mpi" 10000
echo "== test_mpi, 3 ranks on 3 hosts"
"${mpi[@]}" -np 3 "$build/tests/mpi/test_mpi" 10000
echo "== dead rank over TCP"
VKPIPE_MPI_TIMEOUT_S=2 "${mpi[@]}" --enable-recovery -x VKPIPE_MPI_TIMEOUT_S -np 2 \
    "$build/tests/mpi/test_mpi" dead >"$work/dead.txt" 2>&1 || true
grep -q "dead rank: ok" "$work/dead.txt" || { cat "$work/dead.txt" >&2; exit 1; }
echo "dead rank: ok"
echo "== vkpipe CLI"
"$src/tests/mpi/cli_mpi.sh" "$build/tools/vkpipe" "$work/mpirun" "$src"
if [ $bench = 1 ]; then
  echo "== bench_link: a binding vs raw MPI over the veth link (rank 0 on host 1, rank 1 on host 2)"
  "${mpi[@]}" -np 2 "$build/tests/mpi/bench_link" 4194304
fi
echo "mpi-netns-test: ok"
