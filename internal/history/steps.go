package history

import (
	"math"

	"wirespeed/internal/stats"
)

// Sensitivity is how large a step FindChanges could have found in a
// series (stats.Sensitivity).
type Sensitivity struct {
	// Points is the series' length; Needed the fewest points a change
	// point needs (a segment of 3 on either side).
	Points int `json:"points"`
	Needed int `json:"needed"`
	// MinStepPct is the smallest step, in percent of the series' mean,
	// that a test at the series' alpha would find about half the time
	// given the noise about the segments found (absent when the series
	// is too short or its mean is 0).
	MinStepPct *float64 `json:"min_step_pct,omitempty"`
}

// Detectable says whether the series is long enough to test for a
// change point at all.
func (s Sensitivity) Detectable() bool { return s.Points >= s.Needed }

// steps finds the change points of values, the points' values, with
// each point's own variance from its iterations (stats.Steps), and
// records the series' Sensitivity.
func (s *Series) steps(values []float64, o Options) ([]stats.ChangePoint, error) {
	within := make([]float64, len(s.Points))
	for i, p := range s.Points {
		within[i] = ownVariance(p.samples)
	}
	opt := stats.StepOptions{Alpha: alphaOr(o.Alpha), Permutations: o.Permutations}
	cps, err := stats.Steps(values, within, opt)
	if err != nil {
		return nil, err
	}
	sens, err := stats.StepSensitivity(values, within, cps, opt)
	if err != nil {
		return nil, err
	}
	s.Sensitivity = Sensitivity{Points: sens.Points, Needed: sens.Needed}
	if pct := sens.MinStepPct(); !math.IsInf(pct, 0) && !math.IsNaN(pct) {
		s.Sensitivity.MinStepPct = &pct
	}
	return cps, nil
}

// ownVariance is the variance of the mean of a point's iterations; 0
// for fewer than 2.
func ownVariance(samples []float64) float64 {
	n := len(samples)
	if n < 2 {
		return 0
	}
	m := mean(samples)
	var ss float64
	for _, v := range samples {
		ss += (v - m) * (v - m)
	}
	return ss / float64(n-1) / float64(n)
}
