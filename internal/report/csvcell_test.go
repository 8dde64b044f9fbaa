package report

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"

	"wirespeed/internal/result"
	"wirespeed/internal/spec"
)

// TestCSVNeutralisesFormulas: a cell a spreadsheet would run (a hostile
// server's congestion control name, a label, a mesh peer's name) is
// written with a leading quote by every CSV writer; negative numbers stay
// numbers (issue 32, OWASP's CSV injection rule).
func TestCSVNeutralisesFormulas(t *testing.T) {
	hostile := []string{`=HYPERLINK("http://x","y")`, `+cmd|' /C calc'!A0`, `@SUM(1+1)`, `-2+3`}
	r := result.Result{Spec: spec.Default(), Directions: []result.DirectionResult{{Direction: spec.ClientToServer}}}
	r.Streams = []result.Stream{{ID: 1, Receiver: result.StreamSide{Side: result.Remote, CongestionControl: hostile[0]}}}
	doc := result.Document{Result: r}

	var mesh result.MeshDocument
	mesh.Spec = spec.Default()
	for _, h := range hostile[1:] {
		mesh.Pairs = append(mesh.Pairs, result.MeshPair{Source: h, Destination: "b"})
	}
	var runCSV, fields, meshCSV, points bytes.Buffer
	if err := CSV(&runCSV, doc); err != nil {
		t.Fatal(err)
	}
	if err := Fields(&fields, doc, []string{"congestion_control"}, "csv"); err != nil {
		t.Fatal(err)
	}
	if err := MeshCSV(&meshCSV, mesh); err != nil {
		t.Fatal(err)
	}
	if err := PointsCSV(&points, []Series{{Label: hostile[2], Points: []result.Point{{Result: r}}}}); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"run": runCSV.String(), "fields": fields.String(), "mesh": meshCSV.String(), "points": points.String()} {
		rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		found := 0
		for _, row := range rows {
			for _, c := range row {
				for _, h := range hostile {
					if c == h {
						t.Errorf("%s CSV: cell %q written as it is", name, c)
					}
					if c == "'"+h {
						found++
					}
				}
			}
		}
		if found == 0 {
			t.Errorf("%s CSV: no neutralised cell in\n%s", name, out)
		}
	}
	if got := csvSafe([]string{"-1.5", "-3", "1e-3", "cubic"}); strings.Join(got, ",") != "-1.5,-3,1e-3,cubic" {
		t.Errorf("numbers and names changed: %q", got)
	}
}
