#!/bin/bash
# udpcycles.sh: CPU per datagram of one UDP_STREAM run, sender and receiver
# apart, from perf stat (task-clock, context switches, system calls): the
# sender's (the client's, whole run) per datagram it sent, the receiver's
# (the server's, while the client runs) per datagram it received. The
# figures of "UDP_STREAM: one call per datagram" in bench/README.md come
# from it.
#
#   bench/udpcycles.sh wirespeed BINARY SIZE SECONDS [wirespeed run flags]
#   bench/udpcycles.sh netperf   BINARY SIZE SECONDS [netperf test flags]
#
# Both with the socket buffers the kernel grants by default (half of
# net.core.rmem_default, which it doubles: 106496 here), one send call
# per datagram. Needs perf, jq, root.
set -eu
. "$(dirname "$0")/lib.sh"
tool=$1 bin=$2 size=$3 secs=$4
shift 4
dir=$(mktemp -d)
port=$(free_port)
start_server "$tool" "$bin" $port
spid=$server_pid
trap 'kill $spid 2>/dev/null; rm -rf $dir' EXIT
ev=task-clock,context-switches,raw_syscalls:sys_enter
buf=$(($(cat /proc/sys/net/core/rmem_default) / 2))
sleep 1
perf stat -x, -e $ev -p $spid -o $dir/server &
ppid=$!
if [ "$tool" = wirespeed ]; then
	perf stat -x, -e $ev -o $dir/client "$bin" run 127.0.0.1:$port -t UDP_STREAM -b 0 -l $secs -i 0 --json --cpu=false \
		-m $size -M $size -s $buf -S $buf "$@" >$dir/out
	tx=$(jq '.directions[0].streams[0].sender.total_packets' $dir/out)
	rx=$(jq '.directions[0].streams[0].receiver.total_packets' $dir/out)
else
	perf stat -x, -e $ev -o $dir/client "$bin" -H 127.0.0.1 -p $port -t UDP_STREAM -l $secs -P 0 -- \
		-m $size,$size -M $size,$size -n -N -k LOCAL_SEND_CALLS,REMOTE_RECV_CALLS "$@" >$dir/out
	tx=$(awk -F= '$1=="LOCAL_SEND_CALLS" {print $2}' $dir/out)
	rx=$(awk -F= '$1=="REMOTE_RECV_CALLS" {print $2}' $dir/out)
fi
kill -INT $ppid
wait $ppid || true
for side in client server; do
	n=$tx role=sender
	[ $side = server ] && n=$rx role=receiver
	awk -F, -v n=$n -v role=$role -v tool=$tool -v size=$size '
		$3 == "task-clock" { cpu = $1 }
		$3 == "context-switches" { cs = $1 }
		$3 == "raw_syscalls:sys_enter" { sc = $1 }
		END { printf "%s %d B %s: %d datagrams, %.3f us CPU, %.3f system calls, %.3f context switches per datagram\n", tool, size, role, n, cpu * 1000 / n, sc / n, cs / n }
	' $dir/$side
done
