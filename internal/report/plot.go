package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image/color"
	"math"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"wirespeed/internal/result"
	"wirespeed/internal/spec"
	"wirespeed/internal/stats"
)

// A plot kind draws one kind of figure of some results. Throughput
// against message size is the plot of stream tests; latency percentiles
// of request/response tests slot in as another kind.
type plotKind struct {
	name    string
	applies func(spec.Kind) bool
	build   func(series []Series) (*plot.Plot, error)
}

var plotKinds = []plotKind{
	{name: "throughput", applies: isStream, build: throughputPlot},
	{name: "latency", applies: spec.Kind.RR, build: latencyPlot},
}

func isStream(k spec.Kind) bool {
	switch k {
	case spec.TCPStream, spec.TCPMaerts, spec.TCPBidir, spec.UDPStream:
		return true
	}
	return false
}

// latencyPlot is the latency of request/response transactions against
// the request size, on log-2 x and log-10 y axes: for each series a line
// for the median, one dashed for the 99th percentile and one dotted for
// the 99.9th, in the series' colour.
func latencyPlot(series []Series) (*plot.Plot, error) {
	p := plot.New()
	kinds := map[spec.Kind]bool{}
	minX, maxX := math.Inf(1), math.Inf(-1)
	minY, maxY := math.Inf(1), math.Inf(-1)
	for _, s := range series {
		for _, pt := range s.Points {
			kinds[pt.Spec.Kind] = true
			rr := pt.Summary.RRSummary
			if rr == nil || rr.Latency.Count == 0 {
				return nil, fmt.Errorf("%s: a point of %d bytes has no latency figures", s.Label, pt.MsgSize)
			}
			minX, maxX = min(minX, float64(pt.MsgSize)), max(maxX, float64(pt.MsgSize))
			minY, maxY = min(minY, rr.Latency.P50), max(maxY, rr.Latency.P999)
		}
	}
	title := "Transaction latency by request size"
	if len(kinds) == 1 {
		for k := range kinds {
			title = string(k) + ": latency by request size"
		}
	}
	style(p, title+"\np50 solid, p99 dashed, p99.9 dotted", "request size (bytes)", "round-trip latency (us)", minX, maxX)
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Y.Min, p.Y.Max = max(minY/1.5, 0.1), maxY*4 // room for the legend
	dashes := [][]vg.Length{nil, {vg.Points(5), vg.Points(3)}, {vg.Points(1), vg.Points(2)}}
	for i, s := range series {
		col := plotutil.DarkColors[i%len(plotutil.DarkColors)]
		pcts := []func(stats.Latency) float64{
			func(l stats.Latency) float64 { return l.P50 },
			func(l stats.Latency) float64 { return l.P99 },
			func(l stats.Latency) float64 { return l.P999 },
		}
		for k, pct := range pcts {
			xys := make(plotter.XYs, len(s.Points))
			for j, pt := range s.Points {
				xys[j] = plotter.XY{X: float64(pt.MsgSize), Y: pct(pt.Summary.RRSummary.Latency)}
			}
			line, points, err := plotter.NewLinePoints(xys)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", s.Label, err)
			}
			line.Color = col
			line.Width = vg.Points(1.5)
			line.Dashes = dashes[k]
			points.Color = col
			points.Shape = plotutil.Shape(i)
			points.Radius = vg.Points(2.5)
			p.Add(line, points)
			if k == 0 {
				p.Legend.Add(s.Label, line, points)
			}
		}
	}
	return p, nil
}

// PlotFormats are the file extensions SavePlot writes.
var PlotFormats = []string{".svg", ".png", ".pdf"}

// Plot draws the series: the plot kind that fits their tests (every
// series must be of tests of that kind).
func Plot(series []Series) (*plot.Plot, error) {
	if len(series) == 0 {
		return nil, fmt.Errorf("nothing to plot")
	}
	var kinds []spec.Kind
	for _, s := range series {
		if len(s.Points) == 0 {
			return nil, fmt.Errorf("%s: no measured point to plot", s.Label)
		}
		for _, p := range s.Points {
			if !slices.Contains(kinds, p.Spec.Kind) {
				kinds = append(kinds, p.Spec.Kind)
			}
		}
	}
	for _, pk := range plotKinds {
		all := true
		for _, k := range kinds {
			all = all && pk.applies(k)
		}
		if all {
			return pk.build(series)
		}
	}
	return nil, fmt.Errorf("no plot of %v results together: throughput plots take TCP_STREAM, TCP_MAERTS, TCP_BIDIR and UDP_STREAM results, latency plots TCP_RR, UDP_RR and TCP_CRR; give results of one kind", kinds)
}

// SavePlot writes p to path as SVG, PNG or PDF, by its extension, at the
// size of a figure in a report (16 x 10 cm).
func SavePlot(p *plot.Plot, path string) error {
	ext := strings.ToLower(filepath.Ext(path))
	if !slices.Contains(PlotFormats, ext) {
		return fmt.Errorf("plot file %q: use a .svg, .png or .pdf name", path)
	}
	w, h := 16*vg.Centimeter, 10*vg.Centimeter
	if ext != ".png" {
		return p.Save(w, h, path)
	}
	// A PNG for a report is drawn at twice the screen resolution.
	c := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(192))
	p.Draw(draw.New(c))
	var buf bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(&buf); err != nil {
		return fmt.Errorf("plot %s: %w", path, err)
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

// throughputPlot is throughput against message size, on a log-2 x axis,
// one line per series through the points' means, with a bar for each
// point's confidence interval.
func throughputPlot(series []Series) (*plot.Plot, error) {
	p := plot.New()
	kinds := map[spec.Kind]bool{}
	level := 0.0
	maxBPS := 0.0
	minX, maxX := math.Inf(1), math.Inf(-1)
	for _, s := range series {
		for _, pt := range s.Points {
			kinds[pt.Spec.Kind] = true
			maxBPS = max(maxBPS, pt.Summary.BitsPerSecond)
			if c := pt.Summary.Confidence; c != nil && c.Hi != nil {
				maxBPS = max(maxBPS, *c.Hi)
				level = c.Level
			}
			minX, maxX = min(minX, float64(pt.MsgSize)), max(maxX, float64(pt.MsgSize))
		}
	}
	scale, unit := 1e6, "10^6 bits/s"
	if maxBPS >= 1e10 {
		scale, unit = 1e9, "Gbit/s"
	}
	title := "Throughput by message size"
	if len(kinds) == 1 {
		for k := range kinds {
			title = string(k) + ": throughput by message size"
		}
	}
	ylabel := "throughput (" + unit + ")"
	if level > 0 {
		ylabel += fmt.Sprintf(", bars: %s%% confidence", levelPct(level))
	}
	style(p, title, "message size (bytes per send call)", ylabel, minX, maxX)
	p.Y.Min = 0
	p.Y.Max = maxBPS / scale * 1.08
	p.Y.Tick.Marker = linearTicks{}
	for i, s := range series {
		col := plotutil.DarkColors[i%len(plotutil.DarkColors)]
		xys := make(plotter.XYs, len(s.Points))
		var bars barPoints
		for j, pt := range s.Points {
			xys[j] = plotter.XY{X: float64(pt.MsgSize), Y: pt.Summary.BitsPerSecond / scale}
			if c := pt.Summary.Confidence; c != nil && c.Lo != nil && c.Hi != nil {
				y := pt.Summary.BitsPerSecond / scale
				bars = append(bars, barPoint{x: xys[j].X, y: y, lo: y - max(*c.Lo/scale, 0), hi: *c.Hi/scale - y})
			}
		}
		line, points, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.Label, err)
		}
		line.Color = col
		line.Width = vg.Points(1.5)
		points.Color = col
		points.Shape = plotutil.Shape(i)
		points.Radius = vg.Points(2.5)
		if len(bars) > 0 {
			eb, err := plotter.NewYErrorBars(bars)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", s.Label, err)
			}
			eb.Color = col
			eb.Width = vg.Points(1)
			eb.CapWidth = vg.Points(6)
			p.Add(eb)
		}
		p.Add(line, points) // over the bars
		p.Legend.Add(s.Label, line, points)
	}
	return p, nil
}

// style sets what every plot shares: the title, a log-2 message size x
// axis over minX..maxX, the fonts, a light grid and the legend at the top
// left.
func style(p *plot.Plot, title, xlabel, ylabel string, minX, maxX float64) {
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = 12
	p.Title.Padding = 6
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = sizeTicks{}
	p.X.Min, p.X.Max = minX/1.3, maxX*1.3
	if minX == maxX {
		p.X.Min, p.X.Max = minX/2, maxX*2
	}
	for _, ax := range []*plot.Axis{&p.X, &p.Y} {
		ax.Label.TextStyle.Font.Size = 10
		ax.Tick.Label.Font.Size = 9
	}
	grid := plotter.NewGrid()
	grid.Vertical.Color = color.Gray{Y: 225}
	grid.Horizontal.Color = color.Gray{Y: 225}
	p.Add(grid)
	p.Legend.Top = true
	p.Legend.Left = true
	p.Legend.XOffs = 6
	p.Legend.YOffs = -4
	p.Legend.TextStyle.Font.Size = 9
}

type barPoint struct{ x, y, lo, hi float64 }

// barPoints are the confidence intervals of a series, for YErrorBars.
type barPoints []barPoint

func (b barPoints) Len() int                    { return len(b) }
func (b barPoints) XY(i int) (float64, float64) { return b[i].x, b[i].y }
func (b barPoints) YError(i int) (float64, float64) {
	return b[i].lo, b[i].hi
}

// sizeTicks marks a log-2 axis of message sizes: powers of two, labelled
// with binary prefixes (64, 1K, 64K, 1M), every second or fourth one when
// the range is wide; the others are minor ticks.
type sizeTicks struct{}

func (sizeTicks) Ticks(lo, hi float64) []plot.Tick {
	first, last := math.Ceil(math.Log2(max(lo, 1))), math.Floor(math.Log2(hi))
	step := 1.0
	for (last-first)/step > 8 {
		step *= 2
	}
	var ticks []plot.Tick
	for e := first; e <= last; e++ {
		t := plot.Tick{Value: math.Pow(2, e)}
		if math.Mod(e, step) == 0 {
			t.Label = sizeLabel(int64(t.Value))
		}
		ticks = append(ticks, t)
	}
	return ticks
}

// linearTicks marks a linear axis from about six round steps (1, 2, 2.5
// or 5 times a power of ten), with a minor tick halfway between labels.
type linearTicks struct{}

func (linearTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) {
		return []plot.Tick{{Value: lo, Label: fmt.Sprintf("%g", lo)}}
	}
	raw := (hi - lo) / 6
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	var ticks []plot.Tick
	for v := math.Ceil(lo/step) * step; v <= hi+step*1e-9; v += step / 2 {
		t := plot.Tick{Value: v}
		if math.Abs(math.Remainder(v, step)) < step*1e-6 {
			t.Label = strconv.FormatFloat(math.Round(v/step)*step, 'f', -1, 64)
		}
		ticks = append(ticks, t)
	}
	return ticks
}

func sizeLabel(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%dM", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%dK", n>>10)
	}
	return fmt.Sprint(n)
}

// Labels names each document for a legend by what differs between them:
// the spec fields (all but the message size, which a sweep varies), the
// iterations asked, the server and the client host, as "field=value"
// joined by ", ". Documents that differ in none of these are told apart
// by their names (file names, without directory and extension).
func Labels(names []string, docs []result.Document) []string {
	fieldsOf := make([]map[string]string, len(docs))
	var keys []string
	for i, d := range docs {
		m := map[string]string{}
		t := d.Spec
		t.SendSize = 0
		b, _ := json.Marshal(t)
		var raw map[string]json.RawMessage
		json.Unmarshal(b, &raw)
		for k, v := range raw {
			if k == "send_size" {
				continue
			}
			m[k] = strings.Trim(string(v), `"`)
		}
		if d.Repeat != nil {
			m["iterations"] = fmt.Sprintf("%d,%d", d.Repeat.MaxIterations, d.Repeat.MinIterations)
			m["confidence"] = fmt.Sprintf("%g,%g", 100*d.Repeat.ConfidenceLevel, d.Repeat.ConfidenceWidthPct)
		}
		// The server's host: an embedded server's port changes every run.
		m["server"] = d.Remote.Address
		if h, _, err := net.SplitHostPort(d.Remote.Address); err == nil {
			m["server"] = h
		}
		m["client"] = d.Local.Hostname
		for k, v := range envLabels(docs, d) {
			m[k] = v
		}
		for k := range m {
			if !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
		fieldsOf[i] = m
	}
	slices.Sort(keys)
	// The test comes first: it is what a reader looks for.
	if i := slices.Index(keys, "test"); i > 0 {
		keys = append([]string{"test"}, slices.Delete(keys, i, i+1)...)
	}
	var differ []string
	for _, k := range keys {
		for _, m := range fieldsOf[1:] {
			if m[k] != fieldsOf[0][k] {
				differ = append(differ, k)
				break
			}
		}
	}
	out := make([]string, len(docs))
	for i := range docs {
		var parts []string
		for _, k := range differ {
			v := fieldsOf[i][k]
			if v == "" {
				v = "default"
			}
			parts = append(parts, k+"="+v)
		}
		if len(parts) == 0 {
			base := filepath.Base(names[i])
			out[i] = strings.TrimSuffix(base, filepath.Ext(base))
			continue
		}
		out[i] = strings.Join(parts, ", ")
	}
	return out
}
