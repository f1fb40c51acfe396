#!/usr/bin/env bash
# Same outputs before and after a change that should not change any: builds
# nexar-sim and nexar-live at a base revision and at the working tree, runs
# both on the same inputs, and compares every file they write, byte for
# byte. A refactoring (such as the redesign of live/ and the results,
# units and thresholds packages) is checked with it.
#
#   scripts/same-outputs/run.sh [--quick] [BASE_REV]     (default BASE_REV: HEAD)
#
# The inputs:
#   - nexar-sim run on every shipped scenario at the top of scenarios/ that
#     runs in seconds to a minute (the NCCL tuner's conf sweep, the
#     training-step study and the machines of scenarios/nccl-choice/ take
#     minutes each on 2 cores and are left out; --quick keeps three
#     scenarios only), and with nccl-tests' flags and no file;
#   - nexar-sim validate on every shipped scenario, and nexar-sim list;
#   - a results.csv that nexar-live wrote (testdata/, 3 ranks on loopback,
#     live/examples/loopback-ci.toml) read by every command that reads one:
#     nexar-sim plot, nexar-sim calibrate, nexar-live compare, nexar-live
#     calibrate, nexar-live peer;
#   - nexar-sim calibrate and nexar-live calibrate on an nccl-tests log.
# Standard output, standard error and the exit status of each command are
# compared too, less what depends on the moment: validate's estimates of
# time and the machine's free memory. Exits 0 when everything is the same; otherwise lists what
# differs (diff -r of the two output trees) and exits 1.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
quick=0
if [ "${1:-}" = "--quick" ]; then quick=1; shift; fi
base=${1:-HEAD}
work=$(mktemp -d)
trap 'git -C "$root" worktree remove --force "$work/base-src" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

echo "== building $base and the working tree"
git -C "$root" worktree add --quiet --detach "$work/base-src" "$base"
(cd "$work/base-src" && go build -o "$work/base-bin/" ./cmd/nexar-sim ./cmd/nexar-live)
(cd "$root" && go build -o "$work/new-bin/" ./cmd/nexar-sim ./cmd/nexar-live)

scenarios=$(cd "$root" && ls scenarios/*.toml | grep -v -e nccl-tuner-dgx-h100 -e gpt3-13b)
if [ "$quick" = 1 ]; then
	scenarios="scenarios/scenarios.toml scenarios/torus.toml scenarios/dgx-h100.toml"
fi
fixture=scripts/same-outputs/testdata/loopback-ci-np3-results.csv
ncclLog=calibrate/testdata/nccl-allreduce.log
osuLog=calibrate/testdata/osu-allreduce.log

# run SIDE NAME CMD...: runs CMD with the SIDE's binaries first on PATH, in
# the repository root, keeping its stdout, stderr and status under SIDE/NAME.
run() {
	local side=$1 name=$2; shift 2
	local out="$work/$side/$name"
	mkdir -p "$out"
	set +e
	(cd "$root" && PATH="$work/$side-bin:$PATH" OUT="$out" "$@" >"$out/stdout" 2>"$out/stderr")
	echo $? >"$out/status"
	set -e
	# Paths of the temporary folders differ between the sides by design (in
	# every file, as manifest.json records them), and
	# so do validate's estimates of time and the memory free now: both are
	# measured on this machine as the command runs.
	{ grep -rlI -F "$work/$side" "$out" || true; } | xargs -r sed -i "s|$work/$side|OUT|g"
	sed -i -E -e 's/roughly [^;]*(;|$)/roughly T\1/' \
		-e 's/\(the machine has [^)]*\)/(the machine has M)/' "$out/stdout" "$out/stderr"
}

for side in base new; do
	echo "== running the $side binaries"
	run $side list sh -c 'nexar-sim list'
	run $side validate sh -c "nexar-sim validate $(echo $scenarios)"
	for s in $scenarios; do
		name=run-$(basename "$s" .toml)
		[ -d "$work/$side/$name" ] && name=$name-$(basename "$(dirname "$s")")
		run $side "$name" sh -c "nexar-sim run $s --out \$OUT/out --quiet"
	done
	run $side run-nccl-flags sh -c 'nexar-sim run -b 8 -e 1M -f 4 --world 8 --out $OUT/out --quiet'
	run $side sim-plot-live sh -c "nexar-sim plot $fixture --out \$OUT/out"
	run $side sim-calibrate-live sh -c "nexar-sim calibrate --out \$OUT/model.toml $fixture"
	run $side sim-calibrate-nccl sh -c "nexar-sim calibrate --out \$OUT/model.toml $ncclLog"
	run $side live-compare sh -c "nexar-live compare live/examples/loopback-ci.toml $fixture --out \$OUT/out"
	run $side live-calibrate sh -c "nexar-live calibrate --out \$OUT/model.toml $fixture"
	run $side live-calibrate-shared-host sh -c "nexar-live calibrate --model shared-host,realnet --out \$OUT/model.toml $fixture"
	run $side live-peer sh -c "nexar-live peer $fixture $osuLog"
done

echo "== comparing"
if diff -r "$work/base" "$work/new" >"$work/diff"; then
	echo "same outputs: $(find "$work/new" -type f | wc -l) files"
	exit 0
fi
cat "$work/diff" | head -200
echo "outputs differ (above)"
exit 1
