package history

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"wirespeed/internal/archive"
)

// halving is issue 42's lab case made synthetic: high points near 941
// Mbit/s with TSO on at B, then low ones near 470 with it off, each the
// mean of 3 iterations with 1% noise, drawn with a fixed seed.
func halving(high, low int, seed uint64) []archive.Synthetic {
	rng := rand.New(rand.NewPCG(seed, 42))
	var docs []archive.Synthetic
	for i := 0; i < high+low; i++ {
		level, tso := 941e6, true
		if i >= high {
			level, tso = 470e6, false
		}
		var its []float64
		for k := 0; k < 3; k++ {
			its = append(its, level*(1+0.01*rng.NormFloat64()))
		}
		docs = append(docs, archive.Synthetic{Source: "A", Destination: "B", Started: t0.Add(time.Duration(i) * time.Hour), Iterations: its, TSO: tso})
	}
	return docs
}

func seriesOf(t *testing.T, docs []archive.Synthetic) (Series, map[int64]archive.Env) {
	t.Helper()
	rows, envs := archived(t, docs)
	s := Build(rows, Figures[0])[0]
	if err := s.FindChanges(Options{Alpha: 0.01}, envs); err != nil {
		t.Fatal(err)
	}
	return s, envs
}

// TestFindChangesHalving: a halving after 4 points is a change point at
// 0.01 with 6, 4 or 3 points after it, at the fifth point, worse, naming
// TSO. The permutation test history used before could not find it in
// 4+6 (issue 42: "10 points, 0 change points").
func TestFindChangesHalving(t *testing.T) {
	for _, low := range []int{6, 4, 3} {
		s, _ := seriesOf(t, halving(4, low, uint64(low)))
		if len(s.Changes) != 1 {
			t.Errorf("4+%d: changes %+v, want one", low, s.Changes)
			continue
		}
		c := s.Changes[0]
		if c.Index != 4 || !c.Worse || c.P > 0.01 || math.Abs(c.ChangePct+50) > 2 || len(c.Env) != 1 || c.Env[0].Name != "tso" {
			t.Errorf("4+%d: change %+v; want at 4, -50%%, worse, p <= 0.01, tso", low, c)
		}
	}
}

// TestSensitivityOfSeries: a series with no change says how large a
// step it could have shown; one too short says it is.
func TestSensitivityOfSeries(t *testing.T) {
	// 8 points alternating 90 and 110 Mbit/s: about their mean of 100
	// a standard deviation of sqrt(8·100/7) = 10.69; no change (a split
	// of alternating values is no step). The critical t of 0.01 over
	// 3 candidate splits with 6 degrees of freedom, t(1-0.01/6; 6) =
	// 4.6979 (its density integrated numerically, by hand, in
	// Python), times 10.69·sqrt(1/4+1/4): a step under 35.5% cannot be
	// told.
	var docs []archive.Synthetic
	for i := 0; i < 8; i++ {
		bps := 90e6
		if i%2 == 1 {
			bps = 110e6
		}
		docs = append(docs, archive.Synthetic{Source: "A", Destination: "B", Started: t0.Add(time.Duration(i) * time.Hour), BitsPerSecond: bps, TSO: true})
	}
	s, _ := seriesOf(t, docs)
	sens := s.Sensitivity
	if len(s.Changes) != 0 || sens.Points != 8 || sens.Needed != 6 || sens.MinStepPct == nil {
		t.Fatalf("changes %+v, sensitivity %+v; want none, 8 points, 6 needed", s.Changes, sens)
	}
	want := 4.6979 * math.Sqrt(800.0/7) * math.Sqrt(0.5)
	if math.Abs(*sens.MinStepPct-want) > 0.05 {
		t.Errorf("smallest step %.2f%%, want %.2f%%", *sens.MinStepPct, want)
	}
	s, _ = seriesOf(t, docs[:5])
	if s.Sensitivity.Detectable() || s.Sensitivity.MinStepPct != nil {
		t.Errorf("5 points: sensitivity %+v; want too short", s.Sensitivity)
	}
}

// TestCheckAfterChangePoint: issue 42's --check cases. 4 high and 3 low
// points: the newest is a regression against the 4 high (it was
// tested against 4 high and 2 low, p = 0.013 and "ok"), and so with 4
// high and 4 low; the verdict names the change point and TSO. 10
// steady points are no regression. A drop after 12 points that the
// window of --baseline 5 leaves 3 points back is judged against its own
// segment.
func TestCheckAfterChangePoint(t *testing.T) {
	for _, low := range []int{3, 4} {
		s, envs := seriesOf(t, halving(4, low, uint64(10+low)))
		v, err := Check(s, CheckOptions{}, envs)
		if err != nil {
			t.Fatal(err)
		}
		if !v.Regression || v.Baseline != 4 || v.Since == nil || v.Since.Index != 4 || v.Shift.P > 0.01 || math.Abs(v.Shift.ChangePct+50) > 3 {
			t.Errorf("4+%d: verdict %+v; want a regression of about -50%% against the 4 before the change point at 4", low, v)
		}
		if len(v.Env) != 1 || v.Env[0].Name != "tso" {
			t.Errorf("4+%d: environment %+v; want tso on -> off", low, v.Env)
		}
	}
	s, envs := seriesOf(t, halving(10, 0, 7))
	if v, err := Check(s, CheckOptions{}, envs); err != nil || v.Regression || v.Since != nil || v.Baseline != 9 {
		t.Errorf("10 steady points: %+v, %v; want no regression against the 9 before", v, err)
	}
	s, envs = seriesOf(t, halving(12, 6, 8))
	if v, err := Check(s, CheckOptions{Baseline: 5}, envs); err != nil || v.Regression || v.Since != nil || v.Baseline != 5 {
		t.Errorf("12+6, --baseline 5: %+v, %v; want the newest against the 5 low before it, no regression", v, err)
	}
	// An improvement 3 or more points back: its own segment.
	high := halving(4, 0, 9)
	for i := range high {
		high[i].Started = high[i].Started.Add(5 * time.Hour)
	}
	s, envs = seriesOf(t, append(halving(0, 5, 9), high...))
	if v, err := Check(s, CheckOptions{}, envs); err != nil || v.Regression || v.Since != nil || v.Baseline != 3 {
		t.Errorf("5 low then 4 high: %+v, %v; want the newest against the 3 high before it", v, err)
	}
	// Too few: the reason.
	s, envs = seriesOf(t, halving(2, 1, 3))
	if _, err := Check(s, CheckOptions{}, envs); err == nil || !strings.Contains(err.Error(), "3 points: the check needs at least 3 before the newest 1") {
		t.Errorf("3 points: error %v; want too few", err)
	}
}
