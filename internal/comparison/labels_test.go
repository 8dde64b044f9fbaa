package comparison

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"wirespeed/internal/result"
)

// TestLabelDiff: the title first, then the labels by key, a label only
// one side has against "", a label both share with the same value left
// out.
func TestLabelDiff(t *testing.T) {
	a := Source{Title: "stock", Labels: map[string]string{"kernel": "6.18", "host": "lab", "only-a": "x"}}
	b := Source{Title: "patched", Labels: map[string]string{"kernel": "6.18 patched", "host": "lab", "only-b": "y"}}
	want := []result.EnvDiff{
		{Side: "label", Name: "title", A: "stock", B: "patched"},
		{Side: "label", Name: "kernel", A: "6.18", B: "6.18 patched"},
		{Side: "label", Name: "only-a", A: "x", B: ""},
		{Side: "label", Name: "only-b", A: "", B: "y"},
	}
	if diff := cmp.Diff(want, labelDiff(a, b)); diff != "" {
		t.Errorf("labelDiff (-want +got):\n%s", diff)
	}
	if d := labelDiff(a, a); len(d) != 0 {
		t.Errorf("a source differs from itself: %v", d)
	}
}
