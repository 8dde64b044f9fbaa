package stats

import (
	"math"
	"slices"
)

// Quantile returns the q-quantile (0 to 1) of values by linear
// interpolation between the closest ranks (R's type 7, numpy's default);
// NaN when values is empty. values is not changed.
func Quantile(values []float64, q float64) float64 {
	if len(values) == 0 {
		return math.NaN()
	}
	s := slices.Clone(values)
	slices.Sort(s)
	return quantileSorted(s, q)
}

func quantileSorted(s []float64, q float64) float64 {
	q = min(max(q, 0), 1)
	h := q * float64(len(s)-1)
	lo := int(math.Floor(h))
	if lo >= len(s)-1 {
		return s[len(s)-1]
	}
	return s[lo] + (h-float64(lo))*(s[lo+1]-s[lo])
}

// Quantiles returns the quantiles qs of values, sorting once.
func Quantiles(values []float64, qs ...float64) []float64 {
	out := make([]float64, len(qs))
	if len(values) == 0 {
		for i := range out {
			out[i] = math.NaN()
		}
		return out
	}
	s := slices.Clone(values)
	slices.Sort(s)
	for i, q := range qs {
		out[i] = quantileSorted(s, q)
	}
	return out
}

// TrimmedMean is the mean of values without the largest fraction trim of
// them (0.05 drops the top 5%, rounded down), as the responsiveness draft
// (draft-ietf-ippm-responsiveness) averages its probes; NaN when values is
// empty.
func TrimmedMean(values []float64, trim float64) float64 {
	if len(values) == 0 {
		return math.NaN()
	}
	s := slices.Clone(values)
	slices.Sort(s)
	keep := len(s) - int(float64(len(s))*min(max(trim, 0), 1))
	keep = max(keep, 1)
	var sum float64
	for _, v := range s[:keep] {
		sum += v
	}
	return sum / float64(keep)
}
