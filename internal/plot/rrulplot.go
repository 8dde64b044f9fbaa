package plot

import (
	"fmt"
	"image/color"
	"slices"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"wirespeed/internal/report"
	"wirespeed/internal/result"
	"wirespeed/internal/spec"
)

// RRULAll is flent's "all" figure of an RRUL result: the load's
// throughput over time in the upper panel, each direction's sum (thick)
// and each flow's own (thin, dashed for the uploads: the starved ones
// show), the probes' round trips over time below, the idle phase shaded
// and labelled in both. Times are seconds from the probes' start; the
// throughput is drawn at the middle of each interval of the timeline
// (summary.under_load.intervals), which holds the probes sent and the
// bytes received in it on one clock. A result without interval
// throughput (one recorded before the timeline read its receivers with
// -i 0) is drawn as each direction's mean over the loaded phase.
func RRULAll(doc result.Document) (*Figure, error) {
	u := doc.Summary.UnderLoad
	if u == nil {
		return nil, fmt.Errorf("not an RRUL result: no summary.under_load")
	}
	rec := u.Probes
	end := rec.LoadEndS
	for _, p := range rec.UDP {
		end = max(end, p.T)
	}
	if n := len(u.Intervals); n > 0 {
		end = max(end, u.Intervals[n-1].EndS)
	}

	idle := rec.LoadStartS
	if idle == 0 {
		idle = end // the load never came
	}
	tp := gplot.New()
	style(tp, "RRUL: throughput and latency under load", "")
	tp.Add(&shade{x0: 0, x1: idle})
	scale, unit := report.RateUnit(max(u.UpBitsPerSecond, u.DownBitsPerSecond))
	tp.Y.Label.Text = "throughput (" + unit + ")"
	up, down, flows := rrulThroughput(u, scale)
	sampled := false
	for _, p := range append(slices.Clone(up), down...) {
		sampled = sampled || p.Y > 0
	}
	if !sampled && rec.LoadStartS > 0 {
		// No intervals: the means over the loaded phase.
		up = plotter.XYs{{X: rec.LoadStartS, Y: u.UpBitsPerSecond / scale}, {X: rec.LoadEndS, Y: u.UpBitsPerSecond / scale}}
		down = plotter.XYs{{X: rec.LoadStartS, Y: u.DownBitsPerSecond / scale}, {X: rec.LoadEndS, Y: u.DownBitsPerSecond / scale}}
		flows = nil
		tp.Title.Text += " (throughput: means)"
	}
	hiRate := 0.0
	for _, d := range []struct {
		name string
		xy   plotter.XYs
		show bool
		i    int
	}{{"download (sum)", down, u.Load != spec.LoadUp, 0}, {"upload (sum)", up, u.Load != spec.LoadDown, 1}} {
		if !d.show || len(d.xy) == 0 {
			continue
		}
		l, err := plotter.NewLine(d.xy)
		if err != nil {
			return nil, err
		}
		l.Color = seriesColor(d.i)
		l.Width = vg.Points(2)
		tp.Add(l)
		tp.Legend.Add(d.name, l)
		for _, p := range d.xy {
			hiRate = max(hiRate, p.Y)
		}
	}
	for k, f := range flows {
		l, err := plotter.NewLine(f.xy)
		if err != nil {
			return nil, err
		}
		// Each flow its own colour, after the sums' and the probes'.
		l.Color = seriesColor(4 + k)
		l.Width = vg.Points(0.8)
		if f.up {
			l.Dashes = []vg.Length{vg.Points(3), vg.Points(2)}
		}
		tp.Add(l)
		tp.Legend.Add(f.name, l)
	}
	tp.Legend.Left, tp.Legend.Top = false, true
	head := 1.3 // room above the lines for the legend
	if len(flows) > 0 {
		head = 1.8
	}
	tp.Add(idleLabel(idle, max(hiRate, 1e-9)*(head-0.1)))
	tp.Y.Min, tp.Y.Max = 0, max(hiRate, 1e-9)*head
	tp.Y.Tick.Marker = linearTicks{}

	lat := gplot.New()
	style(lat, "", "round trip (ms)")
	lat.Add(&shade{x0: 0, x1: idle})
	lat.X.Label.Text = "seconds from the start (idle phase shaded)"
	hiMs, loMs := 0.0, 0.0
	for i, k := range []struct {
		name string
		ps   []result.ProbePoint
	}{{"UDP probes", rec.UDP}, {"TCP probes", rec.TCP}} {
		var xy plotter.XYs
		for _, p := range k.ps {
			if p.Lost {
				continue
			}
			xy = append(xy, plotter.XY{X: p.T, Y: p.RTTMs})
			hiMs = max(hiMs, p.RTTMs)
			if loMs == 0 || p.RTTMs < loMs {
				loMs = p.RTTMs
			}
		}
		if len(xy) == 0 {
			continue
		}
		l, err := plotter.NewLine(xy)
		if err != nil {
			return nil, err
		}
		l.Color = seriesColor(i + 2)
		l.Width = vg.Points(0.8)
		lat.Add(l)
		lat.Legend.Add(k.name, l)
	}
	valueAxis(&lat.Y, loMs, hiMs)
	keyRoom(&lat.Y, hiMs, 2) // the UDP and TCP probes

	for _, p := range []*gplot.Plot{tp, lat} {
		p.X.Min, p.X.Max = 0, end
		p.X.Tick.Marker = linearTicks{}
	}
	tp.X.Label.Text = ""
	return &Figure{Main: tp, CPU: lat, sharedX: true}, nil
}

// RRULCDF draws the distribution of each RRUL result's round trips, idle
// against loaded (all probes), a pair of lines per result.
func RRULCDF(labels []string, docs []result.Document) (*Figure, error) {
	p := gplot.New()
	style(p, "RRUL: round-trip distribution, idle and loaded", "fraction of probes")
	var items []gplot.Plotter
	p.X.Label.Text = "round trip (ms)"
	lo, hi := 0.0, 0.0
	n := 0
	for i, d := range docs {
		u := d.Summary.UnderLoad
		if u == nil {
			return nil, fmt.Errorf("%s: not an RRUL result: no summary.under_load", labels[i])
		}
		rec := u.Probes
		for j, phase := range []struct {
			name   string
			loaded bool
		}{{"idle", false}, {"loaded", true}} {
			var ms []float64
			for _, ps := range [][]result.ProbePoint{rec.UDP, rec.TCP} {
				for _, pt := range ps {
					in := pt.T < rec.LoadStartS || rec.LoadStartS == 0
					if phase.loaded {
						in = rec.LoadStartS > 0 && pt.T >= rec.LoadStartS && pt.T < rec.LoadEndS
					}
					if in && !pt.Lost {
						ms = append(ms, pt.RTTMs)
					}
				}
			}
			if len(ms) == 0 {
				continue
			}
			slices.Sort(ms)
			xy := make(plotter.XYs, len(ms))
			for k, v := range ms {
				xy[k] = plotter.XY{X: v, Y: float64(k+1) / float64(len(ms))}
			}
			if lo == 0 || ms[0] < lo {
				lo = ms[0]
			}
			hi = max(hi, ms[len(ms)-1])
			l, err := plotter.NewLine(xy)
			if err != nil {
				return nil, err
			}
			l.Color = seriesColor(i)
			l.Width = vg.Points(1.5)
			if j == 0 {
				l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
			}
			name := phase.name
			if len(docs) > 1 {
				name = labels[i] + " " + name
			}
			p.Add(l)
			p.Legend.Add(name, l)
			items = append(items, l)
			n++
		}
	}
	if n == 0 {
		return nil, fmt.Errorf("no answered probe to plot")
	}
	if lo > 0 && hi/lo >= 10 {
		p.X.Scale = gplot.LogScale{}
		p.X.Tick.Marker = gplot.LogTicks{Prec: -1}
		p.X.Min, p.X.Max = lo/1.3, hi*1.3
	} else {
		p.X.Min, p.X.Max = 0, hi*1.1
	}
	p.Y.Min, p.Y.Max = 0, 1.15
	p.Legend.Left, p.Legend.Top = true, true
	return &Figure{Main: p, items: items}, nil
}

// flowLine is one flow's throughput over the timeline.
type flowLine struct {
	name string
	up   bool
	xy   plotter.XYs
}

// rrulThroughput is the timeline's throughput at each interval's
// middle, from the load's start on: each direction's sum, and each
// flow's own line named by its id, direction and mark (result.FlowRate).
func rrulThroughput(u *result.UnderLoad, scale float64) (up, down plotter.XYs, flows []flowLine) {
	at := map[int]int{}
	for _, f := range u.Flows {
		dir := "down"
		if f.Direction == spec.ClientToServer {
			dir = "up"
		}
		at[f.ID] = len(flows)
		flows = append(flows, flowLine{name: fmt.Sprintf("%d %s %s", f.ID, dir, f.Mark), up: dir == "up"})
	}
	for _, iv := range u.Intervals {
		if u.Probes.LoadStartS == 0 || iv.EndS <= u.Probes.LoadStartS+1e-9 {
			continue
		}
		mid := (iv.StartS + iv.EndS) / 2
		up = append(up, plotter.XY{X: mid, Y: iv.UpBitsPerSecond / scale})
		down = append(down, plotter.XY{X: mid, Y: iv.DownBitsPerSecond / scale})
		for _, f := range iv.Flows {
			if k, ok := at[f.ID]; ok {
				flows[k].xy = append(flows[k].xy, plotter.XY{X: mid, Y: f.BitsPerSecond / scale})
			}
		}
	}
	var drawn []flowLine
	for _, f := range flows {
		if len(f.xy) > 0 {
			drawn = append(drawn, f)
		}
	}
	return up, down, drawn
}

// idleLabel writes "idle" in the shaded idle phase, at height y: the
// upper panel's; the lower one's top left holds its legend.
func idleLabel(idle, y float64) gplot.Plotter {
	l, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{{X: idle / 2, Y: y}}, Labels: []string{"idle"}})
	if err != nil {
		return &shade{}
	}
	l.TextStyle[0].XAlign = draw.XCenter
	return l
}

// shade is a grey band over x0..x1 across the panel: the idle phase.
type shade struct{ x0, x1 float64 }

func (s *shade) Plot(c draw.Canvas, p *gplot.Plot) {
	trX, _ := p.Transforms(&c)
	x0, x1 := trX(s.x0), trX(s.x1)
	c.FillPolygon(color.Gray{Y: 235}, []vg.Point{{X: x0, Y: c.Min.Y}, {X: x1, Y: c.Min.Y}, {X: x1, Y: c.Max.Y}, {X: x0, Y: c.Max.Y}})
}
