package stats

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAdjust(t *testing.T) {
	tests := []struct {
		name    string
		p       []float64
		method  Adjustment
		want    []float64
		wantErr bool
	}{
		{
			// Worked by hand, m = 4, sorted 0.005 0.01 0.03 0.04:
			//   Holm: 4*0.005 = 0.02, 3*0.01 = 0.03, 2*0.03 = 0.06,
			//   1*0.04 = 0.04 raised to the running maximum 0.06.
			// At 0.05 Holm keeps two of the four.
			name: "holm", method: Holm,
			p:    []float64{0.01, 0.04, 0.03, 0.005},
			want: []float64{0.03, 0.06, 0.06, 0.02},
		},
		{
			//   BH, from the largest down: 4/4*0.04 = 0.04,
			//   4/3*0.03 = 0.04, 4/2*0.01 = 0.02, 4/1*0.005 = 0.02,
			//   each lowered to the running minimum. At 0.05 BH keeps
			//   all four.
			name: "benjamini-hochberg", method: BenjaminiHochberg,
			p:    []float64{0.01, 0.04, 0.03, 0.005},
			want: []float64{0.02, 0.04, 0.04, 0.02},
		},
		{
			// Capped at 1: Holm 3*0.3 = 0.9, 2*0.5 = 1, 1*0.9 -> 1;
			// BH 0.9, 3/2*0.5 = 0.75, 3*0.3 = 0.9 -> 0.75.
			name: "holm capped", method: Holm,
			p:    []float64{0.5, 0.9, 0.3},
			want: []float64{1, 1, 0.9},
		},
		{
			name: "bh running minimum", method: BenjaminiHochberg,
			p:    []float64{0.5, 0.9, 0.3},
			want: []float64{0.75, 0.9, 0.75},
		},
		{
			// Ties: Holm 3*0.02 = 0.06 for all; BH 3/3*0.02 = 0.02 for
			// all.
			name: "holm ties", method: Holm,
			p:    []float64{0.02, 0.02, 0.02},
			want: []float64{0.06, 0.06, 0.06},
		},
		{
			name: "bh ties", method: BenjaminiHochberg,
			p:    []float64{0.02, 0.02, 0.02},
			want: []float64{0.02, 0.02, 0.02},
		},
		{
			// compare's fixture: six figures fully separated with 4 and
			// 4 iterations (p = 2/70) among ten; BH gives them
			// 10/6 * 2/70 = 1/21 = 0.047619, still below 0.05, while
			// Holm's smallest, 10 * 2/70 = 0.285714, is not.
			name: "bh compare fixture", method: BenjaminiHochberg,
			p:    []float64{48.0 / 70, 2.0 / 70, 2.0 / 70, 2.0 / 70, 48.0 / 70, 48.0 / 70, 2.0 / 70, 2.0 / 70, 62.0 / 70, 2.0 / 70},
			want: []float64{48.0 / 70 * 10 / 9, 1.0 / 21, 1.0 / 21, 1.0 / 21, 48.0 / 70 * 10 / 9, 48.0 / 70 * 10 / 9, 1.0 / 21, 1.0 / 21, 62.0 / 70, 1.0 / 21},
		},
		{name: "none", method: NoAdjustment, p: []float64{0.01, 0.5}, want: []float64{0.01, 0.5}},
		{name: "one", method: Holm, p: []float64{0.04}, want: []float64{0.04}},
		{name: "empty", method: BenjaminiHochberg, p: nil, want: nil},
		{name: "unknown", method: "bonferroni", p: []float64{0.1}, wantErr: true},
		{name: "above 1", method: Holm, p: []float64{0.1, 1.5}, wantErr: true},
		{name: "negative", method: Holm, p: []float64{-0.1}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Adjust(tt.p, tt.method)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Adjust error = %v, wantErr %v", err, tt.wantErr)
			}
			if tt.wantErr {
				return
			}
			if diff := cmp.Diff(tt.want, got, approx); diff != "" {
				t.Errorf("Adjust(%v, %s) mismatch (-want +got):\n%s", tt.p, tt.method, diff)
			}
		})
	}
}

func TestReadjust(t *testing.T) {
	c, err := Compare([]float64{1, 2, 3, 4}, []float64{5, 6, 7, 8}, UTest, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Significant || c.PAdjusted != c.P || c.Verdict != Higher {
		t.Fatalf("alone: %+v", c)
	}
	c.Readjust(0.2857)
	if c.Significant || c.Verdict != Same || c.P != 2.0/70 {
		t.Errorf("adjusted above alpha: %+v", c)
	}
}

func TestMinP(t *testing.T) {
	if got := MinP(UTest, 4, 4); got != 2.0/70 {
		t.Errorf("U 4+4: %v, want 2/70", got)
	}
	if got := MinP(WelchT, 4, 4); got != 0 {
		t.Errorf("Welch: %v, want 0", got)
	}
	if got := MinP(UTest, 60, 60); got != 0 {
		t.Errorf("U normal approximation: %v, want 0", got)
	}
}
