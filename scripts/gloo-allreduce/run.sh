#!/bin/sh
# Peer comparison: bus bandwidth of nexar-live against PyTorch's Gloo
# backend (torch.distributed, backend "gloo") on loopback, same sizes,
# same process count, in one run on this machine, in alternating pairs.
#
#   scripts/gloo-allreduce/run.sh [--install] [--np N] [--sizes LIST]
#                                 [--iters N] [--warmup W] [--pairs N]
#                                 [--collectives LIST] [--algorithms LIST]
#                                 [--out DIR] [--gloo-only]
#                                 [-- NEXAR-LIVE-RUN-FLAGS...]
#
# --install      install PyTorch from the distribution's packages first
#                (apt-get update; apt-get install python3-torch, which
#                brings Gloo), for /usr/bin/python3
# --np N         processes (default 4)
# --sizes L      comma-separated sizes in bytes, K/M suffixes allowed
#                (default 8,64,512,4K,32K,256K,2M,16M,64M)
# --iters N      timed iterations per size (default 20), --warmup W
#                untimed ones before them (default 5)
# --pairs N      Gloo and nexar-live runs, alternating (default 5): the
#                summary gives per size the median ratio and its range
# --collectives  comma-separated: allreduce (default), allgather,
#                reduce_scatter, broadcast (Debian's torch 1.13 has no
#                Gloo reduce_scatter: skipped with a comment line)
# --algorithms   nexar-live's algorithms, comma-separated, for every
#                collective asked (default: all of each collective's)
# --out DIR      where the logs go (default gloo-peer-out)
# --gloo-only    run Gloo once and print its table (nexar-live ladder
#                runs its rung so)
# PYTHON         the interpreter with torch (default /usr/bin/python3,
#                where Debian's python3-torch installs)
#
# Each size is timed as nccl-tests times it (scripts/gloo-allreduce/
# collectives.py): warm-up, then the iterations back to back, the slowest
# rank's time; nexar-live too (--timing loop, which a --timing after --
# overrides). nexar-live runs every algorithm of each collective at the
# same sizes with the flags after -- (say --trusted-network for plaintext
# bulk TCP, as Gloo's TCP is); 'nexar-live peer' gives per pair the busbw
# of both and their ratio to nexar-live's fastest algorithm, and the
# summary the median and range over the pairs, with the load average
# before and after (scripts/peer-common.sh).
set -eu

np=4
sizes=8,64,512,4K,32K,256K,2M,16M,64M
iters=20
warmup=5
pairs=5
colls=allreduce
algs=
out=gloo-peer-out
install=0
glooonly=0
while [ $# -gt 0 ]; do
	case "$1" in
	-h | --help) sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p;}' "$0"; exit 0 ;;
	--install) install=1 ;;
	--gloo-only) glooonly=1 ;;
	--np) np=$2; shift ;;
	--sizes) sizes=$2; shift ;;
	--iters) iters=$2; shift ;;
	--warmup) warmup=$2; shift ;;
	--pairs) pairs=$2; shift ;;
	--collectives) colls=$2; shift ;;
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
algnames=
if [ -n "$algs" ]; then
	algnames=$(peer_toml_names "$algs")
fi
python=${PYTHON:-/usr/bin/python3}

if [ "$install" = 1 ]; then
	. "$root/scripts/apt-install.sh"
	apt_install "$0" python3-torch
fi
if ! "$python" -c 'import torch.distributed as d; assert d.is_gloo_available()' >/dev/null 2>&1; then
	echo "run.sh: no torch with Gloo for $python: install it (run.sh --install, or apt-get install python3-torch)" >&2
	exit 2
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)

gloo() {
	"$python" "$here/collectives.py" --np "$np" --sizes "$sizes" --warmup "$warmup" --iters "$iters" --collectives "$colls"
}
if [ "$glooonly" = 1 ]; then
	echo "== Gloo, $np processes, TCP loopback; before: $(peer_load)" >&2
	gloo
	echo "# $(peer_load)"
	exit 0
fi
echo "== building nexar-live" >&2
(cd "$root" && go build -o "$out/nexar-live" ./cmd/nexar-live)
nexar=$out/nexar-live
peer=gloo

# The same sizes for nexar-live, as a scenario of world N: a sweep of
# every algorithm per collective (allgather and reduce_scatter only at
# sizes of whole 4-byte blocks per rank, as collectives.py).
{
	peer_scenario_head scripts/gloo-allreduce/run.sh Gloo gloo-peer
	for c in $(echo "$colls" | tr , ' '); do
		case $c in
		allreduce) algs='"ring", "pipelined_ring", "halving_doubling", "recursive_doubling", "binomial_tree", "rs_ag", "direct", "auto"' ;;
		allgather) algs='"ring", "recursive_doubling", "bruck", "auto"' ;;
		reduce_scatter) algs='"ring", "recursive_halving", "dissemination", "pairwise", "auto"' ;;
		broadcast) algs='"binomial_tree", "pipelined_chain", "scatter_allgather", "flat", "binary_tree", "auto"' ;;
		*) echo "run.sh: unknown collective $c" >&2; exit 2 ;;
		esac
		[ -z "$algnames" ] || algs=$algnames
		cs=$sizes
		if [ "$c" = allgather ] || [ "$c" = reduce_scatter ]; then
			cs=$(for s in $(echo "$sizes" | tr , ' '); do
				b=$(echo "$s" | sed -e 's/[kK]$/*1024/' -e 's/[mM]$/*1048576/' -e 's/[gG]$/*1073741824/')
				[ $(($b % (4 * np))) = 0 ] && printf '%s,' "$s"
			done | sed 's/,$//')
		fi
		[ -n "$cs" ] || continue
		peer_sweep "$c" "$algs" "$np" "$(peer_toml_bytes "$cs")"
	done
} >"$out/peer.toml"

run_peer() { gloo >"$1/peer.log"; }
nexarflags="$*"
run_nexar() {
	# shellcheck disable=SC2086
	"$nexar" run --np "$np" "$out/peer.toml" --out "$1/nexar" --warmup "$warmup" --iters "$iters" --no-compare --timing loop $nexarflags
}
echo "== Gloo and nexar-live, $np processes, TCP loopback, $pairs alternating pairs" >&2
peer_pairs "$pairs" | tee "$out/peer.txt"
