#!/usr/bin/env bash
# scripts/ladder-ab/run.sh: nexar-live's 8 B latency rungs, old commit
# against new, in alternating pairs, with the CPU both ladder processes
# spend per iteration of the 2-rank allreduce loops (issue 30).
#
#   scripts/ladder-ab/run.sh [--pairs N] [--repeat K] [--out DIR] OLD [NEW]
#
# OLD and NEW are commits (NEW defaults to the work tree's HEAD); each is
# built from `git archive` into DIR. Run it from the root of a checkout.
# Pair i runs OLD's ladder then NEW's (odd i) or NEW's then OLD's (even
# i), each with --repeat K over the rungs of LADDER_RUNGS (default: the
# QUIC and eager 8 B rungs and Open MPI's), plus quic-xchg and empty where
# the binary has them. Then, per binary and pair, CPU per iteration of
# allreduce-loop and allreduce-eager-loop: the user+system time of a
# ladder of N2 iterations less one of N1 (the peer process included: the
# ladder waits for it), over the 1.1(N2-N1) iterations between them.
#
# It prints, per binary, each rung's median over the pairs, the ratios
# the issue's targets are about per pair (median [min, max]), and the
# CPU; the load average before and after. Every figure of one line comes
# from ladders run minutes apart under the same load: compare within a
# run, not across runs.
set -eu
pairs=5 repeat=3 out=/tmp/nexar-ladder-ab
while [ $# -gt 0 ]; do
	case $1 in
	--pairs) pairs=$2; shift 2 ;;
	--repeat) repeat=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	-h | --help) sed -n '2,22p' "$0"; exit 0 ;;
	--*) echo "ladder-ab: unknown flag $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
	echo "usage: scripts/ladder-ab/run.sh [--pairs N] [--repeat K] [--out DIR] OLD [NEW]" >&2
	exit 2
fi
old=$(git rev-parse --short "$1") new=$(git rev-parse --short "${2:-HEAD}")
rungs=${LADDER_RUNGS:-quic-msg,realnet-quic,allreduce,allreduce-loop,realnet-eager,allreduce-eager,allreduce-eager-loop,ompi}
n1=${N1:-500} n2=${N2:-5500}
mkdir -p "$out"
for c in "$old" "$new"; do
	rm -rf "$out/src-$c"
	mkdir -p "$out/src-$c"
	git archive "$c" | tar -x -C "$out/src-$c"
	(cd "$out/src-$c" && go build -o "$out/nexar-live-$c" ./cmd/nexar-live)
done
load() { cut -d' ' -f1-3 /proc/loadavg; }
# cpu BIN RUNG ITERS prints the user+system seconds of one ladder.
cpu() {
	python3 -c 'import resource,subprocess,sys
subprocess.run(sys.argv[1:],stdout=subprocess.DEVNULL,stderr=subprocess.DEVNULL,check=True)
r=resource.getrusage(resource.RUSAGE_CHILDREN); print(r.ru_utime+r.ru_stime)' "$1" ladder --only "$2" --iters "$3"
}
echo "load before: $(load)"
for i in $(seq 1 "$pairs"); do
	order="$old $new"
	[ $((i % 2)) = 0 ] && order="$new $old"
	for c in $order; do
		b=$out/nexar-live-$c r=$rungs
		for extra in quic-xchg empty; do
			"$b" ladder --help 2>&1 | grep -q "^ *$extra " && r="$r,$extra"
		done
		if ! "$b" ladder --only "$r" --repeat "$repeat" --ompi scripts/ompi-allreduce/run.sh --csv "$out/$c-$i.csv" >"$out/$c-$i.txt" 2>&1; then
			echo "pair $i $c: the ladder failed (left out; see $out/$c-$i.txt)"
			rm -f "$out/$c-$i.csv"
		fi
		for g in allreduce-loop allreduce-eager-loop; do
			if a=$(cpu "$b" $g "$n1") && z=$(cpu "$b" $g "$n2"); then
				echo "$g,$(python3 -c "print(($z-$a)/(1.1*($n2-$n1)))")" >>"$out/$c-$i.cpu"
			fi
		done
		echo "pair $i $c done, load $(load)"
	done
done
echo "load after: $(load)"
python3 - "$out" "$old" "$new" <<'EOF'
import csv, statistics as st, sys, glob, os
out, bins = sys.argv[1], sys.argv[2:]
ratios = [("allreduce", "quic-msg"), ("allreduce", "quic-xchg"), ("quic-xchg", "quic-msg"),
          ("allreduce-loop", "quic-msg"), ("realnet-quic", "quic-msg"), ("allreduce-eager-loop", "ompi")]
def fmt(xs): return "%.3g [%.3g, %.3g]" % (st.median(xs), min(xs), max(xs))
for b in bins:
    runs = []
    for cf in sorted(glob.glob(os.path.join(out, b + "-*.cpu"))):
        f = cf[:-4] + ".csv"
        v = {}
        if os.path.exists(f):
            v = {r["rung"]: float(r["median"]) * 1e6 for r in csv.DictReader(open(f)) if r["median"] and not r["skipped"]}
        c = {}
        if os.path.exists(cf):
            c = {k: float(x) * 1e6 for k, x in (l.strip().split(",") for l in open(cf))}
        runs.append((v, c))
    print("\n%s: %d pairs" % (b, len(runs)))
    for k in sorted({k for v, _ in runs for k in v}):
        print("  %-22s %s us" % (k, fmt([v[k] for v, _ in runs if k in v])))
    for a, z in ratios:
        xs = [v[a] / v[z] for v, _ in runs if a in v and z in v]
        if xs:
            print("  %-34s %s" % (a + " / " + z, fmt(xs)))
    for k in ("allreduce-loop", "allreduce-eager-loop"):
        xs = [c[k] for _, c in runs if k in c]
        if xs:
            print("  CPU per iteration, %-20s %s us (both processes)" % (k, fmt(xs)))
EOF
