package stats

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
)

// StepOptions are the parameters of Steps and StepSensitivity. Zero
// fields take the defaults.
type StepOptions struct {
	// Alpha is the significance level of each split, the false-alarm
	// rate: on a series without a change, Steps reports one with
	// probability at most Alpha. Default 0.05.
	Alpha float64
	// MinSize is the fewest points a segment may have; default 3.
	MinSize int
	// Permutations is how many shuffles a segment of PermuteFrom
	// points or more is tested against; default 999 (p-values in steps
	// of 0.001).
	Permutations int
	// Seed seeds the shuffles, so that a series gives the same answer
	// every time.
	Seed uint64
}

// PermuteFrom is the length from which a segment's split is tested by
// permutation rather than by Student's t (Steps).
const PermuteFrom = 20

func (o *StepOptions) fill() error {
	if o.Alpha == 0 {
		o.Alpha = 0.05
	}
	if o.MinSize == 0 {
		o.MinSize = 3
	}
	if o.Permutations == 0 {
		o.Permutations = 999
	}
	if o.Permutations < 99 {
		return fmt.Errorf("%d permutations: want at least 99", o.Permutations)
	}
	if o.Alpha <= 0 || o.Alpha >= 1 {
		return fmt.Errorf("significance level %v: want one between 0 and 1, such as 0.05", o.Alpha)
	}
	if o.MinSize < 2 {
		return fmt.Errorf("minimum segment of %d: want at least 2", o.MinSize)
	}
	return nil
}

// Steps finds where the mean of a series steps, by binary segmentation
// with Student's t at the best split. x are the points' values; within,
// when not nil, is each point's own variance as a mean (its
// iterations' variance over their count; 0 when the point did not
// iterate).
//
// In a segment of n points, every split leaving MinSize points a side
// is a candidate; the best is the one with the least squared deviation
// of the points from their side's mean (the likelihood ratio's split
// for a step in the mean of normal values). Its two-sided t-test uses
// the points' variance about their side's mean, n-2 degrees of
// freedom, floored at the mean of within over the segment's points
// that iterated: points cannot vary less from run to run than a run's
// iterations say a point varies, and a few points that happen to agree
// closely must not make a small step significant.
//
// A segment shorter than PermuteFrom points takes the t-test's p-value
// times the number of candidate splits (Bonferroni): no permutation or
// rank test could find a step there, since of the 70 ways to choose
// which 4 of 8 points come first, 2 (the step and its mirror) are as
// extreme as a clean 4+4 step, so such a test's p is at least 2/70 =
// 0.029 however large the step; the t-test reads the step's size
// against the noise. A longer segment takes the share of Permutations
// shuffles of its points whose best split's t is at least as large: a
// one-sided outlier in the last few points of a long series of
// heavy-tailed values makes a t near sqrt((n-2)/(MinSize-1)), which the
// Bonferroni bound calls significant from about 40 points and a
// shuffle does not, and the shuffles know how alike neighbouring
// splits are where Bonferroni assumes the worst. Either way, on a
// segment with no step a split is kept with probability at most Alpha.
// A kept split's parts are searched again, strongest split first,
// until none is significant. ChangePoint.Stat is the split's t.
//
// A segment of n points costs O(n) below PermuteFrom, O(n) times the
// shuffles tried from it (stopped as soon as the split cannot be
// significant).
func Steps(x, within []float64, opt StepOptions) ([]ChangePoint, error) {
	if err := opt.fill(); err != nil {
		return nil, err
	}
	if within != nil && len(within) != len(x) {
		return nil, fmt.Errorf("%d points and %d variances", len(x), len(within))
	}
	for i, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, errors.New("the series has a value that is not a number")
		}
		if within != nil && (math.IsNaN(within[i]) || within[i] < 0) {
			return nil, errors.New("a point's own variance is negative or not a number")
		}
	}
	rng := rand.New(rand.NewPCG(opt.Seed, 0x9e3779b97f4a7c15))
	type segment struct{ lo, hi int }
	segs := []segment{{0, len(x)}}
	var out []ChangePoint
	for {
		best := -1
		var bestSplit tSplit
		for i, s := range segs {
			sp, ok := testSplit(x[s.lo:s.hi], floorOf(part(within, s.lo, s.hi)), opt, rng)
			if ok && (best < 0 || sp.p < bestSplit.p) {
				best, bestSplit = i, sp
				bestSplit.tau += s.lo
			}
		}
		if best < 0 || bestSplit.p > opt.Alpha {
			break
		}
		s := segs[best]
		out = append(out, ChangePoint{Index: bestSplit.tau, P: bestSplit.p, Stat: bestSplit.t})
		segs = append(segs[:best], append([]segment{{s.lo, bestSplit.tau}, {bestSplit.tau, s.hi}}, segs[best+1:]...)...)
	}
	slices.SortFunc(out, func(a, b ChangePoint) int { return a.Index - b.Index })
	return out, nil
}

func part(v []float64, lo, hi int) []float64 {
	if v == nil {
		return nil
	}
	return v[lo:hi]
}

// tSplit is a segment's best split: its first point after the step, its
// t and its p-value corrected for the number of candidates.
type tSplit struct {
	tau  int
	t, p float64
}

// floorOf is the mean of the positive variances in within: the least a
// point of the segment varies from run to run; 0 when none iterated.
func floorOf(within []float64) float64 {
	var sum float64
	n := 0
	for _, w := range within {
		if w > 0 {
			sum += w
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

// testSplit is v's best split (bestTSplit) with its p-value: by
// Student's t and Bonferroni below PermuteFrom points, by permutation
// from there.
func testSplit(v []float64, floor float64, opt StepOptions, rng *rand.Rand) (tSplit, bool) {
	sp, ok := bestTSplit(v, floor, opt.MinSize)
	if !ok || len(v) < PermuteFrom || sp.p == 1 {
		return sp, ok
	}
	// A shuffle keeps the points' total squared deviation T, and the t
	// of a split is sqrt((T-W)/max(W/(n-2), floor)) for W the squared
	// deviation about the sides' means: the least W is the greatest t,
	// so a shuffle is as strong as v when its least W is no more.
	c := mean(v)
	w := make([]float64, len(v))
	for i, x := range v {
		w[i] = x - c
	}
	var total, totalSq float64
	for _, x := range w {
		total += x
		totalSq += x * x
	}
	obs := leastW(w, total, totalSq, opt.MinSize)
	tol := 1e-12 * totalSq
	over := 0
	limit := int(opt.Alpha * float64(opt.Permutations+1))
	for r := 0; r < opt.Permutations; r++ {
		rng.Shuffle(len(w), func(i, j int) { w[i], w[j] = w[j], w[i] })
		if leastW(w, total, totalSq, opt.MinSize) <= obs+tol {
			over++
			if over >= limit {
				sp.p = 1
				return sp, true
			}
		}
	}
	sp.p = float64(over+1) / float64(opt.Permutations+1)
	return sp, true
}

// leastW is the least squared deviation of v's values about their
// sides' means over the splits with minSize a side; total and totalSq
// are v's sum and sum of squares.
func leastW(v []float64, total, totalSq float64, minSize int) float64 {
	n := len(v)
	var left, leftSq float64
	for _, x := range v[:minSize-1] {
		left += x
		leftSq += x * x
	}
	best := math.Inf(1)
	for t := minSize; t <= n-minSize; t++ {
		x := v[t-1]
		left += x
		leftSq += x * x
		right := total - left
		ss := totalSq - left*left/float64(t) - right*right/float64(n-t)
		best = min(best, ss)
	}
	return best
}

// bestTSplit is the split of v with the least squared deviation about
// the two sides' means (the greatest t), each side at least minSize
// long, with its t (its variance floored at floor) and its two-sided
// p-value by Student's t times the number of candidate splits
// (Bonferroni); false when v is shorter than two segments.
func bestTSplit(v []float64, floor float64, minSize int) (tSplit, bool) {
	sp, ok := bestT(v, floor, minSize)
	if !ok {
		return sp, false
	}
	n := len(v)
	switch {
	case sp.t == 0:
		sp.p = 1
	case math.IsInf(sp.t, 1):
		sp.p = 0
	default:
		p := 2 * distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 2)}.Survival(sp.t)
		sp.p = min(1, float64(n-2*minSize+1)*p)
	}
	return sp, true
}

// bestT is bestTSplit without the p-value: what a shuffle needs.
func bestT(v []float64, floor float64, minSize int) (tSplit, bool) {
	n := len(v)
	if n < 2*minSize {
		return tSplit{}, false
	}
	// Centred, so that the sums of squares of values near 1e9 keep
	// their digits.
	c := mean(v)
	var total, totalSq float64
	for _, x := range v {
		total += x - c
		totalSq += (x - c) * (x - c)
	}
	var left, leftSq, bestLeft float64
	bestSS, bestTau := math.Inf(1), 0
	for t := 1; t < n-minSize+1; t++ {
		d := v[t-1] - c
		left += d
		leftSq += d * d
		if t < minSize {
			continue
		}
		m, k := float64(t), float64(n-t)
		right, rightSq := total-left, totalSq-leftSq
		ss := (leftSq - left*left/m) + (rightSq - right*right/k)
		if ss < bestSS {
			bestSS, bestTau, bestLeft = ss, t, left
		}
	}
	sp := tSplit{tau: bestTau}
	m, k := float64(bestTau), float64(n-bestTau)
	diff := math.Abs((total-bestLeft)/k - bestLeft/m)
	variance := max(max(bestSS, 0)/float64(n-2), floor)
	se := math.Sqrt(variance * (1/m + 1/k))
	switch {
	case diff <= 1e-12*(math.Abs(c)+math.Sqrt(variance)):
		// Equal means, to the sums' rounding.
		sp.t = 0
	case se == 0:
		sp.t = math.Inf(1)
	default:
		sp.t = diff / se
	}
	return sp, true
}

func mean(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// Sensitivity is how large a step Steps could find in a series.
type Sensitivity struct {
	// Points is the series' length; Needed the fewest points a split
	// needs (two segments).
	Points, Needed int
	// Noise is a point's standard deviation about its segment's mean
	// (the segments between the change points found), floored as Steps
	// floors it.
	Noise float64
	// MinStep is the smallest step between the series' two halves
	// that Steps finds at Alpha with that noise: the critical t (of
	// Alpha over the candidate splits) times the step's standard error.
	// A step of that size is found about half the time, a larger one
	// more often, a smaller one rarely. 0 when Points < Needed.
	MinStep float64
	// Mean is the series' mean, MinStep's reference for a percentage.
	Mean float64
}

// MinStepPct is MinStep in percent of the series' mean; +Inf when the
// series is too short or its mean is 0.
func (s Sensitivity) MinStepPct() float64 {
	if s.Points < s.Needed || s.Mean == 0 {
		return math.Inf(1)
	}
	return 100 * s.MinStep / math.Abs(s.Mean)
}

// StepSensitivity says how large a step Steps could have found in x
// (with the points' within as in Steps), given the change points cps it
// found there.
func StepSensitivity(x, within []float64, cps []ChangePoint, opt StepOptions) (Sensitivity, error) {
	if err := opt.fill(); err != nil {
		return Sensitivity{}, err
	}
	n := len(x)
	s := Sensitivity{Points: n, Needed: 2 * opt.MinSize}
	if n == 0 {
		return s, nil
	}
	s.Mean = mean(x)
	if n < s.Needed {
		return s, nil
	}
	// The points' deviations from their segments' means.
	var ss float64
	lo := 0
	for k := 0; k <= len(cps); k++ {
		hi := n
		if k < len(cps) {
			hi = cps[k].Index
		}
		if hi > lo {
			m := mean(x[lo:hi])
			for _, v := range x[lo:hi] {
				ss += (v - m) * (v - m)
			}
		}
		lo = hi
	}
	df := n - len(cps) - 1
	variance := floorOf(within)
	if df > 0 {
		variance = max(variance, ss/float64(df))
	}
	s.Noise = math.Sqrt(variance)
	m, k := float64(n/2), float64(n-n/2)
	candidates := float64(n - 2*opt.MinSize + 1)
	crit := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 2)}.Quantile(1 - opt.Alpha/(2*candidates))
	s.MinStep = crit * s.Noise * math.Sqrt(1/m+1/k)
	return s, nil
}
