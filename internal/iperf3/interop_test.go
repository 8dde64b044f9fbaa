package iperf3_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"wirespeed/internal/iperf3"
	"wirespeed/internal/report"
	"wirespeed/internal/result"
	"wirespeed/internal/server"
	"wirespeed/internal/servertest"
	"wirespeed/internal/spec"
	"wirespeed/internal/testkit"
)

// These tests run the real iperf3 (Debian's iperf3 package; CI installs
// it) against wirespeed on loopback, in both directions and every mode,
// for one second each, and check that the two programs' byte counts of
// each direction agree within what can be in flight when the test ends.
//
// The bound: when a test ends, a TCP stream's bytes that are not yet
// read by the receiving program sit in the sender's socket buffer and the
// receiver's, so a receiver that stops reading at TEST_END (iperf3 does)
// misses at most net.ipv4.tcp_wmem[2] + net.ipv4.tcp_rmem[2] per stream,
// the largest buffers the kernel grants. For UDP the datagrams in flight
// are at most what the sockets' buffers hold: net.core.wmem_max +
// net.core.rmem_max per stream. wirespeed's own sides do better (it
// drains what is in flight before it counts, and its client waits for its
// data to be acknowledged before TEST_END); the tests log the differences
// they see.

func requireIperf3(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("iperf3")
	if err != nil {
		t.Skip("iperf3 is not installed (apt-get install iperf3; CI installs it in .ci/run): skipping the interoperability tests")
	}
	return p
}

type mode struct {
	name string
	args []string  // iperf3 client arguments
	test spec.Test // the same test for wirespeed's client
}

func modes() []mode {
	tcp := func(k spec.Kind, p int) spec.Test {
		t := spec.Default()
		t.Kind, t.Duration, t.Parallel, t.Interval, t.CPU = k, time.Second, p, 0, true
		return t
	}
	udp := spec.Default()
	udp.Kind, udp.Duration, udp.Interval, udp.SendSize, udp.RateBitsPerSecond, udp.CPU = spec.UDPStream, time.Second, 0, spec.DefaultUDPSize, 50e6, true
	return []mode{
		{"tcp", nil, tcp(spec.TCPStream, 1)},
		{"reverse", []string{"-R"}, tcp(spec.TCPMaerts, 1)},
		{"parallel", []string{"-P", "3"}, tcp(spec.TCPStream, 3)},
		{"bidir", []string{"--bidir"}, tcp(spec.TCPBidir, 1)},
		{"udp", []string{"-u", "-b", "50M", "-l", "1472"}, udp},
	}
}

// sysctl reads a number from /proc/sys; field picks one of several.
func sysctl(t *testing.T, path string, field int) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/sys/" + path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	f := strings.Fields(string(b))
	n, err := strconv.ParseInt(f[field], 10, 64)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return n
}

// inFlight is the most a direction's receiver can miss at the end of a
// test, for streams streams (see the comment at the top).
func inFlight(t *testing.T, udp bool, streams int) int64 {
	if udp {
		return int64(streams) * (sysctl(t, "net/core/wmem_max", 0) + sysctl(t, "net/core/rmem_max", 0))
	}
	return int64(streams) * (sysctl(t, "net/ipv4/tcp_wmem", 2) + sysctl(t, "net/ipv4/tcp_rmem", 2))
}

// agree checks one direction's sent and received bytes.
func agree(t *testing.T, what string, sent, received, bound int64) {
	t.Helper()
	t.Logf("%s: sent %d, received %d, difference %d (bound %d)", what, sent, received, sent-received, bound)
	switch {
	case sent <= 0 || received <= 0:
		t.Errorf("%s: sent %d and received %d bytes; a test that moved nothing", what, sent, received)
	case received > sent:
		t.Errorf("%s: received %d bytes, more than the %d sent", what, received, sent)
	case sent-received > bound:
		t.Errorf("%s: sent %d bytes but %d arrived: %d missing, more than the %d that can be in flight", what, sent, received, sent-received, bound)
	}
}

type iperfSum struct {
	Bytes       int64 `json:"bytes"`
	Packets     int64 `json:"packets"`
	LostPackets int64 `json:"lost_packets"`
}

type iperfJSON struct {
	Error string `json:"error"`
	End   struct {
		SumSent             *iperfSum `json:"sum_sent"`
		SumReceived         *iperfSum `json:"sum_received"`
		SumSentReverse      *iperfSum `json:"sum_sent_bidir_reverse"`
		SumReceivedReverse  *iperfSum `json:"sum_received_bidir_reverse"`
		CPUUtilizationPct   any       `json:"cpu_utilization_percent"`
		SenderTCPCongestion string    `json:"sender_tcp_congestion"`
	} `json:"end"`
}

func parseIperfJSON(t *testing.T, b []byte) iperfJSON {
	t.Helper()
	var j iperfJSON
	if err := json.Unmarshal(b, &j); err != nil {
		t.Fatalf("iperf3 -J output does not parse: %v\n%s", err, b)
	}
	if j.Error != "" {
		t.Fatalf("iperf3 reported an error: %s", j.Error)
	}
	if j.End.SumSent == nil || j.End.SumReceived == nil {
		t.Fatalf("iperf3 -J output has no sum_sent/sum_received:\n%s", b)
	}
	return j
}

// checkIperfSums checks the sums of an iperf3 -J document, whose one
// half of each pair came from wirespeed.
func checkIperfSums(t *testing.T, m mode, j iperfJSON) {
	t.Helper()
	streams := m.test.Parallel
	bound := inFlight(t, m.test.Kind.UDP(), streams)
	agree(t, "first direction", j.End.SumSent.Bytes, j.End.SumReceived.Bytes, bound)
	if m.test.Kind == spec.TCPBidir {
		if j.End.SumSentReverse == nil || j.End.SumReceivedReverse == nil {
			t.Fatal("iperf3 -J output of a --bidir test has no sum_*_bidir_reverse")
		}
		agree(t, "reverse direction", j.End.SumSentReverse.Bytes, j.End.SumReceivedReverse.Bytes, bound)
	}
	if m.test.Kind.UDP() {
		s, r := j.End.SumSent, j.End.SumReceived
		t.Logf("datagrams: sent %d, receiver counted %d with %d lost", s.Packets, r.Packets, r.LostPackets)
		if r.Packets > s.Packets || r.LostPackets < 0 || r.LostPackets > r.Packets {
			t.Errorf("datagram counts do not add up: sent %d, receiver total %d, lost %d", s.Packets, r.Packets, r.LostPackets)
		}
	}
}

// startServer runs a wirespeed server on a free loopback port.
func startServer(t *testing.T) string { return startServerWith(t, server.Config{}) }

func startServerWith(t *testing.T, cfg server.Config) string {
	t.Helper()
	cfg.Logger = slog.New(slog.NewTextHandler(testWriter{t}, nil))
	addr, _ := servertest.Start(t, cfg)
	return addr
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(b)))
	return len(b), nil
}

// TestIperf3ClientAgainstWirespeedServer runs the real iperf3 client
// against wirespeed's server.
func TestIperf3ClientAgainstWirespeedServer(t *testing.T) {
	bin := requireIperf3(t)
	addr := startServer(t)
	_, port, _ := net.SplitHostPort(addr)
	for _, m := range modes() {
		t.Run(m.name, func(t *testing.T) {
			out := iperf3Output(t, bin, append([]string{"-c", "127.0.0.1", "-p", port, "-t", "1", "-J"}, m.args...)...)
			checkIperfSums(t, m, parseIperfJSON(t, out))
		})
	}
}

// TestIperf3ClientRefused: a server that requires authentication serves no
// iperf3 client (iperf3 cannot prove the key), and an iperf3 test over the
// server's limits is refused as a wirespeed one would be.
func TestIperf3ClientRefused(t *testing.T) {
	bin := requireIperf3(t)
	tests := []struct {
		name string
		cfg  server.Config
		args []string
		want string // in iperf3's output
	}{
		{name: "key required", cfg: server.Config{Auth: server.Auth{PSK: []byte("0123456789abcdef0123")}}, args: []string{"-t", "1"}, want: "busy"},
		{name: "too long", cfg: server.Config{Admission: server.Admission{MaxDuration: 2 * time.Second}}, args: []string{"-t", "5"}, want: "error"},
		{name: "too many streams", cfg: server.Config{Admission: server.Admission{MaxParallel: 2}}, args: []string{"-t", "1", "-P", "3"}, want: "error"},
		// 2 bytes over 4 streams from the server: shares of 1, 1, 0 and
		// 0, and a share of 0 would be no limit.
		{name: "fewer bytes than streams", args: []string{"-n", "2", "-P", "4", "-R"}, want: "unable to receive parameters from client: invalid argument"},
		{name: "UDP from the server too fast", cfg: server.Config{Admission: server.Admission{MaxUDPRateBitsPerSecond: 10e6}}, args: []string{"-t", "1", "-u", "-b", "50M", "-R"}, want: "error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr := startServerWith(t, tt.cfg)
			_, port, _ := net.SplitHostPort(addr)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			out, err := exec.CommandContext(ctx, bin, append([]string{"-c", "127.0.0.1", "-p", port}, tt.args...)...).CombinedOutput()
			if err == nil {
				t.Fatalf("iperf3 ran against a server that should refuse it:\n%s", out)
			}
			if !strings.Contains(strings.ToLower(string(out)), tt.want) {
				t.Errorf("iperf3 said %q, want it to mention %q", out, tt.want)
			}
		})
	}
}

// TestIperf3HeldToMaxDuration: an iperf3 test with a byte or block count
// instead of a time (-n, -k) ends at the server's --max-duration, whether
// the client sends as fast as it can or next to nothing (-b 1k), and the
// server's one test slot is free again for the next client. The real
// iperf3 says the server terminated the test.
func TestIperf3HeldToMaxDuration(t *testing.T) {
	bin := requireIperf3(t)
	const maxDuration = 2 * time.Second
	addr := startServerWith(t, server.Config{Admission: server.Admission{MaxDuration: maxDuration}})
	_, port, _ := net.SplitHostPort(addr)
	for _, args := range [][]string{
		{"-n", "1000G"},
		{"-n", "1000G", "-b", "1k"},
		{"-k", "1000000000", "-b", "1k"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			// The previous test's slot is freed once the server has
			// stopped its streams, a moment after that client exits.
			var out []byte
			var took time.Duration
			for try := 0; ; try++ {
				start := time.Now()
				out, _ = exec.CommandContext(ctx, bin, append([]string{"-c", "127.0.0.1", "-p", port}, args...)...).CombinedOutput()
				took = time.Since(start)
				if !strings.Contains(string(out), "busy") || try == 10 {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			// iperf3 takes a moment to connect and to print.
			if took > maxDuration+3*time.Second {
				t.Errorf("iperf3 %s ran %v against --max-duration %v:\n%s", strings.Join(args, " "), took.Round(time.Millisecond), maxDuration, out)
			}
			if !strings.Contains(string(out), "terminated") {
				t.Errorf("iperf3 was not told the server ended the test:\n%s", out)
			}
			t.Logf("iperf3 %s: %v", strings.Join(args, " "), took.Round(time.Millisecond))
		})
	}
}

// TestWirespeedClientAgainstIperf3Server runs wirespeed's client against
// the real iperf3 server.
func TestWirespeedClientAgainstIperf3Server(t *testing.T) {
	requireIperf3(t)
	for _, m := range modes() {
		t.Run(m.name, func(t *testing.T) {
			res, out := runAgainstIperf3Server(t, m.test)
			checkResult(t, m, res)
			checkServerOwn(t, parseIperfJSON(t, out), res)
		})
	}
}

// runAgainstIperf3Server runs sp with wirespeed's client against a real
// `iperf3 -s -1 -J` on a free loopback port, and returns wirespeed's
// result and the iperf3 server's -J document. The test fails when either
// side does (iperf3's exit status must be 0).
func runAgainstIperf3Server(t *testing.T, sp spec.Test) (result.Result, []byte) {
	t.Helper()
	bin := requireIperf3(t)
	port := testkit.FreePorts(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-s", "-1", "-J", "-B", "127.0.0.1", "-p", strconv.Itoa(port))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitListening(t, port)
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	res, err := iperf3.Run(ctx, iperf3.ClientConfig{Addr: addr, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, sp)
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("run against iperf3 -s: %v\n%s", err, stderr.Bytes())
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("iperf3 -s -1: %v (exit status must be 0)\n%s", err, stderr.Bytes())
	}
	return res, stdout.Bytes()
}

// checkResult checks wirespeed's own result: every stream's two sides
// agree, the iperf3 server's figures are there, and the result says what
// the server could not provide.
func checkResult(t *testing.T, m mode, res result.Result) {
	t.Helper()
	if res.Interrupted {
		t.Error("result is marked interrupted")
	}
	if len(res.Directions) != len(m.test.Directions()) {
		t.Fatalf("result has %d directions, want %d", len(res.Directions), len(m.test.Directions()))
	}
	bound := inFlight(t, m.test.Kind.UDP(), 1)
	for _, st := range res.Streams {
		sent := st.Sender.TotalBytes
		agree(t, string(st.Direction)+" stream "+strconv.Itoa(st.ID), sent, st.Receiver.TotalBytes, bound)
		if st.Direction == spec.ServerToClient && !m.test.Kind.UDP() && st.Sender.TotalBytes != st.Receiver.TotalBytes {
			t.Errorf("stream %d: wirespeed read %d bytes to the end of the iperf3 server's stream, which sent %d",
				st.ID, st.Receiver.TotalBytes, st.Sender.TotalBytes)
		}
	}
	if res.Summary.BitsPerSecond <= 0 {
		t.Errorf("throughput %g", res.Summary.BitsPerSecond)
	}
	said := strings.Join(report.WarningTexts(res.Warnings), "\n")
	if !strings.Contains(said, "remote side is iperf3") || !strings.Contains(said, "no intervals, TCP_INFO") {
		t.Errorf("result does not say what the iperf3 server could not provide:\n%s", said)
	}
	if c := res.Summary.RemoteCPU; c == nil || c.CPUs != 0 || c.ElapsedS <= 0 {
		t.Errorf("remote CPU %+v: want the iperf3 process's own, with no system-wide figures (CPUs 0)", c)
	}
	if m.test.Kind.UDP() {
		u := res.Summary.UDPSummary
		if u == nil || u.PacketsSent <= 0 || u.PacketsReceived <= 0 || u.PacketsReceived > u.PacketsSent {
			t.Errorf("UDP summary %+v", u)
		}
	}
}

// checkServerOwn compares the iperf3 server's own -J report with the
// figures it sent wirespeed in its results exchange. iperf3 3.12's server
// reports only its own side in -J: the sums of the client's side are 0.
func checkServerOwn(t *testing.T, j iperfJSON, res result.Result) {
	t.Helper()
	var own int64
	for _, s := range []*iperfSum{j.End.SumSent, j.End.SumReceived, j.End.SumSentReverse, j.End.SumReceivedReverse} {
		if s != nil {
			own += s.Bytes
		}
	}
	var remote int64
	for _, st := range res.Streams {
		if st.Sender.Side == result.Remote {
			remote += st.Sender.TotalBytes
		} else {
			remote += st.Receiver.TotalBytes
		}
	}
	if own != remote {
		t.Errorf("the iperf3 server's -J report counts %d bytes, its results exchange %d", own, remote)
	}
}

func waitListening(t *testing.T, port int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		// A bare connect would count as a client to iperf3 -1: look for
		// the listener in /proc instead.
		if listening(port) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("iperf3 -s did not listen on port %d within 5s", port)
}

// listening reports whether a TCP socket listens on port, from
// /proc/net/tcp and tcp6 (state 0A).
func listening(port int) bool {
	hex := strings.ToUpper(strconv.FormatInt(int64(port), 16))
	for len(hex) < 4 {
		hex = "0" + hex
	}
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			fs := strings.Fields(line)
			if len(fs) > 3 && strings.HasSuffix(fs[1], ":"+hex) && fs[3] == "0A" {
				return true
			}
		}
	}
	return false
}
