package plot

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strings"
	"time"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"wirespeed/internal/history"
	"wirespeed/internal/report"
)

// HistoryPlot draws each series' figure against time: a line per
// series, a band over the points' confidence intervals (a whisker at a
// point whose neighbours have none), a dashed vertical line at each
// change point, and each change of the environment between consecutive
// points (Series.Steps) marked on the time axis and labelled under it.
// Every series must have the same unit.
func HistoryPlot(series []history.Series) (*Figure, error) {
	return HistoryPanels(series)
}

// HistoryPanels draws panels of series on one time axis, one above the
// other (at most two: a pair's throughput above its latency), each
// panel as HistoryPlot draws it, the environment changes of every
// series marked in both and labelled under the lowest. Each panel's
// series must share a unit; a panel without points is left out.
func HistoryPanels(panels ...[]history.Series) (*Figure, error) {
	var kept [][]history.Series
	for _, ss := range panels {
		if slices.ContainsFunc(ss, func(s history.Series) bool { return len(s.Points) > 0 }) {
			kept = append(kept, ss)
		}
	}
	switch {
	case len(kept) == 0:
		return nil, fmt.Errorf("nothing to plot: no series has points")
	case len(kept) > 2:
		return nil, fmt.Errorf("%d history panels: at most two", len(kept))
	}
	var all []history.Series
	for _, ss := range kept {
		all = append(all, ss...)
	}
	xmin, xmax := timeRange(all)
	marks := envMarksOf(all)
	f := &Figure{env: marks}
	for k, ss := range kept {
		// The lower panel's key names the figures: the series are the
		// upper's, already named there.
		p, err := historyPanel(ss, xmin, xmax, marks, k > 0)
		if err != nil {
			return nil, err
		}
		if k == 0 {
			f.Main = p
			continue
		}
		f.CPU, f.sharedX, f.split = p, true, 0.5
		// One title over both; the time is labelled under the lower.
		title, upper, _ := strings.Cut(f.Main.Title.Text, "\n")
		_, lower, _ := strings.Cut(f.CPU.Title.Text, "\n")
		var notes []string
		for _, n := range strings.FieldsFunc(upper+"\n"+lower, func(r rune) bool { return r == '\n' || r == ';' }) {
			if n = strings.TrimSpace(n); n != "" && !slices.Contains(notes, n) {
				notes = append(notes, n)
			}
		}
		f.Main.Title.Text = title + " and " + figureTitle(ss) + wrapNotes(f.Main.Title.TextStyle, notes)
		f.CPU.Title.Text = ""
		f.Main.X.Label.Text = ""
	}
	return f, nil
}

// timeRange is the points' time span as Unix seconds, widened by a
// fiftieth on each side so that the first and last points are off the
// frame.
func timeRange(series []history.Series) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, s := range series {
		for _, p := range s.Points {
			x := float64(p.Time.Unix())
			lo, hi = min(lo, x), max(hi, x)
		}
	}
	pad := (hi - lo) / 50
	if pad == 0 {
		pad = 1800
	}
	return lo - pad, hi + pad
}

// historyLabel names a series in a panel's key: by its figure when the
// panel's series are one pair's figures (p50, p90, p99), by its key
// otherwise.
func historyLabel(ss []history.Series, s history.Series) string {
	sameKey, sameFigure := true, true
	for _, o := range ss {
		sameKey = sameKey && o.Key == ss[0].Key
		sameFigure = sameFigure && o.Figure == ss[0].Figure
	}
	switch {
	case sameKey && !sameFigure:
		return s.Figure
	case !sameFigure:
		return report.SeriesName(s.Key) + " " + s.Figure
	}
	return report.SeriesName(s.Key)
}

// figureTitle is what a panel follows: "throughput", "latency (p50,
// p90, p99)", "rtt".
func figureTitle(ss []history.Series) string {
	var figs []string
	for _, s := range ss {
		if !slices.Contains(figs, s.Figure) {
			figs = append(figs, s.Figure)
		}
	}
	if len(figs) == 1 {
		return figs[0]
	}
	return "latency (" + strings.Join(figs, ", ") + ")"
}

func historyPanel(series []history.Series, xmin, xmax float64, marks *envMarks, byFigure bool) (*gplot.Plot, error) {
	unit := series[0].Unit
	hi := 0.0
	for _, s := range series {
		if s.Unit != unit {
			return nil, fmt.Errorf("series of %s and of %s in one plot: give --figure", unit, s.Unit)
		}
		for _, p := range s.Points {
			hi = max(hi, p.Value)
			if p.Hi != nil {
				hi = max(hi, *p.Hi)
			}
		}
	}
	scale, yunit := 1.0, unit
	switch {
	case unit == "bits/s":
		scale, yunit = report.RateUnit(hi)
	case unit == "us" && hi >= 10000:
		scale, yunit = 1000, "ms"
	}
	figure := figureTitle(series)
	p := gplot.New()
	style(p, "History: "+figure, figure+" ("+yunit+")")
	p.X.Tick.Marker = timeTicks{}
	p.X.Label.Text = "time (UTC)"
	p.X.Label.TextStyle.Font.Size = 10
	p.X.Min, p.X.Max = xmin, xmax
	p.Y.Min, p.Y.Max = 0, max(hi/scale, 1e-9)*1.25
	p.Y.Tick.Marker = linearTicks{}
	// The key: a line per series, and the band's and the whiskers'.
	lines := len(series)
	for _, s := range series {
		if slices.ContainsFunc(s.Points, func(pt history.Point) bool { return pt.Lo != nil && pt.Hi != nil }) {
			lines += 2
			break
		}
	}
	keyRoom(&p.Y, hi/scale, lines)
	var changes []gplot.Plotter
	var bands []*band
	var ws []*whiskers
	for i, s := range series {
		if len(s.Points) == 0 {
			continue
		}
		c := seriesColor(i)
		xy := make(plotter.XYs, len(s.Points))
		for j, pt := range s.Points {
			xy[j] = plotter.XY{X: float64(pt.Time.Unix()), Y: pt.Value / scale}
		}
		b, w := intervals(s.Points, scale, c)
		for _, band := range b {
			p.Add(band)
		}
		line, points, err := plotter.NewLinePoints(xy)
		if err != nil {
			return nil, err
		}
		line.Color, points.Color = c, c
		points.Radius = vg.Points(2)
		p.Add(line, points)
		if len(w.xs) > 0 {
			p.Add(w)
		}
		bands = append(bands, b...)
		if len(w.xs) > 0 {
			ws = append(ws, w)
		}
		label := historyLabel(series, s)
		if byFigure {
			label = s.Figure
		}
		p.Legend.Add(label, line, points)
		// The change points: grey when the panel has one series, in the
		// series' colour when it has several.
		cc := color.Color(color.Gray{Y: 90})
		if len(series) > 1 {
			cc = c
		}
		for _, ch := range s.Changes {
			x := float64(ch.Time.Unix())
			l, err := plotter.NewLine(plotter.XYs{{X: x, Y: 0}, {X: x, Y: p.Y.Max}})
			if err != nil {
				continue
			}
			l.Color = cc
			l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
			changes = append(changes, l)
		}
	}
	p.Add(changes...)
	if marks != nil {
		p.Add(marks.lines())
	}
	// What the bands and whiskers are goes in the key, the other
	// marks' meaning in the title.
	bandKeys(p, bands)
	whiskerKeys(p, ws...)
	var notes []string
	if len(changes) > 0 {
		notes = append(notes, "dashed: change points")
	}
	if marks != nil {
		notes = append(notes, "dotted: environment changes")
	}
	p.Title.Text += wrapNotes(p.Title.TextStyle, notes)
	return p, nil
}

// titleWidth is how wide a title line may be: the figure's width less
// a margin.
var titleWidth = 15 * vg.Centimeter

// wrapNotes writes a title's notes after it, "; " between them, on as
// few lines as fit the figure's width.
func wrapNotes(st draw.TextStyle, notes []string) string {
	var out, line string
	for _, n := range notes {
		switch {
		case line == "":
			line = n
		case st.Width(line+"; "+n) <= titleWidth:
			line += "; " + n
		default:
			out += "\n" + line
			line = n
		}
	}
	if line != "" {
		out += "\n" + line
	}
	return out
}

// intervals are the points' confidence intervals: a band over each run
// of two or more consecutive points that have one, a whisker at a point
// that has one alone.
func intervals(pts []history.Point, scale float64, c color.Color) ([]*band, *whiskers) {
	w := &whiskers{col: c, capWidth: vg.Points(6)}
	var bands []*band
	var run *band
	flush := func() {
		if run == nil {
			return
		}
		if len(run.xs) == 1 {
			w.add(run.xs[0], run.lo[0], run.hi[0], historyKind, run.n[0])
		} else {
			bands = append(bands, run)
		}
		run = nil
	}
	for _, pt := range pts {
		if pt.Lo == nil || pt.Hi == nil {
			flush()
			continue
		}
		if run == nil {
			run = &band{col: c}
		}
		run.xs, run.n = append(run.xs, float64(pt.Time.Unix())), append(run.n, pt.Iterations)
		run.lo, run.hi = append(run.lo, *pt.Lo/scale), append(run.hi, *pt.Hi/scale)
	}
	flush()
	return bands, w
}

// band fills the area between lo and hi over xs, in a light shade of
// its series' colour, clipped to the axis.
type band struct {
	xs, lo, hi []float64
	n          []int // the iterations behind each point's interval
	col        color.Color
}

// historyKind is what a history's bands and whiskers are: the archive
// keeps each point's interval, not its level (a throughput's is its
// run's, a latency's -I's default).
const historyKind = "confidence interval of the mean"

// bandKeys adds to p's key what the bands are, with the iterations
// behind them ("n = 3", "n = 2 to 5").
func bandKeys(p *gplot.Plot, bands []*band) {
	if len(bands) == 0 {
		return
	}
	var ns []int
	for _, b := range bands {
		for _, n := range b.n {
			if n > 0 && !slices.Contains(ns, n) {
				ns = append(ns, n)
			}
		}
	}
	text := "band: " + historyKind
	switch len(ns) {
	case 0:
	case 1:
		text += fmt.Sprintf(", n = %d", ns[0])
	default:
		text += fmt.Sprintf(", n = %d to %d", slices.Min(ns), slices.Max(ns))
	}
	p.Legend.Add(text, bandKey{})
}

// bandKey is a key entry's band: a light gray box.
type bandKey struct{}

func (bandKey) Thumbnail(c *draw.Canvas) {
	c.FillPolygon(color.Gray{Y: 200}, []vg.Point{{X: c.Min.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Max.Y}, {X: c.Min.X, Y: c.Max.Y}})
}

func (b *band) Plot(c draw.Canvas, p *gplot.Plot) {
	trX, trY := p.Transforms(&c)
	clip := func(v float64) float64 { return min(max(v, p.Y.Min), p.Y.Max) }
	var poly []vg.Point
	for i := range b.xs {
		poly = append(poly, vg.Point{X: trX(b.xs[i]), Y: trY(clip(b.hi[i]))})
	}
	for i := len(b.xs) - 1; i >= 0; i-- {
		poly = append(poly, vg.Point{X: trX(b.xs[i]), Y: trY(clip(b.lo[i]))})
	}
	r, g, bl, _ := b.col.RGBA()
	c.FillPolygon(color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(bl >> 8), A: 0x40}, poly)
}

// DataRange is the band's x extent; its y does not stretch the axis.
func (b *band) DataRange() (xmin, xmax, ymin, ymax float64) {
	return b.xs[0], b.xs[len(b.xs)-1], math.Inf(1), math.Inf(-1)
}

// envColor is the environment marks' colour, apart from the series'
// palette.
var envColor = color.RGBA{R: 0x7a, G: 0x4a, B: 0x00, A: 0xff}

// envMarks are the environment's changes a history marks: at each
// time, a dotted line up through each panel from a triangle on its time
// axis, and, in a strip under the lowest panel, a short label. A label
// goes in the first lane (row) of the strip where it does not overlap
// the one before it, so that changes close in time stack rather than
// overprint; each hangs from a leader line at its time, and the same
// label at close times (a mesh round's pairs) is written once, the
// leaders of all of them ending on it. Past maxLanes, a change keeps its
// mark and its leader and a lane under the others says how many are not
// labelled.
type envMarks struct {
	xs     []float64
	labels []string
}

const maxLanes = 6

var (
	laneHeight = vg.Points(11)
	envFont    = vg.Points(8)
)

// envMarksOf gathers the series' steps by time (one mark for the
// changes of several series at the same time); nil when there are none.
func envMarksOf(series []history.Series) *envMarks {
	byTime := map[int64][]history.EnvChange{}
	var times []int64
	for _, s := range series {
		for _, st := range s.Steps {
			t := st.Time.Unix()
			if _, ok := byTime[t]; !ok {
				times = append(times, t)
			}
			for _, e := range st.Env {
				if !slices.Contains(byTime[t], e) {
					byTime[t] = append(byTime[t], e)
				}
			}
		}
	}
	if len(times) == 0 {
		return nil
	}
	slices.Sort(times)
	m := &envMarks{}
	for _, t := range times {
		m.xs = append(m.xs, float64(t))
		m.labels = append(m.labels, EnvLabel(byTime[t]))
	}
	return m
}

// lines is what a panel draws of the marks.
func (m *envMarks) lines() gplot.Plotter { return envLines{m} }

type envLines struct{ m *envMarks }

func (l envLines) Plot(c draw.Canvas, p *gplot.Plot) {
	trX, _ := p.Transforms(&c)
	ls := draw.LineStyle{Color: envColor, Width: vg.Points(0.8), Dashes: []vg.Length{vg.Points(1), vg.Points(2)}}
	a := vg.Points(3.5)
	for _, x := range l.m.xs {
		cx := trX(x)
		c.StrokeLine2(ls, cx, c.Min.Y, cx, c.Max.Y)
		c.FillPolygon(envColor, []vg.Point{{X: cx - a, Y: c.Min.Y}, {X: cx + a, Y: c.Min.Y}, {X: cx, Y: c.Min.Y + 1.6*a}})
	}
}

func (l envLines) DataRange() (xmin, xmax, ymin, ymax float64) {
	return math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
}

// placed is a label laid out in the strip.
type placed struct {
	x           vg.Length // the mark
	left, right vg.Length // the text's extent
	lane        int       // -1: not labelled
	// same is set when the label is the one before's, whose text it
	// shares: its leader ends on that label.
	same bool
}

func (m *envMarks) textStyle(p *gplot.Plot) draw.TextStyle {
	st := p.X.Tick.Label
	st.Font.Size = envFont
	st.Color = envColor
	st.XAlign, st.YAlign = draw.XLeft, draw.YCenter
	return st
}

// layout places the labels for a data area from x0 to x1 (the lowest
// panel's, where trX puts the times) in a figure from 0 to width.
func (m *envMarks) layout(p *gplot.Plot, trX func(float64) vg.Length, width vg.Length) ([]placed, int) {
	st := m.textStyle(p)
	gap := vg.Points(3)
	// Each lane's rightmost text; the first lane begins with the strip's
	// name.
	ends := []vg.Length{stripNameX + st.Width(stripName)}
	var out []placed
	unlabelled := false
	for i, x := range m.xs {
		cx := trX(x)
		w := st.Width(m.labels[i])
		// The same change at close times (the pairs of one mesh round,
		// measured one after another): one label, a leader from each.
		if k := len(out) - 1; k >= 0 && m.labels[i] == m.labels[k] && out[k].lane >= 0 {
			for out[k].same {
				k--
			}
			if first := out[k]; cx-first.x < w {
				out = append(out, placed{x: cx, left: first.left, right: first.right, lane: first.lane, same: true})
				continue
			}
		}
		pl := placed{x: cx, left: cx + gap, right: cx + gap + w, lane: -1}
		if pl.right > width {
			pl.left, pl.right = cx-gap-w, cx-gap
		}
		for j := 0; j <= len(ends) && j < maxLanes; j++ {
			if j == len(ends) {
				ends = append(ends, pl.right)
				pl.lane = j
				break
			}
			if ends[j]+2*gap < pl.left {
				ends[j] = pl.right
				pl.lane = j
				break
			}
		}
		unlabelled = unlabelled || pl.lane < 0
		out = append(out, pl)
	}
	if unlabelled {
		// A lane of its own for saying how many are not labelled.
		return out, len(ends) + 1
	}
	return out, len(ends)
}

// The strip's name, at the left of its first lane.
const stripName = "environment"

var stripNameX = vg.Points(2)

// height is the strip's height for lanes of labels.
func stripHeight(lanes int) vg.Length {
	return vg.Points(6) + vg.Length(lanes)*laneHeight + vg.Points(4)
}

// draw draws the strip in c under a panel whose data area has the time
// transform trX.
func (m *envMarks) draw(c draw.Canvas, p *gplot.Plot, trX func(float64) vg.Length) {
	labels, lanes := m.layout(p, trX, c.Max.X)
	st := m.textStyle(p)
	top := c.Max.Y - vg.Points(4)
	laneY := func(lane int) vg.Length { return top - vg.Points(6) - (vg.Length(lane)+0.5)*laneHeight }
	ls := draw.LineStyle{Color: envColor, Width: vg.Points(0.6)}
	c.FillText(st, vg.Point{X: c.Min.X + stripNameX, Y: laneY(0)}, stripName)
	unlabelled := 0
	// Leaders first: a label covers the leaders of later marks that pass
	// behind it, so that each leader is seen to end at its own label.
	for _, pl := range labels {
		lane := pl.lane
		if lane < 0 {
			lane = 0
			unlabelled++
		}
		a := vg.Points(3)
		c.FillPolygon(envColor, []vg.Point{{X: pl.x - a, Y: top - 1.6*a}, {X: pl.x + a, Y: top - 1.6*a}, {X: pl.x, Y: top}})
		c.StrokeLine2(ls, pl.x, top, pl.x, laneY(lane))
	}
	for i, pl := range labels {
		if pl.lane < 0 || pl.same {
			continue
		}
		y := laneY(pl.lane)
		h := laneHeight / 2
		c.FillPolygon(color.White, []vg.Point{{X: pl.left - 1, Y: y - h}, {X: pl.right + 1, Y: y - h}, {X: pl.right + 1, Y: y + h}, {X: pl.left - 1, Y: y + h}})
		c.FillText(st, vg.Point{X: pl.left, Y: y}, m.labels[i])
	}
	// Each leader's foot joins its label's nearer end.
	for _, pl := range labels {
		if pl.lane < 0 {
			continue
		}
		y := laneY(pl.lane)
		switch {
		case pl.x < pl.left:
			c.StrokeLine2(ls, pl.x, y, pl.left, y)
		case pl.x > pl.right:
			c.StrokeLine2(ls, pl.right, y, pl.x, y)
		}
	}
	if unlabelled > 0 {
		// In the lane layout keeps for it, under the others.
		c.FillText(st, vg.Point{X: c.Min.X + stripNameX, Y: laneY(lanes - 1)},
			fmt.Sprintf("%d more not labelled: see the list of changes", unlabelled))
	}
}

// EnvLabel is a short label of what changed in an environment at one
// time, for a chart: "10.0.0.4: qdisc tbf 200M→120M", "a, b: kernel
// 6.13.0", "b: tso off, gso off". Items the same on several hosts are
// written once with the hosts before them; ports are left off the hosts;
// past three items it says how many more.
func EnvLabel(env []history.EnvChange) string {
	var items []string
	hosts := map[string][]string{}
	for _, e := range env {
		it := envItem(e)
		h := e.Host
		if host, _, ok := strings.Cut(h, ":"); ok && strings.Count(h, ":") == 1 {
			h = host
		}
		if !slices.Contains(items, it) {
			items = append(items, it)
		}
		if !slices.Contains(hosts[it], h) {
			hosts[it] = append(hosts[it], h)
		}
	}
	// Items of the same hosts go together: "b: tso off, gso off".
	var groups []string
	var groupHosts []string
	for _, it := range items {
		hs := strings.Join(hosts[it], ", ")
		if k := slices.Index(groupHosts, hs); k >= 0 {
			groups[k] += ", " + it
			continue
		}
		groupHosts = append(groupHosts, hs)
		groups = append(groups, it)
	}
	var parts []string
	for k, g := range groups {
		parts = append(parts, groupHosts[k]+": "+g)
	}
	if len(items) > 3 {
		// Keep the label short: the first group's first items.
		first := strings.SplitN(parts[0], ", ", 4)
		return strings.Join(first[:min(len(first), 3)], ", ") + fmt.Sprintf(" (+%d more)", len(items)-min(len(first), 3))
	}
	return strings.Join(parts, "; ")
}

// envItem is one change, short: "tso off", "mtu 1500→9000", "qdisc tbf
// 200M→120M", "cc bbr".
func envItem(e history.EnvChange) string {
	b, a := report.QdiscRate(e.Name, e.Before, rateShort), report.QdiscRate(e.Name, e.After, rateShort)
	switch {
	case a == "":
		return e.Name + " removed"
	case b == "" || e.Name == "tso" || a == "on" || a == "off":
		return e.Name + " " + a
	case len(b)+len(a) <= 24:
		// "tbf 200M→120M": the after's first word left off when the
		// same as the before's.
		if bk, _, ok := strings.Cut(b, " "); ok {
			if rest, ok := strings.CutPrefix(a, bk+" "); ok {
				a = rest
			}
		}
		return e.Name + " " + b + "→" + a
	}
	return e.Name + " " + a
}

// rateShort is "120M", "1.50G", "500k".
func rateShort(_ string, bps float64) string {
	switch {
	case bps >= 1e9:
		return report.TrimFloat(bps/1e9) + "G"
	case bps >= 1e6:
		return report.TrimFloat(bps/1e6) + "M"
	}
	return report.TrimFloat(bps/1e3) + "k"
}

// timeTicks mark a time axis (Unix seconds, shown in UTC) at round
// steps, from a second to four weeks: the fewest that give at most six
// labels, or, where those give fewer than four (a 45 s history had one
// label, a 20-day one three), the next finer step that gives four; a
// minor tick between. A label is the time of day, with seconds where
// the step is under a minute, and names the date under it at the first
// tick and wherever the day changes (the date alone from a day's
// steps); a tick within a 25th of the axis' right end is left
// unlabelled. gonum's TimeTicks placed them at 00:36, 03:23, 06:10.
type timeTicks struct{}

var timeSteps = []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 10 * time.Second, 15 * time.Second, 30 * time.Second,
	time.Minute, 2 * time.Minute, 4 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute,
	time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour, 2 * 24 * time.Hour, 4 * 24 * time.Hour,
	7 * 24 * time.Hour, 14 * 24 * time.Hour, 28 * 24 * time.Hour}

func (timeTicks) Ticks(lo, hi float64) []gplot.Tick {
	if !(hi > lo) {
		return nil
	}
	k := len(timeSteps) - 1
	for i, s := range timeSteps {
		if (hi-lo)/s.Seconds() <= 6 {
			k = i
			break
		}
	}
	ticks := timeTicksAt(lo, hi, timeSteps[k])
	for ; k > 0 && labelled(ticks) < 4; k-- {
		ticks = timeTicksAt(lo, hi, timeSteps[k-1])
	}
	return ticks
}

func labelled(ticks []gplot.Tick) int {
	n := 0
	for _, t := range ticks {
		if t.Label != "" {
			n++
		}
	}
	return n
}

// timeTicksAt are the ticks of lo..hi at step, labelled.
func timeTicksAt(lo, hi float64, step time.Duration) []gplot.Tick {
	sec := int64(step.Seconds())
	first := int64(math.Ceil(lo/float64(sec))) * sec
	if step >= 7*24*time.Hour {
		// Weeks from a Monday: 1970-01-01 was a Thursday.
		first = int64(math.Ceil((lo-4*86400)/float64(sec)))*sec + 4*86400
	}
	clock := "15:04"
	if step < time.Minute {
		clock = "15:04:05"
	}
	var ticks []gplot.Tick
	lastDay := ""
	for t := first; float64(t) <= hi; t += sec {
		tm := time.Unix(t, 0).UTC()
		label := tm.Format(clock)
		if day := tm.Format("01-02"); day != lastDay {
			label = tm.Format(clock + "\n01-02")
			if step >= 24*time.Hour {
				label = day
			}
			lastDay = day
		} else if step >= 24*time.Hour {
			label = tm.Format("01-02")
		}
		if hi-float64(t) < (hi-lo)/25 {
			// Centred on its tick, the label would run off the figure's
			// right edge.
			label = ""
		}
		ticks = append(ticks, gplot.Tick{Value: float64(t), Label: label})
		if mid := float64(t + sec/2); mid <= hi {
			ticks = append(ticks, gplot.Tick{Value: mid})
		}
	}
	if first-sec/2 >= int64(lo) {
		ticks = append(ticks, gplot.Tick{Value: float64(first - sec/2)})
	}
	return ticks
}
