package endpoint

import (
	"math"
	"testing"
	"time"

	"wirespeed/internal/engine"
	"wirespeed/internal/result"
	"wirespeed/internal/spec"
)

// TestLoadEndOf: the loaded phase ends when the last flow's window
// closed, each window opening its start offset after the load began. The
// client of an RRUL run sends one direction and receives the other; its
// sender's window opened 0.0106 s in and lasted 1.9933 s (ends 2.0039 s
// in), its receiver's opened at the first byte plus the omit, 0.0365 s
// in, and lasted 2.0182 s: the load ended 0.0365 + 2.0182 = 2.0547 s
// after it started, not at the longest window's 2.0182 s.
func TestLoadEndOf(t *testing.T) {
	start := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	flows := []result.Flow{
		{Direction: spec.ClientToServer, Side: result.Local, Role: result.Sender, StartOffsetS: 0.0106, ElapsedS: 1.9933},
		{Direction: spec.ServerToClient, Side: result.Local, Role: result.Receiver, StartOffsetS: 0.0365, ElapsedS: 2.0182},
	}
	got := loadEndOf(start, flows).Sub(start)
	if want := 2054700 * time.Microsecond; (got - want).Abs() > time.Microsecond {
		t.Errorf("load ended %v after it started, want %v (the receiver's offset 0.0365 s and window 2.0182 s)", got, want)
	}
	// A load interrupted before any window: it ended as it started.
	if got := loadEndOf(start, nil); !got.Equal(start) {
		t.Errorf("no flows: load ended %v after it started, want 0", got.Sub(start))
	}
}

// TestProbePoints: the probers' samples in nanoseconds become the
// record's seconds and milliseconds. The samples are the first UDP and
// TCP probes of a recorded loopback run (internal/report/testdata/kinds/
// rrul.json): a UDP probe sent 221,760 ns after the origin with a round
// trip of 337,275 ns is 0.00022176 s and 0.337275 ms; a TCP probe's
// handshake of 66,514 ns is 0.066514 ms and its request/response of
// 260,902 ns 0.260902 ms. A probe never answered (-1) is lost, with no
// round trip; a TCP probe that never connected has no handshake time.
func TestProbePoints(t *testing.T) {
	got := points([]engine.ProbeSample{
		{SentNanos: 221_760, RTTNanos: 337_275},
		{SentNanos: 231_474, RTTNanos: 260_902, ConnectNanos: 66_514},
		{SentNanos: 2_000_000_000, RTTNanos: -1, ConnectNanos: -1},
	})
	want := []result.ProbePoint{
		{T: 0.00022176, RTTMs: 0.337275},
		{T: 0.000231474, RTTMs: 0.260902, ConnectMs: 0.066514},
		{T: 2, Lost: true},
	}
	if len(got) != len(want) {
		t.Fatalf("%d points, want %d", len(got), len(want))
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-12 }
	for i := range want {
		g, w := got[i], want[i]
		if !near(g.T, w.T) || !near(g.RTTMs, w.RTTMs) || !near(g.ConnectMs, w.ConnectMs) || g.Lost != w.Lost {
			t.Errorf("point %d %+v, want %+v", i, g, w)
		}
	}
}
