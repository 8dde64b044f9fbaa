package stats

import "testing"

// TestSignificantAtAlpha: a p exactly at alpha is significant, as the
// documentation of Compare, Adjust and compare's --alpha says (p <=
// alpha). Two ways a p lands on alpha, both worked by hand:
//
//   - 3 values against 3, all of b above all of a: the exact U test's
//     p is its smallest, 2/C(6,3) = 2/20 = 0.1, and at alpha 0.1 the
//     difference counts (the sizes can reach this alpha, so no warning
//     says they cannot);
//   - Holm over two p-values, 0.025 and 0.5: the smaller is multiplied
//     by m = 2, 0.05 (a doubling, exact in floating point), which at
//     alpha 0.05 counts.
func TestSignificantAtAlpha(t *testing.T) {
	c, err := Compare([]float64{1, 2, 3}, []float64{4, 5, 6}, UTest, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	if c.P != 0.1 || c.PAdjusted != 0.1 {
		t.Fatalf("3 against 3, separated: p %v (adjusted %v), want 2/20 = 0.1", c.P, c.PAdjusted)
	}
	if !c.Significant || c.Verdict != Higher || len(c.Warnings) != 0 {
		t.Errorf("p 0.1 at alpha 0.1: significant %v, verdict %v, warnings %q; want significant, higher, none", c.Significant, c.Verdict, c.Warnings)
	}

	adj, err := Adjust([]float64{0.025, 0.5}, Holm)
	if err != nil {
		t.Fatal(err)
	}
	if adj[0] != 0.05 {
		t.Fatalf("Holm of 0.025 of two: %v, want 2*0.025 = 0.05", adj[0])
	}
	c, err = Compare([]float64{1, 2, 3, 4}, []float64{5, 6, 7, 8}, UTest, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	c.Readjust(adj[0])
	if !c.Significant || c.Verdict != Higher {
		t.Errorf("adjusted p 0.05 at alpha 0.05: significant %v, verdict %v; want significant, higher", c.Significant, c.Verdict)
	}
}
