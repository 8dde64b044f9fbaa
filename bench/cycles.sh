#!/bin/bash
# cycles.sh: the cost per unit of one test for one tool, client and server
# apart, from perf stat: CPU time (task-clock), system calls and context
# switches per transaction (RR, CRR) or per send call (TCP_STREAM). The
# figures of "Where the cycles go" in bench/README.md come from it.
#
#   bench/cycles.sh wirespeed BINARY TEST SECONDS -- wirespeed run flags
#   bench/cycles.sh netperf   BINARY TEST SECONDS -- netperf test flags (after --)
#
#   bench/cycles.sh wirespeed /tmp/wirespeed TCP_CRR 3 -- -r 1,1 --cc cubic
#   bench/cycles.sh netperf /tmp/netperf-src/src/netperf TCP_CRR 3 -- -r 1,1 -K cubic,cubic
#
# It starts its own server (wirespeed serve, or netserver beside netperf)
# on 127.0.0.1 and a free port, counts the client over the whole run and
# the server while the client runs, and stops the server. Needs perf
# (Debian linux-perf), jq, root or perf_event_paranoid <= 0. The counts
# include each tool's set-up. Both run without CPU sampling (wirespeed
# --cpu=false, netperf without -c/-C); the figures in bench/README.md
# made before bench/lib.sh (2026-12-01, 20:00) ran wirespeed with its
# samplers, about a thousand system calls a second, amortised over the run.
# Both count their send calls (netperf's LOCAL_SEND_CALLS).
set -eu
. "$(dirname "$0")/lib.sh"
tool=$1 bin=$2 test=$3 secs=$4
shift 4
[ "${1:-}" = -- ] && shift
dir=$(mktemp -d)
port=$(free_port)
start_server "$tool" "$bin" $port
spid=$server_pid
trap 'kill $spid 2>/dev/null; rm -rf $dir' EXIT
ev=task-clock,context-switches,raw_syscalls:sys_enter
sleep 1
perf stat -x, -e $ev -p $spid -o $dir/server &
ppid=$!
if [ "$tool" = wirespeed ]; then
	perf stat -x, -e $ev -o $dir/client "$bin" run 127.0.0.1:$port -t $test -l $secs -i 0 --json --cpu=false "$@" >$dir/out
	n=$(jq '.summary.rr_summary.transactions // .directions[0].streams[0].sender.calls' $dir/out)
else
	case $test in
	TCP_STREAM)
		perf stat -x, -e $ev -o $dir/client "$bin" -H 127.0.0.1 -p $port -t $test -l $secs -P 0 -- "$@" -k LOCAL_SEND_CALLS >$dir/out
		n=$(awk -F= '$1 == "LOCAL_SEND_CALLS" {print $2}' $dir/out)
		;;
	*)
		# RR and CRR: send and recv sockets, request, response, seconds, transactions/s.
		perf stat -x, -e $ev -o $dir/client "$bin" -H 127.0.0.1 -p $port -t $test -l $secs -P 0 -- "$@" >$dir/out
		n=$(awk 'NF==6 {printf "%d", $6*$5; exit}' $dir/out)
		;;
	esac
fi
kill -INT $ppid
wait $ppid || true
for side in client server; do
	awk -F, -v n=$n -v side=$side -v tool=$tool -v test=$test '
		$3 == "task-clock" { cpu = $1 }
		$3 == "context-switches" { cs = $1 }
		$3 == "raw_syscalls:sys_enter" { sc = $1 }
		END { printf "%s %s %s: %d units, %.2f us CPU, %.2f system calls, %.3f context switches per unit\n", tool, test, side, n, cpu * 1000 / n, sc / n, cs / n }
	' $dir/$side
done
