package measure

import (
	"math"
	"testing"
)

// TestBaselineOf holds the idle baseline to the fixture's ticks worked out
// by hand: between before/stat and after/stat the "cpu" line counted 6
// user, 2 system, 1 irq, 1 softirq and 30 idle ticks, so 10 of 40 were
// busy: 25%.
func TestBaselineOf(t *testing.T) {
	a, err := ReadCPU("testdata/baseline/before")
	if err != nil {
		t.Fatal(err)
	}
	b, err := ReadCPU("testdata/baseline/after")
	if err != nil {
		t.Fatal(err)
	}
	got, err := BaselineOf(a, b, 0.2)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(got.UtilPct-25) > 1e-9 || got.WindowS != 0.2 {
		t.Errorf("baseline = %+v, want 25%% over 0.2s", got)
	}
	if _, err := BaselineOf(a, a, 0.2); err == nil {
		t.Error("a window without ticks gave a baseline, want an error")
	}
}
