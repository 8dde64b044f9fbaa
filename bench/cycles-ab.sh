#!/bin/bash
# cycles-ab.sh: CPU per unit of two wirespeed builds, A and B, in ABBA
# pairs, each against a server of its own build: how "What was tried, and
# what it gave" in bench/README.md compares a change with what it
# replaced. Same counting as cycles.sh (perf stat task-clock).
#
#   bench/cycles-ab.sh /tmp/ws-before /tmp/ws-after 4 -- -t TCP_CRR -r 1,1 -l 3 --cc cubic
#
# Prints per round: client and server CPU ns per unit (transaction, or
# sender's send call), and the units, for A then B.
set -eu
A=$1 B=$2 P=$3
shift 3
[ "${1:-}" = -- ] && shift
dir=$(mktemp -d)
free() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
pa=$(free) pb=$(free)
"$A" serve --listen 127.0.0.1:$pa --log-level warn &
sa=$!
"$B" serve --listen 127.0.0.1:$pb --log-level warn &
sb=$!
trap 'kill $sa $sb 2>/dev/null; rm -rf $dir' EXIT
sleep 1
one() {
	local bin=$1 port=$2 spid=$3
	shift 3
	perf stat -x, -e task-clock -p $spid -o $dir/server &
	local ppid=$!
	perf stat -x, -e task-clock -o $dir/client "$bin" run 127.0.0.1:$port "$@" -i 0 --json >$dir/out
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
	echo "round $i: A client_ns server_ns units = $a   B = $b"
done
