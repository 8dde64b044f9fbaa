package plot

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"wirespeed/internal/history"
)

var h0 = time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)

// historySeries is n points a quarter hour apart, 190 Mbit/s, with the
// steps given (by point index).
func historySeries(n int, steps map[int][]history.EnvChange) history.Series {
	s := history.Series{Key: history.Key{Source: "a", Destination: "b:7600", Test: "TCP_STREAM", MsgSize: 131072},
		Figure: "throughput", Unit: "bits/s", HigherIsBetter: true}
	for i := range n {
		s.Points = append(s.Points, history.Point{Time: h0.Add(time.Duration(i) * 15 * time.Minute), Value: 190e6})
	}
	for i := range n {
		if env, ok := steps[i]; ok {
			s.Steps = append(s.Steps, history.EnvStep{Index: i, Time: s.Points[i].Time, Env: env})
		}
	}
	return s
}

func TestEnvLabel(t *testing.T) {
	for _, tt := range []struct {
		env  []history.EnvChange
		want string
	}{
		{[]history.EnvChange{{Host: "10.227.0.4:7600", Name: "qdisc", Before: "tbf rate_bps=200000000", After: "tbf rate_bps=120000000"}},
			"10.227.0.4: qdisc tbf 200M→120M"},
		{[]history.EnvChange{{Host: "b", Name: "tso", Before: "on", After: "off"}, {Host: "b", Name: "gso", Before: "on", After: "off"}},
			"b: tso off, gso off"},
		{[]history.EnvChange{{Host: "a", Name: "kernel", Before: "6.12.0", After: "6.13.0"}, {Host: "b", Name: "kernel", Before: "6.12.0", After: "6.13.0"}},
			"a, b: kernel 6.12.0→6.13.0"},
		{[]history.EnvChange{{Host: "a", Name: "cc", Before: "cubic", After: "bbr"}, {Host: "b", Name: "mtu", Before: "1500", After: "9000"}},
			"a: cc cubic→bbr; b: mtu 1500→9000"},
		{[]history.EnvChange{{Host: "b", Name: "qdisc", Before: "noqueue", After: "tbf rate_bps=1500000000"}},
			"b: qdisc noqueue→tbf 1.50G"},
		{[]history.EnvChange{{Host: "b", Name: "driver", Before: "", After: "ixgbe"}, {Host: "b", Name: "speed_mbps", Before: "10000", After: ""}},
			"b: driver ixgbe, speed_mbps removed"},
		{[]history.EnvChange{{Host: "[::1]:7600", Name: "kernel", Before: "6.1.0-28-amd64-with-a-long-name", After: "6.12.0-1-amd64-another"}},
			"[::1]:7600: kernel 6.12.0-1-amd64-another"},
		{[]history.EnvChange{{Host: "b", Name: "tso", After: "off"}, {Host: "b", Name: "gso", After: "off"}, {Host: "b", Name: "gro", After: "off"}, {Host: "b", Name: "sg", After: "off"}, {Host: "b", Name: "mtu", Before: "1500", After: "9000"}},
			"b: tso off, gso off, gro off (+2 more)"},
	} {
		if got := EnvLabel(tt.env); got != tt.want {
			t.Errorf("EnvLabel(%v) = %q, want %q", tt.env, got, tt.want)
		}
	}
}

// TestHistoryEnvLanes: labels of changes close in time stack in lanes
// and never overlap one in the same lane; a change far from them goes
// back to the first lane; the strip, and so the figure, grows by a lane
// for each; past maxLanes a change keeps its mark, unlabelled.
func TestHistoryEnvLanes(t *testing.T) {
	ch := func(name string) []history.EnvChange {
		return []history.EnvChange{{Host: "b", Name: name, Before: "on", After: "off"}}
	}
	layout := func(s history.Series) (*Figure, []placed, int) {
		t.Helper()
		f, err := HistoryPlot([]history.Series{s})
		if err != nil {
			t.Fatal(err)
		}
		w, _ := f.size()
		pl, lanes := f.envLayout(draw.Canvas{Rectangle: vg.Rectangle{Max: vg.Point{X: w, Y: 10 * vg.Centimeter}}})
		return f, pl, lanes
	}
	plain, _ := HistoryPlot([]history.Series{historySeries(40, nil)})
	if plain.env != nil {
		t.Fatalf("a series without steps has marks %+v", plain.env)
	}
	_, plainH := plain.size()

	f, pl, lanes := layout(historySeries(40, map[int][]history.EnvChange{5: ch("tso"), 6: ch("gso"), 7: ch("gro"), 35: ch("sg")}))
	if len(pl) != 4 {
		t.Fatalf("%d labels, want 4", len(pl))
	}
	if got := fmt.Sprint(pl[0].lane, pl[1].lane, pl[2].lane, pl[3].lane); got != "0 1 2 0" {
		t.Errorf("lanes %s, want 0 1 2 0: the three close labels stacked, the far one in the first lane", got)
	}
	if lanes != 3 {
		t.Errorf("%d lanes, want 3", lanes)
	}
	for i := range pl {
		for j := range i {
			if pl[i].lane == pl[j].lane && pl[i].left < pl[j].right {
				t.Errorf("labels %d and %d overlap in lane %d: %v..%v and %v..%v", j, i, pl[i].lane, pl[j].left, pl[j].right, pl[i].left, pl[i].right)
			}
		}
		if pl[i].left < pl[i].x && pl[i].right > pl[i].x {
			t.Errorf("label %d spans its own mark", i)
		}
	}
	if _, h := f.size(); h != plainH+stripHeight(3) {
		t.Errorf("height %v, want %v (without marks) + %v (a strip of 3 lanes)", h, plainH, stripHeight(3))
	}
	if err := drawEvery(f); err != nil {
		t.Error(err)
	}
	if !strings.Contains(f.Main.Title.Text, "dotted: environment changes") {
		t.Errorf("title %q does not say what the dotted lines are", f.Main.Title.Text)
	}

	// Seventy changes at consecutive points of 80, a label's width every
	// ten or so: six lanes, and the rest unlabelled.
	many := map[int][]history.EnvChange{}
	for i := range 70 {
		many[5+i] = ch(fmt.Sprintf("feature%d", i))
	}
	f, pl, lanes = layout(historySeries(80, many))
	unlabelled := 0
	for _, p := range pl {
		if p.lane < 0 {
			unlabelled++
		}
	}
	if lanes != maxLanes+1 || unlabelled == 0 || len(pl) != 70 {
		t.Errorf("%d lanes, %d of %d unlabelled; want %d lanes and one saying how many are unlabelled", lanes, unlabelled, len(pl), maxLanes+1)
	}
	if err := drawEvery(f); err != nil {
		t.Error(err)
	}
}

// TestHistoryEnvSameLabel: one change seen by several series at close
// times (a mesh round's pairs, a minute apart) is labelled once, every
// mark's leader ending on that label; the same change far off is
// labelled again.
func TestHistoryEnvSameLabel(t *testing.T) {
	tbf := []history.EnvChange{{Host: "h4", Name: "qdisc", Before: "tbf rate_bps=200000000", After: "tbf rate_bps=120000000"}}
	var series []history.Series
	for k := range 3 {
		s := historySeries(40, nil)
		s.Key.Source = fmt.Sprintf("h%d", k+1)
		at := h0.Add(10*15*time.Minute + time.Duration(k)*time.Minute)
		s.Steps = []history.EnvStep{{Index: 10, Time: at, Env: tbf}}
		if k == 0 {
			s.Steps = append(s.Steps, history.EnvStep{Index: 35, Time: h0.Add(35 * 15 * time.Minute), Env: tbf})
		}
		series = append(series, s)
	}
	f, err := HistoryPlot(series)
	if err != nil {
		t.Fatal(err)
	}
	w, _ := f.size()
	pl, lanes := f.envLayout(draw.Canvas{Rectangle: vg.Rectangle{Max: vg.Point{X: w, Y: 10 * vg.Centimeter}}})
	var got []string
	for _, p := range pl {
		got = append(got, fmt.Sprint(p.lane, p.same))
	}
	if strings.Join(got, " ") != "0 false 0 true 0 true 0 false" || lanes != 1 {
		t.Errorf("lane and sameness of the 4 marks %v in %d lanes, want the first three on one label and the far one on its own, in one lane", got, lanes)
	}
	if err := drawEvery(f); err != nil {
		t.Error(err)
	}
}

func TestTimeTicks(t *testing.T) {
	labels := func(lo, hi time.Time) string {
		var out []string
		for _, tk := range (timeTicks{}).Ticks(float64(lo.Unix()), float64(hi.Unix())) {
			if tk.Label != "" {
				out = append(out, strings.ReplaceAll(tk.Label, "\n", " "))
			}
		}
		return strings.Join(out, "|")
	}
	for _, tt := range []struct {
		lo, hi time.Time
		want   string
	}{
		{h0.Add(-9 * time.Minute), h0.Add(7*time.Hour + 30*time.Minute), "00:00 11-20|02:00|04:00|06:00"},
		{h0.Add(22 * time.Hour), h0.Add(27 * time.Hour), "22:00 11-20|23:00|00:00 11-21|01:00|02:00"}, // 03:00, at the right end, unlabelled
		{h0.Add(3 * time.Minute), h0.Add(28 * time.Minute), "00:05 11-20|00:10|00:15|00:20|00:25"},
		// Weeks gave three labels: four-day steps give five.
		{h0, h0.Add(20 * 24 * time.Hour), "11-23|11-27|12-01|12-05|12-09"},
	} {
		if got := labels(tt.lo, tt.hi); got != tt.want {
			t.Errorf("%v..%v: %q, want %q", tt.lo, tt.hi, got, tt.want)
		}
	}
}

// TestTimeTicksEveryRange: any time axis, from 5 seconds to 90 days
// (a 45 s RRUL or mesh round had one label), is labelled at 4 to 8
// ticks in units that fit the range: seconds shown under a minute's
// steps, days without times from a day's steps.
func TestTimeTicksEveryRange(t *testing.T) {
	for span := 5 * time.Second; span <= 90*24*time.Hour; span = span * 21 / 20 {
		lo := h0.Add(17 * time.Second)
		hi := lo.Add(span)
		var labels []string
		for _, tk := range (timeTicks{}).Ticks(float64(lo.Unix()), float64(hi.Unix())) {
			if tk.Label != "" {
				labels = append(labels, strings.ReplaceAll(tk.Label, "\n", " "))
			}
		}
		if n := len(labels); n < 4 || n > 8 {
			t.Errorf("%v from %v: %d labelled ticks %q, want 4 to 8", span, lo.Format("15:04:05"), n, labels)
			continue
		}
		first := strings.Fields(labels[0])[0]
		switch {
		case span < 2*time.Minute && strings.Count(first, ":") != 2:
			t.Errorf("%v: first label %q, want seconds (15:04:05)", span, labels[0])
		case span > 10*24*time.Hour && strings.Contains(first, ":"):
			t.Errorf("%v: first label %q, want a date alone", span, labels[0])
		}
	}
	// A 45 s history, as timeRange widens it: ticks every 10 s.
	lo, hi := float64(h0.Unix())-0.9, float64(h0.Unix())+45.9
	var got []string
	for _, tk := range (timeTicks{}).Ticks(lo, hi) {
		if tk.Label != "" {
			got = append(got, strings.ReplaceAll(tk.Label, "\n", " "))
		}
	}
	if want := "00:00:00 11-20|00:00:10|00:00:20|00:00:30|00:00:40"; strings.Join(got, "|") != want {
		t.Errorf("45 s: %q, want %q", strings.Join(got, "|"), want)
	}
}

// TestHistoryIntervals: consecutive points with intervals make a band,
// a point with one alone a whisker.
func TestHistoryIntervals(t *testing.T) {
	s := historySeries(8, nil)
	for _, i := range []int{0, 1, 3, 5, 6, 7} {
		lo, hi := 180e6, 200e6
		s.Points[i].Lo, s.Points[i].Hi = &lo, &hi
	}
	bands, w := intervals(s.Points, 1e6, seriesColor(0))
	if len(bands) != 2 || len(bands[0].xs) != 2 || len(bands[1].xs) != 3 || bands[1].lo[0] != 180 || bands[1].hi[2] != 200 {
		t.Errorf("bands %+v, want points 0-1 and 5-7 from 180 to 200", bands)
	}
	if len(w.xs) != 1 || w.xs[0] != float64(s.Points[3].Time.Unix()) {
		t.Errorf("whiskers at %v, want one at point 3", w.xs)
	}
}

// TestHistoryPanels: a pair's throughput above its latency on one time
// axis, titled by both, the lower keyed by figure; the panels' data
// areas line up.
func TestHistoryPanels(t *testing.T) {
	thr := historySeries(10, map[int][]history.EnvChange{4: {{Host: "b", Name: "mtu", Before: "1500", After: "9000"}}})
	var lat []history.Series
	for k, fig := range []string{"p50", "p90", "p99"} {
		s := historySeries(10, nil)
		s.Figure, s.Unit = fig, "us"
		for i := range s.Points {
			s.Points[i].Value = float64(1000 * (k + 1) * 12)
		}
		lat = append(lat, s)
	}
	f, err := HistoryPanels([]history.Series{thr}, lat)
	if err != nil {
		t.Fatal(err)
	}
	if f.CPU == nil || !strings.HasPrefix(f.Main.Title.Text, "History: throughput and latency (p50, p90, p99)") {
		t.Fatalf("title %q, second panel %v", f.Main.Title.Text, f.CPU != nil)
	}
	if f.CPU.Y.Label.Text != "latency (p50, p90, p99) (ms)" {
		t.Errorf("latency axis %q, want it in ms (the p99 is 36000 us)", f.CPU.Y.Label.Text)
	}
	w, h := f.size()
	c := draw.Canvas{Rectangle: vg.Rectangle{Max: vg.Point{X: w, Y: h}}}
	top, bottom := f.panels(c)
	if dt, db := f.Main.DataCanvas(top), f.CPU.DataCanvas(bottom); dt.Min.X != db.Min.X || dt.Max.X != db.Max.X {
		t.Errorf("data areas %v..%v and %v..%v do not line up", dt.Min.X, dt.Max.X, db.Min.X, db.Max.X)
	}
	if err := drawEvery(f); err != nil {
		t.Error(err)
	}
	if _, err := HistoryPanels(nil, nil); err == nil {
		t.Error("no series: want an error")
	}
}

// TestHistoryInputsNeverPanic: histories of one point, of zeros, tiny
// and huge figures, intervals below zero, steps at the first and last
// point, draw in every format.
func TestHistoryInputsNeverPanic(t *testing.T) {
	env := []history.EnvChange{{Host: "b", Name: "mtu", Before: "1500", After: "9000"}}
	for _, n := range []int{1, 2, 9} {
		for _, v := range []float64{0, 1e-3, 2e6, 4e10} {
			for _, lo := range []float64{-1e10, 0, v / 2} {
				s := historySeries(n, map[int][]history.EnvChange{0: env, n - 1: env})
				for i := range s.Points {
					lo, hi := lo, v*1.5+1
					s.Points[i].Value, s.Points[i].Lo, s.Points[i].Hi = v, &lo, &hi
				}
				rtt := s
				rtt.Figure, rtt.Unit = "rtt", "us"
				f, err := HistoryPanels([]history.Series{s}, []history.Series{rtt})
				if err != nil {
					t.Errorf("%d points of %g: %v", n, v, err)
					continue
				}
				if err := drawEvery(f); err != nil {
					t.Errorf("%d points of %g from %g: %v", n, v, lo, err)
				}
			}
		}
	}
}
