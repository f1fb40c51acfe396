# Shared by the peer scripts (scripts/ompi-allreduce/run.sh,
# scripts/gloo-allreduce/run.sh), sourced, POSIX sh: the load average
# printed with every table, the peer and nexar-live run in alternating
# pairs, and the per-size summary over the pairs (median and range of
# the ratio), so that a ratio is read from runs under the same conditions.
#
# The sourcing script defines run_peer DIR (the peer's nccl-tests table
# into DIR/peer.log) and run_nexar DIR (nexar-live's results into
# DIR/nexar), sets $peer (the peer's name in the tables), $nexar (the
# nexar-live binary) and $out, and calls peer_pairs N.

# peer_load prints "load average: 1m 5m 15m" from /proc/loadavg (or
# uptime's line where there is none).
peer_load() {
	if [ -r /proc/loadavg ]; then
		set -- $(cat /proc/loadavg)
		echo "load average: $1 $2 $3"
	else
		uptime | sed 's/.*\(load average\)/\1/'
	fi
}

# peer_toml_bytes turns a size list ("8,4K,64M") into TOML strings of the
# scenario's bytes ("8, \"4KiB\", \"64MiB\"").
peer_toml_bytes() {
	echo "$1" | sed -e 's/\([0-9][0-9]*\)[kK]/"\1KiB"/g' -e 's/\([0-9][0-9]*\)[mM]/"\1MiB"/g' -e 's/\([0-9][0-9]*\)[gG]/"\1GiB"/g'
}

# peer_toml_names turns a name list ("ring,auto") into TOML strings
# ("\"ring\", \"auto\""); names are letters, digits and underscores.
peer_toml_names() {
	case "$1" in
	'' | *[!a-z0-9_,]* | ,* | *, | *,,*)
		echo "$(basename "$0"): --algorithms wants names like ring,auto (see 'nexar-sim list'), got '$1'" >&2
		exit 2
		;;
	esac
	echo "$1" | sed -e 's/[a-z0-9_]*/"&"/g' -e 's/,/, /g'
}

# peer_scenario_head SCRIPT PEER NAME prints the head of the scenario
# nexar-live runs beside PEER, written by SCRIPT: its name and the
# network, which nexar-live run needs but a live run does not use.
peer_scenario_head() {
	printf '# Written by %s: the sizes %s ran.\nname = "%s"\n[network]\nmodel = "alpha-beta"\nlatency = "100us"\nbandwidth = "500MB/s"\n' "$1" "$2" "$3"
}

# peer_sweep COLLECTIVE ALGORITHMS NP BYTES prints a sweep of that
# scenario: ALGORITHMS and BYTES as TOML lists' insides
# (peer_toml_names, peer_toml_bytes), on host data as the peers run.
peer_sweep() {
	printf '[[sweep]]\ncollective = "%s"\nalgorithms = [%s]\nworld = [%s]\nbytes = [%s]\ndtype = "f32"\nop = "sum"\ndata = "host"\n' "$1" "$2" "$3" "$4"
}

# peer_timed NAME CMD... runs a command with the load average before and
# after it on stderr and in the log's last lines.
peer_timed() {
	_name=$1
	shift
	echo "== $_name; before: $(peer_load)" >&2
	"$@"
	_st=$?
	echo "== $_name; after: $(peer_load)" >&2
	return $_st
}

# peer_pairs N runs N pairs, alternating which side goes first (peer
# first in odd pairs, nexar-live first in even ones, so drift in the
# machine's load falls on both alike), compares each pair with
# 'nexar-live peer', and prints the summary over the pairs.
peer_pairs() {
	_n=$1
	_i=1
	_before=$(peer_load)
	while [ "$_i" -le "$_n" ]; do
		_d="$out/pair$_i"
		rm -rf "$_d"
		mkdir -p "$_d"
		if [ $((_i % 2)) = 1 ]; then
			peer_timed "pair $_i/$_n: $peer" run_peer "$_d"
			peer_timed "pair $_i/$_n: nexar-live" run_nexar "$_d" >"$_d/nexar.log"
		else
			peer_timed "pair $_i/$_n: nexar-live" run_nexar "$_d" >"$_d/nexar.log"
			peer_timed "pair $_i/$_n: $peer" run_peer "$_d"
		fi
		"$nexar" peer --name "$peer" "$_d/nexar/results.csv" "$_d/peer.log" >"$_d/peer.txt"
		_i=$((_i + 1))
	done
	_after=$(peer_load)
	echo "== $peer's table, pair 1 (before: $_before)"
	grep -v '^==' "$out/pair1/peer.log"
	echo "== busbw per size over $_n alternating pairs (ratio = nexar-live's fastest / $peer; median [min, max])"
	echo "# before: $_before"
	echo "# after:  $_after"
	peer_summary "$_n"
}

# peer_summary N reads pair1..pairN/peer.txt ('nexar-live peer' tables:
# collective world size unit ... peer-busbw algorithm time unit busbw
# auto ratio) and prints per row the median and range of each column.
peer_summary() {
	_files=
	_i=1
	while [ "$_i" -le "$1" ]; do
		_files="$_files $out/pair$_i/peer.txt"
		_i=$((_i + 1))
	done
	# shellcheck disable=SC2086
	awk -v peer="$peer" '
	function med(s,   a, n, i, j, t) {
		n = split(s, a, " ")
		for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
		lo = a[1]; hi = a[n]
		return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2
	}
	function us(v, u) { return u == "ns" ? v / 1000 : u == "ms" ? v * 1000 : u == "s" ? v * 1e6 : v }
	FNR == 1 || $1 == "busbw" { next }
	{
		k = $1 " " $2 " " $3 " " $4
		if (!(k in seen)) { seen[k] = 1; order[++nk] = k }
		r[k] = r[k] " " $NF; pb[k] = pb[k] " " $(NF-6); nb[k] = nb[k] " " $(NF-2)
		pt[k] = pt[k] " " us($(NF-8), $(NF-7)); nt[k] = nt[k] " " us($(NF-4), $(NF-3))
		algs[k, $(NF-5)]++
		if (algs[k, $(NF-5)] > best[k]) { best[k] = algs[k, $(NF-5)]; balg[k] = $(NF-5) }
	}
	END {
		printf "%-14s %5s %9s  %10s %10s  %10s %10s  %-20s  %7s  %15s  %5s\n", "collective", "world", "size", peer " µs", "busbw", "nexar µs", "busbw", "fastest (mostly)", "ratio", "[min, max]", "pairs"
		for (i = 1; i <= nk; i++) {
			k = order[i]; split(k, f, " ")
			m = med(r[k]); rl = lo; rh = hi
			printf "%-14s %5s %9s  %10.1f %10.4g  %10.1f %10.4g  %-20s  %7.2f  [%5.2f, %5.2f]  %5d\n", f[1], f[2], f[3] " " f[4], med(pt[k]), med(pb[k]), med(nt[k]), med(nb[k]), balg[k], m, rl, rh, split(r[k], z, " ")
		}
		print "times in µs, busbw in GB/s, medians over the pairs; ratio > 1: nexar-live is faster"
	}' $_files
}
