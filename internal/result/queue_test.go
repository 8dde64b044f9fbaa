package result

import (
	"math"
	"testing"

	"wirespeed/internal/measure"
	"wirespeed/internal/spec"
)

// queueRec is a qdisc sampled every 0.2 s over a load from 1 s, one
// sample a backlog. Its counters are the qdisc's lifetime ones: it had
// dropped 7 packets before the load (5 by the sample before it), and
// drops one more at each loaded sample after the first.
func queueRec(rate float64, backlog ...uint64) *QueueRecord {
	r := &QueueRecord{Dev: "wst-b", Kind: "tbf", RateBitsPerSecond: rate, LoadStartS: 1, LoadEndS: 1 + 0.2*float64(len(backlog)-1)}
	var sent uint64
	for i, b := range backlog {
		r.Samples = append(r.Samples, QueueSample{T: 1 + 0.2*float64(i), QdiscStats: measure.QdiscStats{Kind: "tbf", BacklogBytes: b, SentBytes: sent, Drops: 7 + uint64(i)}})
		sent += 500000 // 2.5 MB/s: 20 Mbit/s
	}
	// A sample before the load, which does not count.
	r.Samples = append([]QueueSample{{T: 0.5, QdiscStats: measure.QdiscStats{BacklogBytes: 1 << 30, Drops: 5}}}, r.Samples...)
	return r
}

// TestAttributeQueue: hand-worked backlogs and rates. A 20 Mbit/s tbf
// with 200,000 and 300,000 bytes queued holds 250,000 on average: 100 ms.
func TestAttributeQueue(t *testing.T) {
	for _, tt := range []struct {
		name          string
		local, remote *QueueRecord
		routers       []QueueRecord
		increase      float64
		wantMs        float64
		where         string
		elsewhereMs   float64 // the increase less wantMs, under 70% of it
	}{
		{"client side", queueRec(20e6, 200000, 300000), queueRec(20e6, 0, 0), nil, 100, 100, "client", 0},
		{"server side", queueRec(20e6, 0, 0), queueRec(20e6, 200000, 300000), nil, 100, 100, "server", 0},
		{"both", queueRec(20e6, 200000, 300000), queueRec(20e6, 100000, 100000), nil, 140, 140, "both", 0},
		{"elsewhere", queueRec(20e6, 10000, 10000), queueRec(20e6, 0, 0), nil, 100, 4, "elsewhere", 96},
		// 60 ms of 100 sampled: the client named, 40 ms elsewhere.
		{"client, the rest elsewhere", queueRec(20e6, 100000, 200000), queueRec(20e6, 0, 0), nil, 100, 60, "client", 40},
		// No tbf: the rate is what the qdisc sent, 2.5 MB per second.
		{"sent rate", queueRec(0, 200000, 300000), nil, nil, 100, 100, "client", 0},
		// A routed lab's router: its two egresses, 100 ms and 40 ms at
		// 20 Mbit/s, and the hosts' queues empty.
		{"router", queueRec(20e6, 0, 0), queueRec(20e6, 0, 0), []QueueRecord{*queueRec(20e6, 200000, 300000), *queueRec(20e6, 100000, 100000)}, 140, 140, "router", 0},
		{"elsewhere than the router", queueRec(20e6, 0, 0), queueRec(20e6, 0, 0), []QueueRecord{*queueRec(20e6, 10000, 10000)}, 100, 4, "elsewhere", 96},
		{"client and router", queueRec(20e6, 200000, 300000), queueRec(20e6, 0, 0), []QueueRecord{*queueRec(20e6, 100000, 100000)}, 140, 140, "client and router", 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			u := &UnderLoad{IncreaseMs: tt.increase}
			AttributeQueue(u, tt.local, tt.remote, tt.routers, []DirectionResult{{Direction: spec.ClientToServer,
				Summary:   Summary{SenderBitsPerSecond: 8e6},
				Intervals: []Interval{{NotsentBytes: 10000, RTTMicros: 5000}, {NotsentBytes: 30000, RTTMicros: 7000}}}})
			q := u.Queue
			if q == nil || math.Abs(q.QdiscMs-tt.wantMs) > 1e-6 || q.Where != tt.where || math.Abs(q.ElsewhereMs-tt.elsewhereMs) > 1e-6 {
				t.Fatalf("queue %+v, want %.0f ms %s, %.0f ms elsewhere", q, tt.wantMs, tt.where, tt.elsewhereMs)
			}
			// The client's qdisc dropped 8 - 7 = 1 packet under load (its
			// lifetime count is 8).
			if s := q.Sides[0]; s.Side != Local || s.Samples != 2 || s.Drops != 1 {
				t.Errorf("client side %+v", s)
			}
			// The client's sockets held 20,000 bytes unsent on average:
			// 20 ms at its 8 Mbit/s, apart from the path's delay.
			if len(q.Sockets) != 1 || q.Sockets[0] != (SocketQueue{Side: Local, NotsentBytes: 20000, WaitMs: 20, SRTTMs: 7}) {
				t.Errorf("sockets %+v, want the client's 20000 bytes, 20 ms", q.Sockets)
			}
			for i, s := range q.Sides[len(q.Sides)-len(tt.routers):] {
				if s.Side != Router || s.Samples != len(tt.routers[i].Samples)-1 {
					t.Errorf("router queue %d: %+v", i, s)
				}
			}
		})
	}
}

// TestHostQueueNote: a sending host's own qdisc holding 250,000 bytes
// on average (200,000 and 300,000 sampled) for 4 flows is 62,500 bytes a
// flow, over HostQueueMinPerFlow (16,384): the note names it. With 20
// flows, 12,500 each, under it: no note; nor for a router's queue.
func TestHostQueueNote(t *testing.T) {
	streams := func(n int) []Stream { return make([]Stream, n) }
	for _, tt := range []struct {
		name    string
		local   *QueueRecord
		routers []QueueRecord
		flows   int
		want    *HostQueue
	}{
		{"4 flows", queueRec(20e6, 200000, 300000), nil, 4, &HostQueue{Side: Local, Dev: "wst-b", Flows: 4, PerFlowBytes: 62500}},
		{"20 flows", queueRec(20e6, 200000, 300000), nil, 20, nil},
		{"router", queueRec(20e6, 0, 0), []QueueRecord{*queueRec(20e6, 200000, 300000)}, 4, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			u := &UnderLoad{IncreaseMs: 100}
			AttributeQueue(u, tt.local, nil, tt.routers, []DirectionResult{{Direction: spec.ClientToServer, Streams: streams(tt.flows)}})
			got := u.Queue.HostQueue
			if (got == nil) != (tt.want == nil) || (got != nil && *got != *tt.want) {
				t.Errorf("host queue %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestMeanUnderLoad: the mean of two iterations' answers averages their
// headline figures and adds their samples; one iteration's is kept.
func TestMeanUnderLoad(t *testing.T) {
	a := &UnderLoad{Idle: Phase{All: Latency{P50Ms: 1, Samples: 10}}, Loaded: Phase{All: Latency{P50Ms: 100, P99Ms: 200, Samples: 40, Lost: 1}}, IncreaseMs: 99, UpBitsPerSecond: 10}
	b := &UnderLoad{Idle: Phase{All: Latency{P50Ms: 3, Samples: 10}}, Loaded: Phase{All: Latency{P50Ms: 50, P99Ms: 100, Samples: 40}}, IncreaseMs: 47, UpBitsPerSecond: 20}
	if m := MeanSummary([]Summary{{UnderLoad: a}}); m.UnderLoad != a {
		t.Errorf("one iteration's answer not kept")
	}
	m := MeanSummary([]Summary{{UnderLoad: a}, {UnderLoad: b}}).UnderLoad
	if m.Idle.All.P50Ms != 2 || m.Loaded.All.P50Ms != 75 || m.Loaded.All.P99Ms != 150 || m.Loaded.All.Samples != 80 || m.Loaded.All.Lost != 1 || m.IncreaseMs != 73 || m.UpBitsPerSecond != 15 {
		t.Errorf("mean %+v", m)
	}
	if b.Loaded.All.P50Ms != 50 {
		t.Errorf("the mean changed an iteration's answer")
	}
}
