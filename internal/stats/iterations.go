package stats

import (
	"fmt"
	"math"

	"wirespeed/internal/spec"
)

// Decision is what Decide says after some iterations.
type Decision struct {
	// Stop is true when no further iteration should run.
	Stop bool
	// Reason says why.
	Reason spec.Reason
	// Summary is the interval over the values so far at the target level.
	// When the maximum was hit without reaching the target, its Warnings
	// say so.
	Summary Summary
}

// Decide applies rep's stopping rule, netperf's -i MAX,MIN with
// -I LEVEL,WIDTH, to the iteration values so far and says whether to run
// another: go on below rep.MinIterations, stop as soon as the confidence
// interval is within rep's width, stop at rep.MaxIterations whether it is
// or not. The interval being reached takes precedence over the maximum
// being hit; more values than the maximum are treated as it being hit.
//
// netperf clamps both counts to [3, 30] and raises MAX to MIN; spec.Repeat
// only requires 1 <= MIN <= MAX (see its Validate).
func Decide(rep spec.Repeat, values []float64) (Decision, error) {
	if err := rep.Validate(); err != nil {
		return Decision{}, err
	}
	target := Target{Level: rep.ConfidenceLevel, WidthPct: rep.ConfidenceWidthPct}
	s, reached, err := target.Reached(values)
	if err != nil {
		return Decision{}, err
	}
	n := len(values)
	d := Decision{Summary: s}
	switch {
	case n < rep.MinIterations:
		d.Reason = spec.ReasonBelowMin
	case reached:
		d.Stop, d.Reason = true, spec.ReasonReached
	case n >= rep.MaxIterations:
		d.Stop, d.Reason = true, spec.ReasonMaxHit
		d.Summary.Warnings = append(d.Summary.Warnings, notReachedWarning(s, target))
	default:
		d.Reason = spec.ReasonNotReached
	}
	return d, nil
}

// notReachedWarning says how wide the interval is and how wide it was
// asked, as the tables state every interval: netperf's "+/-2.5% @ 99%
// conf.", half the width either side of the mean.
func notReachedWarning(s Summary, t Target) string {
	got := "no interval"
	if !math.IsInf(s.WidthPct, 0) {
		got = fmt.Sprintf("+/-%.1f%%", s.WidthPct/2)
	}
	return fmt.Sprintf("confidence interval not reached in %d iterations: %s, asked +/-%.4g%% @ %.4g%% conf.",
		s.N, got, t.WidthPct/2, 100*t.Level)
}
