package cli

import (
	"context"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"wirespeed/internal/spec"
)

// TestForeignHabitHints: an iperf3 or netperf habit is refused as a usage
// error whose message gives the wirespeed spelling.
func TestForeignHabitHints(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"run", "-t", "10"}, "write -l 10"},
		{[]string{"run", "-t", "500ms"}, "write -l 500ms"},
		{[]string{"run", "-c", "127.0.0.1"}, "iperf3's -c HOST is an argument here: wirespeed run HOST"},
		{[]string{"run", "-H", "127.0.0.1"}, "netperf's -H HOST is an argument here: wirespeed run HOST"},
		{[]string{"sweep", "-H", "127.0.0.1"}, "wirespeed sweep HOST"},
		{[]string{"run", "-J"}, "iperf3's -J is --json here"},
		{[]string{"run", "-u", "-b", "10M"}, "iperf3's -u is -t UDP_STREAM here"},
		{[]string{"run", "-w", "10", "-b", "100M"}, "-b RATE in bits/s per stream"},
		{[]string{"run", "-t", "TCP_RR", "-n", "1M"}, "TCP_RR runs for its length (-l)"},
		{[]string{"run", "-n", "1M", "-k", "10"}, "not both"},
		{[]string{"run", "-l", "0"}, "must be longer than 0"},
		{[]string{"run", "-T", "before the patch"}, "iperf3's -T TITLE is --title here"},
		{[]string{"run", "-O", "THROUGHPUT"}, "netperf's -O selectors are --fields NAMES --fields-style table"},
		{[]string{"run", "-o", "THROUGHPUT,P99_LATENCY"}, "--fields throughput_bps,latency_p99_us"},
		{[]string{"run", "--fields", "THROUGHPUT,foo"}, "--fields throughput_bps,foo"},
		{[]string{"serve", "-s", "-1"}, "iperf3's -s is this command, wirespeed serve"},
		{[]string{"serve", "-D"}, "deploy/systemd/wirespeed.service"},
		{[]string{"sweep", "--extra-data", "x"}, "iperf3's --extra-data is --label KEY=VALUE here"},
		// Socket options (issue 19).
		{[]string{"run", "-S", "0xb8"}, "iperf3's -S TOS is --tos here"},
		{[]string{"run", "-M", "1000x"}, "iperf3's -M MSS is --mss here"},
		{[]string{"run", "-L", "10.0.0.1"}, "netperf's -L is -B (--bind) here"},
		{[]string{"run", "-Y", "EF"}, "netperf's -Y is --dscp NAME|N or --tos N here"},
		// A letter iperf3 and netperf users mean differently: both named.
		{[]string{"run", "-O", "2"}, "iperf3's -O N (leave out the first N s) is --omit N here; netperf's -O selectors are --fields"},
		{[]string{"run", "-w", "4M"}, "iperf3's -w SIZE (socket buffer) is -s SIZE for the client's sockets and -S SIZE for the server's here; netperf's -w/-b bursts"},
		{[]string{"run", "-V"}, "iperf3's -V (more detail) is -v here (--json has every figure); netperf's -V is wirespeed -V (or wirespeed version)"},
		// Habits of iperf3 and netperf users.
		{[]string{"run", "--bidir"}, "iperf3's --bidir is -t TCP_BIDIR here"},
		{[]string{"run", "--udp"}, "iperf3's --udp is -t UDP_STREAM here"},
		{[]string{"run", "--get-server-output"}, "every result holds the server's figures"},
		{[]string{"run", "-C", "cubic"}, "iperf3's -C ALGO is --cc ALGO here"},
		{[]string{"run", "-Z"}, "iperf3's -Z is --zerocopy sendfile here"},
		{[]string{"run", "-N"}, "iperf3's -N is --nodelay here"},
		{[]string{"run", "-A", "1"}, "iperf3's -A CPU[,REMOTE] is -T CPU[,REMOTE] here"},
		{[]string{"-s"}, "iperf3's -s is a command here: wirespeed serve"},
		{[]string{"-c", "127.0.0.1"}, "iperf3's -c HOST is a command here: wirespeed run HOST"},
		{[]string{"run", "-t", "UDP_MAERTS"}, "-t UDP_STREAM -R"},
		{[]string{"run", "-t", "tcp_sendfile"}, "-t TCP_STREAM --zerocopy sendfile"},
		{[]string{"run", "127.0.0.1", "--", "-m", "1024"}, `drop the -- and give "-m 1024" as flags (wirespeed run 127.0.0.1 -m 1024)`},
		{[]string{"sweep", "127.0.0.1", "--", "-m", "1024"}, "drop the --"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, _, errOut := execute(t, context.Background(), tt.args...)
			if code != ExitUsage || !strings.Contains(errOut, tt.want) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, errOut, ExitUsage, tt.want)
			}
		})
	}
	// No hint where the command has no such thing to suggest.
	_, _, errOut := execute(t, context.Background(), "env", "-u")
	if strings.Contains(errOut, "UDP_STREAM") {
		t.Errorf("env -u suggests a test: %q", errOut)
	}
	// -l 0's message must not claim that 0 is allowed.
	_, _, errOut = execute(t, context.Background(), "run", "-l", "0")
	if strings.Contains(errOut, "0 (") || strings.Contains(errOut, "0:") {
		t.Errorf("-l 0 message reads as if 0 were allowed: %q", errOut)
	}
}

// TestIperf3PortHint: run pointed at an iperf3 server's port says so at
// once and suggests --iperf3. The fake server does what iperf3 3.x does
// with a new control connection: it reads the 37-byte cookie, sends the
// PARAM_EXCHANGE state byte (9) and waits for parameters.
func TestIperf3PortHint(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		buf := make([]byte, 37)
		c.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := c.Read(buf); err != nil {
			return
		}
		c.Write([]byte{9})
		c.Read(buf) // until the client hangs up
	}()
	start := time.Now()
	code, _, errOut := execute(t, context.Background(), "run", ln.Addr().String(), "-l", "1")
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v to recognise an iperf3 server (the handshake timeout is 5 s)", d)
	}
	if code != ExitRuntime || !strings.Contains(errOut, "add --iperf3: wirespeed run --iperf3 "+ln.Addr().String()) {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

// TestIntervalNote: netperf's -i 10 (iterations) read as iperf3's -i 10
// (a report every 10 s) runs, with a note of what it did and how to ask
// for iterations; an interval shorter than the run, or iterations given,
// say nothing.
func TestIntervalNote(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-i", "10"}, "note: -i 10 is a report every 10 s (iperf3's -i), one for this 10 s run; for netperf's -i 10, 10 iterations, write --iterations 10 (or -i 10,3)"},
		{[]string{"-i", "2", "-l", "1"}, "note: -i 2 is a report every 2 s (iperf3's -i), one for this 1 s run"},
		{[]string{"-i", "1", "-l", "2"}, ""},
		{[]string{"-i", "10", "--iterations", "2"}, ""},
		{nil, ""},
	}
	for _, tt := range tests {
		f := &runFlags{spec: spec.Default()}
		cmd := &cobra.Command{}
		addRunFlags(cmd, f)
		if err := cmd.ParseFlags(tt.args); err != nil {
			t.Fatal(err)
		}
		f.changed = cmd.Flags().Changed
		sp, err := f.buildSpec()
		if err != nil {
			t.Fatal(err)
		}
		got := intervalNote(sp, f.changed("interval"), f.measure.iterations)
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("%v: note %q, want %q", tt.args, got, tt.want)
		}
	}
}

// TestRRULAgainstIperf3: RRUL pointed at a real iperf3 server (Debian's
// iperf3) says iperf3 cannot run it and what to start instead, rather
// than suggesting --iperf3; with --iperf3 it is a usage error naming the
// tests iperf3 runs.
func TestRRULAgainstIperf3(t *testing.T) {
	if _, err := exec.LookPath("iperf3"); err != nil {
		t.Skip("needs iperf3 (Debian package iperf3)")
	}
	addr := startIperf3(t)
	var code int
	var errOut string
	for range 5 {
		// iperf3 resets or closes a connection that comes while it still
		// closes the previous one (startIperf3's probe), or refuses it
		// while it listens anew: try again.
		if code, _, errOut = execute(t, context.Background(), "run", addr, "-t", "RRUL", "-l", "1"); !strings.Contains(errOut, "reset by peer") && !strings.Contains(errOut, "without a reply") && !strings.Contains(errOut, "connection refused") {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if code != ExitRuntime || !strings.Contains(errOut, "iperf3 cannot run RRUL: start `wirespeed serve`") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	code, _, errOut = execute(t, context.Background(), "run", "--iperf3", addr, "-t", "RRUL", "-l", "1")
	if code != ExitUsage || !strings.Contains(errOut, "iperf3 runs TCP_STREAM") {
		t.Errorf("--iperf3: exit %d, stderr %q", code, errOut)
	}
}

func TestRRULUsageErrors(t *testing.T) {
	checkUsageErrors(t, []usageCase{
		{args: []string{"run", "-t", "RRUL", "--probe-interval", "500us"}, want: "UDP probe interval 500µs is under 1ms"},
		{args: []string{"run", "-t", "RRUL", "--tcp-probe-interval", "1ms"}, want: "TCP probe interval 1ms is under 10ms"},
		{args: []string{"run", "-t", "RRUL", "--load", "sideways"}, want: `load "sideways": use both, up`},
		{args: []string{"run", "-t", "RRUL", "--idle", "100ms"}, want: "idle phase 100ms must be between 1s and 1m0s"},
		{args: []string{"run", "-t", "TCP_STREAM", "--load", "up"}, want: "--load applies to the RRUL test"},
		{args: []string{"run", "-t", "RRUL", "--omit", "1"}, want: "leave --omit out"},
	})
}
