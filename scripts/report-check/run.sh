#!/usr/bin/env bash
# Checks report.html in a real browser: headless Chromium, from Debian's
# packages.
#
#   scripts/report-check/run.sh [--screenshots DIR]
#
# Installs Debian's chromium when /usr/bin/chromium is missing (apt-get, as
# root or through sudo, as notebooks/run.sh installs Jupyter), builds
# nexar-sim and nexar-live, runs nexar-sim on a small sweep (nccl-tests'
# flags, 8 ranks) and nexar-live on a short one over its emulated network
# (about 10 s), and opens each run's report.html in headless Chromium with
# no network: a screenshot as a phone sees it (412 px wide) and one as a
# desktop does (1280 px), and the DOM, whose text is checked (the page's
# headings, a table row, the command) and whose images are counted: one
# per figure in the run's folder (a figure drawn as PNG and SVG counts
# once). --screenshots DIR keeps the screenshots there (sim-phone.png,
# sim-desktop.png, live-phone.png, live-desktop.png); otherwise they go with
# the scratch folder.
#
# Exit status: 0 when every check passed; 1 when one failed; 2 for bad
# usage or when Chromium cannot be installed.
set -euo pipefail
cd "$(dirname "$0")/../.."

shots=""
while [ $# -gt 0 ]; do
	case $1 in
	--screenshots) shots=${2:?--screenshots needs a folder}; shift 2 ;;
	-h | --help) sed -n '2,/^$/s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*) echo "scripts/report-check/run.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
	esac
done

chromium=/usr/bin/chromium
if [ ! -x "$chromium" ]; then
	. scripts/apt-install.sh
	apt_install scripts/report-check/run.sh chromium
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -z "$shots" ]; then
	shots=$tmp/shots
fi
mkdir -p "$shots"
go build -o "$tmp/bin/" ./cmd/nexar-sim ./cmd/nexar-live

failed=0
fail() {
	echo "FAIL: $*" >&2
	failed=1
}

# browse PAGE SHOT WIDTH: a screenshot of PAGE, WIDTH px wide, into SHOT.
browse() {
	local profile
	profile=$(mktemp -d "$tmp/profile.XXXXXX")
	"$chromium" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--host-resolver-rules='MAP * ~NOTFOUND' --hide-scrollbars \
		--user-data-dir="$profile" "${@:4}" "--screenshot=$2" "--window-size=$3,2000" "file://$1" 2>>"$tmp/chromium.log" >/dev/null
}

# dom PAGE: the DOM of PAGE once loaded, on stdout.
dom() {
	local profile
	profile=$(mktemp -d "$tmp/profile.XXXXXX")
	"$chromium" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--host-resolver-rules='MAP * ~NOTFOUND' \
		--user-data-dir="$profile" --dump-dom "file://$1" 2>>"$tmp/chromium.log"
}

# pngWidth FILE: the width of a PNG, from its IHDR.
pngWidth() {
	od -An -tu1 -j16 -N4 "$1" | awk '{print $1*16777216 + $2*65536 + $3*256 + $4}'
}

# check NAME DIR WANT...: DIR's report.html in Chromium: screenshots at a
# phone's and a desktop's width, and the DOM holding each WANT and one
# image per figure of DIR.
check() {
	local name=$1 dir=$2
	shift 2
	local page=$dir/report.html
	if [ ! -s "$page" ]; then
		fail "$name: no report.html in its run's folder"
		return
	fi
	for view in phone:412 desktop:1280; do
		local shot=$shots/$name-${view%%:*}.png
		rm -f "$shot"
		browse "$page" "$shot" "${view##*:}" || true
		if [ ! -s "$shot" ]; then
			fail "$name: no ${view%%:*} screenshot (see $tmp/chromium.log)"
			cat "$tmp/chromium.log" >&2
		elif [ "$(pngWidth "$shot")" != "${view##*:}" ]; then
			fail "$name: the ${view%%:*} screenshot is $(pngWidth "$shot") px wide, want ${view##*:}"
		else
			echo "$name: ${view%%:*} screenshot $(stat -c %s "$shot") bytes"
		fi
	done
	local d=$tmp/$name.dom.html
	dom "$page" >"$d" || true
	for want in "<h2>What was run</h2>" "<h2>Figures</h2>" "<h2>Results</h2>" "$@"; do
		grep -qF -- "$want" "$d" || fail "$name: the page's DOM lacks $want"
	done
	local figures images
	figures=$(cd "$dir" && ls | sed -n 's/\.\(png\|svg\)$//p' | sort -u | wc -l)
	images=$(grep -o '<img ' "$d" | wc -l)
	if [ "$figures" -eq 0 ] || [ "$images" -ne "$figures" ]; then
		fail "$name: $images image(s) in the page, $figures figure(s) in its folder"
	else
		echo "$name: $images image(s) for the $figures figure(s) of the folder; headings and rows found"
	fi
}

echo "== nexar-sim run -b 1K -e 1M -f 4 --world 8"
(cd "$tmp" && bin/nexar-sim run -b 1K -e 1M -f 4 --world 8 --out sim -q)
check sim "$tmp/sim" "<h2>Crossovers and tuning table</h2>" "<h1>nexar-sim run: allreduce -b 1K -e 1M -f 4</h1>" \
	"<summary>allreduce · ring · 8 ranks" "<tr><td>1024</td><td class=\"t\">f32</td>" "nexar-sim run -b 1K -e 1M -f 4 --world 8 --out sim -q"

echo "== nexar-live run -b 1K -e 64K -f 8 --np 2 --emulate latency=5us,bandwidth=1GB/s --algorithms ring,recursive_doubling --minmax"
(cd "$tmp" && bin/nexar-live run -b 1K -e 64K -f 8 --np 2 --emulate latency=5us,bandwidth=1GB/s \
	--algorithms ring,recursive_doubling --minmax --warmup 2 --iters 10 --out live >/dev/null)
check live "$tmp/live" "<h2>Model error</h2>" "<h1>nexar-live run: allreduce -b 1K -e 64K -f 8</h1>" \
	"<summary>allreduce · ring · 2 ranks" "<tr><td>1024</td><td class=\"t\">f32</td>" "<th>avg (µs)</th>"

if [ $failed -ne 0 ]; then
	echo "scripts/report-check/run.sh: failed" >&2
	exit 1
fi
echo "scripts/report-check/run.sh: report.html reads in Chromium (screenshots in $shots)"
