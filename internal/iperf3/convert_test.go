package iperf3

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"wirespeed/internal/measure"
	"wirespeed/internal/result"
	"wirespeed/internal/spec"
)

// TestRemoteSideUDP turns an iperf3 server's results of a UDP test it
// received into wirespeed's remote side, against values worked out by
// hand from iperf3's own meaning of the fields (iperf_api.c, iperf3
// 3.12): a receiver's "packets" is the highest sequence number it saw,
// so it counts the lost datagrams too, "errors" is the lost ones, and
// "jitter" is in seconds. The figures are those of a run through a 30%
// drop rule: 4247 datagrams numbered, 1567 of them lost, 2680 received,
// 0.412 ms of jitter.
func TestRemoteSideUDP(t *testing.T) {
	sp := spec.Default()
	sp.Kind, sp.SendSize, sp.RateBitsPerSecond, sp.Duration, sp.CPU = spec.UDPStream, 1472, 50e6, time.Second, true
	theirs := Results{
		CPUUtilTotal: 50, CPUUtilUser: 20, CPUUtilSystem: 30,
		SenderHasRetransmits: -1,
		Streams: []StreamResult{{
			ID: 1, Bytes: 2680 * 1472, Retransmits: -1,
			Jitter: 0.000412, Errors: 1567, Packets: 4247,
			StartTime: 0.5, EndTime: 1.5,
		}},
	}
	rs, _ := remoteSide(sp, theirs)
	// iperf3 sends its process's CPU in percent of the test: 20% user
	// and 30% system of the 1 s the stream ran are 0.2 s and 0.3 s.
	if c := rs.CPU; c == nil || math.Abs(c.ProcessUserS-0.2) > 1e-12 || math.Abs(c.ProcessSystemS-0.3) > 1e-12 || c.ElapsedS != 1 {
		t.Errorf("remote CPU %+v, want 0.2 s user and 0.3 s system over 1 s", c)
	}
	if len(rs.Flows) != 1 || len(rs.Flows[0].Streams) != 1 {
		t.Fatalf("remote side %+v: want one flow of one stream", rs)
	}
	f := rs.Flows[0]
	s := f.Streams[0]
	if f.Role != result.Receiver {
		t.Errorf("role %v, want the receiver", f.Role)
	}
	if s.Lost != 1567 {
		t.Errorf("lost %d, want iperf3's errors, 1567", s.Lost)
	}
	if s.Packets != 2680 || s.TotalPackets != 2680 {
		t.Errorf("received %d (total %d), want 4247 numbered less 1567 lost = 2680", s.Packets, s.TotalPackets)
	}
	if math.Abs(s.JitterMs-0.412) > 1e-9 {
		t.Errorf("jitter %g ms, want iperf3's 0.000412 s = 0.412 ms", s.JitterMs)
	}
	if s.Bytes != 2680*1472 || f.Bytes != 2680*1472 {
		t.Errorf("bytes %d (flow %d), want 2680 datagrams of 1472 = %d", s.Bytes, f.Bytes, 2680*1472)
	}

	// Joined with the sender's side this client counted, the loss is
	// 1567 of 4247 sent: 36.9%.
	local := result.SideResult{Side: result.Local, Flows: []result.Flow{{
		Direction: spec.ClientToServer, Side: result.Local, Role: result.Sender, Bytes: 4247 * 1472, ElapsedS: 1,
		Streams: []result.StreamSide{{ID: 1, Side: result.Local, Role: result.Sender, Complete: true,
			Bytes: 4247 * 1472, TotalBytes: 4247 * 1472, Packets: 4247, TotalPackets: 4247}},
	}}}
	res := result.Join(sp, local, rs)
	u := res.Summary.UDPSummary
	if u == nil {
		t.Fatal("the joined result has no UDP summary")
	}
	if u.PacketsSent != 4247 || u.PacketsReceived != 2680 || u.Lost != 1567 || math.Abs(u.LossPct-100*1567.0/4247) > 1e-9 {
		t.Errorf("UDP summary %+v, want 4247 sent, 2680 received, 1567 lost (36.90%%)", *u)
	}
}

// TestClientResults turns this client's own figures into the results it
// sends an iperf3 server, against iperf3's meaning of each field worked
// out by hand: a UDP receiver's "packets" counts the lost datagrams too
// (the highest sequence number seen), "jitter" is in seconds, the CPU in
// percent of the test with the total the sum of user and system.
func TestClientResults(t *testing.T) {
	sp := spec.Default()
	sp.Kind, sp.Reverse, sp.SendSize, sp.RateBitsPerSecond, sp.Duration, sp.CPU = spec.UDPStream, true, 1472, 50e6, time.Second, true
	local := result.SideResult{
		Side: result.Local,
		CPU:  &measure.CPU{ProcessUserS: 0.1, ProcessSystemS: 0.3, ElapsedS: 2},
		Flows: []result.Flow{{Direction: spec.ServerToClient, Side: result.Local, Role: result.Receiver, ElapsedS: 1.25,
			Streams: []result.StreamSide{{ID: 1, Side: result.Local, Role: result.Receiver, Complete: true,
				Bytes: 2680 * 1472, TotalBytes: 2690 * 1472, Packets: 2680, TotalPackets: 2690, Lost: 1567, JitterMs: 0.412}}}},
	}
	got := clientResults(sp, local)
	// 0.1 s user and 0.3 s system of 2 s: 5%, 15%, 20% in all.
	want := Results{CPUUtilTotal: 20, CPUUtilUser: 5, CPUUtilSystem: 15, SenderHasRetransmits: -1,
		Streams: []StreamResult{{ID: 1, Bytes: 2690 * 1472, Retransmits: -1, Jitter: 0.000412, Errors: 1567, Packets: 2680 + 1567, EndTime: 1.25}}}
	if d := cmp.Diff(want, got, cmpApprox); d != "" {
		t.Errorf("UDP receiver's results (-want +got):\n%s", d)
	}

	// A TCP sender: its retransmits and iperf3's "has retransmits".
	sp.Kind, sp.Reverse = spec.TCPStream, false
	local = result.SideResult{Side: result.Local, Flows: []result.Flow{{Direction: spec.ClientToServer, Side: result.Local, Role: result.Sender, ElapsedS: 1,
		Streams: []result.StreamSide{{ID: 1, Side: result.Local, Role: result.Sender, Complete: true, Bytes: 1000, TotalBytes: 1200, Retransmits: 7}}}}}
	got = clientResults(sp, local)
	want = Results{SenderHasRetransmits: 1, Streams: []StreamResult{{ID: 1, Bytes: 1200, Retransmits: 7, EndTime: 1}}}
	if d := cmp.Diff(want, got, cmpApprox); d != "" {
		t.Errorf("TCP sender's results (-want +got):\n%s", d)
	}
	// With a warm-up, iperf3 leaves the omitted seconds out: the
	// window's bytes.
	sp.Omit = time.Second
	if got := clientResults(sp, local); got.Streams[0].Bytes != 1000 {
		t.Errorf("with --omit: %d bytes, want the window's 1000", got.Streams[0].Bytes)
	}
}

var cmpApprox = cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(1, math.Abs(a)) })
