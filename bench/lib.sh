#!/bin/bash
# lib.sh: what the bench scripts share (cycles.sh, cycles-ab.sh,
# udpcycles.sh, persym.sh). Source it: . "$(dirname "$0")/lib.sh"

# free_port prints a TCP port on 127.0.0.1 that nothing listens on now.
free_port() {
	python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'
}

# start_server TOOL BIN PORT starts the server of TOOL on 127.0.0.1:PORT
# in the background: `BIN serve` for wirespeed, the netserver beside BIN
# for netperf (-f: one process, which serves every test itself, so that
# its pid is the one that does the work). It sets server_pid.
start_server() {
	local tool=$1 bin=$2 port=$3
	case $tool in
	wirespeed) "$bin" serve --listen 127.0.0.1:$port --log-level warn >/dev/null 2>&1 & ;;
	netperf) "$(dirname "$bin")/netserver" -D -f -L 127.0.0.1,inet -p $port >/dev/null 2>&1 & ;;
	*)
		echo "unknown tool $tool: wirespeed or netperf" >&2
		return 2
		;;
	esac
	server_pid=$!
}
