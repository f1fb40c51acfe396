#!/bin/sh
# count.sh TEST-BINARY BENCH-PATTERN: the instructions one iteration of
# the benchmarks matching the pattern executes, counted by cachegrind
# (which a loaded machine does not move): in all, in nexar-go's own code,
# and in the Go runtime (whose collector's share varies from run to run).
#
#   go test ./sim -c -o sim.test
#   scripts/sim-instructions/count.sh ./sim.test 'FlowHalvingDoubling/flow'
set -eu
if [ $# -ne 2 ]; then
	echo "usage: $0 TEST-BINARY BENCH-PATTERN" >&2
	exit 2
fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT
valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file="$out" \
	"$1" -test.run '^$' -test.bench "$2" -test.benchtime 1x >/dev/null 2>&1
cg_annotate --show=Ir --show-percs=no --threshold=0 --auto=no "$out" 2>/dev/null |
	awk '/file:function/ { p = 1; next }
	p && NF >= 2 {
		x = $1; gsub(",", "", x); t += x
		if ($0 ~ /nexar-go/) s += x; else if ($0 ~ /runtime/) r += x
	}
	END { printf "instructions %.1fM  nexar-go %.1fM  runtime %.1fM\n", t / 1e6, s / 1e6, r / 1e6 }'
