package stats

import (
	"math"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

func TestLatency(t *testing.T) {
	if got := LatencyOf(nil); got.Count != 0 {
		t.Errorf("nil histogram: %+v", got)
	}
	h := hdrhistogram.New(1, 3_600_000_000_000, 3)
	// 1..1000 microseconds, once each: percentiles are known exactly.
	for v := int64(1); v <= 1000; v++ {
		h.RecordValue(v * 1000)
	}
	l := LatencyOf(h)
	near := func(name string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > want*0.001+0.001 {
			t.Errorf("%s = %g, want %g within 0.1%%", name, got, want)
		}
	}
	if l.Count != 1000 {
		t.Errorf("count %d", l.Count)
	}
	near("min", l.Min, 1)
	near("max", l.Max, 1000)
	near("mean", l.Mean, 500.5)
	near("p50", l.P50, 500)
	near("p90", l.P90, 900)
	near("p99", l.P99, 990)
	near("p999", l.P999, 999)
	// Population standard deviation of 1..n is sqrt((n^2-1)/12).
	near("stddev", l.StdDev, math.Sqrt((1000*1000-1)/12.0))
}
