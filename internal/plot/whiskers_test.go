package plot

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"unsafe"

	gplot "gonum.org/v1/plot"

	"wirespeed/internal/history"
	"wirespeed/internal/report"
	"wirespeed/internal/result"
	"wirespeed/internal/spec"
)

// legendTexts are the texts of p's key entries, read from gonum's
// legend (its entries are unexported: reflect reads them).
func legendTexts(p *gplot.Plot) []string {
	entries := reflect.ValueOf(p.Legend).FieldByName("entries")
	var out []string
	for i := range entries.Len() {
		out = append(out, entries.Index(i).FieldByName("text").String())
	}
	return out
}

// whiskersOf are the whiskers f's main panel draws, on their own or
// under bars.
func whiskersOf(f *Figure) []*whiskers {
	var out []*whiskers
	for _, it := range f.items {
		switch v := it.(type) {
		case *whiskers:
			out = append(out, v)
		case *bars:
			out = append(out, &v.w)
		}
	}
	return out
}

// TestWhiskersKeyed: every kind of whisker a figure draws is named in
// its key with the iterations behind it (a sweep's 99% t-interval, a
// bar's range of iterations, a history's interval), the key says what
// an arrowhead is when an interval is cut at the axis and only then,
// and whiskers over different numbers of iterations are each marked
// with theirs.
func TestWhiskersKeyed(t *testing.T) {
	ci := func(p result.Point, lo, hi float64, n int) result.Point {
		p = withCI(p, lo, hi)
		p.Summary.Confidence.Iterations = n
		return p
	}
	// A sweep on a 500 Mbit/s link: four iterations at 64 bytes whose
	// interval runs from 0 to 800 Mbit/s about a mean of 300.
	sweep := []result.Point{
		ci(pt(spec.TCPStream, 64, 300e6, false), 0, 800e6, 4),
		ci(pt(spec.TCPStream, 1460, 480e6, false), 470e6, 490e6, 4),
		ci(pt(spec.TCPStream, 65536, 490e6, false), 488e6, 492e6, 4),
	}
	narrow := slices.Clone(sweep)
	narrow[0] = ci(pt(spec.TCPStream, 64, 300e6, false), 290e6, 310e6, 3)
	iterated := pt(spec.TCPStream, 131072, 400e6, false)
	for i, v := range []float64{380e6, 420e6, 400e6} {
		iterated.Iterations = append(iterated.Iterations, result.Iteration{Index: i + 1, Summary: result.Summary{BitsPerSecond: v}})
	}
	hs := historySeries(6, nil)
	for _, i := range []int{0, 1, 3} { // a band over 0-1, a whisker at 3 alone
		lo, hi := 180e6, 200e6
		hs.Points[i].Lo, hs.Points[i].Hi, hs.Points[i].Iterations = &lo, &hi, 5
	}
	hist, err := HistoryPlot([]history.Series{hs})
	if err != nil {
		t.Fatal(err)
	}
	hist.items = nil // HistoryPlot keeps no items: its whiskers are checked by the key alone

	for _, tt := range []struct {
		name    string
		series  []report.Series
		fig     *Figure
		want    []string // in the key, each in some entry
		clipped bool
		showN   bool
	}{
		{name: "sweep, an interval cut", series: []report.Series{{Label: "a", Points: sweep}},
			want: []string{"whiskers: 99% t-interval of the mean, n = 4", clippedKey}, clipped: true},
		{name: "sweep, n differs", series: []report.Series{{Label: "a", Points: narrow}},
			want: []string{"whiskers: 99% t-interval of the mean, n = 3 to 4 (beside each)"}, showN: true},
		{name: "bars of iterations", series: []report.Series{{Label: "a", Points: []result.Point{iterated}}, {Label: "b", Points: []result.Point{iterated}}},
			want: []string{"whiskers: range of the iterations (lowest to highest), n = 3"}},
		{name: "bars of intervals", series: []report.Series{{Label: "a", Points: []result.Point{ci(pt(spec.TCPStream, 131072, 400e6, false), 390e6, 410e6, 5)}}},
			want: []string{"whiskers: 99% t-interval of the mean, n = 5"}},
		{name: "bars of single runs", series: []report.Series{{Label: "a", Points: []result.Point{pt(spec.TCPStream, 131072, 400e6, false)}}},
			want: []string{oneRunKey}},
		{name: "history", fig: hist,
			want: []string{"band: confidence interval of the mean, n = 5", "whiskers: confidence interval of the mean, n = 5"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := tt.fig
			if f == nil {
				var err error
				if f, err = Plot(tt.series); err != nil {
					t.Fatal(err)
				}
			}
			key := legendTexts(f.Main)
			for _, w := range tt.want {
				if !slices.Contains(key, w) {
					t.Errorf("key %q lacks %q", key, w)
				}
			}
			// Every whisker drawn is of a kind the key names.
			for _, w := range whiskersOf(f) {
				for i, k := range w.kind {
					if w.drawn(i) && !slices.ContainsFunc(key, func(s string) bool { return strings.HasPrefix(s, "whiskers: "+k) }) {
						t.Errorf("a whisker of %q is not in the key %q", k, key)
					}
				}
				if w.showN != tt.showN {
					t.Errorf("whiskers mark their n: %v, want %v", w.showN, tt.showN)
				}
			}
			if got := slices.Contains(key, clippedKey); got != tt.clipped {
				t.Errorf("the key has the arrowhead's entry: %v, want %v (key %q)", got, tt.clipped, key)
			}
			if err := drawEvery(f); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestMatrixWirePanels: a matrix of tso=on,off draws, under its
// throughput and CPU, the sender's device's packets per second and
// bytes per packet: a bar per row at the median of its iterations,
// whiskers at their range keyed with their n; the CPU panel names the
// rows as the others do; a result without device counters draws no such
// panel.
func TestMatrixWirePanels(t *testing.T) {
	row := func(label string, pps, bpp []float64) report.Series {
		p := pt(spec.TCPStream, 131072, 940e6, true)
		for i := range pps {
			s := result.Summary{BitsPerSecond: 940e6, SenderWirePacketsPerSecond: pps[i], SenderWireBytesPerPacket: bpp[i]}
			p.Iterations = append(p.Iterations, result.Iteration{Index: i + 1, Summary: s})
		}
		p.Summary.SenderWirePacketsPerSecond, p.Summary.SenderWireBytesPerPacket = pps[0], bpp[0]
		return report.Series{Label: label, Points: []result.Point{p}}
	}
	rows := []report.Series{
		row("tso=on", []float64{2000, 1900, 2300}, []float64{58000, 61000, 60000}),
		row("tso=off", []float64{81000, 79000, 80500}, []float64{1514, 1514, 1514}),
	}
	f, err := Plot(rows)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.wire) != 2 {
		t.Fatalf("%d wire panels, want 2 (packets/s, bytes per packet)", len(f.wire))
	}
	for k, tt := range []struct {
		ylabel   string
		medians  [2]float64
		lo0, hi0 float64
	}{
		// Packets per second in thousands: medians 2000 and 80500.
		{"packets/s (thousands)", [2]float64{2, 80.5}, 1.9, 2.3},
		{"bytes per packet", [2]float64{60000, 1514}, 58000, 61000},
	} {
		p := f.wire[k]
		if p.Y.Label.Text != tt.ylabel {
			t.Errorf("panel %d: y label %q, want %q", k, p.Y.Label.Text, tt.ylabel)
		}
		var b *bars
		for _, pl := range plottersOf(p) {
			if bb, ok := pl.(*bars); ok {
				b = bb
			}
		}
		if b == nil || b.ys[0] != tt.medians[0] || b.ys[1] != tt.medians[1] || b.w.lo[0] != tt.lo0 || b.w.hi[0] != tt.hi0 {
			t.Errorf("panel %d: bars %+v, want medians %v, the first's whisker %g..%g", k, b, tt.medians, tt.lo0, tt.hi0)
		}
		key := legendTexts(p)
		if !slices.Contains(key, "whiskers: "+rangeKind+", n = 3") || !slices.Contains(key, wireKey) {
			t.Errorf("panel %d: key %q", k, key)
		}
		if ticks := p.X.Tick.Marker.Ticks(p.X.Min, p.X.Max); len(ticks) != 2 || ticks[1].Label != "tso=off" || p.X.Tick.Label.Font.Size < 6 {
			t.Errorf("panel %d: categories %+v at %v", k, ticks, p.X.Tick.Label.Font.Size)
		}
	}
	cpu := f.CPU
	if ticks := cpu.X.Tick.Marker.Ticks(cpu.X.Min, cpu.X.Max); len(ticks) != 2 || ticks[0].Label != "tso=on" || cpu.X.Tick.Label.Font.Size < 6 {
		t.Errorf("CPU panel's categories %+v at %v, want the rows named, readable", ticks, cpu.X.Tick.Label.Font.Size)
	}
	if err := drawEvery(f); err != nil {
		t.Error(err)
	}
	for i := range rows {
		p := &rows[i].Points[0]
		p.Summary.SenderWirePacketsPerSecond, p.Summary.SenderWireBytesPerPacket = 0, 0
		for j := range p.Iterations {
			p.Iterations[j].Summary.SenderWirePacketsPerSecond, p.Iterations[j].Summary.SenderWireBytesPerPacket = 0, 0
		}
	}
	if f, err := Plot(rows); err != nil || len(f.wire) != 0 {
		t.Errorf("without device counters: %d wire panels (%v), want none", len(f.wire), err)
	}
}

// plottersOf are what p draws, read from gonum's unexported list.
func plottersOf(p *gplot.Plot) []gplot.Plotter {
	v := reflect.ValueOf(p).Elem().FieldByName("plotters")
	var out []gplot.Plotter
	for i := range v.Len() {
		// The elements are interfaces in an unexported field: read
		// their dynamic values through an addressable copy.
		e := reflect.NewAt(v.Index(i).Type(), unsafe.Pointer(v.Index(i).UnsafeAddr())).Elem()
		out = append(out, e.Interface().(gplot.Plotter))
	}
	return out
}
