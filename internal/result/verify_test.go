package result

import (
	"math"
	"testing"
)

// TestJudge: the error and the verdict, worked out by hand.
func TestJudge(t *testing.T) {
	rel := VerifyTolerance{Low: -3, High: 2, Relative: true}
	tests := []struct {
		name            string
		c               VerifyCheck
		wantErr, wantPc float64
		ok              bool
	}{
		// 95.26 against 95.64: -0.38, -0.397%.
		{"within", VerifyCheck{Measured: 95.26, Truth: 95.64, Tolerance: rel}, -0.38, -0.3973, true},
		// 90.99 against 95.64: -4.862%, below -3%.
		{"below", VerifyCheck{Measured: 90.99, Truth: 95.64, Tolerance: rel}, -4.65, -4.862, false},
		// 97.6 against 95.64: +2.049%, above +2%.
		{"above", VerifyCheck{Measured: 97.6, Truth: 95.64, Tolerance: rel}, 1.96, 2.049, false},
		// On the edge: -3% exactly is within.
		{"edge", VerifyCheck{Measured: 97, Truth: 100, Tolerance: rel}, -3, -3, true},
		// Absolute: 88 against 99.75 is -11.75 points, out of ±10.
		{"points", VerifyCheck{Measured: 88, Truth: 99.75, Tolerance: VerifyTolerance{Low: -10, High: 10}}, -11.75, -11.779, false},
		{"points within", VerifyCheck{Measured: 91, Truth: 99.75, Tolerance: VerifyTolerance{Low: -10, High: 10}}, -8.75, -8.772, true},
		// No truth for a relative tolerance: out.
		{"no truth", VerifyCheck{Measured: 1, Truth: 0, Tolerance: rel}, 1, 0, false},
		{"not a number", VerifyCheck{Measured: math.NaN(), Truth: 1, Tolerance: rel}, math.NaN(), math.NaN(), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.c
			c.Judge()
			if c.OK != tt.ok {
				t.Errorf("ok %v, want %v (error %g, %g%%)", c.OK, tt.ok, c.Error, c.ErrorPct)
			}
			if !math.IsNaN(tt.wantErr) && (math.Abs(c.Error-tt.wantErr) > 1e-9 || math.Abs(c.ErrorPct-tt.wantPc) > 1e-3) {
				t.Errorf("error %g (%g%%), want %g (%g%%)", c.Error, c.ErrorPct, tt.wantErr, tt.wantPc)
			}
		})
	}
	// A check skipped for want of a truth passes; one not measured fails.
	s := VerifyCheck{Skipped: "irtt is not installed"}
	s.Judge()
	f := VerifyCheck{Failed: "the run failed"}
	f.Judge()
	if !s.OK || f.OK {
		t.Errorf("skipped ok %v (want true), failed ok %v (want false)", s.OK, f.OK)
	}
}
