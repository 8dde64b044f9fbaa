package dashboard

import (
	"context"
	"html"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"wirespeed/internal/archive"
	"wirespeed/internal/result"
)

// halfRE is one direction's half of a grid cell as the table template
// writes it: its state is its class, its reason the title.
var halfRE = regexp.MustCompile(`<a class="half (\w+)" href="[^"]*" title="([^"]*)" aria-label="[^"]*" data-pair="([^"]*)">`)

type halfState struct{ state, tip string }

// gridStates asks the server for its grid of test (the /grid fragment
// the page fetches) and returns each direction's state and tip by
// "src->dst".
func gridStates(t *testing.T, s *Server, test string) map[string]halfState {
	t.Helper()
	w := httptest.NewRecorder()
	s.ServeHTTP(w, httptest.NewRequest("GET", "/grid?test="+test, nil))
	if w.Code != 200 {
		t.Fatalf("/grid: %d %s", w.Code, w.Body)
	}
	out := map[string]halfState{}
	for _, m := range halfRE.FindAllStringSubmatch(w.Body.String(), -1) {
		out[html.UnescapeString(m[3])] = halfState{m[1], html.UnescapeString(m[2])}
	}
	if len(out) == 0 {
		t.Fatalf("no cells in /grid:\n%s", w.Body)
	}
	return out
}

// TestGridColourFromLatestChange: a cell is coloured by the newest of
// its series' change points, not the first. The archive holds 21 hourly
// results each way between a and b with two steps planted at rounds 7
// and 14 (and a wobble of 0, 1 or 2 tenths of a percent by round): a->b
// falls from 6 to 4 Gbit/s, then rises to 9.4 (improved, the path
// repaired and more); b->a rises from 200 to 300 Mbit/s, then falls to
// 150 (regressed). Coloured by the first change instead, both would be
// the reverse. (A fall and a recovery to about the same level is not
// used: e-divisive's first split of such a dip is weak, and at the
// dashboard's alpha of 0.01 it finds no change at all.)
func TestGridColourFromLatestChange(t *testing.T) {
	a := openArchive(t)
	level := func(round int, l0, l1, l2 float64) float64 {
		l := l0
		if round >= 7 {
			l = l1
		}
		if round >= 14 {
			l = l2
		}
		return l * (1 + 0.001*float64(round%3))
	}
	for round := range 21 {
		at := t0.Add(time.Duration(round) * time.Hour)
		put(t, a, archive.Synthetic{Source: "a", Destination: "b", Started: at, BitsPerSecond: level(round, 6e9, 4e9, 9.4e9), TSO: true}, "")
		put(t, a, archive.Synthetic{Source: "b", Destination: "a", Started: at, BitsPerSecond: level(round, 200e6, 300e6, 150e6), TSO: true}, "")
	}
	s, err := New(Options{Archive: a, Permutations: 199})
	if err != nil {
		t.Fatal(err)
	}
	got := gridStates(t, s, "TCP_STREAM")
	for pair, want := range map[string]struct{ state, verb string }{
		"a->b": {Improved, " rose "},
		"b->a": {Regressed, " fell "},
	} {
		g := got[pair]
		if g.state != want.state || !strings.Contains(g.tip, want.verb) {
			t.Errorf("%s: %s (%q); want %s, the newest change (at round 14) having%s", pair, g.state, g.tip, want.state, want.verb)
		}
	}
}

// TestGridFailingKeepsOverWarning: a pair missing from the newest mesh
// round is failing, and a warning threshold does not turn it back into
// "regressed". Six hourly mesh rounds between a, b and c, every
// direction steady at its own figure; in the last round a->b is an
// error. With TCP_STREAM's warning at 500 Mbit/s and critical at 50
// Mbit/s:
//
//   - a->b (100 Mbit/s, worse than the warning, not the critical, and
//     missing from the newest round): failing, its pair failed there;
//   - b->a (100 Mbit/s, measured in the newest round): regressed, by
//     the warning threshold;
//   - c->a (20 Mbit/s): failing, by the critical threshold;
//   - the others (1 Gbit/s): steady.
func TestGridFailingKeepsOverWarning(t *testing.T) {
	a := openArchive(t)
	figure := map[[2]string]float64{
		{"a", "b"}: 100e6, {"b", "a"}: 100e6, {"c", "a"}: 20e6,
		{"a", "c"}: 1e9, {"b", "c"}: 1e9, {"c", "b"}: 1e9,
	}
	hosts := []string{"a", "b", "c"}
	for round := range 6 {
		at := t0.Add(time.Duration(round) * time.Hour)
		var m result.MeshDocument
		for _, src := range hosts {
			for _, dst := range hosts {
				if src == dst {
					continue
				}
				if round == 5 && src == "a" && dst == "b" {
					m.Pairs = append(m.Pairs, result.MeshPair{Source: src, Destination: dst, Error: "connection refused"})
					continue
				}
				d := archive.Synthetic{Source: src, Destination: dst, Started: at, TSO: true,
					BitsPerSecond: figure[[2]string{src, dst}] * (1 + 0.001*float64(round%3))}.Document()
				if m.Command == "" {
					m = result.MeshDocument{Schema: result.MeshSchema, Tool: d.Tool, Command: "mesh", Spec: d.Spec, Started: at, Pairs: m.Pairs}
				}
				m.Pairs = append(m.Pairs, result.MeshPair{Source: src, Destination: dst, Via: result.ViaDirect, Result: &d.Result})
			}
		}
		if _, err := a.PutMesh(context.Background(), m); err != nil {
			t.Fatal(err)
		}
	}
	s, err := New(Options{Archive: a, Permutations: 199,
		Thresholds: map[string]Threshold{"TCP_STREAM": {Warn: 500e6, Crit: 50e6}}})
	if err != nil {
		t.Fatal(err)
	}
	got := gridStates(t, s, "TCP_STREAM")
	for pair, want := range map[string]struct{ state, why string }{
		"a->b": {Failing, "not measured in the newest mesh round"},
		"b->a": {Regressed, "worse than the warning threshold"},
		"c->a": {Failing, "worse than the critical threshold"},
		"a->c": {Steady, "no change point"},
		"b->c": {Steady, "no change point"},
		"c->b": {Steady, "no change point"},
	} {
		g := got[pair]
		if g.state != want.state || !strings.Contains(g.tip, want.why) {
			t.Errorf("%s: %s (%q); want %s, %q", pair, g.state, g.tip, want.state, want.why)
		}
	}
}
