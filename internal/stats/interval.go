// Package stats owns the statistics wirespeed shows about repeated
// measurements: the confidence interval over iteration values
// (Summarize, Target), the rule that decides when to stop iterating
// (Decide, over a spec.Repeat: netperf's -i MAX,MIN with -I LEVEL,WIDTH), and the
// two-sample tests that say whether two sets of iterations differ
// (Compare: Welch's t-test or the Mann-Whitney U test, like benchstat), and the
// adjustment of many such tests made at once (Adjust: Benjamini-Hochberg or
// Holm-Bonferroni).
//
// It is pure: no I/O, no clock, and no formatting of numbers for people;
// report does that. Caveats a person should see next to a figure, such as
// "only 2 iterations", are returned in Warnings, not as errors. Errors are
// kept for arguments that make no sense: a confidence level outside (0, 1),
// a NaN among the values, a minimum above the maximum.
//
// Distributions come from gonum (distuv.StudentsT, distuv.UnitNormal);
// only the Mann-Whitney U null distribution, which gonum does not have, is
// computed here.
package stats

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// Summary is the centre of a set of iteration values and the confidence
// interval around it, in the shape of benchstat's benchmath.Summary.
//
// The interval is Student's t over the values, as netperf computes it:
//
//	HalfWidth = t(1-(1-Level)/2, N-1) * StdDev / sqrt(N)
//	Lo, Hi    = Center - HalfWidth, Center + HalfWidth
//	WidthPct  = 100 * (Hi - Lo) / |Center|
//
// WidthPct is the full width, netperf's convention: `-I 99,5` asks for an
// interval 5% of the mean wide, that is +/-2.5%.
type Summary struct {
	// Center is the arithmetic mean of the values; NaN when there are none.
	Center float64
	// Lo and Hi bound the interval. When it cannot be computed (fewer than
	// two values) they are -Inf and +Inf, as in benchmath.
	Lo, Hi float64
	// Level is the confidence level as a fraction: 0.99 for 99%.
	Level float64
	// N is the number of values.
	N int
	// StdDev is the sample standard deviation (n-1 denominator); NaN for
	// fewer than two values.
	StdDev float64
	// HalfWidth is (Hi-Lo)/2; +Inf when the interval cannot be computed.
	HalfWidth float64
	// WidthPct is the full width of the interval as a percentage of
	// |Center|. It is 0 when all values are equal and +Inf when the
	// interval cannot be computed or Center is 0 with a non-zero width.
	WidthPct float64
	// Warnings are caveats to show with the figure.
	Warnings []string
}

// Computable reports whether s has a finite confidence interval: at least
// two values.
func (s Summary) Computable() bool {
	return s.N >= 2 && !math.IsInf(s.HalfWidth, 0) && !math.IsNaN(s.HalfWidth)
}

// Within reports whether the interval is computable and no wider than
// widthPct percent of the mean (full width, netperf's -I convention).
func (s Summary) Within(widthPct float64) bool {
	return s.Computable() && s.WidthPct <= widthPct
}

// Summarize computes the mean of values and the Student's t confidence
// interval around it at level (a fraction in (0, 1), e.g. 0.99).
//
// Fewer than two values is not an error: the Summary then has no interval
// (see Summary.Lo) and a warning says why. The error is for a level
// outside (0, 1) or a value that is NaN or infinite.
func Summarize(values []float64, level float64) (Summary, error) {
	if err := checkLevel(level); err != nil {
		return Summary{}, err
	}
	if err := checkValues("value", values); err != nil {
		return Summary{}, err
	}
	n := len(values)
	s := Summary{
		Center:    math.NaN(),
		Lo:        math.Inf(-1),
		Hi:        math.Inf(1),
		Level:     level,
		N:         n,
		StdDev:    math.NaN(),
		HalfWidth: math.Inf(1),
		WidthPct:  math.Inf(1),
	}
	switch n {
	case 0:
		s.Warnings = append(s.Warnings, "no iterations: no mean and no confidence interval")
		return s, nil
	case 1:
		s.Center = values[0]
		s.Warnings = append(s.Warnings, "only 1 iteration: a confidence interval needs at least 2")
		return s, nil
	}
	s.Center, s.StdDev = stat.MeanStdDev(values, nil)
	t := criticalT(level, float64(n-1))
	s.HalfWidth = t * s.StdDev / math.Sqrt(float64(n))
	s.Lo, s.Hi = s.Center-s.HalfWidth, s.Center+s.HalfWidth
	switch {
	case s.HalfWidth == 0:
		s.WidthPct = 0
	case s.Center == 0:
		s.WidthPct = math.Inf(1)
		s.Warnings = append(s.Warnings, "the mean is 0: the interval's width cannot be a percentage of it")
	default:
		s.WidthPct = 100 * 2 * s.HalfWidth / math.Abs(s.Center)
	}
	if n == 2 {
		s.Warnings = append(s.Warnings, fmt.Sprintf(
			"only 2 iterations: with 1 degree of freedom the interval is %.4g standard errors each way", t))
	}
	if s.StdDev == 0 {
		s.Warnings = append(s.Warnings, fmt.Sprintf("all %d iterations are equal", n))
	}
	return s, nil
}

// Target is a confidence interval asked for, netperf's -I LEVEL,WIDTH.
type Target struct {
	// Level is the confidence level as a fraction: 0.99 for 99%.
	Level float64
	// WidthPct is the widest acceptable interval as a percentage of the
	// mean, full width: 5 accepts +/-2.5%.
	WidthPct float64
}

// Validate reports the first problem with t.
func (t Target) Validate() error {
	if err := checkLevel(t.Level); err != nil {
		return err
	}
	if !(t.WidthPct > 0) || math.IsInf(t.WidthPct, 0) {
		return fmt.Errorf("confidence interval width %v%% must be a number more than 0", t.WidthPct)
	}
	return nil
}

// Reached summarizes values at t.Level and reports whether the interval
// is no wider than t.WidthPct. Fewer than two values never reach it.
func (t Target) Reached(values []float64) (Summary, bool, error) {
	if err := t.Validate(); err != nil {
		return Summary{}, false, err
	}
	s, err := Summarize(values, t.Level)
	if err != nil {
		return Summary{}, false, err
	}
	return s, s.Within(t.WidthPct), nil
}

// criticalT is the two-sided critical value of Student's t with df degrees
// of freedom at level: the (1+level)/2 quantile. level must be in (0, 1)
// and df > 0.
func criticalT(level, df float64) float64 {
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(1 - (1-level)/2)
}

func checkLevel(level float64) error {
	if !(level > 0 && level < 1) {
		return fmt.Errorf("confidence level %v must be a fraction between 0 and 1, such as 0.99 for 99%%", level)
	}
	return nil
}

func checkValues(what string, values []float64) error {
	for i, v := range values {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%s %d is %v: every value must be a finite number", what, i, v)
		}
	}
	return nil
}
