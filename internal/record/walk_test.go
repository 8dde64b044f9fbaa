package record

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"wirespeed/internal/result"
	"wirespeed/internal/spec"
)

// TestEachAndFind: the walk yields every result of every kind of
// document with its locator, in order; the locator finds the same
// result again in the document decoded from JSON; its string is the
// path every archive has kept, and reads back.
func TestEachAndFind(t *testing.T) {
	res := func(bps float64) result.Result {
		return result.Result{Spec: spec.Default(), Summary: result.Summary{BitsPerSecond: bps},
			Directions: []result.DirectionResult{{Direction: spec.ClientToServer}}}
	}
	run := result.Document{Schema: result.Schema, Command: "run", Result: res(1)}
	tradeoff := result.Document{Schema: result.Schema, Command: "run", Result: res(2), Runs: []result.Result{res(2), res(3)}}
	sweep := result.Document{Schema: result.Schema, Command: "sweep", Points: []result.Point{{MsgSize: 64, Result: res(4)}, {MsgSize: 128, Result: res(5)}}}
	matrix := result.Document{Schema: result.Schema, Command: "matrix", Matrix: &result.Matrix{Rows: []result.MatrixRow{
		{Label: "tso=on", Points: []result.Point{{MsgSize: 64, Result: res(6)}}},
		{Label: "tso=off", Points: []result.Point{{MsgSize: 64, Result: res(7)}, {MsgSize: 128, Result: res(8)}}}}}}
	r9 := res(9)
	mesh := result.MeshDocument{Schema: result.MeshSchema, Command: "mesh", Pairs: []result.MeshPair{
		{Source: "a", Destination: "b", Error: "refused"},
		{Source: "b", Destination: "a", Via: result.ViaRelay, Result: &r9}}}
	type seen struct {
		At       string
		BPS      float64
		Size     int
		Settings string
	}
	for _, c := range []struct {
		name string
		doc  Doc
		want []seen
	}{
		{"run", Doc{Results: &run}, []seen{{"", 1, 131072, ""}}},
		{"tradeoff", Doc{Results: &tradeoff}, []seen{{"runs[0]", 2, 131072, ""}, {"runs[1]", 3, 131072, ""}}},
		{"sweep", Doc{Results: &sweep}, []seen{{"points[0]", 4, 64, ""}, {"points[1]", 5, 128, ""}}},
		{"matrix", Doc{Results: &matrix}, []seen{{"matrix.rows[0].points[0]", 6, 64, "tso=on"},
			{"matrix.rows[1].points[0]", 7, 64, "tso=off"}, {"matrix.rows[1].points[1]", 8, 128, "tso=off"}}},
		{"mesh", Doc{Mesh: &mesh}, []seen{{"pairs[0]", -1, 0, ""}, {"pairs[1]", 9, 131072, "via=relay"}}},
	} {
		var got []seen
		c.doc.Each(func(at Locator, it Item) {
			s := seen{At: at.String(), BPS: -1, Size: it.MsgSize, Settings: it.Settings}
			if it.Result != nil {
				s.BPS = it.Result.Summary.BitsPerSecond
			}
			got = append(got, s)
		})
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%s: walk (-want +got):\n%s", c.name, diff)
		}
		var v any = c.doc.Results
		if c.doc.Mesh != nil {
			v = c.doc.Mesh
		}
		b, _ := json.Marshal(v)
		decoded, err := Decode(b)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for _, w := range c.want {
			at, err := ParseLocator(w.At)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			it, ok := decoded.Find(at)
			if w.BPS < 0 {
				if ok {
					t.Errorf("%s: found a result at %s, a failed pair's", c.name, w.At)
				}
				continue
			}
			if !ok || it.Result.Summary.BitsPerSecond != w.BPS {
				t.Errorf("%s: %s found %v (%v), want the result of %v bit/s", c.name, w.At, it.Result, ok, w.BPS)
			}
		}
	}
}

// TestParseLocator: the paths archives hold read back to their
// locators; anything else is refused with the forms it takes.
func TestParseLocator(t *testing.T) {
	for s, want := range map[string]Locator{
		"":                          {},
		"runs[1]":                   {Part: Runs, Index: 1},
		"points[12]":                {Part: Points, Index: 12},
		"matrix.rows[2].points[0]":  {Part: Matrix, Row: 2, Index: 0},
		"matrix.rows[10].points[3]": {Part: Matrix, Row: 10, Index: 3},
		"pairs[4]":                  {Part: Pairs, Index: 4},
	} {
		got, err := ParseLocator(s)
		if err != nil || got != want {
			t.Errorf("ParseLocator(%q) = %+v, %v; want %+v", s, got, err, want)
		}
		if got.String() != s {
			t.Errorf("%+v.String() = %q, want %q", got, got.String(), s)
		}
	}
	for _, s := range []string{"runs", "runs[x]", "runs[-1]", "points[1]x", "matrix.rows[1]", "matrix.rows[1].points[", "pairs[1].result", "result"} {
		if l, err := ParseLocator(s); err == nil {
			t.Errorf("ParseLocator(%q) = %+v, want an error", s, l)
		}
	}
	if _, err := Decode([]byte(`{"schema":"other/v1"}`)); !errors.Is(err, ErrNotDocument) {
		t.Errorf("another schema: %v, want ErrNotDocument", err)
	}
}
