package stats

import (
	"fmt"
	"math"
	"slices"
)

// Adjustment names a procedure that adjusts the p-values of many
// comparisons made at once, so that testing many points and figures does
// not by itself produce "significant" differences.
type Adjustment string

// The adjustments Adjust knows.
const (
	// BenjaminiHochberg controls the false discovery rate: of the
	// differences called significant, the expected fraction that are
	// noise is at most alpha. When nothing differs at all it is the
	// chance that anything is called significant, as with Holm. Proven
	// for independent tests and for positively dependent ones (PRDS),
	// which the figures of one point are (throughput, CPU and service
	// demand move together).
	BenjaminiHochberg Adjustment = "benjamini-hochberg"
	// Holm is the Holm-Bonferroni step-down procedure: it controls the
	// family-wise error rate (the chance that any difference called
	// significant is noise is at most alpha) under any dependence.
	Holm Adjustment = "holm"
	// NoAdjustment leaves each p as its test gave it.
	NoAdjustment Adjustment = "none"
)

// Adjust returns the adjusted p-values of a family of tests, in the order
// of p; a test is significant at level alpha over the family when its
// adjusted p is at most alpha. With m p-values sorted ascending,
// p(1) <= ... <= p(m):
//
//	Holm:               q(i) = max over j <= i of min(1, (m-j+1) p(j))
//	Benjamini-Hochberg: q(i) = min over j >= i of min(1, m/j p(j))
//
// (R's p.adjust "holm" and "BH"). Ties keep their input order; equal
// p-values get equal adjusted ones. The error is for an unknown
// adjustment or a p that is NaN or outside [0, 1].
func Adjust(p []float64, method Adjustment) ([]float64, error) {
	for i, v := range p {
		if math.IsNaN(v) || v < 0 || v > 1 {
			return nil, fmt.Errorf("p-value %d is %v: must be between 0 and 1", i+1, v)
		}
	}
	out := slices.Clone(p)
	m := len(p)
	order := make([]int, m)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case p[a] < p[b]:
			return -1
		case p[a] > p[b]:
			return 1
		}
		return 0
	})
	switch method {
	case NoAdjustment:
	case Holm:
		run := 0.0
		for j, i := range order {
			run = max(run, min(1, float64(m-j)*p[i]))
			out[i] = run
		}
	case BenjaminiHochberg:
		run := 1.0
		for j := m - 1; j >= 0; j-- {
			i := order[j]
			run = min(run, float64(m)/float64(j+1)*p[i])
			out[i] = run
		}
	default:
		return nil, fmt.Errorf("unknown adjustment %q: use %q, %q or %q", method, BenjaminiHochberg, Holm, NoAdjustment)
	}
	return out, nil
}

// Readjust sets the comparison's adjusted p and decides its significance
// and verdict by it, at the comparison's alpha.
func (c *Comparison) Readjust(pAdjusted float64) {
	c.PAdjusted = pAdjusted
	// An adjusted p that is alpha by the arithmetic (14/8 * 2/70 = 0.05)
	// may come out a rounding error either side of it: it counts as at
	// alpha.
	c.Significant = pAdjusted <= c.Alpha*(1+1e-12)
	c.Verdict = Same
	if c.Significant {
		switch {
		case c.CenterB > c.CenterA:
			c.Verdict = Higher
		case c.CenterB < c.CenterA:
			c.Verdict = Lower
		}
	}
}

// MinP is the smallest p the test can give with na and nb values: for the
// exact U test 2/C(na+nb, na) (below 50 values each), and 0 otherwise
// (Welch's t and the normal approximation can give any p).
func MinP(test Test, na, nb int) float64 {
	if test == UTest && na < exactUMax && nb < exactUMax {
		return uTestMinP(na, nb)
	}
	return 0
}

// IterationsRule is compare's one rule for how many iterations each side
// needs, stated with its inputs: the fewest n for which n against n can
// give the test a p small enough for a difference at one point alone to
// count, that is at most alpha, or alpha/m when the p-values of m
// comparisons are adjusted (the first step of both Holm's and
// Benjamini-Hochberg's procedures). For the exact U test the smallest p of
// n against n is 2/C(2n, n): 4 each at 0.05 for one comparison, 5 for 2
// to 6, 6 for 7 to 23, 7 for 24 to 85. Welch's t can give any p with 2
// each. Every message that advises iterations uses it.
func IterationsRule(test Test, alpha float64, m int, adj Adjustment) string {
	level, over := alpha, ""
	if adj != NoAdjustment && m > 1 {
		level, over = alpha/float64(m), fmt.Sprintf(" over %d comparisons", m)
	}
	n := "2"
	if test == UTest {
		n = uTestSamples(level)
	}
	return fmt.Sprintf("run at least %s of each (the fewest whose smallest p is at most alpha %g%s)", n, alpha, over)
}
