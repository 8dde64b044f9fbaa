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

	// The series: one clock, the load's start. Its grid points are
	// 1.00135, 2.00135 and 3.00135 s from the origin; the first interval
	// runs from the origin to the first of them (the 0.00135 s before it
	// are too short for an interval of their own), and the last probe at
	// 3.5 s makes a fourth. The throughput is the receivers' readings
	// (SideResult.LoadSeconds, each side's seconds from its own load
	// start), not the directions' intervals above, which run on each
	// flow's own window: the server read stream 1's bytes at 0, 1 and 2 s
	// and as the load ended (2.05 s), the client stream 5's at 0, 1, 2
	// and 2.02 s:
	//   up   [0,1) 862,500,000 B = 6.9 Gbit/s; [1,2) 400,000,000 B =
	//        3.2 Gbit/s; [2,3) 0;
	//   down [0,1) 700,000,000 B = 5.6 Gbit/s; [1,2) 387,500,000 B =
	//        3.1 Gbit/s; [2,3) the 10,000,000 B drained by 2.02 s: 80
	//        Mbit/s over the interval's second.
	// The load ran 2.05467 s: the last interval holds 0.05467 s of it,
	// under a tenth, and is not loaded.
	up := &LoadSeconds{StepS: 1, T: []float64{0, 1, 2, 2.05}, Flows: []FlowBytes{{ID: 1, Direction: spec.ClientToServer, Bytes: []int64{0, 862_500_000, 1_262_500_000, 1_262_500_000}}}}
	down := &LoadSeconds{StepS: 1, T: []float64{0, 1, 2, 2.02}, Flows: []FlowBytes{{ID: 5, Direction: spec.ServerToClient, Bytes: []int64{0, 700_000_000, 1_087_500_000, 1_097_500_000}}}}
	u = UnderLoadOf(sp, rec, dirs, down, nil, up)
	want := []struct {
		from, up, down float64
		loaded         bool
	}{{0, 0, 0, false}, {1.001350658, 6.9e9, 5.6e9, true}, {2.001350658, 3.2e9, 3.1e9, true}, {3.001350658, 0, 80e6, false}}
	if len(u.Intervals) != len(want) {
		t.Fatalf("%d intervals, want %d: %+v", len(u.Intervals), len(want), u.Intervals)
	}
	for i, w := range want {
		iv := u.Intervals[i]
		if math.Abs(iv.StartS-w.from) > 1e-9 || math.Abs(iv.UpBitsPerSecond-w.up) > 1 || math.Abs(iv.DownBitsPerSecond-w.down) > 1 {
			t.Errorf("interval %d: from %v s, up %v, down %v bit/s; want from %v s, up %v, down %v", i, iv.StartS, iv.UpBitsPerSecond, iv.DownBitsPerSecond, w.from, w.up, w.down)
		}
		if iv.Loaded != w.loaded {
			t.Errorf("interval %d loaded %v, want %v (the load ran from 1.00 to 3.06 s)", i, iv.Loaded, w.loaded)
		}
		// Each flow's own figure, summing to the direction's.
		if i > 0 {
			if len(iv.Flows) != 2 || iv.Flows[0].ID != 1 || iv.Flows[1].ID != 5 ||
				math.Abs(iv.Flows[0].BitsPerSecond-w.up) > 1 || math.Abs(iv.Flows[1].BitsPerSecond-w.down) > 1 {
				t.Errorf("interval %d flows %+v, want 1 at %v and 5 at %v", i, iv.Flows, w.up, w.down)
			}
		} else if len(iv.Flows) != 0 {
			t.Errorf("the idle interval has flows %+v", iv.Flows)
		}
	}
	if iv := u.Intervals[1]; iv.Samples != 0 || u.Intervals[0].Samples != 1 || u.Intervals[3].Samples != 1 {
		t.Errorf("probes at 0.5 and 3.5 s: in intervals 0 and 3, got %d, %d, %d, %d", u.Intervals[0].Samples, iv.Samples, u.Intervals[2].Samples, u.Intervals[3].Samples)
	}
}
