package spec

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestDiff(t *testing.T) {
	a := Default()
	if d := Diff(a, a); len(d) != 0 {
		t.Errorf("Diff of a test with itself = %v, want none", d)
	}
	b := a
	b.Parallel = 4
	b.Duration = 2 * time.Second
	b.CongestionControl = "cubic"
	b.Reverse = true // omitted from a's JSON: "" there
	want := []FieldDiff{
		{Name: "congestion_control", A: a.CongestionControl, B: "cubic"},
		{Name: "duration_s", A: "10", B: "2"},
		{Name: "parallel", A: "1", B: "4"},
		{Name: "reverse", A: "", B: "true"},
	}
	if diff := cmp.Diff(want, Diff(a, b)); diff != "" {
		t.Errorf("Diff (-want +got):\n%s", diff)
	}

	// JSON cannot hold a NaN rate: the tests still differ, not panic.
	c := a
	c.RateBitsPerSecond = math.NaN()
	if d := Diff(a, c); len(d) == 0 {
		t.Error("Diff with a NaN rate found no difference")
	}
}
