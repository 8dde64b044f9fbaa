package spec

import (
	"fmt"
	"math"
)

// Repeat is how often a test runs to make one measurement, and when to
// stop: netperf's -i MAX,MIN and -I LEVEL,WIDTH. Each iteration is a full
// run over fresh data connections; after MinIterations, iterating stops as
// soon as the confidence interval of every figure measured (throughput,
// and CPU utilization when measured) is no wider than ConfidenceWidthPct,
// and at MaxIterations whether it is or not.
type Repeat struct {
	MaxIterations int `json:"max_iterations"`
	MinIterations int `json:"min_iterations"`
	// ConfidenceLevel is a fraction: 0.99 for 99%.
	ConfidenceLevel float64 `json:"confidence_level"`
	// ConfidenceWidthPct is the widest interval accepted, as a percentage
	// of the mean, full width (netperf's convention): 5 accepts +/-2.5%.
	ConfidenceWidthPct float64 `json:"confidence_width_pct"`
}

// Defaults of a Repeat: one run; when iterating without a target asked,
// netperf's 99% confidence and an interval 5% wide.
const (
	DefaultConfidenceLevel    = 0.99
	DefaultConfidenceWidthPct = 5
	// With -I and no -i, netperf's defaults: at most 10, at least 3.
	DefaultMaxIterations = 10
	DefaultMinIterations = 3
	// MaxIterations bounds what Validate accepts.
	MaxIterations = 1000
)

// DefaultRepeat is a single run.
func DefaultRepeat() Repeat {
	return Repeat{
		MaxIterations:      1,
		MinIterations:      1,
		ConfidenceLevel:    DefaultConfidenceLevel,
		ConfidenceWidthPct: DefaultConfidenceWidthPct,
	}
}

// Repeats reports whether more than one iteration may run: only then is
// there a mean and a confidence interval to report.
func (r Repeat) Repeats() bool { return r.MaxIterations > 1 }

// Validate reports the first problem with r, in words a user can act on.
func (r Repeat) Validate() error {
	switch {
	case r.MinIterations < 1:
		return fmt.Errorf("minimum iterations %d must be at least 1", r.MinIterations)
	case r.MaxIterations < r.MinIterations:
		return fmt.Errorf("maximum iterations %d is less than the minimum %d (netperf's order is MAX,MIN)", r.MaxIterations, r.MinIterations)
	case r.MaxIterations > MaxIterations:
		return fmt.Errorf("maximum iterations %d is more than the %d limit", r.MaxIterations, MaxIterations)
	case !(r.ConfidenceLevel > 0 && r.ConfidenceLevel < 1):
		return fmt.Errorf("confidence level %v%% must be between 0 and 100, such as 99", 100*r.ConfidenceLevel)
	case !(r.ConfidenceWidthPct > 0) || math.IsInf(r.ConfidenceWidthPct, 0):
		return fmt.Errorf("confidence interval width %v%% must be more than 0, such as 5 for +/-2.5%%", r.ConfidenceWidthPct)
	}
	return nil
}

// Reason says why a repeated measurement goes on or stops: the words of
// the stopping rule Repeat describes. stats.Decide gives one for each
// figure; a result's confidence (result.Confidence.Stop) keeps the one the
// whole measurement stopped for. The strings are those of the results
// document.
type Reason string

// The reasons.
const (
	// ReasonBelowMin: fewer than MinIterations so far; go on.
	ReasonBelowMin Reason = "below_min"
	// ReasonNotReached: an interval is still wider than asked; go on.
	ReasonNotReached Reason = "not_reached"
	// ReasonReached: every interval is within the asked width; stop.
	ReasonReached Reason = "reached"
	// ReasonMaxHit: MaxIterations done without reaching the interval; stop.
	ReasonMaxHit Reason = "max_hit"
	// ReasonInterrupted: an iteration was interrupted or failed; stop.
	ReasonInterrupted Reason = "interrupted"
)
