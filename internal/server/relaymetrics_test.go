package server

import (
	"fmt"
	"testing"
	"time"

	"wirespeed/internal/result"
	"wirespeed/internal/spec"
	"wirespeed/internal/stats"
)

// TestPairSeriesBounded: the pair labels come from requests, so a server
// keeps at most MaxPairSeries pairs, dropping the one measured longest
// ago, every series of it.
func TestPairSeriesBounded(t *testing.T) {
	m := NewMetrics()
	stream := result.Result{Spec: spec.Test{Kind: spec.TCPStream}}
	stream.Summary.BitsPerSecond = 1e9
	rr := result.Result{Spec: spec.Test{Kind: spec.TCPRR}}
	rr.Summary.RRSummary = &result.RRSummary{Latency: stats.Latency{P50: 10, P90: 20, P99: 30}}
	t0 := time.Unix(1e9, 0)
	m.pairMeasured("a", "oldest", rr, t0)
	for i := range MaxPairSeries - 1 {
		m.pairMeasured("a", fmt.Sprint("b", i), stream, t0.Add(time.Duration(i+1)*time.Second))
	}
	if n := series(t, m, "wirespeed_pair_latency_seconds"); n != 3 {
		t.Fatalf("%d latency series, want 3 (one per quantile)", n)
	}
	// Measuring a known pair again adds nothing.
	m.pairMeasured("a", "b0", stream, t0.Add(time.Hour))
	if n := len(m.relays.last); n != MaxPairSeries {
		t.Fatalf("%d pairs, want %d", n, MaxPairSeries)
	}
	// One more pair: the oldest goes, with all its series.
	m.pairMeasured("a", "newest", stream, t0.Add(2*time.Hour))
	if n := len(m.relays.last); n != MaxPairSeries {
		t.Errorf("%d pairs, want %d", n, MaxPairSeries)
	}
	if n := series(t, m, "wirespeed_pair_latency_seconds"); n != 0 {
		t.Errorf("%d latency series left of the dropped pair", n)
	}
	if n := series(t, m, "wirespeed_pair_last_measured_timestamp_seconds"); n != MaxPairSeries {
		t.Errorf("%d last-measured series, want %d", n, MaxPairSeries)
	}
	if n := series(t, m, "wirespeed_pair_throughput_bits_per_second"); n != MaxPairSeries {
		t.Errorf("%d throughput series, want %d", n, MaxPairSeries)
	}
}

// series counts the series of the metric called name.
func series(t *testing.T, m *Metrics, name string) int {
	t.Helper()
	mfs, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return len(mf.GetMetric())
		}
	}
	return 0
}
