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

// sweepCols are the sweep table's starting column widths, so that its
// rows can be printed one at a time as the points finish; a wider value
// widens its column (fixedColumns).
var sweepCols = []int{9, 9, 9, 8, 13, 7, 5, 8, 8, 8, 8, 9, 8, 9}

// sweepDetail are the sweep table's columns only -v shows: the socket
// sizes and the sender's device's packets and bytes per packet.
var sweepDetail = []int{0, 1, 11, 12}

// sweepColumns are the columns of a sweep of kind: RRUL's three latency
// columns after the others; verbose, every column, else those of
// sweepDetail left out.
func sweepColumns(kind spec.Kind, verbose bool) *fixedColumns {
	c := newFixedColumns(sweepCols...)
	if kind == spec.RRUL {
		c = newFixedColumns(append(slices.Clone(sweepCols), underLoadCols...)...)
	}
	if !verbose {
		c.hide(sweepDetail...)
	}
	return c
}

// sweepHeaderLines are the head of the sweep table.
func sweepHeaderLines(level float64, kind spec.Kind) [][]string {
	lines := [][]string{
		{"Recv", "Send", "Send", "", "", "", "", "Local", "Remote", "Local", "Remote", wireHeader[0][0], wireHeader[0][1], ""},
		{"Socket", "Socket", "Message", "Elapsed", "", "Conf.", "", "CPU", "CPU", "Service", "Service", wireHeader[1][0], wireHeader[1][1], ""},
		{"Size", "Size", "Size", "Time", "Throughput", "+/-%", "Iter", "Util", "Util", "Demand", "Demand", wireHeader[2][0], wireHeader[2][1], "Limited"},
		{"bytes", "bytes", "bytes", "secs.", "10^6bits/sec", "@ " + levelPct(level) + "%", "", "%", "%", "us/KB", "us/KB", wireHeader[3][0], wireHeader[3][1], "by"},
	}
	if kind.RR() {
		lines[0][2], lines[1][2], lines[2][2] = "Request", "Resp.", "Size"
		lines[1][4], lines[2][4], lines[3][4] = "Trans.", "Rate", "per sec"
		lines[3][9], lines[3][10] = "us/Tr", "us/Tr"
	}
	if kind == spec.RRUL {
		lines = underLoadHeader(lines)
	}
	return lines
}

// SweepHeader writes the head of netperf's table for a sweep: socket and
// message sizes, elapsed time, throughput, the +/- of its confidence
// interval at level (a fraction), iterations, and the CPU columns
// (utilization and service demand, local and remote), and what limited
// the point (LimitShort, docs/limits.md). A sweep of a
// request/response test shows the request size and the transaction rate
// instead, as netperf's TCP_RR table does.
//
// Verbose, it has the socket sizes and the sender's device's columns too.
func SweepHeader(w io.Writer, level float64, kind spec.Kind, verbose bool) {
	writeHeader(w, sweepColumns(kind, verbose), sweepHeaderLines(level, kind))
}

func writeHeader(w io.Writer, c *fixedColumns, lines [][]string) {
	for _, l := range lines {
		fmt.Fprintln(w, c.header(l))
	}
	fmt.Fprintln(w)
}

// SweepRow writes one point's row: the mean over its iterations, with a
// note when its interval was not reached or it was interrupted, and,
// verbose, under it each side's CPU split (us/sy/hi/si) when the point
// has one. Printed alone, as a sweep's rows are while it runs, a value
// wider than its column pushes the rest of its row right rather than run
// into its neighbour.
func SweepRow(w io.Writer, p result.Point, verbose bool) {
	sweepPoint(w, sweepColumns(p.Spec.Kind, verbose), p, verbose)
}

// sweepPoint writes a point's lines: its row, a line per direction of a
// test of both at once (bidirLines), and, verbose, its CPU split.
func sweepPoint(w io.Writer, c *fixedColumns, p result.Point, verbose bool) {
	cells, note := sweepCells(p, verbose)
	fmt.Fprintln(w, c.line(cells, note))
	for _, l := range bidirLines(p) {
		fmt.Fprintln(w, c.line(l.cells, l.note))
	}
	if verbose {
		splitLine(w, p.Summary)
	}
}

// bidirLines are the lines under the row of a point with two directions
// (TCP_BIDIR), whose row has their sum: one per direction with its socket
// sizes, elapsed time and throughput, named tx (client to server, what
// this host sent) or rx (server to client). The cells are the sweep
// table's: socket sizes, the message size (empty), elapsed, throughput.
func bidirLines(p result.Point) []matrixLine {
	if len(p.Directions) < 2 {
		return nil
	}
	var out []matrixLine
	for _, d := range p.Directions {
		snd, rcv, _ := socketSizes(p.Result, d)
		name := "tx"
		if d.Direction == spec.ServerToClient {
			name = "rx"
		}
		out = append(out, matrixLine{
			cells: []string{fmt.Sprint(rcv), fmt.Sprint(snd), "", fmt.Sprintf("%.2f", d.Summary.ElapsedS), fmt.Sprintf("%.2f", units.Mega(d.Summary.BitsPerSecond))},
			note:  name + " " + dirLabel(d.Direction),
		})
	}
	return out
}

// splitIndent is where a row's second line, its CPU split, starts.
const splitIndent = "      "

// splitLine writes a row's second line, each side's CPU split, when it
// has one.
func splitLine(w io.Writer, s result.Summary) {
	if l := cpuSplit(s); l != "" {
		fmt.Fprintln(w, splitIndent+l)
	}
}

// pointSockets are the receive and send socket sizes of a point's row,
// as a run's table has them (socketSizes).
func pointSockets(p result.Point) (rcvBuf, sndBuf int) {
	if len(p.Directions) == 0 {
		return 0, 0
	}
	snd, rcv, _ := socketSizes(p.Result, p.Directions[0])
	return rcv, snd
}

func sweepCells(p result.Point, verbose bool) (cells []string, note string) {
	s := p.Summary
	rcvBuf, sndBuf := pointSockets(p)
	conf, iter, note := pointCells(p, verbose)
	rate := fmt.Sprintf("%.2f", units.Mega(s.BitsPerSecond))
	if s.RRSummary != nil {
		rate = fmt.Sprintf("%.2f", s.TransactionsPerSecond)
	}
	cells = []string{
		fmt.Sprint(rcvBuf), fmt.Sprint(sndBuf), fmt.Sprint(p.MsgSize),
		fmt.Sprintf("%.2f", s.ElapsedS), rate, conf, iter,
	}
	cells = append(cells, strings.Split(cpuCells(s), "\t")...)
	cells = append(cells, wireCells(s)...)
	cells = append(cells, LimitShort(s.Limit))
	cells = append(cells, underLoadCells(s)...)
	if len(p.Directions) > 1 {
		note = strings.TrimSpace(sumNote(verbose) + "  " + note)
	}
	return cells, note
}

// SweepTable writes a sweep's table: a row per point in the order of the
// sizes, every column as wide as its widest value, then what a reader
// must know about the points: intervals not reached, interruptions and
// warnings.
func SweepTable(w io.Writer, doc result.Document, verbose bool) {
	level := 0.99
	if doc.Repeat != nil {
		level = doc.Repeat.ConfidenceLevel
	}
	c := sweepColumns(doc.Spec.Kind, verbose)
	for _, p := range doc.Points {
		cells, _ := sweepCells(p, verbose)
		c.fit(cells)
	}
	writeHeader(w, c, sweepHeaderLines(level, doc.Spec.Kind))
	for _, p := range doc.Points {
		sweepPoint(w, c, p, verbose)
	}
	SweepNotes(w, doc, verbose)
}

// SweepNotes writes what the rows cannot say: sizes not measured yet,
// and each point's warnings.
//
// Verbose, each is one line; else each fits in Width, a note wrapped and
// a warning cut (brief).
func SweepNotes(w io.Writer, doc result.Document, verbose bool) {
	done := map[int]bool{}
	for _, p := range doc.Points {
		done[p.MsgSize] = p.Complete()
	}
	var missing []string
	for _, n := range doc.Sizes {
		if !done[n] {
			missing = append(missing, fmt.Sprint(n))
		}
	}
	first := true
	para := func() {
		if first {
			fmt.Fprintln(w)
			first = false
		}
	}
	if len(missing) > 0 {
		para()
		fmt.Fprintf(w, "not measured yet: %s (continue with --resume)\n", strings.Join(missing, ", "))
	}
	for _, p := range doc.Points {
		if c := p.Summary.Confidence; c != nil && c.Stop == spec.ReasonMaxHit {
			para()
			writeWrapped(w, notReachedLine(fmt.Sprintf("size %d", p.MsgSize), c, verbose), verbose)
		}
		said := map[string]bool{} // a point's warning, once
		for _, x := range p.Warnings {
			s := WarningText(x)
			line := fmt.Sprintf("warning: size %d: %s", p.MsgSize, s)
			if !verbose {
				line = fitWarning(fmt.Sprintf("warning: size %d: ", p.MsgSize), x, Width)
			}
			// The line above says it once for all the figures.
			if strings.Contains(s, "confidence interval not reached") || said[line] {
				continue
			}
			said[line] = true
			para()
			fmt.Fprintln(w, line)
		}
	}
}

// notReachedLine is the note of a point at whose interval was not
// reached: the +/- of each figure wider than asked after the iterations,
// and what was asked. Not verbose, it starts with the "!" that marks the
// point's +/-% cell (pointCells). That cell is the throughput's: when
// the throughput's interval was reached and only a CPU's was not, the
// note says so, or the reader of "0.3!" would doubt the 0.3.
func notReachedLine(at string, c *result.Confidence, verbose bool) string {
	head := "! " + at + ":"
	if verbose {
		head = at + ": interval not reached:"
	}
	line := fmt.Sprintf("%s after %d iterations%s, asked +/-%.4g%% @ %s%% conf.",
		head, c.Iterations, notReachedFigures(c), c.WidthPct/2, levelPct(c.Level))
	if h, ok := c.HalfWidthPct(); ok && c.Reached {
		line += fmt.Sprintf("; only the CPU missed it, throughput +/-%.1f%% reached", h)
	}
	return line
}

// notReachedFigures lists the +/- of each figure whose interval is wider
// than asked.
func notReachedFigures(c *result.Confidence) string {
	var parts []string
	for _, f := range []struct {
		name string
		fc   *result.FigureConfidence
	}{{"throughput", &c.FigureConfidence}, {"local CPU", c.LocalCPU}, {"remote CPU", c.RemoteCPU}} {
		if f.fc == nil || f.fc.Reached {
			continue
		}
		if h, ok := f.fc.HalfWidthPct(); ok {
			parts = append(parts, fmt.Sprintf("%s +/-%.1f%%", f.name, h))
		} else {
			parts = append(parts, f.name+" no interval")
		}
	}
	return " " + strings.Join(parts, ", ")
}

// pointCells are a measured point's +/-% and iterations cells of a sweep
// or matrix table, "-" when there is no interval, and the note after its
// row: "INTERRUPTED" when it was, "not reached" when its interval was
// not. Not verbose, an interval not reached is a "!" after its +/-%
// instead, which the notes under the table explain (notReachedLine): the
// columns of the default table leave no room for the word.
func pointCells(p result.Point, verbose bool) (conf, iter, note string) {
	conf, iter = "-", "1"
	if c := p.Summary.Confidence; c != nil {
		iter = fmt.Sprint(c.Iterations)
		if h, ok := c.HalfWidthPct(); ok {
			conf = fmt.Sprintf("%.1f", h)
		}
		if c.Stop == spec.ReasonMaxHit {
			if verbose {
				note = "not reached"
			} else {
				conf += "!"
			}
		}
	}
	if p.Interrupted {
		note = "INTERRUPTED"
	}
	return conf, iter, note
}

// sumNote is the note of a row that sums two directions.
func sumNote(verbose bool) string {
	if verbose {
		return "sum of both directions"
	}
	return "sum of both"
}
