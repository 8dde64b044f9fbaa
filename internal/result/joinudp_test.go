package result

import (
	"strings"
	"testing"

	"wirespeed/internal/spec"
)

// TestJoinUDPFirstSequence holds the per-stream join to counts worked out
// by hand: the datagrams sent in the window are the sender's total less
// the first sequence number the receiver counted as the window's, so a
// stream whose window opened at sequence 100 is not charged with the 100
// datagrams of the warm-up.
func TestJoinUDPFirstSequence(t *testing.T) {
	sp := spec.Default()
	sp.Kind = spec.UDPStream
	sp.Parallel = 2
	snd := Flow{Direction: spec.ClientToServer, Side: Local, Role: Sender, ElapsedS: 1, Streams: []StreamSide{
		{ID: 1, Side: Local, Role: Sender, Packets: 1000, TotalPackets: 1100, SendErrors: 7},
		{ID: 2, Side: Local, Role: Sender, Packets: 500, TotalPackets: 500},
	}}
	rcv := Flow{Direction: spec.ClientToServer, Side: Remote, Role: Receiver, ElapsedS: 1, Streams: []StreamSide{
		{ID: 1, Side: Remote, Role: Receiver, SeqFirst: 100, SeqUnique: 990, OutOfOrder: 3, JitterMs: 0.2},
		{ID: 2, Side: Remote, Role: Receiver, SeqFirst: 0, SeqUnique: 500, JitterMs: 0.4},
	}}
	res := Join(sp, SideResult{Side: Local, Flows: []Flow{snd}}, SideResult{Side: Remote, Flows: []Flow{rcv}})
	if len(res.Directions) != 1 {
		t.Fatalf("%d directions, want 1", len(res.Directions))
	}
	d := res.Directions[0]
	s1 := d.Streams[0].Summary.UDPSummary
	if s1.PacketsSent != 1000 || s1.PacketsReceived != 990 || s1.Lost != 10 || s1.LossPct != 1 || s1.SendErrors != 7 {
		t.Errorf("stream 1: sent %d received %d lost %d (%.2f%%) errors %d, want 1000 990 10 (1%%) 7",
			s1.PacketsSent, s1.PacketsReceived, s1.Lost, s1.LossPct, s1.SendErrors)
	}
	u := d.Summary.UDPSummary
	if u.PacketsSent != 1500 || u.PacketsReceived != 1490 || u.Lost != 10 || u.OutOfOrder != 3 {
		t.Errorf("direction: sent %d received %d lost %d ooo %d, want 1500 1490 10 3", u.PacketsSent, u.PacketsReceived, u.Lost, u.OutOfOrder)
	}
	if want := (0.2 + 0.4) / 2; u.JitterMs < want-1e-12 || u.JitterMs > want+1e-12 {
		t.Errorf("jitter %g ms, want the streams' mean %g", u.JitterMs, want)
	}
}

// TestJoinUDPNothingArrived: when no datagram reached the receiver, its
// window is the one its schedule gave it and every datagram the sender
// counted in its own window (not its warm-up's) is lost.
func TestJoinUDPNothingArrived(t *testing.T) {
	sp := spec.Default()
	sp.Kind = spec.UDPStream
	snd := Flow{Direction: spec.ClientToServer, Side: Local, Role: Sender, ElapsedS: 1, Streams: []StreamSide{
		{ID: 1, Side: Local, Role: Sender, Packets: 800, TotalPackets: 1000},
	}}
	rcv := Flow{Direction: spec.ClientToServer, Side: Remote, Role: Receiver, ElapsedS: 1, Truncated: true, Streams: []StreamSide{
		{ID: 1, Side: Remote, Role: Receiver},
	}}
	res := Join(sp, SideResult{Side: Local, Flows: []Flow{snd}}, SideResult{Side: Remote, Flows: []Flow{rcv}})
	u := res.Directions[0].Summary.UDPSummary
	if u.PacketsSent != 800 || u.PacketsReceived != 0 || u.Lost != 800 || u.LossPct != 100 {
		t.Errorf("sent %d received %d lost %d (%.1f%%), want 800 0 800 (100%%)", u.PacketsSent, u.PacketsReceived, u.Lost, u.LossPct)
	}
}

// TestWarnUDPBatch: a sender that made more sends per call than the spec
// asks for (a server older than --send-batch, which batched 64 by
// default) is warned about; one that made what was asked is not (UDP
// batches, issue 15).
func TestWarnUDPBatch(t *testing.T) {
	for _, tc := range []struct {
		name           string
		batch, gso     int
		packets, calls int64
		want           bool
	}{
		{"one per call", 0, 0, 6400, 6400, false},
		{"old server batching", 0, 0, 6400, 100, true},
		{"asked batch", 64, 0, 6400, 100, false},
		{"asked batch, partly sent calls", 64, 0, 6400, 120, false},
		{"more than asked", 8, 0, 6400, 100, true},
		{"gso, one send per call", 0, 1000, 6400, 800, false},
		{"iperf3 peer counts no calls", 0, 0, 6400, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sp := spec.Default()
			sp.Kind, sp.Reverse, sp.SendBatch = spec.UDPStream, true, tc.batch
			sp.SendSize = 1472
			if tc.gso > 0 {
				sp.GSOSize, sp.SendSize = tc.gso, 8*tc.gso
			}
			snd := Flow{Direction: spec.ServerToClient, Side: Remote, Role: Sender, ElapsedS: 1, Streams: []StreamSide{
				{ID: 1, Side: Remote, Role: Sender, Packets: tc.packets, TotalPackets: tc.packets, Calls: tc.calls},
			}}
			rcv := Flow{Direction: spec.ServerToClient, Side: Local, Role: Receiver, ElapsedS: 1, Streams: []StreamSide{
				{ID: 1, Side: Local, Role: Receiver, SeqUnique: tc.packets, Calls: tc.packets},
			}}
			res := Join(sp, SideResult{Side: Local, Flows: []Flow{rcv}}, SideResult{Side: Remote, Flows: []Flow{snd}})
			got := false
			for _, w := range Texts(res.Warnings) {
				if strings.Contains(w, "sends per system call") {
					got = true
					t.Log(w)
				}
			}
			if got != tc.want {
				t.Errorf("warned %v, want %v; warnings %q", got, tc.want, Texts(res.Warnings))
			}
		})
	}
}
