#!/bin/bash
# shorttest.sh: what a short test costs beyond its window, wirespeed
# against netperf, in ABBA rounds: the wall time of `wirespeed run HOST
# -l L` and of `netperf -l L -c -C`, CPU figures on for both, each against
# a server of its own started here on 127.0.0.1. "The cost of a short
# test" in bench/README.md comes from it.
#
#   bench/shorttest.sh WIRESPEED_BINARY NETPERF_BINARY [ROUNDS [LENGTH [-- wirespeed run flags]]]
#   bench/shorttest.sh /tmp/wirespeed /opt/netperf/bin/netperf 10 1
#
# Each round runs both once, wirespeed first in odd rounds and netperf
# first in even ones, and prints both wall times in ms, their overheads
# (wall time less LENGTH) and the difference; then the medians and the
# median of the per-round differences with its min-max. At least 5
# rounds. The wall time is the process's, from fork to exit (bash's
# EPOCHREALTIME around the command), so it holds the process start, the
# control handshake, the idle baseline, the environment records, the
# window, the result exchange and the exit. For where the milliseconds go
# within one run: wirespeed run ... --log-level debug (and serve
# --log-level debug), whose lines carry their times.
set -eu
. "$(dirname "$0")/lib.sh"
ws=$1 np=$2 rounds=${3:-10} len=${4:-1}
shift $(($# < 4 ? $# : 4))
[ "${1:-}" = -- ] && shift
if [ "$rounds" -lt 5 ]; then
	echo "shorttest.sh: $rounds rounds; give at least 5" >&2
	exit 2
fi
dir=$(mktemp -d)
wp=$(free_port) npp=$(free_port)
start_server wirespeed "$ws" $wp
wspid=$server_pid
start_server netperf "$np" $npp
nppid=$server_pid
trap 'kill $wspid $nppid 2>/dev/null; rm -rf $dir' EXIT
sleep 1
# wall NAME CMD...: runs CMD, prints its wall time in ms.
wall() {
	local t0=$EPOCHREALTIME
	"$@" >/dev/null 2>$dir/err || {
		echo "failed: $*" >&2
		cat $dir/err >&2
		exit 1
	}
	local t1=$EPOCHREALTIME
	awk -v a=$t0 -v b=$t1 'BEGIN { printf "%.1f", (b - a) * 1000 }'
}
run_ws() { wall "$ws" run 127.0.0.1:$wp -l $len "$@"; }
run_np() { wall "$np" -H 127.0.0.1 -p $npp -l $len -c -C -P 0; }
echo "# $(date -u +%FT%TZ) load average $(cut -d' ' -f1-3 /proc/loadavg); wirespeed run 127.0.0.1:$wp -l $len $*; netperf -H 127.0.0.1 -p $npp -l $len -c -C -P 0"
for i in $(seq 1 $rounds); do
	if [ $((i % 2)) = 1 ]; then
		w=$(run_ws "$@")
		n=$(run_np)
	else
		n=$(run_np)
		w=$(run_ws "$@")
	fi
	echo "round $i: wirespeed $w ms, netperf $n ms; overheads $(awk -v w=$w -v n=$n -v l=$len 'BEGIN { printf "%.1f and %.1f ms, difference %.1f ms", w - l * 1000, n - l * 1000, w - n }')"
	echo "$w $n" >>$dir/rounds
done
echo "# $(date -u +%FT%TZ) load average $(cut -d' ' -f1-3 /proc/loadavg)"
awk -v l=$len '{ w[NR] = $1; n[NR] = $2; d[NR] = $1 - $2 }
	function median(a, k,   i, j, t, m) {
		for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
		return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
	}
	END {
		mw = median(w, NR); mn = median(n, NR); md = median(d, NR)
		printf "median wall time: wirespeed %.1f ms (overhead %.1f), netperf %.1f ms (overhead %.1f); wirespeed - netperf per round: median %.1f ms, min-max %.1f-%.1f over %d rounds\n", mw, mw - l * 1000, mn, mn - l * 1000, md, d[1], d[NR], NR
	}' $dir/rounds
