package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// tAt is the pooled two-sample t of the split of v at tau, from its
// definition: an independent check of bestTSplit's running sums.
func tAt(v []float64, tau int) float64 {
	x, y := v[:tau], v[tau:]
	mx, my := mean(x), mean(y)
	var ss float64
	for _, a := range x {
		ss += (a - mx) * (a - mx)
	}
	for _, a := range y {
		ss += (a - my) * (a - my)
	}
	s2 := ss / float64(len(v)-2)
	return math.Abs(my-mx) / math.Sqrt(s2*(1/float64(len(x))+1/float64(len(y))))
}

func TestStepsWorkedByHand(t *testing.T) {
	// 1, 2, 3 then 11, 12, 13: one split (3 a side); means 2 and 12,
	// squared deviations 2+2 over 4 degrees of freedom, variance 1; the
	// step's standard error sqrt(1·(1/3+1/3)) = 0.8165 and t = 12.247.
	// Student's t with 4 degrees of freedom has the upper tail
	// 1/2 - 3/8·u·(1 - t²/(12(1+t²/4))), u = t/sqrt(1+t²/4): 2.01e-4,
	// so p = 4.02e-4 (one candidate split, nothing to correct).
	v := []float64{1, 2, 3, 11, 12, 13}
	tail := func(t float64) float64 {
		u := t / math.Sqrt(1+t*t/4)
		return 0.5 - 3.0/8*u*(1-t*t/(12*(1+t*t/4)))
	}
	got, err := Steps(v, nil, StepOptions{Alpha: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Index != 3 || math.Abs(got[0].Stat-12.2474) > 1e-4 || math.Abs(got[0].P-2*tail(12.2474487)) > 1e-7 {
		t.Errorf("steps %+v; want one at 3, t 12.247, p %.3g", got, 2*tail(12.2474487))
	}
	// Each point's iterations say it varies by 4 (as a mean): the
	// points' variance 1 is floored at 4, the standard error doubles
	// and t halves to 6.124: p = 2·0.00180 = 0.0036.
	got, _ = Steps(v, []float64{4, 4, 4, 4, 4, 4}, StepOptions{Alpha: 0.01})
	if len(got) != 1 || math.Abs(got[0].Stat-6.1237) > 1e-4 || math.Abs(got[0].P-2*tail(6.1237244)) > 1e-7 {
		t.Errorf("floored: steps %+v; want t 6.124, p %.3g", got, 2*tail(6.1237244))
	}
	// A variance far above the step's: nothing significant.
	if got, _ := Steps(v, []float64{400, 400, 400, 400, 400, 400}, StepOptions{Alpha: 0.01}); len(got) != 0 {
		t.Errorf("steps %+v under noise of 20 a point; want none", got)
	}
	// Seven points, minimum 3 a side: two candidates (3 and 4); the
	// clean split is at 4 and its p is doubled.
	v = []float64{5, 5.5, 4.5, 5, 9, 9.5, 8.5}
	got, _ = Steps(v, nil, StepOptions{Alpha: 0.01})
	tt := tAt(v, 4)
	// 5 degrees of freedom: upper tail from the closed form
	// 1/2 - (u(1+2/(3(1+t²/5))... computed here by integration
	// instead, a check independent of gonum's incomplete beta.
	tail5 := func(t float64) float64 {
		f := func(x float64) float64 { return math.Pow(1+x*x/5, -3) }
		c := 8 / (3 * math.Pi * math.Sqrt(5)) // Γ(3)/(√(5π)Γ(5/2))
		var s float64
		const h = 1e-3
		for x := t; x < t+200; x += h {
			s += h * (f(x) + 4*f(x+h/2) + f(x+h)) / 6
		}
		return c * s
	}
	if len(got) != 1 || got[0].Index != 4 || math.Abs(got[0].P-2*2*tail5(tt))/got[0].P > 1e-3 {
		t.Errorf("steps %+v; want one at 4, p %.4g (t %.4f, two candidates)", got, 4*tail5(tt), tt)
	}
}

func TestBestTSplitAgainstDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for trial := 0; trial < 60; trial++ {
		n := 6 + rng.IntN(50)
		v := make([]float64, n)
		for i := range v {
			v[i] = 1e9 + 1e6*rng.NormFloat64()
			if trial%3 == 0 && i > n/3 {
				v[i] += 3e6
			}
		}
		sp, ok := bestTSplit(v, 0, 3)
		best, bestTau := 0.0, 0
		for tau := 3; tau <= n-3; tau++ {
			if x := tAt(v, tau); x > best {
				best, bestTau = x, tau
			}
		}
		if !ok || sp.tau != bestTau || math.Abs(sp.t-best) > 1e-6*best {
			t.Errorf("n=%d: split %d, t %v; by definition %d, %v", n, sp.tau, sp.t, bestTau, best)
		}
	}
	if _, ok := bestTSplit([]float64{1, 2, 3, 4, 5}, 0, 3); ok {
		t.Error("five points split with 3 a side")
	}
}

// noise draws a value of unit scale: normal, or Student's t with 2
// degrees of freedom (no variance: heavy tails).
type noise func(*rand.Rand) float64

func normal(r *rand.Rand) float64 { return r.NormFloat64() }

func heavy(r *rand.Rand) float64 {
	z := r.NormFloat64()
	a, b := r.NormFloat64(), r.NormFloat64()
	return z / math.Sqrt((a*a+b*b)/2)
}

// stepSeries draws a series of n1 points at 100 and n2 at 100·(1-step),
// each point the mean of iter iterations with noise of sd·100 each
// (iter 1: no iterations kept), and the points' own variances.
func stepSeries(r *rand.Rand, n1, n2 int, step, sd float64, iter int, draw noise) (x, within []float64) {
	for i := 0; i < n1+n2; i++ {
		level := 100.0
		if i >= n1 {
			level *= 1 - step
		}
		var its []float64
		for k := 0; k < iter; k++ {
			its = append(its, level+100*sd*draw(r))
		}
		m := mean(its)
		x = append(x, m)
		if iter > 1 {
			var ss float64
			for _, v := range its {
				ss += (v - m) * (v - m)
			}
			within = append(within, ss/float64(iter-1)/float64(iter))
		}
	}
	return x, within
}

// foundShare is the share of 200 seeded series with a step at n1 (one
// point either side counts) that Steps finds.
func foundShare(t *testing.T, n1, n2 int, step, sd float64, iter int, alpha float64) float64 {
	t.Helper()
	r := rand.New(rand.NewPCG(uint64(n1*1000+n2), uint64(step*1e4+sd*1e6)))
	found := 0
	for s := 0; s < 200; s++ {
		x, w := stepSeries(r, n1, n2, step, sd, iter, normal)
		cps, err := Steps(x, w, StepOptions{Alpha: alpha})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cps {
			if c.Index >= n1-1 && c.Index <= n1+1 {
				found++
				break
			}
		}
	}
	return float64(found) / 200
}

// TestStepsPower: the steps issue 42 asks for are found in at least
// 95% of 200 seeded series each, at alpha 0.01, whether the points
// carry their 3 iterations or not; and the power table of
// docs/archive.md (logged with -v).
func TestStepsPower(t *testing.T) {
	for _, c := range []struct {
		n         int
		step, sd  float64
		iter      int
		wantAbove float64
	}{
		{4, 0.50, 0.01, 1, 0.95},
		{4, 0.50, 0.01, 3, 0.95},
		{6, 0.20, 0.03, 1, 0.95},
		{6, 0.20, 0.03, 3, 0.95},
		{10, 0.10, 0.02, 1, 0.95},
		{10, 0.10, 0.02, 3, 0.95},
	} {
		got := foundShare(t, c.n, c.n, c.step, c.sd, c.iter, 0.01)
		t.Logf("%d+%d points, step %.0f%%, noise %.0f%% per point (%d iterations): found in %.1f%%", c.n, c.n, 100*c.step, 100*c.sd, c.iter, 100*got)
		if got < c.wantAbove {
			t.Errorf("%d+%d points, step %.0f%%, noise %.0f%%: found in %.1f%% of 200 series, want %.0f%% or more", c.n, c.n, 100*c.step, 100*c.sd, 100*got, 100*c.wantAbove)
		}
	}
	// The table: points a side by noise, the share found of steps of
	// 5, 10, 20 and 50%.
	var b strings.Builder
	fmt.Fprintf(&b, "\n| points | noise | 5%% | 10%% | 20%% | 50%% |\n|---|---|---|---|---|---|\n")
	for _, n := range []int{3, 4, 6, 10, 20} {
		for _, sd := range []float64{0.01, 0.03, 0.10} {
			fmt.Fprintf(&b, "| %d+%d | %.0f%% |", n, n, 100*sd)
			for _, step := range []float64{0.05, 0.10, 0.20, 0.50} {
				fmt.Fprintf(&b, " %.0f%% |", 100*foundShare(t, n, n, step, sd, 1, 0.01))
			}
			b.WriteString("\n")
		}
	}
	t.Log(b.String())
}

// TestStepsFalseAlarms: over 200 seeded series of pure noise at each
// length from 6 to 60, normal and heavy-tailed, with and without
// iterations (at alpha 0.01; without at 0.05), the share with a
// change point is at most alpha plus 3
// standard errors of a proportion over 200; over all lengths together
// (11000 series a kind) at most alpha plus 3 of theirs.
func TestStepsFalseAlarms(t *testing.T) {
	for _, alpha := range []float64{0.01, 0.05} {
		for _, k := range []struct {
			name string
			draw noise
			iter int
		}{{"normal", normal, 1}, {"heavy-tailed", heavy, 1}, {"normal, 3 iterations", normal, 3}, {"heavy-tailed, 3 iterations", heavy, 3}} {
			if alpha != 0.01 && k.iter > 1 {
				continue
			}
			r := rand.New(rand.NewPCG(uint64(alpha*1000), uint64(len(k.name)+k.iter)))
			total, alarms, worst, worstN := 0, 0, 0, 0
			limit := alpha*200 + 3*math.Sqrt(200*alpha*(1-alpha))
			for n := 6; n <= 60; n++ {
				a := 0
				for s := 0; s < 200; s++ {
					x, w := stepSeries(r, n, 0, 0, 0.05, k.iter, k.draw)
					cps, err := Steps(x, w, StepOptions{Alpha: alpha})
					if err != nil {
						t.Fatal(err)
					}
					if len(cps) > 0 {
						a++
					}
				}
				if float64(a) > limit {
					t.Errorf("alpha %v, %s, %d points: %d of 200 series with a change point, want at most %.1f", alpha, k.name, n, a, limit)
				}
				if a > worst {
					worst, worstN = a, n
				}
				total += 200
				alarms += a
			}
			rate := float64(alarms) / float64(total)
			if se := math.Sqrt(alpha * (1 - alpha) / float64(total)); rate > alpha+3*se {
				t.Errorf("alpha %v, %s: false-alarm rate %.4f over %d series, want at most %.4f", alpha, k.name, rate, total, alpha+3*se)
			}
			t.Logf("alpha %v, %s: false alarms %.2f%% of %d series (lengths 6-60, 200 each); most at one length %d of 200 (%d points)", alpha, k.name, 100*rate, total, worst, worstN)
		}
	}
}

// TestStepsPointsVaryMoreThanIterations: when runs differ from each
// other more than a run's iterations do (each run its own level), the
// iterations' variance is only a floor: no more false alarms than
// alpha allows.
func TestStepsPointsVaryMoreThanIterations(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	alarms := 0
	const series = 1000
	for s := 0; s < series; s++ {
		n := 6 + r.IntN(30)
		var x, w []float64
		for i := 0; i < n; i++ {
			level := 100 + 5*r.NormFloat64() // the run's own level
			its := []float64{level + 0.5*r.NormFloat64(), level + 0.5*r.NormFloat64(), level + 0.5*r.NormFloat64()}
			m := mean(its)
			var ss float64
			for _, v := range its {
				ss += (v - m) * (v - m)
			}
			x, w = append(x, m), append(w, ss/2/3)
		}
		if cps, _ := Steps(x, w, StepOptions{Alpha: 0.01}); len(cps) > 0 {
			alarms++
		}
	}
	if limit := 0.01*series + 3*math.Sqrt(series*0.01*0.99); float64(alarms) > limit {
		t.Errorf("%d of %d series with a change point, want at most %.0f", alarms, series, limit)
	}
}

func TestStepsSeveral(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var v []float64
	for i := 0; i < 30; i++ {
		level := 100.0
		if i >= 10 {
			level = 90
		}
		if i >= 20 {
			level = 110
		}
		v = append(v, level+r.NormFloat64())
	}
	got, err := Steps(v, nil, StepOptions{Alpha: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Index != 10 || got[1].Index != 20 {
		t.Errorf("steps %+v; want at 10 and 20", got)
	}
	if _, err := Steps([]float64{1, math.NaN()}, nil, StepOptions{}); err == nil {
		t.Error("NaN: want an error")
	}
	if _, err := Steps([]float64{1, 2}, []float64{1}, StepOptions{}); err == nil {
		t.Error("two points and one variance: want an error")
	}
	if got, err := Steps([]float64{1, 1, 1, 1, 1, 1, 1}, nil, StepOptions{}); err != nil || len(got) != 0 {
		t.Errorf("a flat series: %+v, %v; want no step", got, err)
	}
}

func TestStepSensitivity(t *testing.T) {
	// 1, 2, 3 | 11, 12, 13 with its step found: deviations from the
	// segments' means 2+2 over 6-2 degrees of freedom, noise 1; one
	// candidate split, so the critical t is Student's with 4 degrees of
	// freedom at 0.975 for alpha 0.05: 2.7764 (a table's). The step's
	// standard error at 3+3 is sqrt(2/3): 2.2669, 32.4% of the mean 7.
	s, err := StepSensitivity([]float64{1, 2, 3, 11, 12, 13}, nil, []ChangePoint{{Index: 3}}, StepOptions{Alpha: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(s.Noise-1) > 1e-12 || math.Abs(s.MinStep-2.7764*math.Sqrt(2.0/3)) > 1e-3 || math.Abs(s.MinStepPct()-100*2.2669/7) > 0.02 {
		t.Errorf("sensitivity %+v (%.2f%%); want noise 1, step 2.2669 (32.4%%)", s, s.MinStepPct())
	}
	if s, _ := StepSensitivity([]float64{1, 2, 3, 4, 5}, nil, nil, StepOptions{}); s.Needed != 6 || !math.IsInf(s.MinStepPct(), 1) {
		t.Errorf("five points: %+v; want too short (6 needed)", s)
	}
	// What MinStep means, tried: with a point's noise exactly 1 (the
	// iterations' floor, the points themselves equal), a step of
	// MinStep at the middle of 8 points is found about half the time,
	// twice that nearly always, half that rarely.
	flat := make([]float64, 8)
	w := make([]float64, 8)
	for i := range flat {
		flat[i], w[i] = 100, 1
	}
	s, _ = StepSensitivity(flat, w, nil, StepOptions{Alpha: 0.01})
	if s.Noise != 1 {
		t.Fatalf("noise %v, want the floor's 1", s.Noise)
	}
	r := rand.New(rand.NewPCG(9, 9))
	for _, c := range []struct{ times, lo, hi float64 }{{0.5, 0, 0.2}, {1, 0.3, 0.7}, {2, 0.9, 1}} {
		found := 0
		for k := 0; k < 400; k++ {
			var x []float64
			for i := 0; i < 8; i++ {
				v := 100 + r.NormFloat64()
				if i >= 4 {
					v -= c.times * s.MinStep
				}
				x = append(x, v)
			}
			if cps, _ := Steps(x, nil, StepOptions{Alpha: 0.01}); len(cps) > 0 {
				found++
			}
		}
		if sh := float64(found) / 400; sh < c.lo || sh > c.hi {
			t.Errorf("a step of %.1f×MinStep (%.2f) in 4+4 points of noise 1 found in %.0f%%, want %.0f-%.0f%%", c.times, c.times*s.MinStep, 100*sh, 100*c.lo, 100*c.hi)
		}
	}
}
