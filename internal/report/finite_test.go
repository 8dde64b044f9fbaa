package report

import (
	"math"
	"strings"
	"testing"

	"wirespeed/internal/result"
	"wirespeed/internal/spec"
)

// TestCSVNonFinite: a figure that is not a finite number is an error
// naming it, never a "+Inf" cell.
func TestCSVNonFinite(t *testing.T) {
	var b strings.Builder
	doc := result.Document{Schema: result.Schema, Result: result.Result{Spec: spec.Default(),
		Directions: []result.DirectionResult{{Direction: spec.ClientToServer, Summary: result.Summary{BitsPerSecond: math.Inf(1)}}}}}
	if err := CSV(&b, doc); err == nil || !strings.Contains(err.Error(), "directions[0].summary.throughput_bps is +Inf") {
		t.Errorf("CSV: %v; want an error naming directions[0].summary.throughput_bps", err)
	}
	mesh := result.MeshDocument{Schema: result.MeshSchema, Pairs: []result.MeshPair{{Source: "a", Destination: "b",
		Result: &result.Result{Summary: result.Summary{BitsPerSecond: math.Inf(-1)}}}}}
	if err := MeshCSV(&b, mesh); err == nil || !strings.Contains(err.Error(), "pairs[0].result.summary.throughput_bps is -Inf") {
		t.Errorf("MeshCSV: %v; want an error naming pairs[0].result.summary.throughput_bps", err)
	}
	if err := MeshJSON(&b, mesh); err == nil || !strings.Contains(err.Error(), "pairs[0].result.summary.throughput_bps is -Inf") {
		t.Errorf("MeshJSON: %v; want an error naming pairs[0].result.summary.throughput_bps", err)
	}
	if strings.Contains(b.String(), "Inf") {
		t.Errorf("written:\n%s", b.String())
	}
}
