package dashboard

import (
	"context"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"wirespeed/internal/archive"
	"wirespeed/internal/measure"
	"wirespeed/internal/result"
	"wirespeed/internal/spec"
)

// get answers path from s, failing the test on anything but 200.
func get(t *testing.T, s *Server, path string) string {
	t.Helper()
	w := httptest.NewRecorder()
	s.ServeHTTP(w, httptest.NewRequest("GET", path, nil))
	if w.Code != 200 {
		t.Fatalf("GET %s: %d %s", path, w.Code, w.Body)
	}
	return w.Body.String()
}

// TestGridTooFewToTell: a series of 2 results is not "steady" (history
// cannot test it for a change point: each side of one needs 3), it is
// drawn as too few to tell, with its own legend entry; one of 8 steady
// results is steady.
func TestGridTooFewToTell(t *testing.T) {
	a := openArchive(t)
	for round := range 8 {
		at := t0.Add(time.Duration(round) * time.Hour)
		put(t, a, archive.Synthetic{Source: "a", Destination: "b", Started: at, BitsPerSecond: 1e9 * (1 + 0.001*float64(round%3)), TSO: true}, "")
		if round >= 6 {
			put(t, a, archive.Synthetic{Source: "b", Destination: "a", Started: at, BitsPerSecond: 2e9, TSO: true}, "")
		}
	}
	s, err := New(Options{Archive: a, Permutations: 199})
	if err != nil {
		t.Fatal(err)
	}
	got := gridStates(t, s, "TCP_STREAM")
	if g := got["b->a"]; g.state != Few || !strings.Contains(g.tip, "2 results: too few to tell") {
		t.Errorf("b->a, 2 results: %s (%q), want %s, \"2 results: too few to tell\"", g.state, g.tip, Few)
	}
	if g := got["a->b"]; g.state != Steady {
		t.Errorf("a->b, 8 steady results: %s (%q), want steady", g.state, g.tip)
	}
	page := get(t, s, "/")
	if !strings.Contains(page, `<span class="toofew">too few to tell</span>`) {
		t.Errorf("the legend has no entry for too few to tell")
	}
	if !strings.Contains(page, "2 directions: 1 steady, 1 too few to tell") {
		t.Errorf("the counts do not say 2 directions: 1 steady, 1 too few to tell")
	}
}

// TestGridEachDirectionOnce: 3 hosts have 6 directions; each is drawn
// once (3 cells above the diagonal, two halves each), not twice in
// mirror cells, and the page says how a cell reads.
func TestGridEachDirectionOnce(t *testing.T) {
	a := openArchive(t)
	seed(t, a)
	s, err := New(Options{Archive: a, Permutations: 199})
	if err != nil {
		t.Fatal(err)
	}
	body := get(t, s, "/grid?test=TCP_STREAM")
	seen := map[string]int{}
	for _, m := range halfRE.FindAllStringSubmatch(body, -1) {
		seen[m[3]]++
	}
	if len(seen) != 6 {
		t.Errorf("%d directions drawn, want 6: %v", len(seen), seen)
	}
	for d, n := range seen {
		if n != 1 {
			t.Errorf("%s drawn %d times, want once", d, n)
		}
	}
	// Row a: self, (a, b), (a, c); row b: mirror, self, (b, c); row c:
	// mirror, mirror, self.
	if n := strings.Count(body, `<td class="mirror">`); n != 3 {
		t.Errorf("%d mirror cells left blank, want 3", n)
	}
	if !strings.Contains(get(t, s, "/"), "each pair once, above the diagonal") {
		t.Errorf("the grid page does not say each pair is drawn once")
	}
}

// compareRE is the compare verdict's "baseline X; compared: Y" line.
var compareRE = regexp.MustCompile(`baseline ([^;]*); compared: ([^\n]*)`)

// TestCompareOlderIsBaseline: whatever the order of the ids (the form
// sends the table's order, newest first), the older result is the
// baseline, and the header names the newer's age rather than "no
// results yet".
func TestCompareOlderIsBaseline(t *testing.T) {
	a := openArchive(t)
	put(t, a, archive.Synthetic{Source: "a", Destination: "b", Started: t0, BitsPerSecond: 9.4e9, TSO: true}, "")
	put(t, a, archive.Synthetic{Source: "a", Destination: "b", Started: t0.Add(time.Hour), BitsPerSecond: 6e9, TSO: true}, "")
	s, err := New(Options{Archive: a, Permutations: 199, Now: func() time.Time { return t0.Add(3 * time.Hour) }})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"r=2&r=1", "r=1&r=2"} {
		body := get(t, s, "/compare?"+q)
		m := compareRE.FindStringSubmatch(body)
		if m == nil {
			t.Fatalf("%s: no baseline line in %s", q, body)
		}
		if !strings.HasSuffix(m[1], "#1") || !strings.HasSuffix(m[2], "#2") {
			t.Errorf("%s: baseline %q, compared %q; want the older, #1, as the baseline", q, m[1], m[2])
		}
		if !strings.Contains(body, "Compare results 1 and 2") {
			t.Errorf("%s: the heading does not name the older first", q)
		}
		// The newer result is 2 h old.
		if !strings.Contains(body, "newest result 2.0 h ago") {
			t.Errorf("%s: the header does not say newest result 2.0 h ago: %s", q, body)
		}
	}
}

// TestTimeRange: ?range=1d shows the last day, 7d the last week, all
// everything, on the grid and the pair page, and the links keep it.
// Results of a->b 20 days, 3 days and 3 hours..1 hour before now: the
// grid of the last day has only pair x->y (measured only 2 days ago is
// y->x, out of it); the pair page of a->b lists 3, 4 and 6 points.
func TestTimeRange(t *testing.T) {
	a := openArchive(t)
	now := t0.Add(30 * 24 * time.Hour)
	var ages []time.Duration
	for _, d := range []time.Duration{20 * 24, 3*24 + 2, 3 * 24, 3, 2, 1} {
		ages = append(ages, d*time.Hour)
	}
	for _, age := range ages {
		put(t, a, archive.Synthetic{Source: "a", Destination: "b", Started: now.Add(-age), BitsPerSecond: 1e9, TSO: true}, "")
	}
	put(t, a, archive.Synthetic{Source: "y", Destination: "x", Started: now.Add(-48 * time.Hour), BitsPerSecond: 1e9, TSO: true}, "")
	s, err := New(Options{Archive: a, Permutations: 199, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	rows := regexp.MustCompile(`<tr class="[^"]*"><td><input type="checkbox"`)
	for rg, want := range map[string]struct {
		points int
		yx     bool
	}{"1d": {3, false}, "7d": {5, true}, "all": {6, true}, "": {6, true}} {
		q := ""
		if rg != "" {
			q = "&range=" + rg
		}
		grid := get(t, s, "/?test=TCP_STREAM"+q)
		if got := strings.Contains(grid, `data-pair="y->x"`); got != want.yx {
			t.Errorf("range %q: y->x (2 days old) in the grid: %v, want %v", rg, got, want.yx)
		}
		if rg != "" {
			if !strings.Contains(grid, `href="/pair?dst=b&amp;range=`+rg+`&amp;src=a&amp;test=TCP_STREAM"`) {
				t.Errorf("range %q: a->b's link does not keep the range", rg)
			}
			if !strings.Contains(grid, `class="on" aria-current="true">`+rangeLabels[rg]+`<`) {
				t.Errorf("range %q: the range is not marked as chosen", rg)
			}
		}
		pair := get(t, s, "/pair?src=a&dst=b&test=TCP_STREAM"+q)
		if n := len(rows.FindAllString(pair, -1)); n != want.points {
			t.Errorf("range %q: the pair page lists %d points, want %d", rg, n, want.points)
		}
		if rg != "" && !strings.Contains(pair, "range="+rg+"&amp;series=0") {
			t.Errorf("range %q: the pair's chart does not keep the range", rg)
		}
	}
	w := httptest.NewRecorder()
	s.ServeHTTP(w, httptest.NewRequest("GET", "/?range=2d", nil))
	if w.Code != 400 || !strings.Contains(w.Body.String(), "give 1d") {
		t.Errorf("range 2d: %d %q, want 400 naming the choices", w.Code, w.Body)
	}
}

// TestPairRTTWithoutIntervals: a run with -i 0 has no intervals; its
// RTT (the senders' TCP_INFO at the end) reaches the archive, and the
// pair page tabulates and charts it.
func TestPairRTTWithoutIntervals(t *testing.T) {
	a := openArchive(t)
	for round := range 6 {
		d := archive.Synthetic{Source: "a", Destination: "b", Started: t0.Add(time.Duration(round) * time.Hour), BitsPerSecond: 1e9, TSO: true}.Document()
		d.Result.Spec.Interval = 0
		d.Result.Streams = []result.Stream{{ID: 1, Direction: spec.ClientToServer,
			Sender: result.StreamSide{ID: 1, Side: result.Local, Role: result.Sender, TCPInfo: &measure.TCPInfo{RTTMicros: float64(400 + 10*round)}}}}
		if len(d.Result.Intervals) != 0 {
			t.Fatal("the synthetic -i 0 run has intervals")
		}
		if _, err := a.Put(context.Background(), d); err != nil {
			t.Fatal(err)
		}
	}
	s, err := New(Options{Archive: a, Permutations: 199})
	if err != nil {
		t.Fatal(err)
	}
	pair := get(t, s, "/pair?src=a&dst=b&test=TCP_STREAM")
	if !strings.Contains(pair, "<th>rtt</th>") || !strings.Contains(pair, `<td class="num">450 us</td>`) {
		t.Errorf("the pair page has no rtt column with the newest's 450 us")
	}
	svg := get(t, s, "/chart.svg?src=a&dst=b&test=TCP_STREAM&series=0")
	if !strings.Contains(svg, ">rtt (us)<") {
		t.Errorf("the chart has no RTT panel")
	}
}
