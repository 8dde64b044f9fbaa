package plot

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image/color"
	"io"
	"math"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgpdf"
	"gonum.org/v1/plot/vg/vgsvg"

	"wirespeed/internal/measure"
	"wirespeed/internal/report"
	"wirespeed/internal/result"
	"wirespeed/internal/spec"
	"wirespeed/internal/stats"
)

// Figure is a drawing of results: a main panel and, when the results
// carry CPU figures, a second panel of CPU utilization or service demand
// below it.
type Figure struct {
	Main *gplot.Plot
	// CPU is the second panel; nil when no result has CPU figures. A
	// history's second panel is its latency (HistoryPanels).
	CPU *gplot.Plot

	// sharedX is set when both panels have the same x axis (message
	// sizes, a history's time): Draw lines their data areas up.
	sharedX bool
	// split is the second panel's share of the height; 0 for 0.4.
	split float64
	// env are a history's environment changes, labelled in a strip
	// under the panels.
	env *envMarks
	// wire are panels under the others, wireHeight each, their data
	// areas lined up with Main's: a matrix's packets per second and
	// bytes per packet at the sender's device (wirePanels).
	wire []*gplot.Plot

	items []gplot.Plotter // what Main draws, besides its grid, for tests
}

// The kinds of figure, chosen from the results (Plot):
//
//   - lines: stream tests measured at several message sizes (sweeps, a
//     matrix with --sizes): throughput against message size, a line per
//     series, whiskers at each point's confidence interval; service demand
//     against message size below;
//   - bars: stream tests at one size each (single runs, a matrix, a
//     tradeoff): a bar per series, the series as categories, whiskers at
//     the confidence interval; both sides' CPU utilization below;
//   - percentiles: request/response tests at one size each: each series'
//     latency at p50, p90, p99, p99.9 and max, a line per series; CPU
//     utilization below;
//   - latency by size: request/response sweeps: p50, p99 and p99.9
//     against request size, the key naming both the series (colour) and
//     the percentiles (dashes); service demand per transaction below.
//
// A value axis is logarithmic when the data spans a decade or more, so
// that 2 and 99 Mbit/s are both readable; linear from 0 otherwise.

// PlotFormats are the file extensions SavePlot writes.
var PlotFormats = []string{".svg", ".png", ".pdf"}

func isStream(k spec.Kind) bool {
	switch k {
	case spec.TCPStream, spec.TCPMaerts, spec.TCPBidir, spec.UDPStream:
		return true
	}
	return false
}

// Plot draws the series with the kind of figure that fits them. Every
// series must be of stream tests, or every one of request/response tests.
func Plot(series []report.Series) (*Figure, error) {
	if len(series) == 0 {
		return nil, fmt.Errorf("nothing to plot")
	}
	var kinds []spec.Kind
	multi := false
	for _, s := range series {
		if len(s.Points) == 0 {
			return nil, fmt.Errorf("%s: no measured point to plot", s.Label)
		}
		multi = multi || len(s.Points) > 1
		for _, p := range s.Points {
			if !slices.Contains(kinds, p.Spec.Kind) {
				kinds = append(kinds, p.Spec.Kind)
			}
		}
	}
	all := func(f func(spec.Kind) bool) bool {
		for _, k := range kinds {
			if !f(k) {
				return false
			}
		}
		return true
	}
	switch {
	case all(isStream) && multi:
		return throughputLines(series)
	case all(isStream):
		return throughputBars(series)
	case all(spec.Kind.RR):
		for _, s := range series {
			for _, pt := range s.Points {
				if rr := pt.Summary.RRSummary; rr == nil || rr.Latency.Count == 0 {
					return nil, fmt.Errorf("%s: a point of %d bytes has no latency figures", s.Label, pt.MsgSize)
				}
			}
		}
		if multi {
			return latencyBySize(series)
		}
		return latencyPercentiles(series)
	}
	return nil, fmt.Errorf("no plot of %v results together: throughput plots take TCP_STREAM, TCP_MAERTS, TCP_BIDIR and UDP_STREAM results, latency plots TCP_RR, UDP_RR and TCP_CRR; give results of one kind", kinds)
}

// SavePlot writes f to path as SVG, PNG or PDF, by its extension, at the
// size of a figure in a report: 16 cm wide, 10 cm high for one panel and
// 16 cm for two. SVG and PDF embed their fonts (Liberation, which gonum
// carries), so they look the same wherever they are opened.
func SavePlot(f *Figure, path string) error {
	ext := strings.ToLower(filepath.Ext(path))
	if !slices.Contains(PlotFormats, ext) {
		return fmt.Errorf("plot file %q: use a .svg, .png or .pdf name", path)
	}
	var buf bytes.Buffer
	if err := f.write(&buf, ext); err != nil {
		return fmt.Errorf("plot %s: %w", path, err)
	}
	return result.WriteAtomic(path, buf.Bytes())
}

func (f *Figure) size() (w, h vg.Length) {
	w, h = 16*vg.Centimeter, 10*vg.Centimeter
	if f.CPU != nil {
		h = 16 * vg.Centimeter
	}
	if f.env != nil {
		_, lanes := f.envLayout(draw.Canvas{Rectangle: vg.Rectangle{Max: vg.Point{X: w, Y: h}}})
		h += stripHeight(lanes)
	}
	h += wireHeight * vg.Length(len(f.wire))
	return w, h
}

// wireHeight is the height of each of Figure.wire's panels.
const wireHeight = 6 * vg.Centimeter

// envLayout lays out the environment strip's labels under the panels
// drawn in c: they depend on the width only, so size can ask before the
// height is known.
func (f *Figure) envLayout(c draw.Canvas) ([]placed, int) {
	_, bottom := f.panels(c)
	low := f.Main
	if f.CPU != nil {
		low = f.CPU
	}
	dc := low.DataCanvas(bottom)
	trX, _ := low.Transforms(&dc)
	return f.env.layout(low, trX, c.Max.X)
}

// write draws the figure in the format ext names.
func (f *Figure) write(out io.Writer, ext string) error {
	w, h := f.size()
	var c interface {
		vg.CanvasSizer
		io.WriterTo
	}
	switch ext {
	case ".svg":
		c = vgsvg.NewWith(vgsvg.UseWH(w, h), vgsvg.EmbedFonts(true))
	case ".pdf":
		pc := vgpdf.New(w, h)
		pc.EmbedFonts(true)
		c = pc
	default:
		// A PNG for a report is drawn at twice the screen resolution.
		c = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(192))}
	}
	f.Draw(draw.New(c))
	_, err := c.WriteTo(out)
	return err
}

// Draw draws the figure on c: the main panel above the CPU panel (60%
// and 40% of the height), their plotting areas aligned.
func (f *Figure) Draw(c draw.Canvas) {
	var strip draw.Canvas
	if f.env != nil {
		_, lanes := f.envLayout(c)
		strip = c
		strip.Max.Y = c.Min.Y + stripHeight(lanes)
		c.Min.Y = strip.Max.Y
	}
	top, bottom, wire := f.layout(c)
	drawPanel(f.Main, top)
	for k, p := range f.wire {
		drawPanel(p, wire[k])
	}
	low := f.Main
	if f.CPU != nil {
		drawPanel(f.CPU, bottom)
		low = f.CPU
	}
	if f.env != nil {
		dc := low.DataCanvas(bottom)
		trX, _ := low.Transforms(&dc)
		f.env.draw(strip, low, trX)
	}
}

// keyYOffs is a key's offset down from the top of its panel's data area.
const keyYOffs = -4

// drawPanel draws p in c with its key at the top of the data area.
// gonum puts the key at the top of the panel less its title, but the
// data area can start lower: a log axis' label is centred on the
// arithmetic middle of its range, near the top, and gonum makes room
// for it above the data (a sweep's key sat over the axis' end, the room
// made for it under the key empty).
func drawPanel(p *gplot.Plot, c draw.Canvas) {
	top := c.Max.Y
	if p.Title.Text != "" {
		top -= p.Title.TextStyle.Rectangle(p.Title.Text).Size().Y + p.Title.Padding
	}
	p.Legend.YOffs = keyYOffs - (top - p.DataCanvas(c).Max.Y)
	p.Draw(c)
}

// panels splits c between the main panel and the second, as layout
// does.
func (f *Figure) panels(c draw.Canvas) (top, bottom draw.Canvas) {
	top, bottom, _ = f.layout(c)
	return top, bottom
}

// layout splits c between the panels: the main panel above the second
// (60% and 40% of the height unless split says otherwise), the wire
// panels under them (wireHeight each); their plotting areas aligned
// when they share the x axis. With one panel, top and bottom are both
// c.
func (f *Figure) layout(c draw.Canvas) (top, bottom draw.Canvas, wire []draw.Canvas) {
	if len(f.wire) > 0 {
		for k := range f.wire {
			w := c
			w.Max.Y = c.Min.Y + wireHeight*vg.Length(len(f.wire)-k)
			w.Min.Y = w.Max.Y - wireHeight
			wire = append(wire, w)
		}
		c.Min.Y += wireHeight * vg.Length(len(f.wire))
	}
	top, bottom = c, c
	cs := []*draw.Canvas{&top}
	ps := []*gplot.Plot{f.Main}
	if f.CPU != nil {
		share := f.split
		if share == 0 {
			share = 0.4
		}
		split := c.Min.Y + (c.Max.Y-c.Min.Y)*vg.Length(share)
		top.Min.Y, bottom.Max.Y = split, split
		cs, ps = append(cs, &bottom), append(ps, f.CPU)
	}
	for k := range wire {
		cs, ps = append(cs, &wire[k]), append(ps, f.wire[k])
	}
	// Align the data areas, so that a size on the x axis is at the same
	// place in every panel: each gives way to the one that needs the
	// most room on either side. The padding gonum adds for glyphs
	// depends on the width, hence the passes.
	for i := 0; f.sharedX && len(ps) > 1 && i < 3; i++ {
		dcs := make([]draw.Canvas, len(ps))
		lo, hi := vg.Length(math.Inf(-1)), vg.Length(math.Inf(1))
		for k, p := range ps {
			dcs[k] = p.DataCanvas(*cs[k])
			lo, hi = max(lo, dcs[k].Min.X), min(hi, dcs[k].Max.X)
		}
		for k := range ps {
			cs[k].Min.X += lo - dcs[k].Min.X
			cs[k].Max.X -= dcs[k].Max.X - hi
		}
	}
	return top, bottom, wire
}

// valueAxis sets a value axis over lo..hi (data values, already scaled):
// logarithmic when the data spans a decade or more (and is positive),
// linear from 0 otherwise. It reports whether it chose log.
func valueAxis(ax *gplot.Axis, lo, hi float64) bool {
	if lo > 0 && hi/lo >= 10 {
		ax.Scale = gplot.LogScale{}
		ax.Tick.Marker = logTicks{}
		ax.Min, ax.Max = lo/1.6, hi*2.2 // room for the key above the data
		return true
	}
	ax.Min, ax.Max = 0, max(hi, 1e-9)*1.25
	ax.Tick.Marker = linearTicks{}
	return false
}

// keyRoom raises a value axis' maximum, where needed, so that a key of
// lines entries at the top of a panel clears the data, whose top is top:
// each line takes about a 12th of a CPU panel's data area (a 16th of a
// main panel's).
func keyRoom(ax *gplot.Axis, top float64, lines int) {
	frac := min(0.6, 0.08*float64(lines)+0.05)
	if _, log := ax.Scale.(gplot.LogScale); log {
		if ax.Min > 0 && top > ax.Min {
			ax.Max = max(ax.Max, ax.Min*math.Pow(top/ax.Min, 1/(1-frac)))
		}
		return
	}
	ax.Max = max(ax.Max, top/(1-frac))
}

// faded is c at 55% opacity: a line joining measured points, under
// their markers.
func faded(c color.Color) color.Color {
	r, g, b, _ := c.RGBA()
	return color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: 140}
}

// pointGlyph is series i's marker: filled shapes first (a circle, a
// square, a triangle), large enough to be what the eye finds, then
// open ones.
func pointGlyph(i int) draw.GlyphDrawer {
	gs := []draw.GlyphDrawer{draw.CircleGlyph{}, draw.BoxGlyph{}, draw.PyramidGlyph{}, draw.RingGlyph{},
		draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.CrossGlyph{}, draw.PlusGlyph{}}
	return gs[i%len(gs)]
}

func title(kinds map[spec.Kind]bool, what string) string {
	if len(kinds) == 1 {
		for k := range kinds {
			return string(k) + ": " + what
		}
	}
	return strings.ToUpper(what[:1]) + what[1:]
}

// okabeIto is Okabe and Ito's palette, told apart by readers with any
// of the common colour-vision deficiencies (and in grey by its markers):
// blue, vermillion, bluish green, reddish purple, orange, sky blue,
// black; its yellow is left out, too faint on white.
var okabeIto = []color.Color{
	color.RGBA{R: 0x00, G: 0x72, B: 0xb2, A: 0xff},
	color.RGBA{R: 0xd5, G: 0x5e, B: 0x00, A: 0xff},
	color.RGBA{R: 0x00, G: 0x9e, B: 0x73, A: 0xff},
	color.RGBA{R: 0xcc, G: 0x79, B: 0xa7, A: 0xff},
	color.RGBA{R: 0xe6, G: 0x9f, B: 0x00, A: 0xff},
	color.RGBA{R: 0x56, G: 0xb4, B: 0xe9, A: 0xff},
	color.RGBA{A: 0xff},
}

func seriesColor(i int) color.Color { return okabeIto[i%len(okabeIto)] }

// sideGlyphs are the markers of each side's line in a panel that draws
// both (local, remote): a filled circle, and a larger ring around where
// the remote's point is, so that a remote line on top of the local one
// (both sides on one host) still shows its markers.
var sideGlyphs = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.RingGlyph{}}

// throughputLines is throughput against message size on a log-2 x axis,
// a marker at each measured size (what was measured: the faded line
// between two sizes a decade apart is not) with whiskers at its
// confidence interval, a line per series; below, each side's service
// demand (local solid, remote dashed) when measured. The y axis holds
// the means and their intervals up to twice and down to half a mean: an
// interval wider than that (four iterations' 99% interval at 64 bytes
// ran from 0 to 800 Mbit/s on a 500 Mbit/s link) is cut at the axis and
// marked.
func throughputLines(series []report.Series) (*Figure, error) {
	kinds := map[spec.Kind]bool{}
	lo, hi := math.Inf(1), 0.0
	minX, maxX := math.Inf(1), math.Inf(-1)
	for _, s := range series {
		for _, pt := range s.Points {
			kinds[pt.Spec.Kind] = true
			v := pt.Summary.BitsPerSecond
			lo, hi = min(lo, v), max(hi, v)
			if c := pt.Summary.Confidence; c != nil && c.Hi != nil && c.Lo != nil {
				hi, lo = max(hi, min(*c.Hi, 2*v)), min(lo, max(*c.Lo, v/2))
			}
			minX, maxX = min(minX, float64(pt.MsgSize)), max(maxX, float64(pt.MsgSize))
		}
	}
	scale, unit := report.RateUnit(hi)
	p := gplot.New()
	var items []gplot.Plotter
	add := func(ps ...gplot.Plotter) { p.Add(ps...); items = append(items, ps...) }
	style(p, "", "throughput ("+unit+")")
	sizeAxis(p, "message size (bytes per send call)", minX, maxX)
	valueAxis(&p.Y, lo/scale, hi/scale)
	var ws []*whiskers
	for i, s := range series {
		col := seriesColor(i)
		xys := make(plotter.XYs, len(s.Points))
		w := &whiskers{col: col, capWidth: vg.Points(6)}
		for j, pt := range s.Points {
			y := pt.Summary.BitsPerSecond / scale
			xys[j] = plotter.XY{X: float64(pt.MsgSize), Y: y}
			if c := pt.Summary.Confidence; c != nil && c.Lo != nil && c.Hi != nil {
				w.add(xys[j].X, *c.Lo/scale, *c.Hi/scale, ciKind(c.Level), c.Iterations)
			}
		}
		line, points, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.Label, err)
		}
		line.Color, line.Width = faded(col), vg.Points(1.5)
		points.Color, points.Shape, points.Radius = col, pointGlyph(i), vg.Points(4)
		if len(w.xs) > 0 {
			add(w)
			ws = append(ws, w)
		}
		add(line, points) // over the whiskers
		p.Legend.Add(s.Label, line, points)
	}
	keyRoom(&p.Y, hi/scale, len(series)+whiskerKinds(ws...)+1)
	for _, w := range ws {
		w.top = hi / scale
	}
	whiskerKeys(p, ws...)
	p.Title.Text = title(kinds, "throughput by message size")
	f := &Figure{Main: p, items: items}
	if hasServiceDemand(series, false) {
		cp, err := demandBySize(series, false, minX, maxX)
		if err != nil {
			return nil, err
		}
		f.CPU, f.sharedX = cp, true
	}
	return f, nil
}

// hasServiceDemand reports whether any point has a side's service demand
// (per KB, or per transaction when perTr).
func hasServiceDemand(series []report.Series, perTr bool) bool {
	for _, s := range series {
		for _, pt := range s.Points {
			for _, c := range []*measure.CPU{pt.Summary.LocalCPU, pt.Summary.RemoteCPU} {
				if c != nil && serviceDemand(c, perTr) > 0 {
					return true
				}
			}
		}
	}
	return false
}

func serviceDemand(c *measure.CPU, perTr bool) float64 {
	if perTr {
		return c.ServiceDemandMicrosPerTransaction
	}
	return c.ServiceDemandMicrosPerKB
}

// demandBySize is the CPU panel of a sweep: each side's service demand
// against message size, local solid and remote dashed, in the series'
// colours; the key names the two dash styles.
func demandBySize(series []report.Series, perTr bool, minX, maxX float64) (*gplot.Plot, error) {
	p := gplot.New()
	unit := "us/KB"
	if perTr {
		unit = "us/transaction"
	}
	style(p, "", "service demand ("+unit+")")
	p.Title.Text = ""
	xlabel := "message size (bytes)"
	if perTr {
		xlabel = "request size (bytes)"
	}
	sizeAxis(p, xlabel, minX, maxX)
	lo, hi := math.Inf(1), 0.0
	dashes := [][]vg.Length{nil, {vg.Points(5), vg.Points(3)}}
	for i, s := range series {
		for side := 0; side < 2; side++ {
			var xys plotter.XYs
			for _, pt := range s.Points {
				c := pt.Summary.LocalCPU
				if side == 1 {
					c = pt.Summary.RemoteCPU
				}
				if c == nil || serviceDemand(c, perTr) <= 0 {
					continue
				}
				v := serviceDemand(c, perTr)
				lo, hi = min(lo, v), max(hi, v)
				xys = append(xys, plotter.XY{X: float64(pt.MsgSize), Y: v})
			}
			if len(xys) == 0 {
				continue
			}
			line, points, err := plotter.NewLinePoints(xys)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", s.Label, err)
			}
			line.Color, line.Width, line.Dashes = seriesColor(i), vg.Points(1.2), dashes[side]
			points.Color, points.Shape, points.Radius = seriesColor(i), sideGlyphs[side], vg.Points(2+1.5*float64(side))
			p.Add(line, points)
		}
	}
	valueAxis(&p.Y, lo, hi)
	keyRoom(&p.Y, hi, 3) // two lines, in a panel smaller than most
	addDashKey(p, []string{"local", "remote"}, dashes, sideGlyphs...)
	return p, nil
}

// addDashKey adds gray key entries naming what each dash style (and,
// when given, each marker) means.
func addDashKey(p *gplot.Plot, names []string, dashes [][]vg.Length, glyphs ...draw.GlyphDrawer) {
	for i, n := range names {
		l := plotter.NewFunction(func(float64) float64 { return math.NaN() })
		l.Color, l.Width, l.Dashes = color.Gray{Y: 80}, vg.Points(1.2), dashes[i]
		if i < len(glyphs) {
			p.Legend.Add(n, l, glyphKey{glyphs[i], vg.Points(2 + 1.5*float64(i))})
			continue
		}
		p.Legend.Add(n, l)
	}
}

// glyphKey is a key entry's marker, gray.
type glyphKey struct {
	g draw.GlyphDrawer
	r vg.Length
}

func (k glyphKey) Thumbnail(c *draw.Canvas) {
	c.DrawGlyph(draw.GlyphStyle{Color: color.Gray{Y: 80}, Radius: k.r, Shape: k.g}, c.Center())
}

// throughputBars is one bar per series (a single run, a matrix row, one
// direction of a tradeoff), the series as categories, whiskers at the
// range of its iterations or its confidence interval, the key saying
// which and over how many; below, each side's CPU utilization.
func throughputBars(series []report.Series) (*Figure, error) {
	kinds := map[spec.Kind]bool{}
	lo, hi := math.Inf(1), 0.0
	sizes := map[int]bool{}
	// A bar's height and whiskers: the median of the iterations and
	// their range where a series has iterations (what compare's table
	// shows, and tests: the U test's centre); the mean and its confidence
	// interval otherwise.
	type barFig struct {
		y, lo, hi float64
		kind      string
		n         int
	}
	figs := make([]barFig, len(series))
	medians := 0
	for i, s := range series {
		pt := s.Points[0]
		kinds[pt.Spec.Kind] = true
		sizes[pt.MsgSize] = true
		f := barFig{pt.Summary.BitsPerSecond, math.NaN(), math.NaN(), "", 0}
		if c := pt.Summary.Confidence; c != nil && c.Lo != nil && c.Hi != nil {
			f.lo, f.hi, f.kind, f.n = *c.Lo, *c.Hi, ciKind(c.Level), c.Iterations
		}
		if vals := iterationRates(pt); len(vals) >= 2 {
			f = barFig{stats.Center(vals, stats.UTest), slices.Min(vals), slices.Max(vals), rangeKind, len(vals)}
			medians++
		}
		figs[i] = f
		lo, hi = min(lo, f.y), max(hi, f.y)
		if !math.IsNaN(f.hi) {
			hi = max(hi, min(f.hi, 2*f.y))
		}
	}
	scale, unit := report.RateUnit(hi)
	p := gplot.New()
	var items []gplot.Plotter
	add := func(ps ...gplot.Plotter) { p.Add(ps...); items = append(items, ps...) }
	what := "throughput"
	if len(sizes) == 1 {
		for sz := range sizes {
			what += ", " + sizeLabel(int64(sz)) + "-byte sends"
		}
	}
	style(p, "", "throughput ("+unit+")")
	logY := valueAxis(&p.Y, lo/scale, hi/scale)
	b := &bars{logBase: logY, width: 0.6}
	for i, f := range figs {
		b.add(float64(i), f.y/scale, f.lo/scale, f.hi/scale, okabeIto[0], f.kind, f.n)
	}
	switch {
	case medians == len(series):
		what += "\nbars: median of the iterations (as compare's table)"
	case medians > 0:
		what += "\nbars: median of the iterations; the mean where one run"
	}
	p.Title.Text = title(kinds, what)
	add(b)
	categoryAxis(p, series)
	keyRoom(&p.Y, hi/scale, whiskerKinds(&b.w)+1)
	b.w.top = hi / scale
	whiskerKeys(p, &b.w)
	if whiskerKinds(&b.w) == 0 {
		p.Legend.Add(oneRunKey) // n too, where there is nothing to draw
	}
	f := &Figure{Main: p, items: items}
	if cp := cpuBars(series); cp != nil {
		f.CPU, f.sharedX = cp, true
	}
	f.wire = wirePanels(series)
	return f, nil
}

// oneRunKey is a bar figure's key when no bar has a whisker.
const oneRunKey = "n = 1 (one run each): no interval to draw"

// iterationRates are a point's iterations' throughputs (bits/s); nil
// for a single run.
func iterationRates(pt result.Point) []float64 {
	var out []float64
	for _, it := range pt.Iterations {
		out = append(out, it.Summary.BitsPerSecond)
	}
	return out
}

// cpuBars is the CPU panel of one-point series: each side's CPU
// utilization (a bar each, local and remote) per series; nil when no
// series has CPU figures.
func cpuBars(series []report.Series) *gplot.Plot {
	any := false
	for _, s := range series {
		sum := s.Points[0].Summary
		for _, c := range []*measure.CPU{sum.LocalCPU, sum.RemoteCPU} {
			any = any || (c != nil && c.CPUs > 0)
		}
	}
	if !any {
		return nil
	}
	p := gplot.New()
	style(p, "", "CPU utilization (% of all CPUs)")
	p.Y.Min, p.Y.Max = 0, 125 // room above 100% for the key
	p.Y.Tick.Marker = percentTicks{}
	cols := []color.Color{okabeIto[2], okabeIto[4]} // local, remote
	sides := []*bars{{width: 0.3, offset: -0.16}, {width: 0.3, offset: 0.16}}
	for i, s := range series {
		sum := s.Points[0].Summary
		for side, c := range []*measure.CPU{sum.LocalCPU, sum.RemoteCPU} {
			if c == nil || c.CPUs == 0 {
				continue
			}
			sides[side].add(float64(i), c.UtilPct, math.NaN(), math.NaN(), cols[side], "", 0)
		}
	}
	p.Add(sides[0], sides[1])
	categoryAxis(p, series)
	p.Legend.Add("local", sides[0])
	p.Legend.Add("remote", sides[1])
	sides[0].key, sides[1].key = cols[0], cols[1]
	return p
}

// percentTicks marks 0 to 100% in steps of 20, and no further.
type percentTicks struct{}

func (percentTicks) Ticks(lo, hi float64) []gplot.Tick {
	var ts []gplot.Tick
	for v := 0.0; v <= 100; v += 10 {
		t := gplot.Tick{Value: v}
		if math.Mod(v, 20) == 0 {
			t.Label = strconv.FormatFloat(v, 'f', -1, 64)
		}
		ts = append(ts, t)
	}
	return ts
}

// categoryAxis makes the x axis name each series at 0, 1, 2..., its
// label broken into lines at ", " and between settings.
func categoryAxis(p *gplot.Plot, series []report.Series) {
	names := make([]string, len(series))
	for i, s := range series {
		names[i] = strings.NewReplacer(", ", "\n", " ", "\n").Replace(s.Label)
	}
	p.NominalX(names...)
	p.X.Min, p.X.Max = -0.6, float64(len(series))-0.4
	p.X.Tick.Label.Font.Size = 8
}

// bars draws vertical bars at category positions, with whiskers; on a
// log axis the bars start at the bottom of the axis, not at 0.
type bars struct {
	xs, ys        []float64
	cols          []color.Color
	w             whiskers // NaN ends: no whisker
	width, offset float64  // in category units
	logBase       bool
	key           color.Color // the key's swatch
}

func (b *bars) add(x, y, lo, hi float64, c color.Color, kind string, n int) {
	b.xs, b.ys = append(b.xs, x+b.offset), append(b.ys, y)
	b.cols = append(b.cols, c)
	b.w.add(x+b.offset, lo, hi, kind, n)
}

func (b *bars) Plot(c draw.Canvas, p *gplot.Plot) {
	trX, trY := p.Transforms(&c)
	// A log axis has no 0 (trY(0) panics): the bars stand on its bottom.
	y0 := c.Min.Y
	if !b.logBase {
		y0 = trY(0)
	}
	for i := range b.xs {
		if math.IsNaN(b.ys[i]) {
			continue // not measured
		}
		x0, x1 := trX(b.xs[i]-b.width/2), trX(b.xs[i]+b.width/2)
		y := trY(b.ys[i])
		if b.logBase && !(b.ys[i] > 0) {
			y = y0
		}
		rect := []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y}, {X: x0, Y: y}}
		c.FillPolygon(b.cols[i], c.ClipPolygonY(rect))
		c.StrokeLines(draw.LineStyle{Color: color.Black, Width: vg.Points(0.5)}, c.ClipLinesY(append(rect, rect[0]))...)
	}
	b.w.col, b.w.capWidth = color.Black, (trX(b.width)-trX(0))/2
	b.w.Plot(c, p)
}

func (b *bars) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax, ymin, ymax = math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for i := range b.xs {
		xmin, xmax = min(xmin, b.xs[i]-b.width/2), max(xmax, b.xs[i]+b.width/2)
		if math.IsNaN(b.ys[i]) {
			continue
		}
		ymin, ymax = min(ymin, b.ys[i]), max(ymax, b.ys[i])
		if !math.IsNaN(b.w.hi[i]) {
			ymax = max(ymax, b.w.hi[i])
		}
	}
	return
}

// Thumbnail draws the key's swatch.
func (b *bars) Thumbnail(c *draw.Canvas) {
	col := b.key
	if col == nil && len(b.cols) > 0 {
		col = b.cols[0]
	}
	if col == nil {
		return
	}
	pts := []vg.Point{{X: c.Min.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Max.Y}, {X: c.Min.X, Y: c.Max.Y}}
	c.FillPolygon(col, pts)
}

// percentiles of a latency, as the percentile figure shows them.
var percentiles = []struct {
	name string
	of   func(stats.Latency) float64
}{
	{"p50", func(l stats.Latency) float64 { return l.P50 }},
	{"p90", func(l stats.Latency) float64 { return l.P90 }},
	{"p99", func(l stats.Latency) float64 { return l.P99 }},
	{"p99.9", func(l stats.Latency) float64 { return l.P999 }},
	{"max", func(l stats.Latency) float64 { return l.Max }},
}

// latencyPercentiles is each one-point series' latency at p50, p90, p99,
// p99.9 and max, a line with markers per series on a log axis; the key
// shows each series' line and marker. Below, each side's CPU utilization.
func latencyPercentiles(series []report.Series) (*Figure, error) {
	kinds := map[spec.Kind]bool{}
	lo, hi := math.Inf(1), 0.0
	for _, s := range series {
		pt := s.Points[0]
		kinds[pt.Spec.Kind] = true
		l := pt.Summary.RRSummary.Latency
		lo, hi = min(lo, l.P50), max(hi, l.Max)
	}
	p := gplot.New()
	var items []gplot.Plotter
	add := func(ps ...gplot.Plotter) { p.Add(ps...); items = append(items, ps...) }
	style(p, title(kinds, "latency percentiles"), "round-trip latency (us)")
	valueAxis(&p.Y, lo, hi)
	keyRoom(&p.Y, hi, len(series))
	names := make([]string, len(percentiles))
	for i, pc := range percentiles {
		names[i] = pc.name
	}
	p.NominalX(names...)
	p.X.Label.Text = "percentile of the transactions"
	p.X.Min, p.X.Max = -0.3, float64(len(percentiles))-0.7
	for i, s := range series {
		l := s.Points[0].Summary.RRSummary.Latency
		xys := make(plotter.XYs, len(percentiles))
		for j, pc := range percentiles {
			xys[j] = plotter.XY{X: float64(j), Y: pc.of(l)}
		}
		line, points, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.Label, err)
		}
		line.Color, line.Width = seriesColor(i), vg.Points(1.5)
		points.Color, points.Shape, points.Radius = seriesColor(i), plotutil.Shape(i), vg.Points(3)
		add(line, points)
		p.Legend.Add(fmt.Sprintf("%s (%.0f trans/s)", s.Label, s.Points[0].Summary.RRSummary.TransactionsPerSecond), line, points)
	}
	f := &Figure{Main: p, items: items}
	if cp := cpuBars(series); cp != nil {
		categoryAxis(cp, series)
		cp.X.Tick.Label.Font.Size = 8
		f.CPU = cp
	}
	return f, nil
}

// latencyBySize is request/response latency against request size: for
// each series a solid line for p50, dashed for p99 and dotted for
// p99.9, in the series' colour; the key names the series and, in gray,
// the three dash styles. Below, service demand per transaction.
func latencyBySize(series []report.Series) (*Figure, error) {
	kinds := map[spec.Kind]bool{}
	minX, maxX := math.Inf(1), math.Inf(-1)
	lo, hi := math.Inf(1), 0.0
	for _, s := range series {
		for _, pt := range s.Points {
			kinds[pt.Spec.Kind] = true
			l := pt.Summary.RRSummary.Latency
			minX, maxX = min(minX, float64(pt.MsgSize)), max(maxX, float64(pt.MsgSize))
			lo, hi = min(lo, l.P50), max(hi, l.P999)
		}
	}
	p := gplot.New()
	var items []gplot.Plotter
	add := func(ps ...gplot.Plotter) { p.Add(ps...); items = append(items, ps...) }
	style(p, title(kinds, "latency by request size"), "round-trip latency (us)")
	sizeAxis(p, "request size (bytes)", minX, maxX)
	valueAxis(&p.Y, lo, hi)
	keyRoom(&p.Y, hi, len(series)+3)
	dashes := [][]vg.Length{nil, {vg.Points(5), vg.Points(3)}, {vg.Points(1), vg.Points(2)}}
	pcts := []int{0, 2, 3} // p50, p99, p99.9
	for i, s := range series {
		for k, pi := range pcts {
			xys := make(plotter.XYs, len(s.Points))
			for j, pt := range s.Points {
				xys[j] = plotter.XY{X: float64(pt.MsgSize), Y: percentiles[pi].of(pt.Summary.RRSummary.Latency)}
			}
			line, points, err := plotter.NewLinePoints(xys)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", s.Label, err)
			}
			line.Color, line.Width, line.Dashes = seriesColor(i), vg.Points(1.5), dashes[k]
			points.Color, points.Shape, points.Radius = seriesColor(i), plotutil.Shape(i), vg.Points(2.5)
			add(line, points)
			if k == 0 {
				p.Legend.Add(s.Label, line, points)
			}
		}
	}
	addDashKey(p, []string{"p50", "p99", "p99.9"}, dashes)
	f := &Figure{Main: p, items: items}
	if hasServiceDemand(series, true) {
		cp, err := demandBySize(series, true, minX, maxX)
		if err != nil {
			return nil, err
		}
		f.CPU, f.sharedX = cp, true
	}
	return f, nil
}

// style sets what every panel shares: the title, the y label, the fonts,
// a light grid and the key at the top left.
func style(p *gplot.Plot, title, ylabel string) {
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = 12
	p.Title.Padding = 6
	p.Y.Label.Text = ylabel
	for _, ax := range []*gplot.Axis{&p.X, &p.Y} {
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
	p.Legend.YOffs = keyYOffs
	p.Legend.TextStyle.Font.Size = 9
	p.Legend.Padding = vg.Points(1.5) // a key's markers are as tall as its text
}

// sizeAxis makes the x axis a log-2 axis of message sizes over minX..maxX.
func sizeAxis(p *gplot.Plot, label string, minX, maxX float64) {
	p.X.Label.Text = label
	p.X.Scale = gplot.LogScale{}
	p.X.Tick.Marker = sizeTicks{}
	p.X.Min, p.X.Max = minX/1.3, maxX*1.3
	if minX == maxX {
		p.X.Min, p.X.Max = minX/2, maxX*2
	}
}

// sizeTicks marks a log-2 axis of message sizes: powers of two,
// labelled with binary prefixes (64, 1K, 64K, 1M), every second or
// fourth one when the range is wide; the others are minor ticks. Where
// that labels fewer than four, 1.5 times each power is labelled too
// (96, 1536, 3K), and where that is still fewer (1460 to 1500 bytes,
// where no power of two falls), round numbers in between are (1200,
// 1400, 1600, 1800).
type sizeTicks struct{}

func (sizeTicks) Ticks(lo, hi float64) []gplot.Tick {
	first, last := math.Ceil(math.Log2(max(lo, 1))), math.Floor(math.Log2(hi))
	step := 1.0
	for (last-first)/step > 8 {
		step *= 2
	}
	var ticks []gplot.Tick
	for e := first; e <= last; e++ {
		t := gplot.Tick{Value: math.Pow(2, e)}
		if math.Mod(e, step) == 0 {
			t.Label = sizeLabel(int64(t.Value))
		}
		ticks = append(ticks, t)
	}
	if labelled(ticks) >= 4 {
		return ticks
	}
	// Every power of two, and 1.5 times each, in lo..hi.
	var halves []gplot.Tick
	for e := math.Floor(math.Log2(max(lo, 1))) - 1; e <= last; e++ {
		for _, v := range []float64{math.Pow(2, e), 1.5 * math.Pow(2, e)} {
			if v >= lo && v <= hi && v == math.Trunc(v) {
				halves = append(halves, gplot.Tick{Value: v, Label: sizeLabel(int64(v))})
			}
		}
	}
	if labelled(halves) >= 4 {
		return halves
	}
	// Round numbers: the axis is nearly linear over so short a range.
	// The widest round step (1, 2, 2.5 or 5 times a power of ten) that
	// gives four.
	var round []gplot.Tick
	for mag := math.Pow(10, math.Floor(math.Log10(hi-lo))); mag >= 1 && labelled(round) < 4; mag /= 10 {
		for _, m := range []float64{5, 2.5, 2, 1} {
			step := m * mag
			if step != math.Trunc(step) {
				continue
			}
			round = round[:0]
			for v := math.Ceil(lo/step) * step; v <= hi; v += step {
				round = append(round, gplot.Tick{Value: v, Label: sizeLabel(int64(v))})
			}
			if len(round) >= 4 {
				break
			}
		}
	}
	if labelled(round) > labelled(halves) {
		return round
	}
	return halves
}

// logTicks marks a log axis at 1, 2 and 5 times each power of ten, the
// steps a reader interpolates between, with minor ticks at the other
// integers times it. gonum's LogTicks labels only the powers of ten: a
// service-demand panel from 17 to 335 us/KB showed only "100", and an RR
// plot no label under 100 us where its p50 was 24 us. Over more than three
// decades only the powers of ten are labelled, so the labels do not
// crowd, and 2 and 5 in the first decade when its power of ten is below
// the axis. Every labelled value in lo..hi is exact in its text, written
// out: 0.02, 50, 2000, 1000000.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []gplot.Tick {
	if !(lo > 0) || !(hi > lo) {
		return nil
	}
	first, last := math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
	wide := last-first > 3
	var ticks []gplot.Tick
	for e := first; e <= last; e++ {
		p := math.Pow(10, e)
		for m := 1; m < 10; m++ {
			v := float64(m) * p
			if v < lo*(1-1e-9) || v > hi*(1+1e-9) {
				continue
			}
			t := gplot.Tick{Value: v}
			// Wide, the first decade keeps its 2 and 5 when its power of
			// ten is below the axis: a label under the lowest data.
			partial := e == first && p < lo*(1-1e-9)
			if m == 1 || ((!wide || partial) && (m == 2 || m == 5)) {
				// Whole numbers in full, as the other labels of the axis
				// are (1000000, not 1e+06: an RR plot's max in us), and
				// fractions to their digit (0.02, not 2e-02).
				t.Label = strconv.FormatFloat(v, 'f', int(max(-e, 0)), 64)
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}

// linearTicks marks a linear axis from about six round steps (1, 2, 2.5
// or 5 times a power of ten), with a minor tick halfway between labels.
type linearTicks struct{}

func (linearTicks) Ticks(lo, hi float64) []gplot.Tick {
	if !(hi > lo) {
		return []gplot.Tick{{Value: lo, Label: fmt.Sprintf("%g", lo)}}
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
	var ticks []gplot.Tick
	for v := math.Ceil(lo/step) * step; v <= hi+step*1e-9; v += step / 2 {
		t := gplot.Tick{Value: v}
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

// notMeasured are the spec fields that change what is shown, or how a
// result was reached, but not what was measured: a legend that named them
// ("interval_s=1") would tell two measurements of the same thing apart by
// the report's settings.
var notMeasured = map[string]bool{"interval_s": true, "cpu": true, "bind_addr": true, "cport": true}

// Labels names each document for a legend by what differs between them:
// the spec fields that change the measurement (all but the message size,
// which a sweep varies, and notMeasured's), the
// iterations asked, the server and the client host, the environment
// records, the --title and --label items, as "field=value"
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
			if k == "send_size" || notMeasured[k] {
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
		userLabels(m, d)
		foldSettings(m)
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

// WritePlot writes the figure to w as ext (.svg, .png or .pdf): what
// SavePlot writes, for a server that sends it.
func WritePlot(w io.Writer, f *Figure, ext string) error {
	if !slices.Contains(PlotFormats, ext) {
		return fmt.Errorf("plot format %q: use .svg, .png or .pdf", ext)
	}
	return f.write(w, ext)
}
