package report

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"wirespeed/internal/result"
	"wirespeed/internal/spec"
	"wirespeed/internal/units"
)

// MatrixTable lays out a matrix's table: a column per setting varied,
// then each point's socket sizes, (for a sweep) message size, elapsed
// time, the throughput (transactions per second for request/response
// tests), its confidence interval, the iterations, the CPU columns and
// what limited the point, as the sweep table has them. Rows can be
// printed one at a time as they finish: the columns start at widths for
// usual values, and a wider value widens its column from its row on
// (MatrixTableOf, which has every row, fits them all first).
type MatrixTable struct {
	dims  []result.MatrixDimension
	cols  *fixedColumns
	sizes bool // a column for the message size
	rr    bool // transactions per second, service demand per transaction
	level float64
	// underLoad adds RRUL's latency columns (WithUnderLoad).
	underLoad bool
	verbose   bool // every column and the CPU split (Verbose)
}

// Verbose shows the columns the default table leaves out (the socket
// sizes, the sender's device) and each point's CPU split under it.
func (t *MatrixTable) Verbose() *MatrixTable {
	t.verbose = true
	t.cols.hidden = nil
	return t
}

// WithUnderLoad adds RRUL's columns to the table: the idle and loaded
// median round trips and the loaded 99th percentile.
func (t *MatrixTable) WithUnderLoad() *MatrixTable {
	if !t.underLoad {
		t.cols.widths = append(t.cols.widths, underLoadCols...)
	}
	t.underLoad = true
	return t
}

// NewMatrixTable lays out the table of m. sweep adds the message size
// column; rr shows transactions per second instead of throughput; level
// is the confidence level (a fraction) of the interval column.
func NewMatrixTable(m *result.Matrix, sweep, rr bool, level float64) *MatrixTable {
	t := &MatrixTable{dims: m.Dimensions, sizes: sweep, rr: rr, level: level}
	var widths []int
	for _, d := range m.Dimensions {
		w := len(d.Key())
		for _, v := range d.Values {
			w = max(w, len(v))
		}
		widths = append(widths, max(w+2, 6))
	}
	// Socket sizes, message size, elapsed, rate, conf., iter, four CPU,
	// and what limited the point.
	nums := slices.Clone(sweepCols)
	// The columns only -v shows: the socket sizes and the sender's
	// device (as sweepDetail).
	n := len(widths)
	detail := []int{n, n + 1, n + 11, n + 12}
	if !sweep {
		nums = append(nums[:2:2], nums[3:]...)
		detail = []int{n, n + 1, n + 10, n + 11}
	}
	t.cols = newFixedColumns(append(widths, nums...)...).hide(detail...)
	return t
}

// Header writes the head of the table.
func (t *MatrixTable) Header(w io.Writer) {
	rate := []string{"", "Throughput", "10^6bits/sec", ""}
	demand := "us/KB"
	if t.rr {
		rate = []string{"", "Trans.", "per sec", ""}
		demand = "us/Tr"
	}
	size := []string{"Message", "Size", "bytes", ""}
	lines := [][]string{
		{"Recv", "Send", size[0], "", rate[0], "Conf.", "", "Local", "Remote", "Local", "Remote", wireHeader[0][0], wireHeader[0][1], ""},
		{"Socket", "Socket", size[1], "Elapsed", rate[1], "+/-%", "Iter", "CPU", "CPU", "Service", "Service", wireHeader[1][0], wireHeader[1][1], ""},
		{"Size", "Size", size[2], "Time", rate[2], "@ " + levelPct(t.level) + "%", "", "Util", "Util", "Demand", "Demand", wireHeader[2][0], wireHeader[2][1], "Limited"},
		{"bytes", "bytes", size[3], "secs.", rate[3], "", "", "%", "%", demand, demand, wireHeader[3][0], wireHeader[3][1], "by"},
	}
	var out [][]string
	for i, l := range lines {
		dims := make([]string, len(t.dims))
		if i == 1 {
			for j, d := range t.dims {
				dims[j] = d.Key()
			}
		}
		out = append(out, append(dims, t.numbers(l)...))
	}
	if t.underLoad {
		out = underLoadHeader(out)
	}
	writeHeader(w, t.cols, out)
}

// numbers leaves the message size out of a line's cells after the
// settings unless the matrix is of sweeps.
func (t *MatrixTable) numbers(cells []string) []string {
	if t.sizes {
		return cells
	}
	return append(cells[:2:2], cells[3:]...)
}

// matrixLine is one line of a row: its cells and the note after them.
type matrixLine struct {
	cells []string
	note  string
	split string // the second line: the CPU split (cpuSplit)
}

// lines are a row's lines: one per point (one for a run, one per size
// for a sweep), its settings on the first; a skipped row says so.
func (t *MatrixTable) lines(row result.MatrixRow) []matrixLine {
	vals := make([]string, len(t.dims))
	for j, d := range t.dims {
		for _, s := range row.Settings {
			if s.Name == d.Name && s.Side == d.Side {
				vals[j] = s.Value
			}
		}
	}
	if row.Skipped != "" {
		return []matrixLine{{cells: vals, note: "skipped (see below)"}}
	}
	var out []matrixLine
	for i, p := range row.Points {
		if i > 0 {
			vals = make([]string, len(t.dims))
		}
		s := p.Summary
		rate := fmt.Sprintf("%.2f", units.Mega(s.BitsPerSecond))
		if rr := s.RRSummary; rr != nil && t.rr {
			rate = fmt.Sprintf("%.2f", rr.TransactionsPerSecond)
		}
		rcvBuf, sndBuf := pointSockets(p)
		conf, iter, note := pointCells(p, t.verbose)
		cells := []string{fmt.Sprint(rcvBuf), fmt.Sprint(sndBuf), fmt.Sprint(p.MsgSize), fmt.Sprintf("%.2f", s.ElapsedS), rate, conf, iter}
		cells = append(cells, strings.Split(cpuCells(s), "\t")...)
		cells = append(cells, wireCells(s)...)
		cells = append(cells, LimitShort(s.Limit))
		if t.underLoad {
			cells = append(cells, underLoadCells(s)...)
		}
		bidir := bidirLines(p)
		if len(bidir) > 0 {
			note = strings.TrimSpace(sumNote(t.verbose) + "  " + note)
		}
		out = append(out, matrixLine{cells: append(vals, t.numbers(cells)...), note: note})
		for _, l := range bidir {
			out = append(out, matrixLine{cells: append(make([]string, len(t.dims)), t.numbers(l.cells)...), note: l.note})
		}
		out[len(out)-1].split = cpuSplit(s)
	}
	return out
}

// Row writes a row's lines, each point's followed by its CPU split
// (us/sy/hi/si per side) when it has one.
func (t *MatrixTable) Row(w io.Writer, row result.MatrixRow) {
	for _, l := range t.lines(row) {
		fmt.Fprintln(w, t.cols.line(l.cells, l.note))
		if l.split != "" && t.verbose {
			fmt.Fprintln(w, splitIndent+l.split)
		}
	}
}

// fit widens the columns for a row printed later.
func (t *MatrixTable) fit(row result.MatrixRow) {
	for _, l := range t.lines(row) {
		t.cols.fit(l.cells)
	}
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
	on := " on " + strings.Join(devs, " and ")
	if len(devs) == 0 {
		on = " (no device changed)"
	}
	writeWrapped(w, fmt.Sprintf("matrix of %s%s: %d combination%s", strings.Join(dims, " x "), on, n, plural(n)), false)
}

// MatrixTableOf writes a whole matrix document: heading, table (every
// column as wide as its widest value) and notes; verbose, with every
// column (MatrixTable.Verbose) and the notes in full.
func MatrixTableOf(w io.Writer, doc result.Document, verbose bool) {
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
	if doc.Spec.Kind == spec.RRUL {
		t.WithUnderLoad()
	}
	if verbose {
		t.Verbose()
	}
	for _, r := range m.Rows {
		t.fit(r)
	}
	t.Header(w)
	for _, r := range m.Rows {
		t.Row(w, r)
	}
	MatrixNotes(w, doc, verbose)
}

// MatrixNotes writes what the rows cannot say: rows skipped and why, the
// features the kernel moved on its own, intervals not reached, warnings,
// one end changed alone, the environment (verbose) and whether every
// device was restored. Verbose, each is one line; else each fits in
// Width, a note wrapped and a warning cut (brief).
func MatrixNotes(w io.Writer, doc result.Document, verbose bool) {
	m := doc.Matrix
	if m == nil {
		return
	}
	fmt.Fprintln(w)
	for _, r := range m.Rows {
		// A note names its row by number alone (the table has its
		// settings) unless verbose.
		name := fmt.Sprintf("row %d", r.Index)
		if verbose {
			name = fmt.Sprintf("row %d (%s)", r.Index, r.Label)
		}
		if r.Skipped != "" {
			writeWrapped(w, fmt.Sprintf("%s: skipped: %s", name, r.Skipped), verbose)
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
				writeWrapped(w, fmt.Sprintf("%s: setting %s %s on %s also moved %s (the kernel ties them together)",
					name, c.Setting, c.After, c.Device, strings.Join(moved, ", ")), verbose)
			}
		}
		said := map[string]bool{} // a warning once per row
		for _, p := range r.Points {
			at := name
			if len(doc.Sizes) > 0 {
				at = fmt.Sprintf("%s size %d", name, p.MsgSize)
			}
			if c := p.Summary.Confidence; c != nil && c.Stop == spec.ReasonMaxHit {
				writeWrapped(w, notReachedLine(at, c, verbose), verbose)
			}
			for _, x := range p.Warnings {
				s := WarningText(x)
				line := "warning: " + at + ": " + s
				if !verbose {
					line = fitWarning("warning: "+at+": ", x, Width)
				}
				if strings.Contains(s, "confidence interval not reached") || said[line] {
					continue
				}
				said[line] = true
				fmt.Fprintln(w, line)
			}
		}
	}
	if m.Remote == nil {
		for _, d := range m.Dimensions {
			if d.Name == "mtu" {
				writeWrapped(w, fmt.Sprintf("note: the MTU was changed on %s only; the path's MTU is the smaller of both ends' (give --remote-dev to change both)", m.Local.Dev), verbose)
				break
			}
		}
	}
	for _, r := range m.Rows {
		if len(r.Points) == 0 || !verbose {
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
	case len(devs) == 0:
	case len(m.RestoreErrors) > 0:
		writeWrapped(w, "RESTORE FAILED: "+strings.Join(m.RestoreErrors, "; "), verbose)
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
