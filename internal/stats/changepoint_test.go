package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// qDirect is e-divisive's statistic at split tau, straight from its
// definition: an independent check of bestSplit's running sums.
func qDirect(v []float64, tau int) float64 {
	x, y := v[:tau], v[tau:]
	m, k := float64(len(x)), float64(len(y))
	var between, within1, within2 float64
	for _, a := range x {
		for _, b := range y {
			between += math.Abs(a - b)
		}
	}
	for i := range x {
		for j := range x {
			within1 += math.Abs(x[i] - x[j])
		}
	}
	for i := range y {
		for j := range y {
			within2 += math.Abs(y[i] - y[j])
		}
	}
	// Ordered pairs count each twice: the means over distinct pairs.
	return m * k / (m + k) * (2*between/(m*k) - within1/(m*(m-1)) - within2/(k*(k-1)))
}

func TestBestSplit(t *testing.T) {
	// Worked by hand: three 0s then three 1s; at tau 3 every between
	// pair is 1 apart (9 of them) and none within: Q = 9/6 * 2*9/9 = 3.
	tau, q, ok := bestSplit([]float64{0, 0, 0, 1, 1, 1}, 3)
	if !ok || tau != 3 || math.Abs(q-3) > 1e-12 {
		t.Errorf("bestSplit = %d, %v, %v; want 3, 3", tau, q, ok)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 40; trial++ {
		v := make([]float64, 5+rng.IntN(60))
		for i := range v {
			v[i] = rng.NormFloat64()
			if trial%2 == 1 {
				v[i] = float64(rng.IntN(4)) // ties
			}
		}
		tau, q, _ := bestSplit(v, 2)
		best, bestTau := math.Inf(-1), 0
		for t := 2; t <= len(v)-2; t++ {
			if d := qDirect(v, t); d > best {
				best, bestTau = d, t
			}
		}
		if math.Abs(q-best) > 1e-9*math.Abs(best)+1e-12 || math.Abs(qDirect(v, tau)-best) > 1e-9*math.Abs(best)+1e-12 {
			t.Errorf("n=%d: bestSplit = %d, %v; by definition %d, %v", len(v), tau, q, bestTau, best)
		}
	}
}

func TestEDivisiveFindsStep(t *testing.T) {
	got, err := EDivisive([]float64{941, 940, 943, 939, 942, 941, 612, 615, 610, 611, 613}, EDivisiveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Index != 6 || got[0].P > 0.05 {
		t.Fatalf("changes %+v; want one at 6", got)
	}
	// Two steps, found both, in order.
	var v []float64
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 60; i++ {
		level := 100.0
		if i >= 20 {
			level = 90
		}
		if i >= 40 {
			level = 110
		}
		v = append(v, level+rng.NormFloat64())
	}
	got, err = EDivisive(v, EDivisiveOptions{Alpha: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Index != 20 || got[1].Index != 40 {
		t.Errorf("changes %+v; want at 20 and 40", got)
	}
}

// TestEDivisiveTiesCount: the permutation test counts the shuffles whose
// best split is as strong as the series' own, not only the stronger
// ones. Worked by hand: of the 20 orders of three 0s and three 1s, 2
// (000111 and 111000) have the strongest split there is, Q = 3 at 3
// (TestBestSplit), so the step is as strong as chance makes it one time
// in 10: p near 0.1, and at 5% no change. Leaving out the ties would
// give p = 1/200 and a change point.
func TestEDivisiveTiesCount(t *testing.T) {
	v := []float64{0, 0, 0, 1, 1, 1}
	opt := EDivisiveOptions{Alpha: 0.5, Permutations: 199, MinSize: 3, Seed: 7}
	// A draw of 199 with probability 0.1 is 19.9 ± 4.2: the p-value,
	// (over+1)/200, is within 0.05 and 0.2 (4 standard deviations).
	if p := permutationP(v, 3, opt, rand.New(rand.NewPCG(1, 2))); p < 0.05 || p > 0.2 {
		t.Errorf("p-value %v of the step, want near 0.1 (2 of 20 orders as strong)", p)
	}
	got, err := EDivisive(v, EDivisiveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Errorf("changes %+v; want none at 5%%: a step of six values is as strong by chance one time in 10", got)
	}
}

// TestEDivisiveFalseAlarmRate holds EDivisive to its stated false-alarm
// rate: on series with no change, the share reporting one is about
// Alpha, and not above it beyond chance.
func TestEDivisiveFalseAlarmRate(t *testing.T) {
	const series, n = 400, 30
	rng := rand.New(rand.NewPCG(5, 6))
	alarms := 0
	for s := 0; s < series; s++ {
		v := make([]float64, n)
		for i := range v {
			v[i] = 1000 + 20*rng.NormFloat64()
		}
		got, err := EDivisive(v, EDivisiveOptions{Alpha: 0.05, Seed: uint64(s)})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) > 0 {
			alarms++
		}
	}
	rate := float64(alarms) / series
	// 0.05 ± 3 standard errors of a proportion over 400 series.
	if se := math.Sqrt(0.05 * 0.95 / series); rate > 0.05+3*se || rate < 0.05-3*se {
		t.Errorf("false-alarm rate %.3f over %d change-free series; want 0.05 within %.3f", rate, series, 3*se)
	}
	t.Logf("false-alarm rate %.3f", rate)
}

func TestShiftWorse(t *testing.T) {
	// Worked by hand: baseline 10, 11, 12 (mean 11, variance 1), a new
	// value of 8, higher is better: t = 3/sqrt(4/3) = 2.598 with 2
	// degrees of freedom, whose tail is 0.5*(1 - t/sqrt(t²+2)) = 0.0608.
	s, err := ShiftWorse([]float64{10, 11, 12}, []float64{8}, true)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(s.P-0.0608) > 0.0005 || math.Abs(s.ChangePct-(-300.0/11)) > 1e-9 {
		t.Errorf("shift %+v; want p 0.0608, change -27.27%%", s)
	}
	// The same value is no regression when lower is better.
	if s, _ := ShiftWorse([]float64{10, 11, 12}, []float64{8}, false); s.P < 0.9 {
		t.Errorf("lower is better: p %v, want near 1", s.P)
	}
	// Several new values: Welch, one-sided. Worked by hand: baseline
	// 2, 3, 4 and newest 1, 2, 3 (each variance 1, 3 values): t =
	// 1/sqrt(1/3+1/3) = 1.2247 with Welch's 4 degrees of freedom, whose
	// upper tail is 1/2 - 3/8·u·(1 - t²/(12(1+t²/4))), u = t/sqrt(1+t²/4):
	// 0.14393, worse when higher is better, 1 - 0.14393 better.
	if s, err := ShiftWorse([]float64{2, 3, 4}, []float64{1, 2, 3}, true); err != nil || math.Abs(s.P-0.14393) > 0.00001 {
		t.Errorf("shift %+v, %v; want p 0.14393", s, err)
	}
	if s, _ := ShiftWorse([]float64{2, 3, 4}, []float64{1, 2, 3}, false); math.Abs(s.P-(1-0.14393)) > 0.00001 {
		t.Errorf("lower is better: p %v, want 0.85607", s.P)
	}
	s, err = ShiftWorse([]float64{100, 101, 99, 100, 102}, []float64{90, 91, 89}, true)
	if err != nil || s.P > 0.001 || s.Test != "Welch's t-test" {
		t.Errorf("shift %+v, %v; want a significant Welch test", s, err)
	}
	if _, err := ShiftWorse([]float64{1, 2}, []float64{1}, true); err == nil {
		t.Error("two baseline values: want an error")
	}
}
