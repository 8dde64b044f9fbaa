package report

import (
	"fmt"
	"io"
	"strings"

	"wirespeed/internal/result"
	"wirespeed/internal/spec"
	"wirespeed/internal/units"
)

// MatrixTable lays out a matrix's table: a column per setting varied,
// then (for a sweep) the message size, the throughput (transactions per
// second for request/response tests), its confidence interval, the
// iterations, the CPU columns and what limited the point. Its widths are fixed when it is made,
// so that rows can be printed one at a time as they finish.
type MatrixTable struct {
	dims   []result.MatrixDimension
	widths []int
	sizes  bool   // a column for the message size
	rate   string // the unit of the rate column
	level  float64
}

// NewMatrixTable lays out the table of m. sweep adds the message size
// column; rr shows transactions per second instead of throughput; level
// is the confidence level (a fraction) of the interval column.
func NewMatrixTable(m *result.Matrix, sweep, rr bool, level float64) *MatrixTable {
	t := &MatrixTable{dims: m.Dimensions, sizes: sweep, rate: "10^6bits/sec", level: level}
	if rr {
		t.rate = "trans/sec"
	}
	for _, d := range m.Dimensions {
		w := len(d.Key())
		for _, v := range d.Values {
			w = max(w, len(v))
		}
		t.widths = append(t.widths, max(w+2, 6))
	}
	return t
}

// number columns after the settings: size, rate, conf., iter, four CPU,
// and what limited the point.
var matrixCols = []int{9, 13, 8, 5, 8, 8, 9, 9, 10}

// Header writes the head of the table.
func (t *MatrixTable) Header(w io.Writer) {
	lines := [][]string{
		{"Message", "", "Conf.", "", "Local", "Remote", "Local", "Remote", ""},
		{"Size", "Throughput", "+/-%", "Iter", "CPU", "CPU", "Service", "Service", ""},
		{"bytes", t.rate, "@ " + levelPct(t.level) + "%", "", "Util", "Util", "Demand", "Demand", "Limited"},
		{"", "", "", "", "%", "%", "us/KB", "us/KB", "by"},
	}
	if strings.HasPrefix(t.rate, "trans") {
		lines[1][1] = "Trans."
		lines[2][1] = "per sec"
	}
	for i, l := range lines {
		dims := make([]string, len(t.dims))
		if i == 1 {
			for j, d := range t.dims {
				dims[j] = d.Key()
			}
		}
		t.line(w, dims, l, "")
	}
	fmt.Fprintln(w)
}

// Row writes a row's lines: one per point (one for a run, one per size
// for a sweep), its settings on the first; a skipped row says so.
func (t *MatrixTable) Row(w io.Writer, row result.MatrixRow) {
	vals := make([]string, len(t.dims))
	for j, d := range t.dims {
		for _, s := range row.Settings {
			if s.Name == d.Name && s.Side == d.Side {
				vals[j] = s.Value
			}
		}
	}
	if row.Skipped != "" {
		t.line(w, vals, nil, "skipped (see below)")
		return
	}
	for i, p := range row.Points {
		if i > 0 {
			vals = make([]string, len(t.dims))
		}
		s := p.Summary
		rate := fmt.Sprintf("%.2f", units.Mega(s.BitsPerSecond))
		if rr := s.RRSummary; rr != nil && strings.HasPrefix(t.rate, "trans") {
			rate = fmt.Sprintf("%.2f", rr.TransactionsPerSecond)
		}
		conf, iter, note := pointCells(p)
		cells := []string{fmt.Sprint(p.MsgSize), rate, conf, iter}
		cells = append(cells, strings.Split(cpuCells(s), "\t")...)
		cells = append(cells, LimitShort(s.Limit))
		t.line(w, vals, cells, note)
	}
}

func (t *MatrixTable) line(w io.Writer, dims, cells []string, note string) {
	var b strings.Builder
	for j, v := range dims {
		fmt.Fprintf(&b, "%*s", t.widths[j], v)
	}
	for i, c := range cells {
		if i == 0 && !t.sizes {
			continue
		}
		fmt.Fprintf(&b, "%*s", matrixCols[i], c)
	}
	if note != "" {
		b.WriteString("  " + note)
	}
	fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
}

// MatrixHeading says what a matrix varies, on which devices, before its
// table.
func MatrixHeading(w io.Writer, m *result.Matrix) {
	var devs []string
	for _, d := range []struct {
		side string
		dev  *result.MatrixDevice
	}{{"local", m.Local}, {"remote", m.Remote}} {
		if d.dev == nil {
			continue
		}
		s := fmt.Sprintf("%s (%s", d.dev.Dev, d.side)
		switch d.dev.Via {
		case "netns":
			s += ", namespace " + d.dev.Netns
		case "server":
			s += ", by the server"
		}
		devs = append(devs, s+")")
	}
	var dims []string
	n := 1
	for _, d := range m.Dimensions {
		dims = append(dims, d.Key()+" "+strings.Join(d.Values, ","))
		n *= len(d.Values)
	}
	fmt.Fprintf(w, "matrix of %s on %s: %d combination%s\n", strings.Join(dims, " x "), strings.Join(devs, " and "), n, plural(n))
}

// MatrixTableOf writes a whole matrix document: heading, table and notes.
func MatrixTableOf(w io.Writer, doc result.Document) {
	m := doc.Matrix
	if m == nil {
		return
	}
	level := 0.99
	if doc.Repeat != nil {
		level = doc.Repeat.ConfidenceLevel
	}
	MatrixHeading(w, m)
	fmt.Fprintln(w)
	t := NewMatrixTable(m, len(doc.Sizes) > 0, doc.Spec.Kind.RR(), level)
	t.Header(w)
	for _, r := range m.Rows {
		t.Row(w, r)
	}
	MatrixNotes(w, doc)
}

// MatrixNotes writes what the rows cannot say: rows skipped and why, the
// features the kernel moved on its own, intervals not reached, warnings,
// one end changed alone, the environment, and whether every device was
// restored.
func MatrixNotes(w io.Writer, doc result.Document) {
	m := doc.Matrix
	if m == nil {
		return
	}
	fmt.Fprintln(w)
	for _, r := range m.Rows {
		name := fmt.Sprintf("row %d (%s)", r.Index, r.Label)
		if r.Skipped != "" {
			fmt.Fprintf(w, "%s: skipped: %s\n", name, r.Skipped)
		}
		// A feature moved as a consequence of one setting and then asked
		// for by another of the same row ended as asked: no news.
		asked := map[string]bool{}
		for _, c := range r.Changes {
			for _, f := range c.Features {
				if !f.Consequence {
					asked[c.Device+"/"+f.Name] = true
				}
			}
		}
		for _, c := range r.Changes {
			var moved []string
			for _, f := range c.Features {
				if f.Consequence && !asked[c.Device+"/"+f.Name] {
					moved = append(moved, f.Name+" "+onOff(f.After))
				}
			}
			if len(moved) > 0 {
				fmt.Fprintf(w, "%s: setting %s %s on %s also moved %s (the kernel ties them together)\n",
					name, c.Setting, c.After, c.Device, strings.Join(moved, ", "))
			}
		}
		for _, p := range r.Points {
			at := name
			if len(doc.Sizes) > 0 {
				at = fmt.Sprintf("%s size %d", name, p.MsgSize)
			}
			if c := p.Summary.Confidence; c != nil && c.Stop == spec.ReasonMaxHit {
				fmt.Fprintf(w, "%s: interval not reached in %d iterations (asked +/-%.4g%% @ %s%% conf.):%s\n",
					at, c.Iterations, c.WidthPct/2, levelPct(c.Level), notReached(c))
			}
			for _, s := range p.Warnings {
				if strings.Contains(s, "confidence interval not reached") {
					continue
				}
				fmt.Fprintf(w, "warning: %s: %s\n", at, s)
			}
		}
	}
	if m.Remote == nil {
		for _, d := range m.Dimensions {
			if d.Name == "mtu" {
				fmt.Fprintf(w, "note: the MTU was changed on %s only; the path's MTU is the smaller of both ends' (give --remote-dev to change both)\n", m.Local.Dev)
				break
			}
		}
	}
	for _, r := range m.Rows {
		if len(r.Points) == 0 {
			continue
		}
		res := r.Points[0].Result
		if res.Local.Env != nil || res.Remote.Env != nil {
			fmt.Fprintf(w, "environment of row %d (the other rows differ in their settings):\n", r.Index)
			EnvSummary(w, res)
		}
		break
	}
	var devs []string
	for _, d := range []*result.MatrixDevice{m.Local, m.Remote} {
		if d != nil {
			devs = append(devs, d.Dev)
		}
	}
	switch {
	case len(m.RestoreErrors) > 0:
		fmt.Fprintf(w, "RESTORE FAILED: %s\n", strings.Join(m.RestoreErrors, "; "))
	case m.Keep:
		fmt.Fprintf(w, "kept the last row's settings on %s (--keep)\n", strings.Join(devs, " and "))
	default:
		fmt.Fprintf(w, "restored %s: every setting is as it was before the matrix\n", strings.Join(devs, " and "))
	}
}

// MatrixSeries is a matrix document's rows as series: one per measured
// row, labelled with its settings, for CSV and plots.
func MatrixSeries(doc result.Document) []Series {
	if doc.Matrix == nil {
		return nil
	}
	var out []Series
	for _, r := range doc.Matrix.Rows {
		if len(r.Points) > 0 {
			out = append(out, Series{Label: r.Label, Points: r.Points})
		}
	}
	return out
}
