package stats

import (
	"math"
	"testing"
)

func TestQuantile(t *testing.T) {
	// Hand-worked: 1..10, type 7: h = q*(n-1).
	v := []float64{10, 2, 3, 4, 5, 6, 7, 8, 9, 1}
	for _, c := range []struct{ q, want float64 }{
		{0, 1}, {0.5, 5.5}, {0.9, 9.1}, {0.99, 9.91}, {1, 10},
	} {
		if got := Quantile(v, c.q); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("Quantile(%v) = %v, want %v", c.q, got, c.want)
		}
	}
	if got := Quantiles(v, 0.5, 0.9); got[0] != 5.5 || math.Abs(got[1]-9.1) > 1e-9 {
		t.Errorf("Quantiles = %v", got)
	}
	if !math.IsNaN(Quantile(nil, 0.5)) {
		t.Errorf("empty quantile is a number")
	}
	if v[0] != 10 {
		t.Errorf("Quantile sorted its input")
	}
}

func TestTrimmedMean(t *testing.T) {
	// 20 values 1..20: dropping the top 5% drops 20 alone; mean of 1..19 is 10.
	var v []float64
	for i := 20; i >= 1; i-- {
		v = append(v, float64(i))
	}
	if got := TrimmedMean(v, 0.05); got != 10 {
		t.Errorf("TrimmedMean = %v, want 10", got)
	}
	if got := TrimmedMean([]float64{3}, 0.05); got != 3 {
		t.Errorf("TrimmedMean of one = %v", got)
	}
}
