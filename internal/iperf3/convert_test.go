package iperf3

import (
	"math"
	"testing"
	"time"

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
	sp.Kind, sp.SendSize, sp.RateBitsPerSecond, sp.Duration = spec.UDPStream, 1472, 50e6, time.Second
	theirs := Results{
		SenderHasRetransmits: -1,
		Streams: []StreamResult{{
			ID: 1, Bytes: 2680 * 1472, Retransmits: -1,
			Jitter: 0.000412, Errors: 1567, Packets: 4247,
			EndTime: 1.000181,
		}},
	}
	rs, _ := remoteSide(sp, theirs)
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
