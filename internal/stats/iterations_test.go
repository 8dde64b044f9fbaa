package stats

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"wirespeed/internal/spec"
)

func TestDecide(t *testing.T) {
	netperf := spec.Repeat{MinIterations: 3, MaxIterations: 10, ConfidenceLevel: 0.99, ConfidenceWidthPct: 5}
	steady := []float64{940, 941, 939, 942, 938} // 0.69% wide at 99%
	noisy := []float64{500, 900, 700, 1000, 600} // mean 740, far wider than 5%
	tests := []struct {
		name         string
		rep          spec.Repeat
		values       []float64
		wantStop     bool
		wantReason   spec.Reason
		wantWarnings []string // only checked when not nil
		wantErr      bool
	}{
		{name: "nothing yet", rep: netperf, wantReason: spec.ReasonBelowMin},
		{name: "reached but below min", rep: netperf, values: steady[:2], wantReason: spec.ReasonBelowMin},
		{name: "reached at min", rep: netperf, values: steady[:3], wantStop: true, wantReason: spec.ReasonReached},
		{name: "not reached", rep: netperf, values: noisy, wantReason: spec.ReasonNotReached},
		{
			name:       "max hit",
			rep:        spec.Repeat{MinIterations: 3, MaxIterations: 5, ConfidenceLevel: 0.99, ConfidenceWidthPct: 5},
			values:     noisy,
			wantStop:   true,
			wantReason: spec.ReasonMaxHit,
			// mean 740, stddev sqrt(172000/4) = 207.36,
			// half = 4.604 * 207.36 / sqrt(5) = 426.96,
			// width = 2 * 426.96 / 740 = 115.4%, +/-57.7% either side.
			wantWarnings: []string{"confidence interval not reached in 5 iterations: +/-57.7%, asked +/-2.5% @ 99% conf."},
		},
		{
			name:       "reached at max: reached wins",
			rep:        spec.Repeat{MinIterations: 3, MaxIterations: 5, ConfidenceLevel: 0.99, ConfidenceWidthPct: 5},
			values:     steady,
			wantStop:   true,
			wantReason: spec.ReasonReached,
		},
		{
			name:       "past max",
			rep:        spec.Repeat{MinIterations: 1, MaxIterations: 2, ConfidenceLevel: 0.99, ConfidenceWidthPct: 5},
			values:     noisy,
			wantStop:   true,
			wantReason: spec.ReasonMaxHit,
		},
		{
			name:       "single run: min=max=1",
			rep:        spec.Repeat{MinIterations: 1, MaxIterations: 1, ConfidenceLevel: 0.99, ConfidenceWidthPct: 5},
			values:     []float64{940},
			wantStop:   true,
			wantReason: spec.ReasonMaxHit,
			wantWarnings: []string{
				"only 1 iteration: a confidence interval needs at least 2",
				"confidence interval not reached in 1 iterations: no interval, asked +/-2.5% @ 99% conf.",
			},
		},
		{name: "min 0", rep: spec.Repeat{MinIterations: 0, MaxIterations: 3, ConfidenceLevel: 0.99, ConfidenceWidthPct: 5}, wantErr: true},
		{name: "max below min", rep: spec.Repeat{MinIterations: 5, MaxIterations: 3, ConfidenceLevel: 0.99, ConfidenceWidthPct: 5}, wantErr: true},
		{name: "bad target", rep: spec.Repeat{MinIterations: 3, MaxIterations: 5, ConfidenceLevel: 0.99, ConfidenceWidthPct: 0}, wantErr: true},
		{name: "NaN value", rep: netperf, values: []float64{1, 2, 3, math.NaN()}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Decide(tt.rep, tt.values)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Decide(%v) error = %v, wantErr %v", tt.values, err, tt.wantErr)
			}
			if tt.wantErr {
				return
			}
			if got.Stop != tt.wantStop || got.Reason != tt.wantReason {
				t.Errorf("Decide(%v) = stop %v, %s; want stop %v, %s", tt.values, got.Stop, got.Reason, tt.wantStop, tt.wantReason)
			}
			if got.Summary.N != len(tt.values) {
				t.Errorf("Decide(%v).Summary.N = %d, want %d", tt.values, got.Summary.N, len(tt.values))
			}
			if tt.wantWarnings != nil {
				if diff := cmp.Diff(tt.wantWarnings, got.Summary.Warnings); diff != "" {
					t.Errorf("warnings mismatch (-want +got):\n%s", diff)
				}
			}
		})
	}
}
