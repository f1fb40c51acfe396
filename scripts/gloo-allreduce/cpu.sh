#!/bin/sh
# CPU per allreduce, Gloo against nexar-live, in alternating pairs: for
# each size, each side's time per call and the CPU (user and system) of
# all its rank processes together per call, from getrusage around the
# timed loop (collectives.py's '# cpu' lines, nexar-live's run --profile
# DIR/rank-N.cpu). Where the ranks share cores, the wall time is about
# their CPU over the cores, and the CPU varies less with other work.
#
#   scripts/gloo-allreduce/cpu.sh [--np N] [--sizes LIST] [--iters N]
#                                 [--warmup W] [--pairs N] [--algorithms A,B]
#                                 [--nexar BIN] [--out DIR] [-- NEXAR-LIVE-RUN-FLAGS...]
#
# Defaults: --np 4 --sizes 16M,64M --iters 10 --warmup 3 --pairs 3
# --algorithms ring,pipelined_ring,rs_ag; --nexar: build this tree's
# nexar-live into DIR (default gloo-cpu-out). Flags after -- go to
# nexar-live run (say --trusted-network). One line per side, size and
# pair: "gloo|nexar SIZE ALGORITHM time_ms T cpu_ms C vcsw V", with the
# load average before each pair.
set -eu
np=4 sizes=16M,64M iters=10 warmup=3 pairs=3 algs=ring,pipelined_ring,rs_ag nexar= out=gloo-cpu-out
while [ $# -gt 0 ]; do
	case "$1" in
	-h | --help) sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p;}' "$0"; exit 0 ;;
	--np) np=$2; shift ;;
	--sizes) sizes=$2; shift ;;
	--iters) iters=$2; shift ;;
	--warmup) warmup=$2; shift ;;
	--pairs) pairs=$2; shift ;;
	--algorithms) algs=$2; shift ;;
	--nexar) nexar=$2; shift ;;
	--out) out=$2; shift ;;
	--) shift; break ;;
	*) echo "cpu.sh: unknown flag $1 (see --help)" >&2; exit 2 ;;
	esac
	shift
done
here=$(cd "$(dirname "$0")" && pwd)
python=${PYTHON:-/usr/bin/python3}
mkdir -p "$out"
out=$(cd "$out" && pwd)
if [ -z "$nexar" ]; then
	(cd "$here/../.." && go build -o "$out/nexar-live" ./cmd/nexar-live)
	nexar=$out/nexar-live
fi
for i in $(seq "$pairs"); do
	echo "== pair $i, load $(cut -d' ' -f1-3 /proc/loadavg)"
	"$python" "$here/collectives.py" --np "$np" --sizes "$sizes" --warmup "$warmup" --iters "$iters" >"$out/gloo.$i.log"
	awk '/^ +[0-9]/ {s = $1; t = $6} /^# cpu per iteration/ {printf "gloo %s gloo time_ms %.1f cpu_ms %.1f vcsw %.0f\n", s, t / 1000, $8, $16}' "$out/gloo.$i.log"
	d=$out/nexar.$i
	rm -rf "$d"
	for s in $(echo "$sizes" | tr , ' '); do
		"$nexar" run --np "$np" -b "$s" -e "$s" --algorithms "$algs" -n "$iters" -w "$warmup" --timing loop \
			--no-compare --out "$d/$s" --profile "$d/$s/profile" "$@" >"$d.$s.log" 2>&1 || { cat "$d.$s.log" >&2; exit 1; }
		cat "$d/$s/profile"/rank-*.cpu | awk -v res="$d/$s/results.csv" '
			BEGIN { FS = ","; while ((getline l < res) > 0) { split(l, f, ","); if (f[6] ~ /^[0-9.]+$/) t[f[4] " " f[2]] = f[6] * 1000 } FS = " " }
			{ for (i = 3; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
			  k = v["bytes"] " " $2; cpu[k] += v["cpu_ms"]; cs[k] += v["nvcsw"] }
			END { for (k in cpu) printf "nexar %s time_ms %.1f cpu_ms %.1f vcsw %.0f\n", k, t[k], cpu[k], cs[k] }' | sort
	done
done
echo "== end, load $(cut -d' ' -f1-3 /proc/loadavg)"
