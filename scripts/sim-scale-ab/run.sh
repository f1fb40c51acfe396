#!/usr/bin/env bash
# scripts/sim-scale-ab/run.sh: the simulator's scale benchmark points, old
# commit against new, in the order old, new, new, old (issue 33).
#
#   scripts/sim-scale-ab/run.sh [--rounds N] [--out DIR] OLD [NEW] [-- BENCH...]
#
# OLD and NEW are commits (NEW defaults to the work tree's HEAD); each
# one's sim test binary is built from `git archive` into DIR. Run it from
# the root of a checkout. Each BENCH is a -test.bench pattern naming one
# point (default: the replayed halving-doubling points at 2^18 and 2^20;
# -sim.big is passed always) and runs in a process of its own, N rounds
# (default 1) of old, new, new, old, with GODEBUG=gctrace=1, so that the
# garbage collections of the whole process (recording and replay, the
# floor's measurement too) are counted alike for either binary.
#
# It prints one line per point and run: the binary, ns/msg, x-floor,
# cpu-ns/msg, cpu-x-floor, peak B/rank, the process's collections, and the load
# average after it. Ratios to the floor are measured within each run:
# compare them, not the raw times, across runs.
set -eu
rounds=1 out=/tmp/nexar-sim-scale-ab
while [ $# -gt 0 ]; do
	case $1 in
	--rounds) rounds=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	-h | --help) sed -n '2,19p' "$0"; exit 0 ;;
	--*) echo "sim-scale-ab: unknown flag $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
if [ $# -lt 1 ]; then
	echo "usage: scripts/sim-scale-ab/run.sh [--rounds N] [--out DIR] OLD [NEW] [-- BENCH...]" >&2
	exit 2
fi
old=$(git rev-parse --short "$1")
shift
new=$(git rev-parse --short HEAD)
if [ $# -gt 0 ] && [ "$1" != -- ]; then
	new=$(git rev-parse --short "$1")
	shift
fi
[ $# -gt 0 ] && [ "$1" = -- ] && shift
if [ $# -eq 0 ]; then
	set -- 'Scale$/halving_doubling$/p=262144$/replay$' 'Scale$/halving_doubling$/p=1048576$/replay$'
fi
mkdir -p "$out"
for c in "$old" "$new"; do
	rm -rf "$out/src-$c"
	mkdir -p "$out/src-$c"
	git archive "$c" | tar -x -C "$out/src-$c"
	(cd "$out/src-$c" && go test ./sim -c -o "$out/sim-$c.test")
done
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-36s %-8s %7s %7s %8s %11s %11s %5s  %s\n' point binary ns/msg x-floor cpu-ns/msg cpu-x-floor peak-B/rank gcs load
# metric LINE NAME prints the value the benchmark line reports for NAME.
metric() { echo "$1" | awk -v n="$2" '{for (i = 2; i <= NF; i++) if ($i == n) print $(i-1)}'; }
for bench in "$@"; do
	for i in $(seq 1 "$rounds"); do
		for c in "$old" "$new" "$new" "$old"; do
			log=$out/run-$c
			GODEBUG=gctrace=1 "$out/sim-$c.test" -test.run '^$' -test.bench "$bench" -test.benchtime 1x \
				-test.timeout 60m -sim.big >"$log.out" 2>"$log.err"
			gcs=$(grep -c '^gc ' "$log.err" || true)
			grep '^Benchmark' "$log.out" | while read -r line; do
				name=$(echo "$line" | awk '{print $1}' | sed 's/^BenchmarkScale\///; s/-[0-9]*$//')
				printf '%-36s %-8s %7s %7s %8s %11s %11s %5s  %s\n' "$name" "$c" "$(metric "$line" ns/msg)" \
					"$(metric "$line" x-floor)" "$(metric "$line" cpu-ns/msg)" "$(metric "$line" cpu-x-floor)" "$(metric "$line" peak-B/rank)" \
					"$gcs" "$(cut -d' ' -f1-3 /proc/loadavg)"
			done
		done
	done
done
