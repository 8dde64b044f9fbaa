package stats

import (
	"fmt"
	"math"
)

// Iterations is the stopping rule of a repeated measurement, netperf's
// -i MAX,MIN with -I LEVEL,WIDTH: run at least Min iterations, stop as soon
// as the confidence interval is within Target, and stop at Max whether it
// is or not.
//
// netperf clamps both counts to [3, 30] and raises MAX to MIN; this rule
// only requires 1 <= Min <= Max and leaves such limits to spec.
type Iterations struct {
	Min    int
	Max    int
	Target Target
}

// Validate reports the first problem with it.
func (it Iterations) Validate() error {
	if it.Min < 1 {
		return fmt.Errorf("minimum iterations %d must be at least 1", it.Min)
	}
	if it.Max < it.Min {
		return fmt.Errorf("maximum iterations %d is less than the minimum %d", it.Max, it.Min)
	}
	return it.Target.Validate()
}

// Reason says why a repeated measurement goes on or stops.
type Reason string

// The reasons a Decision gives.
const (
	// ReasonBelowMin: fewer than Min iterations so far; go on.
	ReasonBelowMin Reason = "below_min"
	// ReasonNotReached: the interval is still wider than asked; go on.
	ReasonNotReached Reason = "not_reached"
	// ReasonReached: the interval is within the asked width; stop.
	ReasonReached Reason = "reached"
	// ReasonMaxHit: Max iterations done without reaching the interval; stop.
	ReasonMaxHit Reason = "max_hit"
)

// Decision is what Iterations.Decide says after some iterations.
type Decision struct {
	// Stop is true when no further iteration should run.
	Stop bool
	// Reason says why.
	Reason Reason
	// Summary is the interval over the values so far at the target level.
	// When the maximum was hit without reaching the target, its Warnings
	// say so.
	Summary Summary
}

// Decide looks at the iteration values so far and says whether to run
// another. The interval being reached takes precedence over the maximum
// being hit; more values than Max are treated as Max being hit.
func (it Iterations) Decide(values []float64) (Decision, error) {
	if err := it.Validate(); err != nil {
		return Decision{}, err
	}
	s, reached, err := it.Target.Reached(values)
	if err != nil {
		return Decision{}, err
	}
	n := len(values)
	d := Decision{Summary: s}
	switch {
	case n < it.Min:
		d.Reason = ReasonBelowMin
	case reached:
		d.Stop, d.Reason = true, ReasonReached
	case n >= it.Max:
		d.Stop, d.Reason = true, ReasonMaxHit
		d.Summary.Warnings = append(d.Summary.Warnings, notReachedWarning(s, it.Target))
	default:
		d.Reason = ReasonNotReached
	}
	return d, nil
}

func notReachedWarning(s Summary, t Target) string {
	wide := "it could not be computed"
	if !math.IsInf(s.WidthPct, 0) {
		wide = fmt.Sprintf("it is %.3g%% wide", s.WidthPct)
	}
	return fmt.Sprintf("confidence interval not reached in %d iterations: %s, asked %g%% at %g%% confidence",
		s.N, wide, t.WidthPct, 100*t.Level)
}
