package plot

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"wirespeed/internal/report"
)

// whiskers are intervals drawn as vertical lines with caps at x, from lo
// to hi (data values): a point's confidence interval, or the range of a
// bar's iterations. Each says what it is (its kind, for the key) and
// over how many iterations (n). An end past the axis (below its minimum,
// or at or below 0 on a log axis, where a noisy interval of two
// iterations can reach, or above its maximum) is clipped at the axis and
// drawn as an arrowhead instead of a cap, so that a clipped whisker is
// not read as the interval's end. whiskerKeys puts the kinds, their n
// and the arrowhead in the panel's key.
type whiskers struct {
	xs, lo, hi []float64
	kind       []string // "99% t-interval of the mean", "range of the iterations"
	n          []int    // the iterations behind each; 0 unknown
	col        color.Color
	capWidth   vg.Length
	// top, when above 0, is where the data area ends under the key: an
	// end above it is cut there, as one past the axis is.
	top float64
	// showN writes each whisker's n beside its top: set by whiskerKeys
	// when the whiskers of one kind are over different numbers of
	// iterations, which one line of the key cannot say. labels are the
	// n labels drawn so far by the panel's whiskers, so that one is not
	// written over another (two series' points at one size); first
	// empties them when the panel is drawn again.
	showN  bool
	labels *[]vg.Rectangle
	first  bool
}

func (w *whiskers) add(x, lo, hi float64, kind string, n int) {
	w.xs, w.lo, w.hi = append(w.xs, x), append(w.lo, lo), append(w.hi, hi)
	w.kind, w.n = append(w.kind, kind), append(w.n, n)
}

// ciKind is the kind of a confidence interval at level (0.99): what the
// results' intervals are (stats: Student's t over the iterations' means).
func ciKind(level float64) string {
	return report.LevelPct(level) + "% t-interval of the mean"
}

// rangeKind is the kind of a bar's whisker from the lowest to the highest
// of its iterations.
const rangeKind = "range of the iterations (lowest to highest)"

// drawn reports whether whisker i has both ends.
func (w *whiskers) drawn(i int) bool { return !math.IsNaN(w.lo[i]) && !math.IsNaN(w.hi[i]) }

// ceiling is where whisker ends are cut above: the axis' maximum, or
// top when lower.
func (w *whiskers) ceiling(ax *gplot.Axis) float64 {
	if w.top > 0 && w.top < ax.Max {
		return w.top
	}
	return ax.Max
}

// clippedBy reports whether whisker i reaches past ax's range as set.
func (w *whiskers) clippedBy(ax *gplot.Axis, i int) bool {
	if !w.drawn(i) {
		return false
	}
	return w.lo[i] < ax.Min || w.hi[i] > w.ceiling(ax)
}

func (w *whiskers) Plot(c draw.Canvas, p *gplot.Plot) {
	trX, trY := p.Transforms(&c)
	ls := draw.LineStyle{Color: w.col, Width: vg.Points(1)}
	half := w.capWidth / 2
	ceil := w.ceiling(&p.Y)
	if w.first && w.labels != nil {
		*w.labels = (*w.labels)[:0]
	}
	for i := range w.xs {
		lo, hi := w.lo[i], w.hi[i]
		if !w.drawn(i) || hi < p.Y.Min || lo > ceil {
			continue
		}
		xm := trX(w.xs[i])
		ylo, yhi := trY(max(lo, p.Y.Min)), trY(min(hi, ceil))
		c.StrokeLine2(ls, xm, ylo, xm, yhi)
		for _, end := range []struct {
			y       vg.Length
			clipped bool
			dir     vg.Length // the way out of the axis: -1 down, 1 up
		}{{ylo, lo < p.Y.Min, -1}, {yhi, hi > ceil, 1}} {
			if !end.clipped {
				c.StrokeLine2(ls, xm-half, end.y, xm+half, end.y)
				continue
			}
			arrowhead(c, w.col, xm, end.y, end.dir)
		}
		if w.showN && w.n[i] > 0 {
			w.labelN(c, p, xm+half, yhi, ylo, "n="+strconv.Itoa(w.n[i]))
		}
	}
}

// labelN writes a whisker's n to the right of it, by its top or its
// bottom or, where both are taken by another's, to its left; where all
// are taken, not at all.
func (w *whiskers) labelN(c draw.Canvas, p *gplot.Plot, x, yhi, ylo vg.Length, text string) {
	st := p.Legend.TextStyle
	st.Font.Size = vg.Points(8)
	st.Color = w.col
	st.XAlign, st.YAlign = draw.XLeft, draw.YCenter
	wd, h := st.Width(text), st.FontExtents().Height
	gap := vg.Points(2)
	for _, at := range []vg.Point{{X: x + gap, Y: yhi - h/2}, {X: x + gap, Y: ylo + h/2}, {X: x - w.capWidth - gap - wd, Y: yhi - h/2}} {
		r := vg.Rectangle{Min: vg.Point{X: at.X, Y: at.Y - h/2}, Max: vg.Point{X: at.X + wd, Y: at.Y + h/2}}
		taken := false
		if w.labels != nil {
			for _, o := range *w.labels {
				taken = taken || (r.Min.X < o.Max.X && o.Min.X < r.Max.X && r.Min.Y < o.Max.Y && o.Min.Y < r.Max.Y)
			}
		}
		if taken {
			continue
		}
		if w.labels != nil {
			*w.labels = append(*w.labels, r)
		}
		c.FillText(st, at, text)
		return
	}
}

// arrowhead fills an arrowhead with its tip at x, y pointing up (dir 1)
// or down (-1): a whisker's end cut at the axis.
func arrowhead(c draw.Canvas, col color.Color, x, y, dir vg.Length) {
	arrowheadOf(c, col, x, y, dir, vg.Points(4))
}

// arrowheadOf is an arrowhead of half-width a, 1.6 a long.
func arrowheadOf(c draw.Canvas, col color.Color, x, y, dir, a vg.Length) {
	c.FillPolygon(col, []vg.Point{{X: x - a, Y: y - dir*1.6*a}, {X: x + a, Y: y - dir*1.6*a}, {X: x, Y: y}})
}

// DataRange is the whiskers' x extent; their y ends do not stretch the
// axis (the axis is set from the figures, and an end past it is clipped
// and marked).
func (w *whiskers) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax = math.Inf(1), math.Inf(-1)
	for _, x := range w.xs {
		xmin, xmax = min(xmin, x), max(xmax, x)
	}
	return xmin, xmax, math.Inf(1), math.Inf(-1)
}

// whiskerKinds is how many kinds of whisker ws draw: the key's lines
// about them, besides the arrowhead's.
func whiskerKinds(ws ...*whiskers) int {
	var kinds []string
	for _, w := range ws {
		for i := range w.xs {
			if w.drawn(i) && !slices.Contains(kinds, w.kind[i]) {
				kinds = append(kinds, w.kind[i])
			}
		}
	}
	return len(kinds)
}

// whiskerKeys adds to p's key what the whiskers drawn in it are, once
// per kind, with the iterations behind them ("whiskers: 99% t-interval
// of the mean, n = 3"; "n = 2 to 4, at each" when they differ, and then
// each whisker is marked with its n), and, when one is cut at p's y
// axis as set, what the arrowhead means. Call it once the axis is set.
func whiskerKeys(p *gplot.Plot, ws ...*whiskers) {
	var kinds []string
	ns := map[string][]int{}
	clipped := false
	for _, w := range ws {
		for i := range w.xs {
			if !w.drawn(i) {
				continue
			}
			k := w.kind[i]
			if !slices.Contains(kinds, k) {
				kinds = append(kinds, k)
			}
			if w.n[i] > 0 && !slices.Contains(ns[k], w.n[i]) {
				ns[k] = append(ns[k], w.n[i])
			}
			clipped = clipped || w.clippedBy(&p.Y, i)
		}
	}
	for _, k := range kinds {
		text := "whiskers: " + k
		switch n := ns[k]; len(n) {
		case 0:
		case 1:
			text += fmt.Sprintf(", n = %d", n[0])
		default:
			text += fmt.Sprintf(", n = %d to %d (beside each)", slices.Min(n), slices.Max(n))
			labels := new([]vg.Rectangle)
			for j, w := range ws {
				if slices.Contains(w.kind, k) {
					w.showN, w.labels, w.first = true, labels, j == 0
				}
			}
		}
		p.Legend.Add(text, whiskerKey{})
	}
	if clipped {
		p.Legend.Add(clippedKey, whiskerKey{clipped: true})
	}
}

// clippedKey is the key's word for a whisker cut at the axis.
const clippedKey = "arrowhead: the interval goes on past the axis"

// whiskerKey is a key entry's whisker, gray: capped at both ends, or,
// clipped, ending in an arrowhead.
type whiskerKey struct{ clipped bool }

func (k whiskerKey) Thumbnail(c *draw.Canvas) {
	col := color.Gray{Y: 60}
	ls := draw.LineStyle{Color: col, Width: vg.Points(1)}
	x := (c.Min.X + c.Max.X) / 2
	// Within the entry's line, less a point above and below.
	lo, hi := c.Min.Y+vg.Points(1), c.Max.Y-vg.Points(1)
	half := vg.Points(3)
	c.StrokeLine2(ls, x-half, hi, x+half, hi)
	if k.clipped {
		a := (hi - lo) / 4
		c.StrokeLine2(ls, x, lo+a, x, hi)
		arrowheadOf(*c, col, x, lo, -1, a)
		return
	}
	c.StrokeLine2(ls, x, lo, x, hi)
	c.StrokeLine2(ls, x-half, lo, x+half, lo)
}
