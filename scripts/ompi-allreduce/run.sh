#!/bin/sh
# Peer comparison: allreduce bus bandwidth of nexar-live against Open MPI's
# MPI_Allreduce over its TCP transport on loopback, same sizes, same
# process count, in one run on this machine.
#
#   scripts/ompi-allreduce/run.sh [--install] [--np N] [--sizes LIST]
#                                 [--iters N] [--warmup W] [--pairs N]
#                                 [--algorithms LIST] [--out DIR]
#                                 [-- NEXAR-LIVE-RUN-FLAGS...]
#
# --install   install Open MPI from the distribution's packages first
#             (apt-get update; apt-get install openmpi-bin libopenmpi-dev)
# --np N      processes (default 4)
# --sizes L   comma-separated sizes in bytes, K/M suffixes allowed
#             (default 8,64,512,4K,32K,256K,2M,16M,64M)
# --iters N   timed iterations per size (default 20), --warmup W untimed
#             ones before them (default 5)
# --pairs N   Open MPI and nexar-live runs, alternating (default 5): the
#             summary gives per size the median ratio and its range
# --algorithms L  nexar-live's allreduce algorithms, comma-separated
#             (default: ring, pipelined_ring, halving_doubling,
#             recursive_doubling, binomial_tree, rs_ag, direct, auto)
# --out DIR   where the logs go (default ompi-peer-out)
# --ompi-only run Open MPI alone and print its table (nexar-live ladder
#             runs its rung so)
#
# Open MPI runs with --mca pml ob1 --mca btl tcp,self (without "pml ob1"
# UCX may be picked and the btl setting ignored), as in
# shared/reference/machine-figures.md; nexar-live runs every allreduce
# algorithm of the catalogue at the same sizes, with the flags after --
# (say --trusted-network for plaintext bulk TCP, as Open MPI's TCP is).
# Both sides are timed the same way, nccl-tests' and OSU's: a barrier,
# then the iterations back to back, the slowest rank's mean (allreduce.c;
# nexar-live's --timing loop, which a --timing after -- overrides).
# 'nexar-live peer' gives per pair the busbw of Open MPI, of nexar-live's
# fastest algorithm there, and their ratio; the summary at the end the
# median and range over the pairs, with the load average before and
# after (scripts/peer-common.sh, shared with scripts/gloo-allreduce).
set -eu

np=4
sizes=8,64,512,4K,32K,256K,2M,16M,64M
iters=20
warmup=5
pairs=5
algs=ring,pipelined_ring,halving_doubling,recursive_doubling,binomial_tree,rs_ag,direct,auto
out=ompi-peer-out
install=0
ompionly=0
while [ $# -gt 0 ]; do
	case "$1" in
	-h | --help) sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p;}' "$0"; exit 0 ;;
	--install) install=1 ;;
	--ompi-only) ompionly=1 ;;
	--np) np=$2; shift ;;
	--sizes) sizes=$2; shift ;;
	--iters) iters=$2; shift ;;
	--warmup) warmup=$2; shift ;;
	--pairs) pairs=$2; shift ;;
	--algorithms) algs=$2; shift ;;
	--out) out=$2; shift ;;
	--) shift; break ;;
	*) echo "run.sh: unknown flag $1 (see --help)" >&2; exit 2 ;;
	esac
	shift
done
case "$pairs" in '' | *[!0-9]* | 0) echo "run.sh: --pairs wants a positive number, got $pairs" >&2; exit 2 ;; esac

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$here/../peer-common.sh"
algnames=$(peer_toml_names "$algs")

if [ "$install" = 1 ]; then
	. "$root/scripts/apt-install.sh"
	apt_install "$0" openmpi-bin libopenmpi-dev
fi
if ! command -v mpicc >/dev/null 2>&1; then
	echo "run.sh: no mpicc: install Open MPI (run.sh --install, or apt-get install openmpi-bin libopenmpi-dev)" >&2
	exit 2
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)

echo "== building ompi-allreduce" >&2
mpicc -O2 -o "$out/ompi-allreduce" "$here/allreduce.c"
ompi() {
	mpirun --allow-run-as-root --oversubscribe -np "$np" --mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include lo \
		"$out/ompi-allreduce" -l "$sizes" -w "$warmup" -n "$iters"
}
if [ "$ompionly" = 1 ]; then
	echo "== Open MPI, $np processes, TCP loopback; before: $(peer_load)" >&2
	ompi
	echo "# $(peer_load)"
	exit 0
fi
echo "== building nexar-live" >&2
(cd "$root" && go build -o "$out/nexar-live" ./cmd/nexar-live)

# The same sizes for nexar-live, as a scenario of world N.
bytes=$(peer_toml_bytes "$sizes")
{
	peer_scenario_head scripts/ompi-allreduce/run.sh "Open MPI" ompi-peer
	peer_sweep allreduce "$algnames" "$np" "$bytes"
} >"$out/peer.toml"

nexar=$out/nexar-live
peer=ompi
nexarflags="$*"
run_peer() { ompi >"$1/peer.log"; }
run_nexar() {
	# shellcheck disable=SC2086
	"$nexar" run --np "$np" "$out/peer.toml" --out "$1/nexar" --warmup "$warmup" --iters "$iters" --no-compare --timing loop $nexarflags
}
echo "== Open MPI and nexar-live, $np processes, TCP loopback, $pairs alternating pairs" >&2
peer_pairs "$pairs" | tee "$out/peer.txt"
