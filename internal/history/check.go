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
	// environment between the last baseline point and the first point
	// after it (the change point's, when Since is set).
	At  Point       `json:"at"`
	Env []EnvChange `json:"env,omitempty"`
	// Since is the change point the newest points follow, when the
	// baseline is the segment before it rather than the points just
	// before the newest.
	Since *Change `json:"since_change,omitempty"`
}

// minBaseline is the fewest points a baseline may have
// (stats.ShiftWorse).
const minBaseline = 3

// Check tests whether the newest points of the series are a significant
// regression, in the figure's worse direction and by at least
// Tolerance, against the last stable segment before them. Its
// baseline is never a mix of two levels: with the change points
// FindChanges found over the whole series, newest points included,
//
//   - when the newest points' segment began at a change point that
//     made the figure worse, or began fewer than 3 points before them,
//     the baseline is the segment before that change point: the newest
//     of 4 high and 3 low points is tested against the 4 high, not
//     against 4 high and 2 low;
//   - otherwise (no change point, or an improvement with 3 or more
//     points since) it is the points of their own segment before them.
//
// Either way at most Baseline points before the newest: a change point
// further back than that no longer decides, and the newest are tested
// against their own segment. One newest point with iterations is
// tested by its iterations. A series with too few points for a
// baseline is an error saying so.
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
	if n < o.Newest+minBaseline {
		return v, fmt.Errorf("%d points: the check needs at least %d before the newest %d", n, minBaseline, o.Newest)
	}
	first := n - o.Newest
	window := max(0, first-o.Baseline)
	// The newest points' segment starts at the last change point at or
	// before the first of them; prev is the one before it.
	start, prev := 0, 0
	var since *Change
	for i := range s.Changes {
		c := s.Changes[i]
		if c.Index <= first && c.Index > start {
			prev, start, since = start, c.Index, &s.Changes[i]
		}
	}
	lo, hi := max(start, window), first
	if since != nil && (since.Worse || first-start < minBaseline) && start-max(prev, window) >= minBaseline {
		lo, hi = max(prev, window), start
	} else {
		since = nil
	}
	if hi-lo < minBaseline {
		return v, fmt.Errorf("%d points since the change point at %s: the check needs at least %d before the newest %d, or %d before the change point within --baseline %d",
			first-start, s.Points[start].Time.UTC().Format("2006-01-02 15:04:05"), minBaseline, o.Newest, minBaseline, o.Baseline)
	}
	var base, newest []float64
	for _, p := range s.Points[lo:hi] {
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
	v.Shift, v.Baseline, v.Newest, v.At, v.Since = sh, len(base), o.Newest, s.Points[first], since
	worsePct := -sh.ChangePct
	if !s.HigherIsBetter {
		worsePct = sh.ChangePct
	}
	v.Regression = sh.P <= o.Alpha && worsePct >= 100*o.Tolerance
	after := first
	if since != nil {
		after = since.Index
	}
	v.Env = EnvDiff(s.Key, envs[s.Points[hi-1].envID], envs[s.Points[after].envID])
	return v, nil
}
