#!/usr/bin/env bash
# plots.sh remakes docs/plots: the runs behind each sample plot, in a lab
# of its own (two network namespaces joined by a veth pair with a
# 1 Gbit/s tbf), then `wirespeed plot` of each. It needs root (the lab).
#
#   scripts/plots.sh                  build wirespeed, lab "plots"
#   WIRESPEED=/path/bin LAB=name scripts/plots.sh
#
# The results documents stay in $OUT (a temporary directory unless
# given), so that a plot can be drawn again without measuring. Make the
# plots on a quiet machine: both sides of a lab are this host, and other
# work shows in the CPU panels and the confidence intervals. Record the
# date and the load (uptime) in docs/plots/README.md when committing them.
set -euo pipefail
cd "$(dirname "$0")/.."

lab=${LAB:-plots}
out=${OUT:-$(mktemp -d)}
plots=docs/plots
ws=${WIRESPEED:-}
if [ -z "$ws" ]; then
	ws=$out/wirespeed
	go build -o "$ws" ./cmd/wirespeed
fi

cleanup() { "$ws" lab down --name "$lab" >/dev/null 2>&1 || true; }
trap cleanup EXIT
cleanup
echo "load before: $(uptime)"
"$ws" lab up --name "$lab" --rate 1gbit >/dev/null

run() { "$ws" lab run --name "$lab" "$@" >/dev/null; }
run sweep -- --sizes 1,64,1460,8192,65536 -l 1 --iterations 3,3 -I 99,5 -o "$out/sweep.json"
run matrix -- --set tso=on,off --set mtu=1500,9000 -l 1 --iterations 3,3 -I 99,5 -o "$out/matrix.json"
run -- --tradeoff -l 2 -o "$out/tradeoff.json"
run -- --cc cubic -l 1 --iterations 3,3 -I 99,5 -o "$out/cubic.json"
run -- --cc bbr -l 1 --iterations 3,3 -I 99,5 -o "$out/bbr.json"
for t in tcp_rr udp_rr tcp_crr; do
	run -- -t "$t" -l 2 -o "$out/$t.json"
done
run sweep -- -t TCP_RR --sizes 1,64,1024,8192,32768 -l 1 -o "$out/rr_sweep.json"
echo "load after: $(uptime)"

"$ws" plot "$out/sweep.json" -o "$plots/sweep.png"
"$ws" plot "$out/matrix.json" -o "$plots/matrix.png"
"$ws" plot "$out/tradeoff.json" -o "$plots/tradeoff.png"
"$ws" plot "$out/cubic.json" "$out/bbr.json" -o "$plots/compare.png"
"$ws" plot "$out/tcp_rr.json" "$out/udp_rr.json" "$out/tcp_crr.json" -o "$plots/rr.png"
"$ws" plot "$out/rr_sweep.json" -o "$plots/rr-sweep.png"
echo "documents in $out; plots in $plots"
