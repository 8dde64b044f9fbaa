package stats

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestIterationsDecide(t *testing.T) {
	netperf := Iterations{Min: 3, Max: 10, Target: Target{Level: 0.99, WidthPct: 5}}
	steady := []float64{940, 941, 939, 942, 938} // 0.69% wide at 99%
	noisy := []float64{500, 900, 700, 1000, 600} // mean 740, far wider than 5%
	tests := []struct {
		name         string
		it           Iterations
		values       []float64
		wantStop     bool
		wantReason   Reason
		wantWarnings []string // only checked when not nil
		wantErr      bool
	}{
		{name: "nothing yet", it: netperf, wantReason: ReasonBelowMin},
		{name: "reached but below min", it: netperf, values: steady[:2], wantReason: ReasonBelowMin},
		{name: "reached at min", it: netperf, values: steady[:3], wantStop: true, wantReason: ReasonReached},
		{name: "not reached", it: netperf, values: noisy, wantReason: ReasonNotReached},
		{
			name:       "max hit",
			it:         Iterations{Min: 3, Max: 5, Target: Target{Level: 0.99, WidthPct: 5}},
			values:     noisy,
			wantStop:   true,
			wantReason: ReasonMaxHit,
			// mean 740, stddev sqrt(172000/4) = 207.36,
			// half = 4.604 * 207.36 / sqrt(5) = 426.96,
			// width = 2 * 426.96 / 740 = 115.4%.
			wantWarnings: []string{"confidence interval not reached in 5 iterations: it is 115% wide, asked 5% at 99% confidence"},
		},
		{
			name:       "reached at max: reached wins",
			it:         Iterations{Min: 3, Max: 5, Target: Target{Level: 0.99, WidthPct: 5}},
			values:     steady,
			wantStop:   true,
			wantReason: ReasonReached,
		},
		{
			name:       "past max",
			it:         Iterations{Min: 1, Max: 2, Target: Target{Level: 0.99, WidthPct: 5}},
			values:     noisy,
			wantStop:   true,
			wantReason: ReasonMaxHit,
		},
		{
			name:       "single run: min=max=1",
			it:         Iterations{Min: 1, Max: 1, Target: Target{Level: 0.99, WidthPct: 5}},
			values:     []float64{940},
			wantStop:   true,
			wantReason: ReasonMaxHit,
			wantWarnings: []string{
				"only 1 iteration: a confidence interval needs at least 2",
				"confidence interval not reached in 1 iterations: it could not be computed, asked 5% at 99% confidence",
			},
		},
		{name: "min 0", it: Iterations{Min: 0, Max: 3, Target: netperf.Target}, wantErr: true},
		{name: "max below min", it: Iterations{Min: 5, Max: 3, Target: netperf.Target}, wantErr: true},
		{name: "bad target", it: Iterations{Min: 3, Max: 5, Target: Target{Level: 0.99}}, wantErr: true},
		{name: "NaN value", it: netperf, values: []float64{1, 2, 3, math.NaN()}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.it.Decide(tt.values)
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
