package stats

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// ChangePoint is where a series changes: Index is the first value of the
// new segment.
type ChangePoint struct {
	Index int
	// P is the permutation test's p-value of the split: the share of
	// shuffled segments whose best split was at least as strong.
	P float64
	// Stat is the split's energy statistic (e-divisive's Q).
	Stat float64
}

// EDivisiveOptions are the parameters of EDivisive. Zero fields take the
// defaults.
type EDivisiveOptions struct {
	// Alpha is the significance level of each split, the false-alarm
	// rate: on a series without a change, EDivisive reports one with
	// probability at most Alpha. Default 0.05.
	Alpha float64
	// Permutations is how many shuffles each split is tested against;
	// default 199 (p-values in steps of 0.005).
	Permutations int
	// MinSize is the fewest values a segment may have; default 3.
	MinSize int
	// Seed seeds the shuffles, so that a series gives the same answer
	// every time.
	Seed uint64
}

func (o *EDivisiveOptions) fill() error {
	if o.Alpha == 0 {
		o.Alpha = 0.05
	}
	if o.Permutations == 0 {
		o.Permutations = 199
	}
	if o.MinSize == 0 {
		o.MinSize = 3
	}
	if o.Alpha <= 0 || o.Alpha >= 1 {
		return fmt.Errorf("significance level %v: want one between 0 and 1, such as 0.05", o.Alpha)
	}
	if o.Permutations < 19 {
		return fmt.Errorf("%d permutations: want at least 19", o.Permutations)
	}
	if o.MinSize < 2 {
		return fmt.Errorf("minimum segment of %d: want at least 2", o.MinSize)
	}
	return nil
}

// EDivisive finds the change points of a series with e-divisive means
// (Matteson and James, "A Nonparametric Approach for Multiple Change
// Point Analysis of Multivariate Data", 2014, with exponent 1), the
// method MongoDB's and DataStax's performance CI use for noisy
// performance series. It splits the series where the energy distance
// between the values before and after is greatest, keeps the split when
// a permutation test finds it significant at Alpha, and goes on in the
// segments, strongest split first, until a split is not significant.
// It makes no assumption about the values' distribution. The change
// points are returned by index.
//
// Each split costs O(n²) for a segment of n values, and the test
// Permutations times that (stopped early once the split cannot be
// significant).
func EDivisive(x []float64, opt EDivisiveOptions) ([]ChangePoint, error) {
	if err := opt.fill(); err != nil {
		return nil, err
	}
	for _, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, errors.New("the series has a value that is not a number")
		}
	}
	rng := rand.New(rand.NewPCG(opt.Seed, 0x9e3779b97f4a7c15))
	type segment struct{ lo, hi int }
	segs := []segment{{0, len(x)}}
	var out []ChangePoint
	for {
		bestSeg, bestTau, bestQ := -1, 0, 0.0
		for i, s := range segs {
			tau, q, ok := bestSplit(x[s.lo:s.hi], opt.MinSize)
			if ok && (bestSeg < 0 || q > bestQ) {
				bestSeg, bestTau, bestQ = i, s.lo+tau, q
			}
		}
		if bestSeg < 0 || bestQ <= 0 {
			break
		}
		s := segs[bestSeg]
		p := permutationP(x[s.lo:s.hi], bestQ, opt, rng)
		if p > opt.Alpha {
			break
		}
		out = append(out, ChangePoint{Index: bestTau, P: p, Stat: bestQ})
		segs = append(segs[:bestSeg], append([]segment{{s.lo, bestTau}, {bestTau, s.hi}}, segs[bestSeg+1:]...)...)
	}
	slices.SortFunc(out, func(a, b ChangePoint) int { return a.Index - b.Index })
	return out, nil
}

// permutationP is the p-value of a split of strength q in v: the share
// of shuffles of v (and v itself) whose best split is at least as
// strong. It stops once the count makes the p-value exceed alpha.
func permutationP(v []float64, q float64, opt EDivisiveOptions, rng *rand.Rand) float64 {
	sp := newSplitter(v)
	w := sp.items(v)
	over := 0
	limit := int(opt.Alpha * float64(opt.Permutations+1))
	for r := 0; r < opt.Permutations; r++ {
		rng.Shuffle(len(w), func(i, j int) { w[i], w[j] = w[j], w[i] })
		if _, qr, ok := sp.best(w, opt.MinSize); ok && qr >= q {
			over++
			if over >= limit {
				return 1
			}
		}
	}
	return float64(over+1) / float64(opt.Permutations+1)
}

// bestSplit returns the split of v with the greatest energy statistic
//
//	Q(τ) = m·k/(m+k) · (2/(m·k)·Σ|xᵢ-yⱼ| - 1/C(m,2)·Σ|xᵢ-xₗ| - 1/C(k,2)·Σ|yⱼ-yₗ|)
//
// over the m = τ values before τ (x) and the k = n-τ from τ on (y), each
// side at least minSize long. The three sums are carried from one τ to
// the next as the value at τ moves from y to x: its distances to the
// values before it come from a Fenwick tree of their ranks (counts and
// sums), its distances to all values from the sorted values' prefix
// sums, so that all splits cost O(n log n) rather than the O(n²) of the
// sums written out (which the tests compute to check this).
func bestSplit(v []float64, minSize int) (tau int, q float64, ok bool) {
	n := len(v)
	if n < 2*minSize {
		return 0, 0, false
	}
	sp := newSplitter(v)
	items := sp.items(v)
	return sp.best(items, minSize)
}

// item is a value with what the splitter knows of it: its rank among
// the values and its distance to all of them, computed once and shuffled
// with it.
type item struct {
	v, toAll float64
	rank     int
}

func (s *splitter) items(v []float64) []item {
	out := make([]item, len(v))
	for i, x := range v {
		k := s.rank(x)
		out[i] = item{v: x, toAll: s.absToAll(x, k), rank: k}
	}
	return out
}

// splitter holds what bestSplit needs of a multiset of values: sorted,
// with prefix sums, and a Fenwick tree over their ranks. A shuffle of
// the same values reuses it (permutationP).
type splitter struct {
	sorted []float64
	prefix []float64 // prefix[i] is the sum of sorted[:i]
	cnt    []int     // Fenwick tree of counts by rank, 1-based
	sum    []float64 // and of sums
}

func newSplitter(v []float64) *splitter {
	n := len(v)
	s := &splitter{sorted: slices.Clone(v), prefix: make([]float64, n+1), cnt: make([]int, n+1), sum: make([]float64, n+1)}
	slices.Sort(s.sorted)
	for i, x := range s.sorted {
		s.prefix[i+1] = s.prefix[i] + x
	}
	return s
}

// rank is how many values are at most e.
func (s *splitter) rank(e float64) int {
	i, found := slices.BinarySearch(s.sorted, e)
	for found && i < len(s.sorted) && s.sorted[i] == e {
		i++
	}
	return i
}

// absToAll is Σ|x - e| over all the values.
func (s *splitter) absToAll(e float64, k int) float64 {
	n := len(s.sorted)
	le := s.prefix[k]
	return e*float64(k) - le + (s.prefix[n] - le) - e*float64(n-k)
}

func (s *splitter) add(k int, e float64) {
	for i := k; i < len(s.cnt); i += i & -i {
		s.cnt[i]++
		s.sum[i] += e
	}
}

// upTo returns the count and sum of the values added whose rank is at
// most k.
func (s *splitter) upTo(k int) (int, float64) {
	c, t := 0, 0.0
	for i := k; i > 0; i -= i & -i {
		c += s.cnt[i]
		t += s.sum[i]
	}
	return c, t
}

func (s *splitter) best(v []item, minSize int) (tau int, q float64, ok bool) {
	n := len(v)
	clear(s.cnt)
	clear(s.sum)
	var total float64 // Σ over all ordered pairs, twice the unordered sum
	for _, it := range v {
		total += it.toAll
	}
	total /= 2
	// The split at minSize, from its definition: wl within the left part,
	// b between the parts, wr within the right.
	var wl, b, left float64
	for i := 0; i < minSize; i++ {
		for j := i + 1; j < minSize; j++ {
			wl += math.Abs(v[i].v - v[j].v)
		}
		b += v[i].toAll
		s.add(v[i].rank, v[i].v)
		left += v[i].v
	}
	b -= 2 * wl
	wr := total - wl - b
	bestQ := math.Inf(-1)
	for t := minSize; t <= n-minSize; t++ {
		if t > minSize {
			// v[t-1] moves from the right part to the left.
			e := v[t-1]
			c, le := s.upTo(e.rank)
			r := e.v*float64(c) - le + (left - le) - e.v*float64(t-1-c)
			sr := e.toAll - r
			wl += r
			wr -= sr
			b += sr - r
			s.add(e.rank, e.v)
			left += e.v
		}
		m, kk := float64(t), float64(n-t)
		qt := m * kk / (m + kk) * (2*b/(m*kk) - wl/(m*(m-1)/2) - wr/(kk*(kk-1)/2))
		if qt > bestQ {
			bestQ, tau = qt, t
		}
	}
	return tau, bestQ, true
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
