package result

import (
	"strings"
	"testing"

	"wirespeed/internal/measure"
	"wirespeed/internal/spec"
)

// TestUDPWarnings holds the shortfall and fragmentation rules to rates
// and counters worked out by hand, on both sides of each threshold.
func TestUDPWarnings(t *testing.T) {
	const mbit = 1e6
	tests := []struct {
		name     string
		rate     float64 // -b
		parallel int
		snd, rcv float64 // bits per second
		sc, rc   *measure.Counters
		want     []string // substrings, one per warning, in order
	}{
		{name: "on target", rate: 100 * mbit, parallel: 1, snd: 99 * mbit, rcv: 99 * mbit},
		{name: "just reached 95%", rate: 100 * mbit, parallel: 1, snd: 95 * mbit, rcv: 95 * mbit},
		{name: "below 95% of -b", rate: 100 * mbit, parallel: 1, snd: 94.9 * mbit, rcv: 94.9 * mbit,
			want: []string{"reached 94.9 of 100 Mbits/sec asked (94.9%)"}},
		// The sender reached -b and the path lost a fifth: the loss
		// is the receiver's warning, not a shortfall of the sender.
		{name: "rate reached, loss after the sender", rate: 100 * mbit, parallel: 1, snd: 99 * mbit, rcv: 79.2 * mbit,
			want: []string{"got 79.2 of 99.0 Mbits/sec sent (80%)"}},
		{name: "-b is per stream", rate: 100 * mbit, parallel: 2, snd: 180 * mbit, rcv: 180 * mbit,
			want: []string{"asked (90.0%)"}},
		{name: "unpaced: no target", snd: 1 * mbit, rcv: 1 * mbit},
		{name: "sender 10% above receiver", snd: 110 * mbit, rcv: 100 * mbit},
		{name: "sender more than 10% above", snd: 110.1 * mbit, rcv: 100 * mbit,
			want: []string{"got 100 of 110 Mbits/sec sent (90.83%)"}},
		{name: "nothing arrived", snd: 10 * mbit, rcv: 0, want: []string{"got 0.00 of 10.0 Mbits/sec sent (0%)"}},
		{name: "dropped at the sender's own queue", snd: 50 * mbit, rcv: 40 * mbit,
			sc:   &measure.Counters{UDP: measure.UDPCounters{SndbufErrors: 1199 + 5}},
			want: []string{"1199 of them dropped by the sender's kernel at a full queue of its own host"}},
		{name: "refusals only", snd: 50 * mbit, rcv: 40 * mbit,
			sc:   &measure.Counters{UDP: measure.UDPCounters{SndbufErrors: 5}},
			want: []string{"took them, on the path or at the receiver"}},
		{name: "reassembly only is no warning", snd: 1 * mbit, rcv: 1 * mbit,
			rc: &measure.Counters{IP: measure.IPCounters{ReasmReqds: 10, ReasmOKs: 5}}},
		{name: "fragments created", snd: 1 * mbit, rcv: 1 * mbit,
			sc:   &measure.Counters{IP: measure.IPCounters{FragCreates: 7, FragOKs: 1}},
			want: []string{"cut datagrams into 7 fragments (Ip FragCreates) and could not cut 0 (FragFails); the receiver's (remote) reassembled 0 (ReasmOKs) and gave up on 0"}},
		{name: "reassembly timed out", snd: 1 * mbit, rcv: 1 * mbit,
			rc:   &measure.Counters{IP: measure.IPCounters{ReasmFails: 3, ReasmTimeout: 2}},
			want: []string{"gave up on 3 (ReasmFails, 2 of them timed out)"}},
		{name: "fragmentation failed", snd: 1 * mbit, rcv: 1 * mbit,
			sc:   &measure.Counters{IP: measure.IPCounters{FragFails: 4}},
			want: []string{"could not cut 4 (FragFails)"}},
		{name: "all three", rate: 100 * mbit, parallel: 1, snd: 50 * mbit, rcv: 1 * mbit,
			sc:   &measure.Counters{IP: measure.IPCounters{FragCreates: 1}},
			want: []string{"asked (50.0%)", "sent (2%)", "IPv4 fragmentation"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sp := spec.Default()
			sp.Kind, sp.RateBitsPerSecond, sp.Parallel, sp.SendSize = spec.UDPStream, tt.rate, tt.parallel, 9216
			d := DirectionResult{Direction: spec.ClientToServer, Sender: Local, Receiver: Remote, Summary: Summary{
				ElapsedS: 2, BitsPerSecond: tt.rcv, SenderElapsedS: 2, SenderBitsPerSecond: tt.snd,
				UDPSummary: &UDPSummary{SendErrors: 5},
			}}
			got := Texts(udpWarnings(sp, d, true, tt.sc, tt.rc))
			if len(got) != len(tt.want) {
				t.Fatalf("%d warnings, want %d:\n%s", len(got), len(tt.want), strings.Join(got, "\n"))
			}
			for i, w := range tt.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("warning %d:\n%s\nwant it to contain %q", i, got[i], w)
				}
			}
		})
	}
}

// TestJoinUDPWarnings checks that Join puts the rules' warnings in the
// result's warnings (the JSON's "warnings"), with the counters of the
// right hosts: the client's as the sender's.
func TestJoinUDPWarnings(t *testing.T) {
	sp := spec.Default()
	sp.Kind, sp.RateBitsPerSecond, sp.Parallel = spec.UDPStream, 100e6, 1
	snd := Flow{Direction: spec.ClientToServer, Side: Local, Role: Sender, ElapsedS: 1, Bytes: 9_000_000,
		Streams: []StreamSide{{ID: 1, Side: Local, Role: Sender, Bytes: 9_000_000, Packets: 1000, TotalPackets: 1000}}}
	rcv := Flow{Direction: spec.ClientToServer, Side: Remote, Role: Receiver, ElapsedS: 1, Bytes: 4_000_000,
		Streams: []StreamSide{{ID: 1, Side: Remote, Role: Receiver, Bytes: 4_000_000, SeqUnique: 444}}}
	res := Join(sp,
		SideResult{Side: Local, Flows: []Flow{snd}, Counters: &measure.Counters{IP: measure.IPCounters{FragCreates: 6000}}},
		SideResult{Side: Remote, Flows: []Flow{rcv}, Counters: &measure.Counters{IP: measure.IPCounters{ReasmFails: 556}}})
	all := strings.Join(Texts(res.Warnings), "\n")
	for _, w := range []string{
		"the sender reached 72.0 of 100 Mbits/sec asked (72.0%): the local side",
		"the receiver got 32.0 of 72.0 Mbits/sec sent (44.44%): datagrams were lost after the sender's (local) socket",
		"cut datagrams into 6000 fragments",
		"gave up on 556 (ReasmFails",
	} {
		if !strings.Contains(all, w) {
			t.Errorf("warnings do not say %q:\n%s", w, all)
		}
	}
}
