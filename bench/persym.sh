#!/bin/bash
# persym.sh: where each tool's sender and receiver spend their CPU per
# message of one TCP stream test, symbol by symbol, wirespeed against
# netperf: "A file table of the loop's own" in bench/README.md comes
# from it.
#
#   bench/persym.sh WIRESPEED_BINARY NETPERF_BINARY TEST SIZE [CC [FIRST]]
#   bench/persym.sh /tmp/wirespeed /tmp/netperf-src/src/netperf TCP_STREAM 64 cubic
#
# It starts a wirespeed server and a netserver on 127.0.0.1, runs each
# tool for 4 s (TEST is TCP_STREAM or TCP_MAERTS; -m SIZE -M SIZE;
# congestion control CC, cubic by default), records every CPU for the 2 s
# in the middle (perf record -a -e cpu-clock -F 4999: a sample is 200 us of
# one CPU), and divides each thread's samples by the messages the run
# moved in those 2 s (from its reported rate). It prints, for the busiest
# threads of each run, samples per million messages, then for the sender
# and for the receiver (the busiest thread of the client process and of
# the server) the symbols whose cost per message differs most between the
# tools. The server is the process the script started, not whatever else
# ran on the machine. One run of each tool, both without CPU sampling,
# wirespeed first unless FIRST is netperf: a figure from it is one draw,
# so repeat it with FIRST alternating (the README gives three runs where
# it quotes one).
# Rates on a 2-CPU machine move from run to run with where the scheduler
# puts the two loops: read the costs per message, not the rates.
# Needs perf (Debian linux-perf), jq, python3, root or
# perf_event_paranoid <= 0.
set -eu
. "$(dirname "$0")/lib.sh"
ws=$1 np=$2 test=$3 size=$4 cc=${5:-cubic} first=${6:-wirespeed}
dir=$(mktemp -d)
wp=$(free_port) npp=$(free_port)
start_server wirespeed "$ws" $wp
wspid=$server_pid
start_server netperf "$np" $npp
nppid=$server_pid
trap 'kill $wspid $nppid 2>/dev/null; rm -rf $dir' EXIT
sleep 1
record() { # name, then the command
	local name=$1
	shift
	"$@" >$dir/$name.out &
	local c=$!
	echo $c >$dir/$name.pid
	sleep 1
	perf record -q -e cpu-clock -F 4999 -a -o $dir/$name.data -- sleep 2 2>/dev/null
	wait $c
}
run_ws() { record ws "$ws" run 127.0.0.1:$wp -t $test -l 4 -i 0 --cc $cc -m $size -M $size --json --cpu=false; }
run_np() { record np "$np" -H 127.0.0.1 -p $npp -t $test -l 4 -P 0 -- -m $size,$size -M $size,$size -K $cc,$cc; }
case $first in
wirespeed) run_ws && run_np ;;
netperf) run_np && run_ws ;;
*)
	echo "FIRST is wirespeed or netperf, not $first" >&2
	exit 2
	;;
esac
wsbps=$(jq '.summary.throughput_bps' $dir/ws.out)
npbps=$(awk 'NF==5 {print $5*1e6}' $dir/np.out)
for t in ws np; do perf script -i $dir/$t.data -F pid,tid,ip,sym 2>/dev/null >$dir/$t.txt; done
echo "# $test -m $size, $cc, $first first: wirespeed $wsbps bit/s, netperf $npbps bit/s (whole runs)"
python3 /dev/stdin "$dir" "$wsbps" "$npbps" "$size" "$test" "$wspid" "$nppid" <<'PY'
import collections, sys
d, wsbps, npbps, size, test = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
servers = {"ws": sys.argv[6], "np": sys.argv[7]}
runs = {}
for name, bps in (("ws", wsbps), ("np", npbps)):
    client = open(f"{d}/{name}.pid").read().strip()
    msgs = bps * 2 / 8 / size  # messages in the 2 s recorded
    threads = collections.defaultdict(collections.Counter)
    for line in open(f"{d}/{name}.txt"):
        f = line.split()  # pid/tid address symbol
        if len(f) < 3 or "/" not in f[0]:
            continue
        threads[f[0]][f[2]] += 1
    busy = sorted(threads.items(), key=lambda kv: -sum(kv[1].values()))
    print(f"{name}: {msgs:.0f} messages in the 2 s recorded; client process {client}")
    for pt, c in busy[:4]:
        print(f"  pid/tid {pt:14s} {sum(c.values()) / msgs * 1e6:9.0f} samples per million messages")
    cl = [c for pt, c in busy if pt.split("/")[0] == client]
    sv = [c for pt, c in busy if pt.split("/")[0] == servers[name]]
    sender, receiver = (cl, sv) if test == "TCP_STREAM" else (sv, cl)
    runs[name] = (msgs, sender[0] if sender else None, receiver[0] if receiver else None)
per = lambda c, m, k: c.get(k, 0) / m * 1e6
for i, want in ((1, "sender"), (2, "receiver")):
    am, a = runs["ws"][0], runs["ws"][i]
    bm, b = runs["np"][0], runs["np"][i]
    if a is None or b is None:
        continue
    print(f"\n{want}: samples per million messages, wirespeed {sum(a.values()) / am * 1e6:.0f}, netperf {sum(b.values()) / bm * 1e6:.0f}")
    keys = sorted(set(a) | set(b), key=lambda k: per(b, bm, k) - per(a, am, k))
    for k in keys[:12] + keys[-8:]:
        print(f"  {k[:46]:46s} wirespeed {per(a, am, k):7.0f}  netperf {per(b, bm, k):7.0f}  difference {per(a, am, k) - per(b, bm, k):7.0f}")
PY
