package comparison

import (
	"wirespeed/internal/result"
	"wirespeed/internal/stats"
)

// TradeoffAlpha is the significance level of a --tradeoff's test:
// compare's default --alpha.
const TradeoffAlpha = 0.05

// Tradeoff compares b's throughput with a's (run --tradeoff: TCP_MAERTS
// after TCP_STREAM): their ratio and, when both iterated, the test
// compare makes by default (Mann-Whitney U at TradeoffAlpha) with each
// direction's iterations as its sample. One comparison, so nothing is
// adjusted.
func Tradeoff(a, b result.Result) result.Tradeoff {
	t := result.Tradeoff{Ratio: result.Ratio(b.Summary.BitsPerSecond, a.Summary.BitsPerSecond)}
	if len(a.Iterations) == 0 || len(b.Iterations) == 0 {
		return t
	}
	m := metrics[0] // throughput
	sa, sb := Samples(a, m), Samples(b, m)
	c, err := stats.Compare(sa, sb, stats.UTest, TradeoffAlpha)
	if err != nil {
		t.TestError = err.Error()
		return t
	}
	t.Test = &result.TradeoffTest{Test: c.Test, NA: c.NA, NB: c.NB, P: c.P, Alpha: c.Alpha, Significant: c.Significant, Warnings: c.Warnings}
	return t
}
