package stats

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// Test names a two-sample significance test.
type Test string

// The tests Compare runs.
const (
	// UTest is the Mann-Whitney U test (Wilcoxon rank-sum), benchstat's
	// default. It assumes nothing about the distribution of the values;
	// the centres it compares are medians.
	UTest Test = "mann-whitney-u"
	// WelchT is Welch's unequal-variances t-test. It assumes each sample's
	// mean is roughly normal; the centres it compares are means.
	WelchT Test = "welch-t"
)

// Verdict is the short form of a comparison, as benchstat prints it.
type Verdict string

// The verdicts.
const (
	// Same: the difference is not distinguishable from noise at the asked
	// alpha (benchstat's "~"), or the centres are equal.
	Same Verdict = "~"
	// Higher: b's centre is significantly higher than a's.
	Higher Verdict = "+"
	// Lower: b's centre is significantly lower than a's.
	Lower Verdict = "-"
)

// Comparison says how sample b differs from baseline a and whether the
// difference is distinguishable from noise.
type Comparison struct {
	// Test is the test that computed P.
	Test Test
	// NA and NB are the sizes of the two samples.
	NA, NB int
	// CenterA and CenterB are the samples' centres: medians for UTest,
	// means for WelchT (as benchstat uses the summary of the test's own
	// assumption).
	CenterA, CenterB float64
	// DeltaPct is how much b's centre differs from a's, in percent of a's:
	// (CenterB/CenterA - 1) * 100. NaN when CenterA is 0.
	DeltaPct float64
	// Statistic is the test statistic. For WelchT it is t for b minus a
	// (positive when b's mean is higher). For UTest it is U of sample a:
	// the number of pairs (x from a, y from b) with x > y, ties counting
	// one half (R's W).
	Statistic float64
	// DF is Welch's degrees of freedom (Welch-Satterthwaite); 0 for UTest.
	DF float64
	// Exact is true when P is from the exact null distribution (UTest on
	// samples of fewer than 50 values each) and false when it is from an
	// approximation.
	Exact bool
	// P is the two-sided p-value. It is 1 when the test could not be
	// computed (Warnings says why), as in benchmath.
	P float64
	// PAdjusted is P adjusted for the other comparisons made at the same
	// time (Adjust, set by Readjust); P itself for a comparison made
	// alone.
	PAdjusted float64
	// Alpha is the significance level the comparison was made at.
	Alpha float64
	// Significant is true when PAdjusted <= Alpha.
	Significant bool
	// Verdict sums the comparison up.
	Verdict Verdict
	// Warnings are caveats to show with the comparison, for example that
	// the samples are too small to ever reach significance.
	Warnings []string
}

// Compare tests whether b differs from the baseline a, two-sided, at
// significance level alpha (a fraction in (0, 1), 0.05 being usual).
//
// For UTest, P is exact when both samples have fewer than 50 values: the
// permutation distribution of a's rank sum, computed by counting, with
// tied values given their mean rank (so ties are handled exactly too,
// conditional on the tie pattern). The two-sided P doubles the smaller
// tail, R's wilcox.test convention. From 50 values up, P is from the normal
// approximation with the tie correction of the variance and a continuity
// correction of 1/2, as R's wilcox.test(correct=TRUE) does.
//
// The exact test on na and nb values can never give a P below
// 2/C(na+nb, na): every arrangement of the ranks is one of C(na+nb, na)
// equally likely ones, and the two most extreme make the two tails. With
// 3 and 3 values that is 2/20 = 0.1, so no difference, however large, is
// significant at 0.05; 4 and 4 values give 2/70 = 0.029. When the sizes
// cannot reach alpha, Warnings says so and how many values would
// (benchstat's "need >= 4 samples to detect a difference at alpha level
// 0.05").
//
// For WelchT, P is from Student's t with the Welch-Satterthwaite degrees of
// freedom; each sample needs at least 2 values.
//
// The error is for an unknown test, an alpha outside (0, 1), an empty
// sample, or a value that is NaN or infinite.
func Compare(a, b []float64, test Test, alpha float64) (Comparison, error) {
	if test != UTest && test != WelchT {
		return Comparison{}, fmt.Errorf("unknown test %q: use %q or %q", test, UTest, WelchT)
	}
	if !(alpha > 0 && alpha < 1) {
		return Comparison{}, fmt.Errorf("significance level alpha %v must be between 0 and 1, such as 0.05", alpha)
	}
	if len(a) == 0 || len(b) == 0 {
		return Comparison{}, fmt.Errorf("compare needs values in both samples, got %d and %d", len(a), len(b))
	}
	if err := checkValues("value of sample a", a); err != nil {
		return Comparison{}, err
	}
	if err := checkValues("value of sample b", b); err != nil {
		return Comparison{}, err
	}
	c := Comparison{Test: test, NA: len(a), NB: len(b), Alpha: alpha, P: 1}
	switch test {
	case UTest:
		c.CenterA, c.CenterB = Center(a, test), Center(b, test)
		r := mannWhitney(a, b, exactUMax)
		c.Statistic, c.P, c.Exact = r.u, r.p, r.exact
		c.Warnings = append(c.Warnings, r.warnings...)
		if minP := uTestMinP(len(a), len(b)); minP > alpha {
			c.Warnings = append(c.Warnings, fmt.Sprintf(
				"with %d and %d iterations the U test cannot reach significance at alpha %g (the smallest possible p is %.3g): %s",
				len(a), len(b), alpha, minP, IterationsRule(test, alpha, 1, NoAdjustment)))
		}
	case WelchT:
		c.CenterA, c.CenterB = Center(a, test), Center(b, test)
		r := welch(a, b)
		c.Statistic, c.DF, c.P = r.t, r.df, r.p
		c.Warnings = append(c.Warnings, r.warnings...)
	}
	if c.CenterA == 0 {
		c.DeltaPct = math.NaN()
		c.Warnings = append(c.Warnings, "the baseline's centre is 0: the change cannot be a percentage of it")
	} else {
		c.DeltaPct = (c.CenterB/c.CenterA - 1) * 100
	}
	c.Readjust(c.P)
	return c, nil
}

type welchResult struct {
	t, df, p float64
	warnings []string
}

// welch is Welch's t-test of b against a:
//
//	t  = (mean(b) - mean(a)) / sqrt(va/na + vb/nb)
//	df = (va/na + vb/nb)^2 / ((va/na)^2/(na-1) + (vb/nb)^2/(nb-1))
//	p  = 2 * P(T_df > |t|)
func welch(a, b []float64) welchResult {
	na, nb := float64(len(a)), float64(len(b))
	if len(a) < 2 || len(b) < 2 {
		return welchResult{p: 1, warnings: []string{fmt.Sprintf(
			"Welch's t-test needs at least 2 iterations in each sample, got %d and %d", len(a), len(b))}}
	}
	ma, va := stat.MeanVariance(a, nil)
	mb, vb := stat.MeanVariance(b, nil)
	sa, sb := va/na, vb/nb
	se2 := sa + sb
	if se2 == 0 {
		// No spread in either sample: t is 0/0 or d/0.
		if ma == mb {
			return welchResult{p: 1, warnings: []string{"all iterations of both samples are equal"}}
		}
		return welchResult{
			t:        math.Copysign(math.Inf(1), mb-ma),
			df:       na + nb - 2,
			p:        0,
			warnings: []string{"neither sample varies: any difference between them counts as significant"},
		}
	}
	t := (mb - ma) / math.Sqrt(se2)
	df := se2 * se2 / (sa*sa/(na-1) + sb*sb/(nb-1))
	p := 2 * distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Survival(math.Abs(t))
	return welchResult{t: t, df: df, p: min(p, 1)}
}

type uResult struct {
	u, p     float64
	exact    bool
	warnings []string
}

// exactUMax is the sample size from which the U test uses the normal
// approximation: exact below it in both samples, as R's wilcox.test.
const exactUMax = 50

// mannWhitney is the two-sided Mann-Whitney U test of a against b, exact
// when both samples have fewer than exactBelow values.
func mannWhitney(a, b []float64, exactBelow int) uResult {
	na, nb := len(a), len(b)
	n := na + nb
	// Doubled mid-ranks keep tied ranks integral: a tie group over the
	// 1-based positions i..j has mid-rank (i+j)/2, doubled i+j.
	type obs struct {
		v    float64
		inA  bool
		rank int // doubled
	}
	all := make([]obs, 0, n)
	for _, v := range a {
		all = append(all, obs{v: v, inA: true})
	}
	for _, v := range b {
		all = append(all, obs{v: v})
	}
	slices.SortStableFunc(all, func(x, y obs) int {
		switch {
		case x.v < y.v:
			return -1
		case x.v > y.v:
			return 1
		}
		return 0
	})
	var tieTerm float64 // sum of t^3 - t over tie groups
	ties := false
	for i := 0; i < n; {
		j := i
		for j+1 < n && all[j+1].v == all[i].v {
			j++
		}
		for k := i; k <= j; k++ {
			all[k].rank = (i + 1) + (j + 1)
		}
		if t := float64(j - i + 1); t > 1 {
			ties = true
			tieTerm += t*t*t - t
		}
		i = j + 1
	}
	ranks := make([]int, n)
	wA2 := 0 // doubled rank sum of a
	for i, o := range all {
		ranks[i] = o.rank
		if o.inA {
			wA2 += o.rank
		}
	}
	u := float64(wA2)/2 - float64(na*(na+1))/2

	if na < exactBelow && nb < exactBelow {
		// Count over the smaller sample: fewer states, same two-sided p,
		// since its rank sum is the total minus the other's.
		k, w2 := na, wA2
		if nb < na {
			k, w2 = nb, n*(n+1)-wA2
		}
		lo, hi := rankSumTails(ranks, k, w2)
		return uResult{u: u, p: min(1, 2*min(lo, hi)), exact: true}
	}

	r := uResult{u: u}
	fa, fb, fn := float64(na), float64(nb), float64(n)
	mu := fa * fb / 2
	variance := fa * fb / 12 * ((fn + 1) - tieTerm/(fn*(fn-1)))
	if variance <= 0 {
		r.p = 1
		r.warnings = append(r.warnings, "all iterations of both samples are equal")
		return r
	}
	d := u - mu
	z := (d - 0.5*sign(d)) / math.Sqrt(variance)
	r.p = min(1, 2*min(distuv.UnitNormal.CDF(z), distuv.UnitNormal.Survival(z)))
	if ties {
		r.warnings = append(r.warnings, "tied values: p is from the normal approximation with tie correction")
	}
	return r
}

// rankSumTails returns P(W <= w2) and P(W >= w2) where W is the sum of k
// of the (doubled) ranks drawn without replacement, all subsets equally
// likely: the null distribution of a sample's rank sum.
func rankSumTails(ranks []int, k, w2 int) (lo, hi float64) {
	total := 0
	for _, r := range ranks {
		total += r
	}
	// counts[j][s] is the number of j-subsets of the ranks seen so far
	// with sum s. Counts reach C(98, 49) ~ 2.5e28: float64 keeps them to
	// 16 significant digits, plenty for a ratio.
	counts := make([][]float64, k+1)
	for j := range counts {
		counts[j] = make([]float64, total+1)
	}
	counts[0][0] = 1
	seen := 0
	for _, r := range ranks {
		seen += r
		for j := k; j >= 1; j-- {
			prev, cur := counts[j-1], counts[j]
			for s := seen; s >= r; s-- {
				cur[s] += prev[s-r]
			}
		}
	}
	var all float64
	for s, c := range counts[k] {
		all += c
		if s <= w2 {
			lo += c
		}
		if s >= w2 {
			hi += c
		}
	}
	return lo / all, hi / all
}

// uTestMinP is the smallest two-sided p the exact U test can give with na
// and nb values: 2/C(na+nb, na), capped at 1.
func uTestMinP(na, nb int) float64 {
	return min(1, 2/binomial(na+nb, na))
}

// uTestSamples is the smallest n for which n and n values can reach
// alpha with the exact U test, as text ("4", or "more than 100").
func uTestSamples(alpha float64) string {
	const limit = 100
	for n := 1; n <= limit; n++ {
		if uTestMinP(n, n) <= alpha {
			return fmt.Sprint(n)
		}
	}
	return fmt.Sprintf("more than %d", limit)
}

// binomial is C(n, k) in floating point.
func binomial(n, k int) float64 {
	k = min(k, n-k)
	c := 1.0
	for i := 1; i <= k; i++ {
		c = c * float64(n-k+i) / float64(i)
	}
	return c
}

// Center is the centre test compares: the median for the U test, the
// mean for Welch's t.
func Center(values []float64, test Test) float64 {
	if test == WelchT {
		return stat.Mean(values, nil)
	}
	return median(values)
}

func median(values []float64) float64 {
	s := slices.Clone(values)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func sign(x float64) float64 {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0
}
