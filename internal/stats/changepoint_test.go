package stats

import (
	"math"
	"testing"
)

func TestShiftWorse(t *testing.T) {
	// Worked by hand: baseline 10, 11, 12 (mean 11, variance 1), a new
	// value of 8, higher is better: t = 3/sqrt(4/3) = 2.598 with 2
	// degrees of freedom, whose tail is 0.5*(1 - t/sqrt(t²+2)) = 0.0608.
	s, err := ShiftWorse([]float64{10, 11, 12}, []float64{8}, true)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(s.P-0.0608) > 0.0005 || math.Abs(s.ChangePct-(-300.0/11)) > 1e-9 {
		t.Errorf("shift %+v; want p 0.0608, change -27.27%%", s)
	}
	// The same value is no regression when lower is better.
	if s, _ := ShiftWorse([]float64{10, 11, 12}, []float64{8}, false); s.P < 0.9 {
		t.Errorf("lower is better: p %v, want near 1", s.P)
	}
	// Several new values: Welch, one-sided. Worked by hand: baseline
	// 2, 3, 4 and newest 1, 2, 3 (each variance 1, 3 values): t =
	// 1/sqrt(1/3+1/3) = 1.2247 with Welch's 4 degrees of freedom, whose
	// upper tail is 1/2 - 3/8·u·(1 - t²/(12(1+t²/4))), u = t/sqrt(1+t²/4):
	// 0.14393, worse when higher is better, 1 - 0.14393 better.
	if s, err := ShiftWorse([]float64{2, 3, 4}, []float64{1, 2, 3}, true); err != nil || math.Abs(s.P-0.14393) > 0.00001 {
		t.Errorf("shift %+v, %v; want p 0.14393", s, err)
	}
	if s, _ := ShiftWorse([]float64{2, 3, 4}, []float64{1, 2, 3}, false); math.Abs(s.P-(1-0.14393)) > 0.00001 {
		t.Errorf("lower is better: p %v, want 0.85607", s.P)
	}
	s, err = ShiftWorse([]float64{100, 101, 99, 100, 102}, []float64{90, 91, 89}, true)
	if err != nil || s.P > 0.001 || s.Test != "Welch's t-test" {
		t.Errorf("shift %+v, %v; want a significant Welch test", s, err)
	}
	if _, err := ShiftWorse([]float64{1, 2}, []float64{1}, true); err == nil {
		t.Error("two baseline values: want an error")
	}
}
