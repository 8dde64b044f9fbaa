package comparison

import (
	"math"
	"strings"
	"testing"

	"wirespeed/internal/result"
)

// iterated is a result whose iterations had these throughputs (bits/s)
// and whose summary is their mean.
func iterated(bps ...float64) result.Result {
	var r result.Result
	sum := 0.0
	for _, v := range bps {
		r.Iterations = append(r.Iterations, result.Iteration{Summary: result.Summary{BitsPerSecond: v}})
		sum += v
	}
	r.Summary.BitsPerSecond = sum / float64(len(bps))
	return r
}

// TestTradeoff holds the tradeoff's test to p-values worked out by hand.
// With 4 and 4 iterations the U test's null distribution has C(8,4) = 70
// equally likely arrangements; U of a counts the pairs with a > b.
func TestTradeoff(t *testing.T) {
	tests := []struct {
		name      string
		a, b      result.Result
		ratio     float64
		p         float64
		sig       bool
		untested  bool
		warnMatch string
	}{
		// Every MAERTS iteration below every STREAM one: U = 16, the most
		// extreme of the 70, and its mirror U = 0: p = 2/70.
		{"apart", iterated(100e6, 101e6, 102e6, 103e6), iterated(50e6, 51e6, 52e6, 53e6), 51.5 / 101.5, 2.0 / 70, true, false, ""},
		// Interleaved 1<2<3<...<8: U = 0+1+2+3 = 6; the arrangements with
		// U <= 6 number 1+1+2+3+5+5+7 = 24, so p = 2*24/70.
		{"interleaved", iterated(1e6, 3e6, 5e6, 7e6), iterated(2e6, 4e6, 6e6, 8e6), 5.0 / 4, 48.0 / 70, false, false, ""},
		// 3 and 3: the smallest p is 2/20 = 0.1, above 0.05, and says so.
		{"too few", iterated(100e6, 101e6, 102e6), iterated(50e6, 51e6, 52e6), 51.0 / 101, 0.1, false, false, "cannot reach significance"},
		// Single runs: a ratio and no test.
		{"single runs", result.Result{Summary: result.Summary{BitsPerSecond: 200e6}}, result.Result{Summary: result.Summary{BitsPerSecond: 100e6}}, 0.5, 0, false, true, ""},
	}
	for _, tt := range tests {
		got := Tradeoff(tt.a, tt.b)
		if math.Abs(got.Ratio-tt.ratio) > 1e-12 {
			t.Errorf("%s: ratio %v, want %v", tt.name, got.Ratio, tt.ratio)
		}
		if tt.untested {
			if got.Test != nil || got.TestError != "" {
				t.Errorf("%s: tested %+v %q, want no test", tt.name, got.Test, got.TestError)
			}
			continue
		}
		if got.Test == nil {
			t.Fatalf("%s: no test (%s)", tt.name, got.TestError)
		}
		c := got.Test
		if math.Abs(c.P-tt.p) > 1e-12 || c.Significant != tt.sig || c.Alpha != 0.05 || c.NA != len(tt.a.Iterations) || c.NB != len(tt.b.Iterations) {
			t.Errorf("%s: test %+v, want p %.6f significant %v", tt.name, *c, tt.p, tt.sig)
		}
		if tt.warnMatch != "" && !strings.Contains(strings.Join(c.Warnings, "; "), tt.warnMatch) {
			t.Errorf("%s: warnings %q, want one with %q", tt.name, c.Warnings, tt.warnMatch)
		}
	}
}
