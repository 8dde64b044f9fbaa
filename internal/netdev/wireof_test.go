package netdev

import "testing"

// TestWireOfMaxBacklog: the largest backlog of a window is the largest of
// all its readings, the two ends included, not only the interval ticks'
// between them. Readings planted by hand: a tbf that held 3028 bytes (2
// packets) when the window opened, 1514 (1) at the one tick, and 4542
// (3) when it closed: the largest is the end's 4542 and 3. In a window
// shorter than an interval (no tick) that opened on 4542 bytes (3
// packets) and closed on an empty queue, the largest is the opening's.
// Its counters moved from 10 sent packets, 15140 bytes, 1 drop to 30,
// 45420 and 4: 20 packets, 30280 bytes and 3 drops in the window.
func TestWireOfMaxBacklog(t *testing.T) {
	before := WireCounters{Qdisc: &QdiscCounters{Kind: "tbf", SentBytes: 15140, SentPackets: 10, Drops: 1, BacklogBytes: 3028, BacklogPackets: 2}}
	after := WireCounters{Qdisc: &QdiscCounters{Kind: "tbf", SentBytes: 45420, SentPackets: 30, Drops: 4, BacklogBytes: 4542, BacklogPackets: 3}}
	tick := QdiscCounters{Kind: "tbf", SentBytes: 30280, SentPackets: 20, Drops: 2, BacklogBytes: 1514, BacklogPackets: 1}
	for _, c := range []struct {
		name                 string
		before, after        WireCounters
		ticks                []QdiscCounters
		wantBytes, wantPkts  uint64
		wantEndB, wantEndPkt uint64
	}{
		{"largest at the end", before, after, []QdiscCounters{tick}, 4542, 3, 4542, 3},
		{"largest at the start, no tick", WireCounters{Qdisc: &QdiscCounters{Kind: "tbf", BacklogBytes: 4542, BacklogPackets: 3}}, WireCounters{Qdisc: &QdiscCounters{Kind: "tbf", SentBytes: 4542, SentPackets: 3}}, nil, 4542, 3, 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			q := WireOf("wst-b", 1, c.before, c.after, c.ticks).Qdisc
			if q == nil {
				t.Fatal("no qdisc figures")
			}
			if q.MaxBacklogBytes != c.wantBytes || q.MaxBacklogPackets != c.wantPkts {
				t.Errorf("largest backlog %d bytes, %d packets; want %d and %d", q.MaxBacklogBytes, q.MaxBacklogPackets, c.wantBytes, c.wantPkts)
			}
			if q.BacklogBytes != c.wantEndB || q.BacklogPackets != c.wantEndPkt {
				t.Errorf("backlog at the end %d bytes, %d packets; want %d and %d", q.BacklogBytes, q.BacklogPackets, c.wantEndB, c.wantEndPkt)
			}
		})
	}
	q := WireOf("wst-b", 1, before, after, []QdiscCounters{tick}).Qdisc
	if q.SentPackets != 20 || q.SentBytes != 30280 || q.Drops != 3 {
		t.Errorf("sent %d packets, %d bytes, dropped %d; want 20, 30280, 3", q.SentPackets, q.SentBytes, q.Drops)
	}
}
