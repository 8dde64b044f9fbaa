package result

import (
	"math"
	"testing"
	"time"

	"wirespeed/internal/spec"
)

// TestUnderLoadThroughput: the load's figures of an RRUL answer, from
// the directions of a recorded loopback run (internal/report/testdata/
// kinds/rrul.json; one stream a direction kept). TestUnderLoadOf gives
// no directions, so it never looked at these.
//
// The load started 1.00135 s after the probes' origin. The upload's
// intervals end 0.979092 and 1.982508 s into the load: 1.980443 and
// 2.983859 s from the origin, in the series' intervals [1, 2) and
// [2, 3); the download's end 1.000588 and 2.018189 s in: 2.001939 and
// 3.019540 s, in [2, 3) and [3, 4). The idle second [0, 1) carries no
// load.
//
// A flow's throughput is its receiver's: stream 5's receiver counted
// 256,234,711 bytes in 2.018188975 s, 8 × 256234711 / 2.018188975 =
// 1,015,701,558.9 bit/s; its sender sent 268,939,049 bytes, some never
// delivered in the receiver's window.
func TestUnderLoadThroughput(t *testing.T) {
	sp := spec.Default()
	sp.Kind = spec.RRUL
	sp.RRUL = spec.DefaultRRUL()
	sp.Interval = time.Second
	rec := ProbeRecord{LoadStartS: 1.001350658, LoadEndS: 3.056019084,
		UDP: []ProbePoint{{T: 0.5, RTTMs: 0.07}, {T: 3.5, RTTMs: 0.05}}}
	const (
		upBytes, upElapsed     = 331_819_090, 1.982507993
		downBytes, downElapsed = 256_234_711, 2.018188975
		downSent, downSentS    = 268_939_049, 1.958613067
	)
	dirs := []DirectionResult{
		{Direction: spec.ClientToServer, Sender: Local, Receiver: Remote,
			Summary:   Summary{BitsPerSecond: 1.6e9},
			Intervals: []Interval{{StartS: 0, EndS: 0.979091977, BitsPerSecond: 6.9e9}, {StartS: 0.979091977, EndS: 1.982507993, BitsPerSecond: 3.2e9}},
			Streams: []Stream{{ID: 1, Direction: spec.ClientToServer, Summary: Summary{
				Bytes: upBytes, ElapsedS: upElapsed, BitsPerSecond: Rate(upBytes, upElapsed),
				SenderBytes: 326_674_781, SenderElapsedS: 1.993253601, SenderBitsPerSecond: Rate(326_674_781, 1.993253601)}}}},
		{Direction: spec.ServerToClient, Sender: Remote, Receiver: Local,
			Summary:   Summary{BitsPerSecond: 1.1e9},
			Intervals: []Interval{{StartS: 0, EndS: 1.000587997, BitsPerSecond: 5.6e9}, {StartS: 1.000587997, EndS: 2.018188975, BitsPerSecond: 3.1e9}},
			Streams: []Stream{{ID: 5, Direction: spec.ServerToClient, Summary: Summary{
				Bytes: downBytes, ElapsedS: downElapsed, BitsPerSecond: Rate(downBytes, downElapsed),
				SenderBytes: downSent, SenderElapsedS: downSentS, SenderBitsPerSecond: Rate(downSent, downSentS)}}}},
	}
	u := UnderLoadOf(sp, rec, dirs)
	if u.UpBitsPerSecond != 1.6e9 || u.DownBitsPerSecond != 1.1e9 {
		t.Errorf("up %v, down %v bit/s, want the directions' 1.6e9 and 1.1e9", u.UpBitsPerSecond, u.DownBitsPerSecond)
	}

	// The flows: each its receiver's rate.
	if len(u.Flows) != 2 {
		t.Fatalf("%d flows, want 2: %+v", len(u.Flows), u.Flows)
	}
	for _, c := range []struct {
		id   int
		dir  spec.Direction
		want float64
	}{
		{1, spec.ClientToServer, 8 * 331819090 / 1.982507993}, // 1,338,987,146.3
		{5, spec.ServerToClient, 1_015_701_558.9},
	} {
		var f *FlowRate
		for i := range u.Flows {
			if u.Flows[i].ID == c.id {
				f = &u.Flows[i]
			}
		}
		if f == nil || f.Direction != c.dir || math.Abs(f.BitsPerSecond-c.want) > 0.1 {
			t.Errorf("flow %d %+v, want %s at its receiver's %.1f bit/s", c.id, f, c.dir, c.want)
		}
	}

	// The series: four intervals of a second from the origin (the last
	// probe at 3.5 s), the load's rates where the comment above places
	// them.
	want := []struct{ up, down float64 }{{0, 0}, {6.9e9, 0}, {3.2e9, 5.6e9}, {0, 3.1e9}}
	if len(u.Intervals) != len(want) {
		t.Fatalf("%d intervals, want %d: %+v", len(u.Intervals), len(want), u.Intervals)
	}
	for i, w := range want {
		iv := u.Intervals[i]
		if iv.StartS != float64(i) || iv.UpBitsPerSecond != w.up || iv.DownBitsPerSecond != w.down {
			t.Errorf("interval %d: from %v s, up %v, down %v bit/s; want from %d s, up %v, down %v", i, iv.StartS, iv.UpBitsPerSecond, iv.DownBitsPerSecond, i, w.up, w.down)
		}
		if loaded := i >= 1; iv.Loaded != loaded {
			t.Errorf("interval %d loaded %v, want %v (the load ran from 1.00 to 3.06 s)", i, iv.Loaded, loaded)
		}
	}
}
