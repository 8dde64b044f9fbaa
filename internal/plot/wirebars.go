package plot

import (
	"math"
	"slices"

	gplot "gonum.org/v1/plot"

	"wirespeed/internal/report"
	"wirespeed/internal/result"
	"wirespeed/internal/stats"
)

// wireFigures are the sender's device's figures a bar figure draws under
// its CPU panel: what a matrix of tso=on,off exists to show (TSO sends
// a few large packets, without it many of one MSS each).
var wireFigures = []struct {
	ylabel string
	of     func(result.Summary) float64
	// scaled gives the axis' divisor and unit for the largest value.
	scaled func(hi float64) (float64, string)
}{
	{"packets/s", func(s result.Summary) float64 { return s.SenderWirePacketsPerSecond }, func(hi float64) (float64, string) {
		switch {
		case hi >= 1e6:
			return 1e6, "millions"
		case hi >= 1e3:
			return 1e3, "thousands"
		}
		return 1, ""
	}},
	{"bytes per packet", func(s result.Summary) float64 { return s.SenderWireBytesPerPacket }, func(float64) (float64, string) { return 1, "" }},
}

// wireKey is the wire panels' note on what they count.
const wireKey = "at the sender's device (a TSO or GSO packet counts once)"

// wirePanels are a bar figure's panels of the sender's device's packets
// per second and bytes per packet, a bar per series at the median of
// its iterations with whiskers at their range (as the throughput's), or
// at the run's figure; nil when no series has them (a run without
// device counters, loopback's included).
func wirePanels(series []report.Series) []*gplot.Plot {
	var out []*gplot.Plot
	for _, wf := range wireFigures {
		type fig struct {
			y, lo, hi float64
			n         int
		}
		figs := make([]fig, len(series))
		any := false
		hi := 0.0
		lo := math.Inf(1)
		for i, s := range series {
			pt := s.Points[0]
			f := fig{y: wf.of(pt.Summary), lo: math.NaN(), hi: math.NaN()}
			var vals []float64
			for _, it := range pt.Iterations {
				if v := wf.of(it.Summary); v > 0 {
					vals = append(vals, v)
				}
			}
			if len(vals) >= 2 {
				f = fig{stats.Center(vals, stats.UTest), slices.Min(vals), slices.Max(vals), len(vals)}
			}
			if !(f.y > 0) {
				f.y = math.NaN()
			} else {
				any = true
				lo, hi = min(lo, f.y), max(hi, f.y)
				if !math.IsNaN(f.hi) {
					hi = max(hi, min(f.hi, 2*f.y))
				}
			}
			figs[i] = f
		}
		if !any {
			continue
		}
		scale, unit := wf.scaled(hi)
		label := wf.ylabel
		if unit != "" {
			label += " (" + unit + ")"
		}
		p := gplot.New()
		style(p, "", label)
		logY := valueAxis(&p.Y, lo/scale, hi/scale)
		b := &bars{logBase: logY, width: 0.6}
		for i, f := range figs {
			b.add(float64(i), f.y/scale, f.lo/scale, f.hi/scale, okabeIto[5], rangeKind, f.n)
		}
		p.Add(b)
		categoryAxis(p, series)
		keyRoom(&p.Y, hi/scale, whiskerKinds(&b.w)+2)
		b.w.top = hi / scale
		p.Legend.Add(wireKey)
		whiskerKeys(p, &b.w)
		out = append(out, p)
	}
	return out
}
