#!/bin/sh
# Old against new: two nexar-live binaries and Open MPI over TCP, in one
# run, so that a change to nexar-live is read as ratios to the same peer
# under the same conditions. Each pair runs Open MPI, the old binary and
# the new one, in an order that rotates from pair to pair (so drift in
# the machine's load falls on all three alike); each nexar-live run with
# --profile, for the CPU its ranks spend per iteration.
#
#   scripts/ompi-allreduce/ab.sh --old BIN --new BIN [--np N] [--sizes LIST]
#                                [--iters N] [--warmup W] [--pairs N]
#                                [--algorithms A,B] [--out DIR]
#                                [-- NEXAR-LIVE-RUN-FLAGS...]
#
# --old, --new  the two nexar-live binaries (build each commit's
#               ./cmd/nexar-live with go build -o)
# Defaults: --np 4 --sizes 1M,64M --iters 20 --warmup 5 --pairs 3
# --out ompi-ab-out; --algorithms the list scripts/ompi-allreduce/run.sh
# measures. Flags after -- go to both nexar-live runs (say
# --trusted-network).
#
# Per size, over the pairs, the median [min, max] of: Open MPI's time;
# the busbw ratio of old and of new (each binary's fastest algorithm)
# to Open MPI's; new's busbw over old's; and the CPU of all ranks per
# iteration (rank-N.cpu) of each binary's fastest algorithm. The load
# average is printed before every pair and at the end.
set -eu

np=4 sizes=1M,64M iters=20 warmup=5 pairs=3 out=ompi-ab-out old= new=
algs=ring,pipelined_ring,halving_doubling,recursive_doubling,binomial_tree,rs_ag,direct,auto
while [ $# -gt 0 ]; do
	case "$1" in
	-h | --help) sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p;}' "$0"; exit 0 ;;
	--old) old=$2; shift ;;
	--new) new=$2; shift ;;
	--np) np=$2; shift ;;
	--sizes) sizes=$2; shift ;;
	--iters) iters=$2; shift ;;
	--warmup) warmup=$2; shift ;;
	--pairs) pairs=$2; shift ;;
	--algorithms) algs=$2; shift ;;
	--out) out=$2; shift ;;
	--) shift; break ;;
	*) echo "ab.sh: unknown flag $1 (see --help)" >&2; exit 2 ;;
	esac
	shift
done
case "$pairs" in '' | *[!0-9]* | 0) echo "ab.sh: --pairs wants a positive number, got $pairs" >&2; exit 2 ;; esac
for b in "$old" "$new"; do
	if [ ! -x "$b" ]; then
		echo "ab.sh: --old and --new want nexar-live binaries, got '$b'" >&2
		exit 2
	fi
done
if ! command -v mpicc >/dev/null 2>&1; then
	echo "ab.sh: no mpicc: install Open MPI (scripts/ompi-allreduce/run.sh --install)" >&2
	exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../peer-common.sh"
quoted=$(peer_toml_names "$algs")
mkdir -p "$out"
out=$(cd "$out" && pwd)
mpicc -O2 -o "$out/ompi-allreduce" "$here/allreduce.c"

# The sizes, as a scenario of world N, for both binaries.
bytes=$(peer_toml_bytes "$sizes")
{
	peer_scenario_head scripts/ompi-allreduce/ab.sh "Open MPI" ompi-ab
	peer_sweep allreduce "$quoted" "$np" "$bytes"
} >"$out/ab.toml"

run_ompi() {
	mpirun --allow-run-as-root --oversubscribe -np "$np" --mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include lo \
		"$out/ompi-allreduce" -l "$sizes" -w "$warmup" -n "$iters" >"$1/ompi.log"
}
# run_nexar DIR NAME BIN [FLAGS...]
run_nexar() {
	_d=$1 _n=$2 _b=$3
	shift 3
	"$_b" run --np "$np" "$out/ab.toml" --out "$_d/$_n" --warmup "$warmup" --iters "$iters" \
		--no-compare --timing loop --profile "$_d/$_n.cpu" "$@" >"$_d/$_n.log"
}

before=$(peer_load)
i=1
while [ "$i" -le "$pairs" ]; do
	d="$out/pair$i"
	rm -rf "$d"
	mkdir -p "$d"
	echo "== pair $i/$pairs; $(peer_load)" >&2
	case $((i % 3)) in
	1) run_ompi "$d"; run_nexar "$d" old "$old" "$@"; run_nexar "$d" new "$new" "$@" ;;
	2) run_ompi "$d"; run_nexar "$d" new "$new" "$@"; run_nexar "$d" old "$old" "$@" ;;
	0) run_nexar "$d" old "$old" "$@"; run_ompi "$d"; run_nexar "$d" new "$new" "$@" ;;
	esac
	"$old" peer --name ompi "$d/old/results.csv" "$d/ompi.log" >"$d/old.txt"
	"$new" peer --name ompi "$d/new/results.csv" "$d/ompi.log" >"$d/new.txt"
	i=$((i + 1))
done
after=$(peer_load)

# One line per pair, side and size: side size unit ompi-µs algorithm
# busbw ratio cpu-ms (all ranks, per iteration, of that algorithm).
i=1
while [ "$i" -le "$pairs" ]; do
	for side in old new; do
		awk -v side="$side" '
		function us(v, u) { return u == "ns" ? v / 1000 : u == "ms" ? v * 1000 : u == "s" ? v * 1e6 : v }
		FILENAME ~ /\.cpu$/ {
			for (f = 3; f <= NF; f++) {
				if ($f ~ /^bytes=/) b = substr($f, 7)
				if ($f ~ /^cpu_ms=/) cpu[$2, b] += substr($f, 8)
			}
			next
		}
		FNR == 1 || $1 == "busbw" { next }
		{ line[++n] = $3 " " $4 " " us($(NF-8), $(NF-7)) " " $(NF-5) " " $(NF-2) " " $NF; sz[n] = $3; un[n] = $4; alg[n] = $(NF-5) }
		END {
			for (k = 1; k <= n; k++) {
				m = un[k] == "GiB" ? 1073741824 : un[k] == "MiB" ? 1048576 : un[k] == "KiB" ? 1024 : 1
				print side, line[k], cpu[alg[k], sz[k] * m] + 0
			}
		}' "$out/pair$i/$side.cpu"/rank-*.cpu "$out/pair$i/$side.txt"
	done
	i=$((i + 1))
done >"$out/lines.txt"

echo "== old: $old; new: $new; $np ranks, $pairs pairs, nexar-live flags: ${*:-none}"
echo "# before: $before"
echo "# after:  $after"
awk '
function med(s,   a, n, i, j, t) {
	n = split(s, a, " ")
	for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
	lo = a[1]; hi = a[n]
	return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2
}
function cell(s,   m) { m = med(s); return sprintf("%5.2f [%4.2f, %4.2f]", m, lo, hi) }
{
	k = $2 " " $3
	if (!(k in seen)) { seen[k] = 1; order[++nk] = k }
	if ($1 == "old") { ompi[k] = ompi[k] " " $4; ro[k] = ro[k] " " $7; bo[++no[k], k] = $6; co[k] = co[k] " " $8 }
	else { rn[k] = rn[k] " " $7; bn[++nn[k], k] = $6; cn[k] = cn[k] " " $8; an[k] = $5 }
}
END {
	printf "%-9s %10s  %-18s  %-18s  %-18s  %-18s  %-18s  %s\n", "size", "ompi µs", "old/ompi", "new/ompi", "new/old", "old cpu ms", "new cpu ms", "new fastest (last)"
	for (i = 1; i <= nk; i++) {
		k = order[i]; no_ = ""
		for (j = 1; j <= no[k] && j <= nn[k]; j++) no_ = no_ " " bn[j, k] / bo[j, k]
		printf "%-9s %10.1f  %-18s  %-18s  %-18s  %-18s  %-18s  %s\n", k, med(ompi[k]), cell(ro[k]), cell(rn[k]), cell(no_), cell(co[k]), cell(cn[k]), an[k]
	}
	print "median [min, max] over the pairs; ratios of busbw (> 1: the first is faster); cpu: all ranks per iteration of the fastest algorithm"
}' "$out/lines.txt"
