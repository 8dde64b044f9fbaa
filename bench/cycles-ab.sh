#!/bin/bash
# cycles-ab.sh: CPU per unit of two wirespeed builds, A and B, in ABBA
# pairs, each against a server of its own build: how "What was tried, and
# what it gave" in bench/README.md compares a change with what it
# replaced. Same counting as cycles.sh (perf stat task-clock).
#
#   bench/cycles-ab.sh /tmp/ws-before /tmp/ws-after 6 -- -t TCP_CRR -r 1,1 -l 3 --cc cubic
#
# Prints per round: client and server CPU ns per unit (transaction, or
# sender's send call) and the units, for A then B, and B/A of each; then
# the median B/A of each with its min-max over the rounds. At least 5
# rounds (the bench's rule; README figures from 4-round runs say so).
# Both run without CPU sampling (--cpu=false).
set -eu
. "$(dirname "$0")/lib.sh"
A=$1 B=$2 P=$3
shift 3
[ "${1:-}" = -- ] && shift
if [ "$P" -lt 5 ]; then
	echo "cycles-ab.sh: $P rounds; give at least 5" >&2
	exit 2
fi
dir=$(mktemp -d)
pa=$(free_port) pb=$(free_port)
start_server wirespeed "$A" $pa
sa=$server_pid
start_server wirespeed "$B" $pb
sb=$server_pid
trap 'kill $sa $sb 2>/dev/null; rm -rf $dir' EXIT
sleep 1
one() {
	local bin=$1 port=$2 spid=$3
	shift 3
	perf stat -x, -e task-clock -p $spid -o $dir/server &
	local ppid=$!
	perf stat -x, -e task-clock -o $dir/client "$bin" run 127.0.0.1:$port "$@" -i 0 --json --cpu=false >$dir/out
	kill -INT $ppid
	wait $ppid || true
	local n c s
	n=$(jq '.summary.rr_summary.transactions // .directions[0].streams[0].sender.calls' $dir/out)
	c=$(awk -F, '$3 == "task-clock" { print $1 }' $dir/client)
	s=$(awk -F, '$3 == "task-clock" { print $1 }' $dir/server)
	awk -v n=$n -v c=$c -v s=$s 'BEGIN { printf "%.0f %.0f %d", c * 1e6 / n, s * 1e6 / n, n }'
}
for i in $(seq 1 $P); do
	if [ $((i % 2)) = 1 ]; then
		a=$(one "$A" $pa $sa "$@")
		b=$(one "$B" $pb $sb "$@")
	else
		b=$(one "$B" $pb $sb "$@")
		a=$(one "$A" $pa $sa "$@")
	fi
	r=$(echo $a $b | awk '{ printf "%.3f %.3f %.3f", $4 / $1, $5 / $2, $6 / $3 }')
	echo "round $i: A client_ns server_ns units = $a   B = $b   B/A = $r"
	echo $r >>$dir/ratios
done
# Median and min-max of each B/A column over the rounds.
for col in 1 2 3; do
	name=$(echo "client_ns server_ns units" | cut -d' ' -f$col)
	awk -v c=$col '{ print $c }' $dir/ratios | sort -g | awk -v name=$name '
		{ v[NR] = $1 }
		END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		      printf "B/A %s: median %.3f, min-max %.3f-%.3f over %d rounds\n", name, m, v[1], v[NR], NR }'
done
