#!/bin/sh
# Peer check: nexar-sim against SimGrid SMPI on the same points. See
# README.md beside this file for what it compares and the SMPI settings.
#
#   scripts/simgrid/run.sh [--install] [--out DIR] [SCENARIO.toml] [-- SMPICHECK-FLAGS...]
#
# --install   install SimGrid from the distribution's packages first
#             (apt-get update; apt-get install libsimgrid-dev)
# --out DIR   where platforms, host files, SMPI's logs and smpi.csv go
#             (default smpi-out)
# SCENARIO    a nexar-sim scenario (default scripts/simgrid/crossbar.toml):
#             every point whose algorithm SMPI also has runs in both
# after --     flags for smpicheck, such as -as (see README.md)
#
# It builds coll.c with smpicc, runs each collective, algorithm and world
# of the scenario under smpirun on a platform made from the scenario's
# network, runs the same points in nexar-sim, and prints nexar-sim's time,
# SMPI's and their ratio per point, then how many points are within 1% and
# 5% and the worst ones. It is not part of CI: it needs SimGrid and takes
# minutes (SMPI runs a real process per rank).
set -eu

install=0
out=smpi-out
scenario=
while [ $# -gt 0 ]; do
	case "$1" in
	-h | --help) sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p;}' "$0"; exit 0 ;;
	--install) install=1 ;;
	--out) out=$2; shift ;;
	--) shift; break ;;
	-*) echo "run.sh: unknown flag $1 (see --help)" >&2; exit 2 ;;
	*) scenario=$1 ;;
	esac
	shift
done

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
[ -n "$scenario" ] || scenario=$here/crossbar.toml
mkdir -p "$out"
out=$(cd "$out" && pwd)

if [ "$install" = 1 ]; then
	apt-get update
	DEBIAN_FRONTEND=noninteractive apt-get install -y libsimgrid-dev
fi
if ! command -v smpicc >/dev/null 2>&1; then
	echo "run.sh: no smpicc: install SimGrid (run.sh --install, or apt-get install libsimgrid-dev)" >&2
	exit 2
fi

echo "== building coll with smpicc" >&2
smpicc -O2 -o "$out/coll" "$here/coll.c"
echo "== building smpicheck" >&2
(cd "$root" && go build -o "$out/smpicheck" ./scripts/simgrid/smpicheck)
"$out/smpicheck" -coll "$out/coll" -out "$out" -csv "$out/smpi.csv" "$@" "$scenario"
