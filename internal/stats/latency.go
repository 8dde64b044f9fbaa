package stats

import (
	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// LatencyOf summarises a histogram of nanoseconds in microseconds: count,
// min, mean, the 50th, 90th, 99th and 99.9th percentiles, max and standard
// deviation. The histogram's own precision bounds the error of each
// figure. An empty histogram gives a zero Latency.
func LatencyOf(h *hdrhistogram.Histogram) Latency {
	if h == nil || h.TotalCount() == 0 {
		return Latency{}
	}
	us := func(ns int64) float64 { return float64(ns) / 1e3 }
	return Latency{
		Count:  h.TotalCount(),
		Min:    us(h.Min()),
		Mean:   h.Mean() / 1e3,
		P50:    us(h.ValueAtQuantile(50)),
		P90:    us(h.ValueAtQuantile(90)),
		P99:    us(h.ValueAtQuantile(99)),
		P999:   us(h.ValueAtQuantile(99.9)),
		Max:    us(h.Max()),
		StdDev: h.StdDev() / 1e3,
	}
}
