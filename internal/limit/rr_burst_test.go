package limit

import (
	"math"
	"testing"

	"wirespeed/internal/result"
	"wirespeed/internal/spec"
)

// TestDiagnoseRRBurst: the latency rule counts every transaction in
// flight, connections times --burst, not one per connection. Both
// sides' CPUs idle; worked by hand from the mean latency:
//
//   - burst 8, one connection, mean 200 µs: 8 in flight allow
//     8 / 200e-6 = 40000/s; 6000/s is 15% of it, far from latency-bound
//     (unknown). As if one were in flight, 1 / 200e-6 = 5000/s, and
//     6000/s would be 120%, "latency".
//   - burst 8, two connections, mean 200 µs: 16 in flight allow
//     80000/s; 76000/s is 95%: latency-bound.
func TestDiagnoseRRBurst(t *testing.T) {
	for _, c := range []struct {
		name      string
		streams   int
		tps       float64
		inFlight  int
		predicted float64
		achieved  float64
		want      result.LimitKind
	}{
		{"one connection, well under", 1, 6000, 8, 40000, 15, result.LimitUnknown},
		{"two connections, at the latency", 2, 76000, 16, 80000, 95, result.LimitLatency},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := rrResult(c.tps, 200)
			r.Spec.Burst = 8
			for i := 1; i < c.streams; i++ {
				r.Directions[0].Streams = append(r.Directions[0].Streams, result.Stream{ID: i + 1, Direction: spec.RequestResponse})
			}
			r = withCPU(r, idle(100), idle(200))
			Diagnose(r)
			l := r.Summary.Limit
			if l == nil || l.Kind != c.want {
				t.Fatalf("limit %+v, want %s", l, c.want)
			}
			e := l.Evidence.RTT
			if e == nil || e.InFlight != c.inFlight || !burstNear(e.PredictedPerSecond, c.predicted) || !burstNear(e.AchievedPct, c.achieved) {
				t.Errorf("rtt evidence %+v, want %d in flight, %g/s predicted, %g%% achieved", e, c.inFlight, c.predicted, c.achieved)
			}
		})
	}
}

// burstNear is equality to within a millionth of a percent.
func burstNear(got, want float64) bool { return math.Abs(got-want) <= 1e-8*math.Abs(want) }
