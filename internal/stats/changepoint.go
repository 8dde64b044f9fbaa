package stats

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// ChangePoint is where a series changes: Index is the first value of the
// new segment.
type ChangePoint struct {
	Index int
	// P is the split's p-value (Steps: Student's t with Bonferroni's
	// correction below PermuteFrom points, a permutation test from
	// there).
	P float64
	// Stat is the split's t statistic.
	Stat float64
}

// Shift is how the newest values of a series compare with the baseline
// before them.
type Shift struct {
	Baseline, Newest float64 // their means
	// ChangePct is the newest mean's change from the baseline's, in
	// percent of the baseline's.
	ChangePct float64
	// P is the one-sided p-value that the newest values are worse: lower
	// when higherIsBetter, higher otherwise.
	P float64
	// Test names the test: a prediction interval for one new value,
	// Welch's t-test for several.
	Test string
}

// ShiftWorse tests whether newest is worse than baseline, one-sided in
// the direction that is worse: lower when higherIsBetter, else higher.
// One newest value is tested against the baseline's prediction interval
// (t = (x-mean)/(s·√(1+1/n)), n-1 degrees of freedom): is it further out
// than a new value of the baseline would be? Several are tested with
// Welch's t-test. Both assume the values are roughly normal about their
// mean; the baseline needs 3 values.
func ShiftWorse(baseline, newest []float64, higherIsBetter bool) (Shift, error) {
	if len(baseline) < 3 {
		return Shift{}, fmt.Errorf("%d baseline values: the test needs at least 3", len(baseline))
	}
	if len(newest) == 0 {
		return Shift{}, errors.New("no newest value to test")
	}
	mb, vb := stat.MeanVariance(baseline, nil)
	mn := stat.Mean(newest, nil)
	s := Shift{Baseline: mb, Newest: mn}
	if mb != 0 {
		s.ChangePct = 100 * (mn - mb) / math.Abs(mb)
	}
	// worse is how far the newest mean is to the worse side.
	worse := mb - mn
	if !higherIsBetter {
		worse = mn - mb
	}
	if len(newest) == 1 {
		s.Test = "prediction interval"
		n := float64(len(baseline))
		se := math.Sqrt(vb * (1 + 1/n))
		s.P = oneSided(worse, se, n-1)
		return s, nil
	}
	s.Test = "Welch's t-test"
	w := welch(baseline, newest)
	if w.df == 0 && w.p == 1 {
		s.P = 1
		return s, nil
	}
	// welch's p is two-sided: halve it on the worse side.
	if worse > 0 {
		s.P = w.p / 2
	} else {
		s.P = 1 - w.p/2
	}
	return s, nil
}

// oneSided is P(T > d/se) for Student's t with df degrees of freedom;
// with no spread, 0 for any d > 0 and 1 otherwise.
func oneSided(d, se, df float64) float64 {
	if se == 0 || df < 1 {
		if d > 0 {
			return 0
		}
		return 1
	}
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Survival(d / se)
}
