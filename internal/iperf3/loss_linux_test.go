package iperf3_test

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"wirespeed/internal/nstest"
	"wirespeed/internal/spec"
)

// lossyNamespaceEnv marks the copy of the test binary that runs inside a
// network namespace of its own (TestIperf3UDPLoss).
const lossyNamespaceEnv = "WIRESPEED_TEST_LOSSY_NETNS"

// dropProbability is the share of the test's data datagrams that the
// iptables rule drops.
const dropProbability = 0.3

// TestIperf3UDPLoss runs UDP between wirespeed and the real iperf3, both
// ways, through a loopback that drops 30% of the data datagrams, and
// checks the loss and jitter each program reports against the other's
// own figures and against the kernel's count of what it dropped. The
// interoperability tests on a plain loopback lose nothing, so they could
// not tell a received count with the lost datagrams left in it (or taken
// out twice) from a right one.
//
// The kernel has no netem: the loss is an iptables rule (the statistic
// match, random mode) on lo's input for UDP datagrams of 500 bytes and
// more, so iperf3's small UDP handshake datagrams pass. The rule lives in
// a network namespace of its own: the test runs a copy of its binary
// there (CLONE_NEWNET), so every socket of the copy, and the iperf3 it
// starts, is inside.
func TestIperf3UDPLoss(t *testing.T) {
	if os.Getenv(lossyNamespaceEnv) == "" {
		nstest.RequireRoot(t)
		requireIperf3(t)
		if _, err := exec.LookPath("iptables"); err != nil {
			t.Skip("iptables is not installed (apt-get install iptables; CI installs it in .ci/run): skipping the lossy interoperability test")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestIperf3UDPLoss$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), lossyNamespaceEnv+"=1")
		cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET}
		out, err := cmd.CombinedOutput()
		t.Logf("in a network namespace of its own:\n%s", out)
		if err != nil {
			t.Fatalf("the test in its namespace: %v", err)
		}
		if bytes.Contains(out, []byte("--- SKIP")) || !bytes.Contains(out, []byte("--- PASS: TestIperf3UDPLoss/")) {
			t.Fatal("the test in its namespace did not run its cases")
		}
		return
	}

	lo, err := netlink.LinkByName("lo")
	if err != nil {
		t.Fatal(err)
	}
	if err := netlink.LinkSetUp(lo); err != nil {
		t.Fatalf("lo up: %v", err)
	}
	iptables(t, "-A", "INPUT", "-i", "lo", "-p", "udp", "-m", "length", "--length", "500:65535",
		"-m", "statistic", "--mode", "random", "--probability", strconv.FormatFloat(dropProbability, 'f', -1, 64), "-j", "DROP")

	const rate, size = 50e6, 1472
	t.Run("wirespeed client, iperf3 server", func(t *testing.T) {
		sp := spec.Default()
		sp.Kind, sp.Duration, sp.Interval, sp.SendSize, sp.RateBitsPerSecond = spec.UDPStream, time.Second, 0, size, rate
		iptables(t, "-Z", "INPUT")
		rcvbuf0 := udpRcvbufErrors(t)
		res, out := runAgainstIperf3Server(t, sp)
		drops := dropped(t)
		rcvbuf := udpRcvbufErrors(t) - rcvbuf0
		var j struct {
			End struct {
				SumReceived *lossSum `json:"sum_received"`
			} `json:"end"`
		}
		if err := json.Unmarshal(out, &j); err != nil || j.End.SumReceived == nil {
			t.Fatalf("iperf3 -s -J: %v\n%s", err, out)
		}
		theirs := j.End.SumReceived
		u := res.Summary.UDPSummary
		if u == nil {
			t.Fatal("no UDP summary")
		}
		t.Logf("wirespeed: %d sent, %d received, %d lost (%.2f%%), jitter %.4f ms; iperf3 -s: %d numbered, %d lost, jitter %.4f ms; the rule dropped %d, the socket %d",
			u.PacketsSent, u.PacketsReceived, u.Lost, u.LossPct, u.JitterMs, theirs.Packets, theirs.LostPackets, theirs.JitterMs, drops, rcvbuf)
		checkDrops(t, u.PacketsSent, drops)
		// The iperf3 server's own report and the figures it sent
		// wirespeed are the same counts, but for iperf3's report
		// leaving out what it counted before the test's start (seen:
		// 2 datagrams numbered and lost): the received ones agree
		// exactly, the lost ones within a few.
		if d := u.Lost - theirs.LostPackets; d < 0 || d > 5 || u.PacketsReceived != theirs.Packets-theirs.LostPackets {
			t.Errorf("wirespeed reads %d received and %d lost; iperf3's own report: %d numbered, %d of them lost, so %d received",
				u.PacketsReceived, u.Lost, theirs.Packets, theirs.LostPackets, theirs.Packets-theirs.LostPackets)
		}
		if math.Abs(u.JitterMs-theirs.JitterMs) > 1e-6*theirs.JitterMs || theirs.JitterMs <= 0 {
			t.Errorf("jitter %g ms; iperf3's own report says %g ms", u.JitterMs, theirs.JitterMs)
		}
		// What the kernel dropped (the rule, and a receiver's full
		// socket buffer on a busy machine) is what went missing, but
		// for the datagrams dropped after the last one that arrived,
		// which no sequence gap shows.
		checkLost(t, u.Lost, drops+rcvbuf, u.PacketsSent, u.LossPct)
	})

	t.Run("iperf3 client, wirespeed server", func(t *testing.T) {
		bin := requireIperf3(t)
		addr := startServer(t)
		_, port, _ := net.SplitHostPort(addr)
		iptables(t, "-Z", "INPUT")
		rcvbuf0 := udpRcvbufErrors(t)
		out := iperf3Output(t, bin, "-c", "127.0.0.1", "-p", port, "-t", "1", "-J", "-u", "-b", "50M", "-l", strconv.Itoa(size))
		drops := dropped(t)
		rcvbuf := udpRcvbufErrors(t) - rcvbuf0
		var j struct {
			Error string `json:"error"`
			End   struct {
				SumSent     *lossSum `json:"sum_sent"`
				SumReceived *lossSum `json:"sum_received"`
			} `json:"end"`
		}
		if err := json.Unmarshal(out, &j); err != nil || j.Error != "" || j.End.SumSent == nil || j.End.SumReceived == nil {
			t.Fatalf("iperf3 -c -J: %v\n%s", err, out)
		}
		sent, recv := j.End.SumSent, j.End.SumReceived
		t.Logf("iperf3 sent %d; from wirespeed's server: %d numbered, %d lost (%.2f%%), jitter %.4f ms; the rule dropped %d, the socket %d",
			sent.Packets, recv.Packets, recv.LostPackets, recv.LostPercent, recv.JitterMs, drops, rcvbuf)
		checkDrops(t, sent.Packets, drops)
		// iperf3's receiver count is the highest sequence number seen,
		// the lost ones included: what the client sent, but for those
		// dropped at the very end.
		if recv.Packets > sent.Packets || sent.Packets-recv.Packets > tail(sent.Packets) {
			t.Errorf("the server counted %d datagrams of the %d iperf3 sent (lost ones included)", recv.Packets, sent.Packets)
		}
		checkLost(t, recv.LostPackets, drops+rcvbuf, sent.Packets, recv.LostPercent)
		if recv.JitterMs <= 0 || recv.JitterMs > 100 {
			t.Errorf("jitter %g ms on a loopback", recv.JitterMs)
		}
	})

	// The server sending over TCP (-R) reports its socket's
	// retransmits and congestion control, read before the loop closes
	// the socket: a drop rule on the data makes the retransmits.
	t.Run("iperf3 client -R over TCP, wirespeed server", func(t *testing.T) {
		bin := requireIperf3(t)
		addr := startServer(t)
		_, port, _ := net.SplitHostPort(addr)
		rule := []string{"INPUT", "-i", "lo", "-p", "tcp", "-m", "length", "--length", "1000:65535",
			"-m", "statistic", "--mode", "random", "--probability", "0.01", "-j", "DROP"}
		iptables(t, append([]string{"-I"}, rule...)...)
		defer iptables(t, append([]string{"-D"}, rule...)...)
		out := iperf3Output(t, bin, "-c", "127.0.0.1", "-p", port, "-t", "1", "-J", "-R", "-C", "cubic")
		drops := dropped(t)
		var j struct {
			Error string `json:"error"`
			End   struct {
				SumSent *struct {
					Retransmits int64 `json:"retransmits"`
				} `json:"sum_sent"`
				SenderTCPCongestion string `json:"sender_tcp_congestion"`
			} `json:"end"`
		}
		if err := json.Unmarshal(out, &j); err != nil || j.Error != "" || j.End.SumSent == nil {
			t.Fatalf("iperf3 -c -J: %v\n%s", err, out)
		}
		t.Logf("the rule dropped %d TCP segments; the server reported %d retransmits with %q", drops, j.End.SumSent.Retransmits, j.End.SenderTCPCongestion)
		if drops > 0 && j.End.SumSent.Retransmits == 0 {
			t.Errorf("the server reported no retransmits; the rule dropped %d of its segments", drops)
		}
		if j.End.SenderTCPCongestion != "cubic" {
			t.Errorf("the server reported congestion control %q; iperf3 asked for cubic (-C)", j.End.SenderTCPCongestion)
		}
	})
}

type lossSum struct {
	Packets     int64   `json:"packets"`
	LostPackets int64   `json:"lost_packets"`
	LostPercent float64 `json:"lost_percent"`
	JitterMs    float64 `json:"jitter_ms"`
}

// tail bounds the datagrams dropped after the last one that arrived:
// with 30% dropped at random, 20 in a row happen once in 3^20 runs.
func tail(int64) int64 { return 20 }

// checkLost checks a receiver's lost count and loss percentage against
// what the kernel dropped of the sent datagrams.
func checkLost(t *testing.T, lost, dropped, sent int64, lossPct float64) {
	t.Helper()
	if lost > dropped || dropped-lost > tail(sent) {
		t.Errorf("%d lost; the kernel dropped %d", lost, dropped)
	}
	if want := 100 * float64(dropped) / float64(sent); math.Abs(lossPct-want) > 1 {
		t.Errorf("loss %.2f%%; the kernel dropped %d of the %d sent, %.2f%%", lossPct, dropped, sent, want)
	}
}

// udpRcvbufErrors is the namespace's Udp RcvbufErrors, from
// /proc/net/snmp: datagrams a full socket buffer dropped.
func udpRcvbufErrors(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/net/snmp")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] != "Udp:" {
			continue
		}
		if names == nil {
			names = f
			continue
		}
		for i, n := range names {
			if n == "RcvbufErrors" && i < len(f) {
				v, err := strconv.ParseInt(f[i], 10, 64)
				if err != nil {
					t.Fatalf("/proc/net/snmp: %v", err)
				}
				return v
			}
		}
	}
	t.Fatal("/proc/net/snmp has no Udp RcvbufErrors")
	return 0
}

// checkDrops checks that the rule dropped about its share of what was
// sent: a run that lost nothing would test nothing.
func checkDrops(t *testing.T, sent, drops int64) {
	t.Helper()
	if sent < 1000 || math.Abs(float64(drops)/float64(sent)-dropProbability) > 0.05 {
		t.Fatalf("the rule dropped %d of %d datagrams sent, want about %.0f%%", drops, sent, 100*dropProbability)
	}
}

func iptables(t *testing.T, args ...string) {
	t.Helper()
	out, err := exec.Command("iptables", append([]string{"-w"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("iptables %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// dropped is the packet count of the drop rule, the first of INPUT.
func dropped(t *testing.T) int64 {
	t.Helper()
	out, err := exec.Command("iptables", "-w", "-L", "INPUT", "1", "-v", "-x", "-n").CombinedOutput()
	if err != nil {
		t.Fatalf("iptables -L: %v\n%s", err, out)
	}
	f := strings.Fields(string(out))
	if len(f) < 3 || f[2] != "DROP" {
		t.Fatalf("iptables -L INPUT 1: %q, want the drop rule", out)
	}
	n, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil {
		t.Fatalf("iptables -L INPUT 1: %q: %v", out, err)
	}
	return n
}
