package stats

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCompare(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name    string
		a, b    []float64
		test    Test
		alpha   float64
		want    Comparison
		wantErr bool
	}{
		{
			// Equal sizes and variances, so Welch's df is an integer and
			// the p-value has a closed form. Worked by hand:
			//   means 11 and 14, variances 1 and 1
			//   se  = sqrt(1/3 + 1/3) = 0.816497
			//   t   = 3 / 0.816497 = 3.674235
			//   df  = (2/3)^2 / ((1/3)^2/2 + (1/3)^2/2) = 4
			// For df=4 the t CDF is
			//   F(t) = 1/2 + 3/8 * t/sqrt(1+t^2/4) * (1 - t^2/(12(1+t^2/4)))
			// and t^2 = 13.5 gives F = 1/2 + 3/8 * 1.756624 * 0.742857
			// = 0.989344, so p = 2 * (1 - F) = 0.021312.
			name:  "welch, equal variances",
			a:     []float64{10, 11, 12},
			b:     []float64{13, 14, 15},
			test:  WelchT,
			alpha: 0.05,
			want: Comparison{
				Test: WelchT, NA: 3, NB: 3, CenterA: 11, CenterB: 14,
				DeltaPct: 27.2727, Statistic: 3.674235, DF: 4, P: 0.021312,
				Alpha: 0.05, Significant: true, Verdict: Higher,
			},
		},
		{
			// Same samples at alpha 0.01: not significant.
			name:  "welch, not significant at 0.01",
			a:     []float64{10, 11, 12},
			b:     []float64{13, 14, 15},
			test:  WelchT,
			alpha: 0.01,
			want: Comparison{
				Test: WelchT, NA: 3, NB: 3, CenterA: 11, CenterB: 14,
				DeltaPct: 27.2727, Statistic: 3.674235, DF: 4, P: 0.021312,
				Alpha: 0.01, Verdict: Same,
			},
		},
		{
			// Unequal variances and sizes, worked by hand:
			//   a: mean 12, variance (4+0+4)/2 = 4,          va/na = 4/3
			//   b: mean 18, variance (9+1+1+9)/3 = 20/3,     vb/nb = 5/3
			//   se = sqrt(4/3 + 5/3) = sqrt(3) = 1.732051
			//   t  = 6 / sqrt(3) = 3.464102
			//   df = 3^2 / ((4/3)^2/2 + (5/3)^2/3) = 9 / (8/9 + 25/27)
			//      = 243/49 = 4.959184
			// p = 0.018202, from integrating the t density with 4.959184
			// degrees of freedom from 0 to t (Simpson's rule, 200000
			// steps): 2 * (1/2 - 0.490899).
			name:  "welch, unequal variances",
			a:     []float64{10, 12, 14},
			b:     []float64{15, 17, 19, 21},
			test:  WelchT,
			alpha: 0.05,
			want: Comparison{
				Test: WelchT, NA: 3, NB: 4, CenterA: 12, CenterB: 18,
				DeltaPct: 50, Statistic: 3.464102, DF: 4.959184, P: 0.018202,
				Alpha: 0.05, Significant: true, Verdict: Higher,
			},
		},
		{
			name:  "welch, b lower",
			a:     []float64{13, 14, 15},
			b:     []float64{10, 11, 12},
			test:  WelchT,
			alpha: 0.05,
			want: Comparison{
				Test: WelchT, NA: 3, NB: 3, CenterA: 14, CenterB: 11,
				DeltaPct: -21.4286, Statistic: -3.674235, DF: 4, P: 0.021312,
				Alpha: 0.05, Significant: true, Verdict: Lower,
			},
		},
		{
			name:  "welch, one value",
			a:     []float64{10},
			b:     []float64{13, 14, 15},
			test:  WelchT,
			alpha: 0.05,
			want: Comparison{
				Test: WelchT, NA: 1, NB: 3, CenterA: 10, CenterB: 14,
				DeltaPct: 40, P: 1, Alpha: 0.05, Verdict: Same,
				Warnings: []string{"Welch's t-test needs at least 2 iterations in each sample, got 1 and 3"},
			},
		},
		{
			name:  "welch, no spread, same",
			a:     []float64{5, 5},
			b:     []float64{5, 5, 5},
			test:  WelchT,
			alpha: 0.05,
			want: Comparison{
				Test: WelchT, NA: 2, NB: 3, CenterA: 5, CenterB: 5,
				DeltaPct: 0, P: 1, Alpha: 0.05, Verdict: Same,
				Warnings: []string{"all iterations of both samples are equal"},
			},
		},
		{
			name:  "welch, no spread, different",
			a:     []float64{5, 5},
			b:     []float64{6, 6, 6},
			test:  WelchT,
			alpha: 0.05,
			want: Comparison{
				Test: WelchT, NA: 2, NB: 3, CenterA: 5, CenterB: 6,
				DeltaPct: 20, Statistic: math.Inf(1), DF: 3, P: 0, Alpha: 0.05,
				Significant: true, Verdict: Higher,
				Warnings: []string{"neither sample varies: any difference between them counts as significant"},
			},
		},
		{
			// Worked by hand. Ranks of the pooled values:
			//   10a:1 12a:2 13b:3 14a:4 15b:5 16b:6 17b:7
			// a's rank sum is 7, so U = 7 - 3*4/2 = 1 (only 14 > 13).
			// Under the null every 3-subset of the 7 ranks is equally
			// likely: C(7,3) = 35. U <= 1 for {1,2,3} (U=0) and {1,2,4}
			// (U=1) only, so P(U <= 1) = 2/35 and the two-sided exact
			// p = 4/35 = 0.1142857. The smallest p 3 and 4 values can
			// give is 2/35 = 0.0571 > 0.05.
			name:  "U, exact, no ties",
			a:     []float64{10, 12, 14},
			b:     []float64{13, 15, 16, 17},
			test:  UTest,
			alpha: 0.05,
			want: Comparison{
				Test: UTest, NA: 3, NB: 4, CenterA: 12, CenterB: 15.5,
				DeltaPct: 29.1667, Statistic: 1, Exact: true, P: 4.0 / 35,
				Alpha: 0.05, Verdict: Same,
				Warnings: []string{"with 3 and 4 iterations the U test cannot reach significance at alpha 0.05 (the smallest possible p is 0.0571): run at least 4 of each (the fewest whose smallest p is at most alpha 0.05)"},
			},
		},
		{
			// Complete separation of 4 and 4: U = 0, reached by 1 of the
			// C(8,4) = 70 arrangements, p = 2/70 = 0.0285714.
			name:  "U, exact, separated",
			a:     []float64{1, 2, 3, 4},
			b:     []float64{5, 6, 7, 8},
			test:  UTest,
			alpha: 0.05,
			want: Comparison{
				Test: UTest, NA: 4, NB: 4, CenterA: 2.5, CenterB: 6.5,
				DeltaPct: 160, Statistic: 0, Exact: true, P: 2.0 / 70,
				Alpha: 0.05, Significant: true, Verdict: Higher,
			},
		},
		{
			// One overlap: U = 1 (5 > 4); U <= 1 in 2 of 70 arrangements,
			// p = 4/70 = 0.0571429: just not significant.
			name:  "U, exact, one overlap",
			a:     []float64{1, 2, 3, 5},
			b:     []float64{4, 6, 7, 8},
			test:  UTest,
			alpha: 0.05,
			want: Comparison{
				Test: UTest, NA: 4, NB: 4, CenterA: 2.5, CenterB: 6.5,
				DeltaPct: 160, Statistic: 1, Exact: true, P: 4.0 / 70,
				Alpha: 0.05, Verdict: Same,
			},
		},
		{
			// Ties, exact conditional on the tie pattern. Mid-ranks:
			//   1a:1  2a,2a,2b:3  3a,3b:5.5  4b:7  5b:8
			// a's rank sum 1+3+3+5.5 = 12.5, U = 12.5 - 10 = 2.5.
			// Of the 70 ways to pick 4 of the 8 mid-ranks, 7 have a sum
			// <= 12.5 (counted by enumerating them), so p = 2 * 7/70 = 0.2.
			name:  "U, exact, ties",
			a:     []float64{1, 2, 2, 3},
			b:     []float64{2, 3, 4, 5},
			test:  UTest,
			alpha: 0.05,
			want: Comparison{
				Test: UTest, NA: 4, NB: 4, CenterA: 2, CenterB: 3.5,
				DeltaPct: 75, Statistic: 2.5, Exact: true, P: 0.2,
				Alpha: 0.05, Verdict: Same,
			},
		},
		{
			// 3 and 3, separated: the best the exact test can do is 2/20.
			// (The normal approximation would claim p = 0.047 here.)
			name:  "U, too few to ever be significant",
			a:     []float64{1, 1, 1},
			b:     []float64{2, 2, 2},
			test:  UTest,
			alpha: 0.05,
			want: Comparison{
				Test: UTest, NA: 3, NB: 3, CenterA: 1, CenterB: 2,
				DeltaPct: 100, Statistic: 0, Exact: true, P: 0.1,
				Alpha: 0.05, Verdict: Same,
				Warnings: []string{"with 3 and 3 iterations the U test cannot reach significance at alpha 0.05 (the smallest possible p is 0.1): run at least 4 of each (the fewest whose smallest p is at most alpha 0.05)"},
			},
		},
		{
			name:  "U, all equal",
			a:     []float64{7, 7, 7, 7},
			b:     []float64{7, 7, 7, 7},
			test:  UTest,
			alpha: 0.05,
			want: Comparison{
				Test: UTest, NA: 4, NB: 4, CenterA: 7, CenterB: 7,
				DeltaPct: 0, Statistic: 8, Exact: true, P: 1,
				Alpha: 0.05, Verdict: Same,
			},
		},
		{
			name:  "U, zero baseline",
			a:     []float64{0, 0, 0, 0},
			b:     []float64{1, 2, 3, 4},
			test:  UTest,
			alpha: 0.05,
			want: Comparison{
				Test: UTest, NA: 4, NB: 4, CenterA: 0, CenterB: 2.5,
				DeltaPct: nan, Statistic: 0, Exact: true, P: 2.0 / 70,
				Alpha: 0.05, Significant: true, Verdict: Higher,
				Warnings: []string{"the baseline's centre is 0: the change cannot be a percentage of it"},
			},
		},
		{name: "unknown test", a: []float64{1, 2}, b: []float64{3, 4}, test: "sign", alpha: 0.05, wantErr: true},
		{name: "alpha 0", a: []float64{1, 2}, b: []float64{3, 4}, test: UTest, alpha: 0, wantErr: true},
		{name: "alpha as percent", a: []float64{1, 2}, b: []float64{3, 4}, test: UTest, alpha: 5, wantErr: true},
		{name: "empty a", b: []float64{3, 4}, test: UTest, alpha: 0.05, wantErr: true},
		{name: "empty b", a: []float64{3, 4}, test: WelchT, alpha: 0.05, wantErr: true},
		{name: "NaN in b", a: []float64{1, 2}, b: []float64{3, nan}, test: WelchT, alpha: 0.05, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Compare(tt.a, tt.b, tt.test, tt.alpha)
			tt.want.PAdjusted = tt.want.P // a comparison alone
			if (err != nil) != tt.wantErr {
				t.Fatalf("Compare error = %v, wantErr %v", err, tt.wantErr)
			}
			if tt.wantErr {
				return
			}
			if diff := cmp.Diff(tt.want, got, approx); diff != "" {
				t.Errorf("Compare(%v, %v, %s) mismatch (-want +got):\n%s", tt.a, tt.b, tt.test, diff)
			}
		})
	}
}

// TestMannWhitneyNormal checks the normal approximation on the ties
// example, forced by an exact limit of 0. Worked by hand:
//
//	U = 2.5, mean = 4*4/2 = 8
//	ties: a group of 3 (t^3-t = 24) and a group of 2 (6), sum 30
//	variance = 4*4/12 * ((8+1) - 30/(8*7)) = 11.285714, sd = 3.359422
//	z = (2.5 - 8 + 0.5) / 3.359422 = -1.488351 (continuity correction 1/2)
//	p = 2 * Phi(-1.488351) = 0.136658
//
// which is what R's wilcox.test(c(1,2,2,3), c(2,3,4,5)) reports.
func TestMannWhitneyNormal(t *testing.T) {
	got := mannWhitney([]float64{1, 2, 2, 3}, []float64{2, 3, 4, 5}, 0)
	want := uResult{u: 2.5, p: 0.136658, warnings: []string{"tied values: p is from the normal approximation with tie correction"}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(uResult{}), approx); diff != "" {
		t.Errorf("mannWhitney mismatch (-want +got):\n%s", diff)
	}
}

// TestMannWhitneyExactMatchesNormal checks the exact count against the
// normal approximation where both should agree: 49 and 49 values without
// ties (the largest exact case), shifted so p is moderate. The exact p,
// 0.0155460, was checked with the textbook recursion for the U
// distribution, f(m,n,u) = f(m-1,n,u-n) + f(m,n-1,u); the approximation
// gives 0.0160109, 3% off.
func TestMannWhitneyExactMatchesNormal(t *testing.T) {
	var a, b []float64
	for i := range 49 {
		a = append(a, float64(i))
		b = append(b, float64(i)+7.5)
	}
	exact := mannWhitney(a, b, exactUMax)
	normal := mannWhitney(a, b, 0)
	if !exact.exact || normal.exact {
		t.Fatalf("exact flags: %v and %v, want true and false", exact.exact, normal.exact)
	}
	if exact.u != normal.u {
		t.Errorf("U differs: exact %v, normal %v", exact.u, normal.u)
	}
	if math.Abs(exact.p-0.0155460) > 1e-6 {
		t.Errorf("exact p = %v, want 0.0155460", exact.p)
	}
	if math.Abs(exact.p-normal.p) > 0.05*exact.p {
		t.Errorf("p differs by more than 5%%: exact %v, normal %v", exact.p, normal.p)
	}
}

func TestUTestMinP(t *testing.T) {
	// 2/C(2n,n), as in benchmath's uTestMinP table.
	tests := []struct {
		na, nb int
		want   float64
	}{
		{na: 1, nb: 1, want: 1},
		{na: 2, nb: 2, want: 1.0 / 3},
		{na: 3, nb: 3, want: 0.1},
		{na: 4, nb: 4, want: 0.02857142857142857},
		{na: 5, nb: 5, want: 0.007936507936507936},
		{na: 9, nb: 9, want: 4.113533525298231e-05},
		{na: 3, nb: 4, want: 2.0 / 35},
		{na: 2, nb: 20, want: 2.0 / 231},
	}
	for _, tt := range tests {
		if got := uTestMinP(tt.na, tt.nb); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("uTestMinP(%d, %d) = %v, want %v", tt.na, tt.nb, got, tt.want)
		}
	}
	samples := []struct {
		alpha float64
		want  string
	}{
		{alpha: 0.05, want: "4"},
		{alpha: 0.01, want: "5"},
		{alpha: 0.001, want: "7"},
		{alpha: 1e-80, want: "more than 100"},
	}
	for _, tt := range samples {
		if got := uTestSamples(tt.alpha); got != tt.want {
			t.Errorf("uTestSamples(%v) = %q, want %q", tt.alpha, got, tt.want)
		}
	}
}

func TestCenter(t *testing.T) {
	v := []float64{4, 1, 10, 3}
	if got := Center(v, UTest); got != 3.5 {
		t.Errorf("Center(%v, U) = %v, want the median 3.5", v, got)
	}
	if got := Center(v, WelchT); got != 4.5 {
		t.Errorf("Center(%v, Welch) = %v, want the mean 4.5", v, got)
	}
	if got := Center([]float64{5, 1, 2}, UTest); got != 2 {
		t.Errorf("Center of an odd sample = %v, want the middle value 2", got)
	}
}

// TestIterationsRule: the one rule's numbers, worked by hand from
// 2/C(2n, n) (n=4: 2/70 = 0.029; 5: 2/252 = 0.0079; 6: 2/924 = 0.0022;
// 7: 2/3432 = 0.00058): at most alpha, or alpha/m with an adjustment.
func TestIterationsRule(t *testing.T) {
	tests := []struct {
		test  Test
		alpha float64
		m     int
		adj   Adjustment
		want  string
	}{
		{UTest, 0.05, 1, BenjaminiHochberg, "run at least 4 of each (the fewest whose smallest p is at most alpha 0.05)"},
		{UTest, 0.05, 6, BenjaminiHochberg, "run at least 5 of each (the fewest whose smallest p is at most alpha 0.05 over 6 comparisons)"},
		{UTest, 0.05, 7, BenjaminiHochberg, "run at least 6 of each"},
		{UTest, 0.05, 23, Holm, "run at least 6 of each"},
		{UTest, 0.05, 24, Holm, "run at least 7 of each"},
		{UTest, 0.05, 33, BenjaminiHochberg, "run at least 7 of each"},
		{UTest, 0.05, 33, NoAdjustment, "run at least 4 of each (the fewest whose smallest p is at most alpha 0.05)"},
		{UTest, 0.01, 1, NoAdjustment, "run at least 5 of each"},
		{WelchT, 0.05, 33, Holm, "run at least 2 of each"},
	}
	for _, tt := range tests {
		if got := IterationsRule(tt.test, tt.alpha, tt.m, tt.adj); !strings.Contains(got, tt.want) {
			t.Errorf("IterationsRule(%s, %g, %d, %s) = %q, want %q", tt.test, tt.alpha, tt.m, tt.adj, got, tt.want)
		}
	}
}
