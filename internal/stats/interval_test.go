package stats

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// approx compares floats to 1 part in 10^4, the precision of the
// published tables and hand computations the tests are checked against,
// and treats NaN as equal to NaN.
var approx = cmp.Options{cmpopts.EquateApprox(1e-4, 1e-12), cmpopts.EquateNaNs()}

// TestCriticalT checks the two-sided t quantiles against a published
// table of Student's t (e.g. NIST/SEMATECH e-Handbook 1.3.6.7.2, or any
// statistics textbook), which gives three decimals.
func TestCriticalT(t *testing.T) {
	tests := []struct {
		name  string
		level float64
		df    float64
		want  float64
	}{
		{name: "99% df=1", level: 0.99, df: 1, want: 63.657},
		{name: "99% df=2", level: 0.99, df: 2, want: 9.925},
		{name: "99% df=3", level: 0.99, df: 3, want: 5.841},
		{name: "99% df=4", level: 0.99, df: 4, want: 4.604},
		{name: "99% df=9", level: 0.99, df: 9, want: 3.250},
		{name: "99% df=29", level: 0.99, df: 29, want: 2.756},
		{name: "95% df=1", level: 0.95, df: 1, want: 12.706},
		{name: "95% df=2", level: 0.95, df: 2, want: 4.303},
		{name: "95% df=4", level: 0.95, df: 4, want: 2.776},
		{name: "95% df=9", level: 0.95, df: 9, want: 2.262},
		{name: "95% df=30", level: 0.95, df: 30, want: 2.042},
		{name: "90% df=5", level: 0.90, df: 5, want: 2.015},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := criticalT(tt.level, tt.df)
			if math.Abs(got-tt.want) > 0.0005 {
				t.Errorf("criticalT(%v, %v) = %.5f, want %.3f", tt.level, tt.df, got, tt.want)
			}
		})
	}
}

func TestSummarize(t *testing.T) {
	inf := math.Inf(1)
	nan := math.NaN()
	tests := []struct {
		name    string
		values  []float64
		level   float64
		want    Summary
		wantErr bool
	}{
		{
			// Five iterations of a stream test, in 10^6 bits/s, worked by hand:
			//   mean     = 4700/5 = 940
			//   squares  = 0 + 1 + 1 + 4 + 4 = 10 about the mean
			//   stddev   = sqrt(10/4) = 1.58114
			//   t        = 4.604 (99%, df=4, from the table)
			//   half     = 4.604 * 1.58114 / sqrt(5) = 3.25559
			//   interval = 936.7444 .. 943.2556
			//   width    = 2 * 3.25559 / 940 = 0.69268%, i.e. +/-0.346%
			name:   "five iterations at 99%",
			values: []float64{940, 941, 939, 942, 938},
			level:  0.99,
			want: Summary{
				Center: 940, Lo: 936.7444, Hi: 943.2556, Level: 0.99, N: 5,
				StdDev: 1.58114, HalfWidth: 3.25559, WidthPct: 0.69268,
			},
		},
		{
			// Same values at 95%: t = 2.776 (df=4), half = 2.776 * 0.707107 *
			// 1.58114 = 1.96324, width = 2 * 1.96324 / 940 = 0.41771%.
			name:   "five iterations at 95%",
			values: []float64{940, 941, 939, 942, 938},
			level:  0.95,
			want: Summary{
				Center: 940, Lo: 938.0368, Hi: 941.9632, Level: 0.95, N: 5,
				StdDev: 1.58114, HalfWidth: 1.96324, WidthPct: 0.41771,
			},
		},
		{
			// Two values: mean 11, stddev sqrt(2), standard error 1; the
			// half-width is t itself, 12.706 at 95% with df=1.
			name:   "two iterations",
			values: []float64{10, 12},
			level:  0.95,
			want: Summary{
				Center: 11, Lo: 11 - 12.7062, Hi: 11 + 12.7062, Level: 0.95, N: 2,
				StdDev: math.Sqrt2, HalfWidth: 12.7062, WidthPct: 231.022,
				Warnings: []string{"only 2 iterations: with 1 degree of freedom the interval is 12.71 standard errors each way"},
			},
		},
		{
			// Negative mean: the width is a percentage of |mean|.
			// mean -10, stddev 1, half = 4.303 * 1 / sqrt(3) = 2.48434,
			// width = 2 * 2.48434 / 10 = 49.687%.
			name:   "negative mean",
			values: []float64{-9, -10, -11},
			level:  0.95,
			want: Summary{
				Center: -10, Lo: -12.48434, Hi: -7.51566, Level: 0.95, N: 3,
				StdDev: 1, HalfWidth: 2.48434, WidthPct: 49.687,
			},
		},
		{
			name:   "all equal",
			values: []float64{5, 5, 5},
			level:  0.99,
			want: Summary{
				Center: 5, Lo: 5, Hi: 5, Level: 0.99, N: 3,
				StdDev: 0, HalfWidth: 0, WidthPct: 0,
				Warnings: []string{"all 3 iterations are equal"},
			},
		},
		{
			name:   "zero mean",
			values: []float64{-1, 0, 1},
			level:  0.95,
			want: Summary{
				Center: 0, Lo: -2.48434, Hi: 2.48434, Level: 0.95, N: 3,
				StdDev: 1, HalfWidth: 2.48434, WidthPct: inf,
				Warnings: []string{"the mean is 0: the interval's width cannot be a percentage of it"},
			},
		},
		{
			name:   "one iteration",
			values: []float64{940},
			level:  0.99,
			want: Summary{
				Center: 940, Lo: -inf, Hi: inf, Level: 0.99, N: 1,
				StdDev: nan, HalfWidth: inf, WidthPct: inf,
				Warnings: []string{"only 1 iteration: a confidence interval needs at least 2"},
			},
		},
		{
			name:  "no iterations",
			level: 0.99,
			want: Summary{
				Center: nan, Lo: -inf, Hi: inf, Level: 0.99, N: 0,
				StdDev: nan, HalfWidth: inf, WidthPct: inf,
				Warnings: []string{"no iterations: no mean and no confidence interval"},
			},
		},
		{name: "level as percent", values: []float64{1, 2}, level: 99, wantErr: true},
		{name: "level 0", values: []float64{1, 2}, level: 0, wantErr: true},
		{name: "level 1", values: []float64{1, 2}, level: 1, wantErr: true},
		{name: "level NaN", values: []float64{1, 2}, level: nan, wantErr: true},
		{name: "NaN value", values: []float64{1, nan}, level: 0.99, wantErr: true},
		{name: "infinite value", values: []float64{inf, 1}, level: 0.99, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Summarize(tt.values, tt.level)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Summarize(%v, %v) error = %v, wantErr %v", tt.values, tt.level, err, tt.wantErr)
			}
			if tt.wantErr {
				return
			}
			if diff := cmp.Diff(tt.want, got, approx); diff != "" {
				t.Errorf("Summarize(%v, %v) mismatch (-want +got):\n%s", tt.values, tt.level, diff)
			}
		})
	}
}

func TestTargetReached(t *testing.T) {
	five := []float64{940, 941, 939, 942, 938} // 0.69268% wide at 99%, 0.41771% at 95%
	tests := []struct {
		name    string
		target  Target
		values  []float64
		want    bool
		wantErr bool
	}{
		{name: "netperf -I 99,5", target: Target{Level: 0.99, WidthPct: 5}, values: five, want: true},
		{name: "just wide enough", target: Target{Level: 0.99, WidthPct: 0.693}, values: five, want: true},
		{name: "just too narrow", target: Target{Level: 0.99, WidthPct: 0.692}, values: five, want: false},
		{name: "95% reaches what 99% does not", target: Target{Level: 0.95, WidthPct: 0.5}, values: five, want: true},
		{name: "one value never reaches", target: Target{Level: 0.99, WidthPct: 100}, values: []float64{940}, want: false},
		{name: "no values never reach", target: Target{Level: 0.99, WidthPct: 100}, want: false},
		{name: "zero mean never reaches", target: Target{Level: 0.95, WidthPct: 1e6}, values: []float64{-1, 0, 1}, want: false},
		{name: "equal values reach", target: Target{Level: 0.99, WidthPct: 1}, values: []float64{7, 7}, want: true},
		{name: "zero width", target: Target{Level: 0.99, WidthPct: 0}, values: five, wantErr: true},
		{name: "negative width", target: Target{Level: 0.99, WidthPct: -5}, values: five, wantErr: true},
		{name: "NaN width", target: Target{Level: 0.99, WidthPct: math.NaN()}, values: five, wantErr: true},
		{name: "bad level", target: Target{Level: 99, WidthPct: 5}, values: five, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, got, err := tt.target.Reached(tt.values)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Reached error = %v, wantErr %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("Reached = %v (width %.5g%%), want %v", got, s.WidthPct, tt.want)
			}
		})
	}
}
