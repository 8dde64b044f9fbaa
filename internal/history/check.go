package history

import (
	"fmt"

	"wirespeed/internal/record"
	"wirespeed/internal/stats"
)

// CheckOptions are the parameters of Check.
type CheckOptions struct {
	// Newest is how many of the newest points are tested; default 1.
	Newest int
	// Baseline is how many points before them, at most, make the
	// baseline (and never across the last change point before them);
	// default 30.
	Baseline int
	// Tolerance is the smallest change, as a fraction of the baseline
	// (0.02 for 2%), that counts as a regression however sure it is.
	Tolerance float64
	// Alpha is the significance level of the test; default 0.01.
	Alpha float64
}

// Verdict is what Check found.
type Verdict struct {
	Key        Key         `json:"key"`
	Figure     string      `json:"figure"`
	Unit       string      `json:"unit"`
	Shift      stats.Shift `json:"shift"`
	Baseline   int         `json:"baseline_points"`
	Newest     int         `json:"newest_points"`
	Regression bool        `json:"regression"`
	// At is the first newest point; Env what changed in the
	// environment between the last baseline point and it.
	At  Point       `json:"at"`
	Env []EnvChange `json:"env,omitempty"`
}

// Check tests whether the newest points of the series are a significant
// regression against the points before them (since the last change
// point among those, when FindChanges ran), in the figure's worse
// direction, by at least Tolerance. One newest point with iterations is
// tested by its iterations.
func Check(s Series, o CheckOptions, envs map[int64]record.Env) (Verdict, error) {
	if o.Newest <= 0 {
		o.Newest = 1
	}
	if o.Baseline <= 0 {
		o.Baseline = 30
	}
	if o.Alpha == 0 {
		o.Alpha = 0.01
	}
	v := Verdict{Key: s.Key, Figure: s.Figure, Unit: s.Unit}
	n := len(s.Points)
	if n < o.Newest+3 {
		return v, fmt.Errorf("%d points: the check needs at least 3 before the newest %d", n, o.Newest)
	}
	first := n - o.Newest
	lo := 0
	for _, c := range s.Changes {
		if c.Index < first && c.Index > lo {
			lo = c.Index
		}
	}
	if first-lo < 3 {
		// Too few since the last change: test against what was before it
		// too rather than not at all.
		lo = 0
	}
	lo = max(lo, first-o.Baseline)
	var base, newest []float64
	for _, p := range s.Points[lo:first] {
		base = append(base, p.Value)
	}
	for _, p := range s.Points[first:] {
		newest = append(newest, p.Value)
	}
	if o.Newest == 1 && len(s.Points[first].samples) >= 2 {
		newest = s.Points[first].samples
	}
	sh, err := stats.ShiftWorse(base, newest, s.HigherIsBetter)
	if err != nil {
		return v, err
	}
	v.Shift, v.Baseline, v.Newest, v.At = sh, len(base), o.Newest, s.Points[first]
	worsePct := -sh.ChangePct
	if !s.HigherIsBetter {
		worsePct = sh.ChangePct
	}
	v.Regression = sh.P <= o.Alpha && worsePct >= 100*o.Tolerance
	v.Env = EnvDiff(s.Key, envs[s.Points[first-1].envID], envs[s.Points[first].envID])
	return v, nil
}
