package stats

import (
	"math/rand/v2"
	"testing"
)

// TestStepsDefaultMinSize holds Steps' zero options to their
// documented minimum segment of 3 values. The series are planted: seeded
// noise about 100 (standard deviation 1) with a level of 130 for two
// values, at the end (the newest two runs of a history) or at the
// start (the oldest two). Given a minimum of 2, Steps cuts those two
// values off as a segment of their own (checked below, so the series do reach the
// limit); with the default, no segment may be shorter than 3, wherever
// the change points fall. Two-point segments are the false alarms the
// default is there to keep out of `history` and `--check`.
func TestStepsDefaultMinSize(t *testing.T) {
	series := map[string]struct {
		n, from, to int // the values in [from, to) are at 130
	}{
		"newest two": {n: 20, from: 18, to: 20},
		"oldest two": {n: 20, from: 0, to: 2},
	}
	for name, s := range series {
		rng := rand.New(rand.NewPCG(49, 1))
		v := make([]float64, s.n)
		for i := range v {
			v[i] = 100 + rng.NormFloat64()
			if i >= s.from && i < s.to {
				v[i] += 30
			}
		}
		two, err := Steps(v, nil, StepOptions{MinSize: 2})
		if err != nil {
			t.Fatal(err)
		}
		if shortest(two, s.n) != 2 {
			t.Fatalf("%s: with a minimum of 2, changes %+v; want the planted two values as a segment", name, two)
		}
		got, err := Steps(v, nil, StepOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if m := shortest(got, s.n); m < 3 {
			t.Errorf("%s: default options, changes %+v leave a segment of %d values; the default minimum is 3", name, got, m)
		}
	}
}

// shortest is the length of the shortest segment the change points cut
// a series of n values into.
func shortest(cps []ChangePoint, n int) int {
	m, lo := n, 0
	for _, c := range cps {
		m = min(m, c.Index-lo)
		lo = c.Index
	}
	return min(m, n-lo)
}
