package record

import (
	"strings"
	"testing"

	"wirespeed/internal/result"
	"wirespeed/internal/spec"
)

// TestRowsDestinationAddressed: a run's row lands in the series of the
// server the client addressed, whatever name the server reports of
// itself (issue 47 item 11: a server reporting "prod-db1" wrote into
// prod-db1's series); only a document without the address falls back
// to the reported name.
func TestRowsDestinationAddressed(t *testing.T) {
	doc := func(addr string) *result.Document {
		return &result.Document{Schema: result.Schema, Command: "run", Result: result.Result{Spec: spec.Default(),
			Directions: []result.DirectionResult{{Direction: spec.ClientToServer, Summary: result.Summary{BitsPerSecond: 1e9}}},
			Local:      result.SideInfo{Hostname: "vm"},
			Remote:     result.SideInfo{Hostname: "prod-db1", Address: addr}}}
	}
	for _, tt := range []struct{ addr, want string }{
		{"10.0.0.5:7575", "10.0.0.5"},
		{"[fd00::5]:7575", "fd00::5"},
		{"vm2.example:7575", "vm2.example"},
		{"", "prod-db1"},
	} {
		rows, _ := Rows(Doc{Results: doc(tt.addr)})
		if len(rows) != 1 {
			t.Fatalf("%d rows", len(rows))
		}
		if r := rows[0]; r.Destination != tt.want || !strings.HasPrefix(r.Series, "vm|"+tt.want+"|") {
			t.Errorf("addressed %q: destination %q, series %q; want %q", tt.addr, r.Destination, r.Series, tt.want)
		}
	}
}
