package plot

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	gplot "gonum.org/v1/plot"

	"wirespeed/internal/report"
	"wirespeed/internal/result"
	"wirespeed/internal/spec"
	"wirespeed/internal/stats"
)

// drawEvery draws f in every format, turning a panic into an error.
func drawEvery(f *Figure) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	for _, ext := range PlotFormats {
		var buf bytes.Buffer
		if err := f.write(&buf, ext); err != nil {
			return fmt.Errorf("%s: %w", ext, err)
		}
	}
	return nil
}

// withCI gives p a confidence interval lo..hi (bits/s) at 99%.
func withCI(p result.Point, lo, hi float64) result.Point {
	p.Summary.Confidence = &result.Confidence{Level: 0.99, FigureConfidence: result.FigureConfidence{Lo: &lo, Hi: &hi}, Iterations: 2}
	return p
}

// TestPlotInputsNeverPanic: every kind of figure, over the values a
// results file can hold (an interval reaching below zero, as two
// iterations that disagree give; zero, tiny and huge rates), draws in
// every format or returns an error; it never panics.
func TestPlotInputsNeverPanic(t *testing.T) {
	values := []float64{0, 1, 1e-3, 2e6, 900e6, 4e10}
	los := []float64{-11651834653, -1, 0, 0.5}
	for _, k := range []spec.Kind{spec.TCPStream} {
		for _, v := range values {
			for _, lof := range los {
				for _, sizes := range [][]int{{131072}, {64, 1024, 65536}} {
					name := fmt.Sprintf("%s/%g/lo%g/%d-sizes", k, v, lof, len(sizes))
					t.Run(name, func(t *testing.T) {
						var rows []report.Series
						for r, other := range []float64{v, 20e9} {
							var pts []result.Point
							for _, sz := range sizes {
								p := pt(k, sz, other, r == 0)
								lo := lof
								if lof == 0.5 {
									lo = other * 0.5
								}
								pts = append(pts, withCI(p, lo, other*1.5+1))
							}
							rows = append(rows, report.Series{Label: fmt.Sprintf("row %d", r), Points: pts})
						}
						f, err := Plot(rows)
						if err != nil {
							return
						}
						if err := drawEvery(f); err != nil {
							t.Error(err)
						}
						// An interval reaching below 0 is past any axis:
						// its whisker is clipped, and the key says how
						// that is marked.
						if key := legendTexts(f.Main); lof < 0 && !slices.ContainsFunc(key, func(s string) bool { return strings.Contains(s, "arrowhead") }) {
							t.Errorf("an interval from %g bit/s, key %q says nothing of its clipped whisker", lof, key)
						}
					})
				}
			}
		}
	}
	// Request/response results: latencies of 0 (a histogram of one
	// bucket), tiny and huge, with and without CPU figures.
	for _, lat := range []float64{0, 1e-3, 24, 1e9} {
		for _, sizes := range [][]int{{1}, {1, 1024}} {
			t.Run(fmt.Sprintf("TCP_RR/%g/%d-sizes", lat, len(sizes)), func(t *testing.T) {
				var pts []result.Point
				for _, sz := range sizes {
					p := pt(spec.TCPRR, sz, 0, true)
					p.Summary.RRSummary = &result.RRSummary{TransactionsPerSecond: 1,
						Latency: stats.Latency{Count: 1, P50: lat, P90: lat, P99: lat * 10, P999: lat * 10, Max: lat * 100}}
					p.Summary.LocalCPU.ServiceDemandMicrosPerTransaction = lat
					pts = append(pts, p)
				}
				f, err := Plot([]report.Series{{Label: "a", Points: pts}, {Label: "b", Points: pts}})
				if err != nil {
					return
				}
				if err := drawEvery(f); err != nil {
					t.Error(err)
				}
			})
		}
	}
}

// TestSizeTicks: a message-size axis, as sizeAxis sets it for the
// sizes measured (one size, two close ones, three across decades), is
// labelled at 4 to 9 ticks (as many whole bytes as it holds, when fewer): powers of two, with 1.5 times them, or round
// numbers where the range holds too few (1460 and 1500 bytes had no
// label at all).
func TestSizeTicks(t *testing.T) {
	for _, lo := range []float64{1, 7, 64, 1000, 1460, 65000, 1 << 20} {
		for f := 1.0; f <= 1<<20; f *= 1.19 {
			var p gplot.Plot
			sizeAxis(&p, "", lo, math.Round(lo*f))
			var labels []string
			for _, tk := range p.X.Tick.Marker.Ticks(p.X.Min, p.X.Max) {
				if tk.Label == "" {
					continue
				}
				if tk.Value < p.X.Min || tk.Value > p.X.Max {
					t.Errorf("sizes %g..%g: label %q at %g, off the axis %g..%g", lo, lo*f, tk.Label, tk.Value, p.X.Min, p.X.Max)
				}
				if slices.Contains(labels, tk.Label) {
					t.Errorf("sizes %g..%g: label %q twice", lo, lo*f, tk.Label)
				}
				labels = append(labels, tk.Label)
			}
			// Sizes are whole bytes: an axis from 0.5 to 2 has two.
			least := min(4, int(math.Floor(p.X.Max)-math.Ceil(p.X.Min))+1)
			if n := len(labels); n < least || n > 9 {
				t.Errorf("sizes %g..%g (axis %.0f..%.0f): %d labels %q, want %d to 9", lo, math.Round(lo*f), p.X.Min, p.X.Max, n, labels, least)
			}
		}
	}
}

// TestLogTicks: log axes are labelled at 1, 2 and 5 times each power of
// ten within the axis, so a panel from 17 to 335 us/KB reads 20, 50, 100,
// 200 (gonum's LogTicks gave only "100") and one from 10 to 600 us reads
// 10, 20, 50 under 100; over more than three decades only the powers,
// and 20 and 50 when the axis starts above 10 (an RR sweep's p50 of 18 us
// under p99.9s of 35 ms).
func TestLogTicks(t *testing.T) {
	labels := func(lo, hi float64) []string {
		var out []string
		for _, tk := range (logTicks{}).Ticks(lo, hi) {
			if tk.Label != "" {
				out = append(out, tk.Label)
			}
		}
		return out
	}
	for _, tt := range []struct {
		lo, hi float64
		want   string
	}{
		{17, 335, "20 50 100 200"},
		{10, 600, "10 20 50 100 200 500"},
		{0.015, 0.3, "0.02 0.05 0.1 0.2"},
		{1, 1e6, "1 10 100 1000 10000 100000 1000000"},
		{2e5, 4e6, "200000 500000 1000000 2000000"},
		{12, 24000, "20 50 100 1000 10000"},
		{11, 77000, "20 50 100 1000 10000"},
	} {
		if got := strings.Join(labels(tt.lo, tt.hi), " "); got != tt.want {
			t.Errorf("%g..%g: labels %q, want %q", tt.lo, tt.hi, got, tt.want)
		}
	}
}

// TestCompareBarsMedian: a bar of an iterated result stands at the
// median of its iterations, as compare's table reads it, with whiskers
// at their range: 100, 200 and 900 Mbit/s have mean 400 and median 200.
func TestCompareBarsMedian(t *testing.T) {
	var rows []report.Series
	for _, label := range []string{"cubic", "bbr"} {
		p := pt(spec.TCPStream, 131072, 400e6, false)
		for i, v := range []float64{100e6, 900e6, 200e6} {
			p.Iterations = append(p.Iterations, result.Iteration{Index: i + 1, Summary: result.Summary{BitsPerSecond: v}})
		}
		rows = append(rows, report.Series{Label: label, Points: []result.Point{p}})
	}
	f, err := Plot(rows)
	if err != nil {
		t.Fatal(err)
	}
	var b *bars
	for _, pl := range f.items {
		if bb, ok := pl.(*bars); ok {
			b = bb
		}
	}
	if b == nil || b.ys[0] != 200 || b.w.lo[0] != 100 || b.w.hi[0] != 900 {
		t.Fatalf("bars %+v, want 200 Mbit/s from 100 to 900", b)
	}
	if !strings.Contains(f.Main.Title.Text, "median of the iterations") {
		t.Errorf("title %q does not say the bars are medians", f.Main.Title.Text)
	}
}

// load reads a recorded results document from testdata (copies of
// report's: rr.json a TCP_RR run, cpu.json a stream with CPU figures).
func load(t *testing.T, name string) result.Document {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var doc result.Document
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}
