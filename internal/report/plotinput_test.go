package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

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
						var rows []Series
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
							rows = append(rows, Series{Label: fmt.Sprintf("row %d", r), Points: pts})
						}
						f, err := Plot(rows)
						if err != nil {
							return
						}
						if err := drawEvery(f); err != nil {
							t.Error(err)
						}
						// An interval reaching below 0 is past any axis:
						// its whisker is clipped, and the title says how
						// that is marked.
						if lof < 0 && !strings.Contains(f.Main.Title.Text, "arrowhead") {
							t.Errorf("an interval from %g bit/s, title %q says nothing of its clipped whisker", lof, f.Main.Title.Text)
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
				f, err := Plot([]Series{{Label: "a", Points: pts}, {Label: "b", Points: pts}})
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
