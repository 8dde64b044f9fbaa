package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"wirespeed/internal/record"

	"wirespeed/internal/result"
	"wirespeed/internal/spec"
)

// MeshHeading says what the matrix that follows shows.
func MeshHeading(w io.Writer, doc result.MeshDocument) {
	m := doc.Matrix
	t := doc.Spec
	what := fmt.Sprintf("throughput in 10^6bits/sec, the receiver's count over %.2f s", t.Duration.Seconds())
	if m.Figure == result.MeshLatencyP50 {
		what = fmt.Sprintf("p50 latency in us, over %.2f s", t.Duration.Seconds())
	}
	rows := "rows send, columns receive"
	switch {
	case t.Kind == spec.TCPBidir:
		rows = "both directions summed; rows are the clients, columns the servers"
	case m.Orientation == result.RowsClients:
		rows = "rows are the clients, columns the servers"
	}
	round := ""
	if doc.Round > 0 {
		round = fmt.Sprintf(" round %d,", doc.Round)
	}
	head := fmt.Sprintf("%s mesh of %d peers,%s started %s:", t.Kind, len(doc.Peers), round, doc.Started.Format("2006-01-02 15:04:05"))
	for _, l := range fitList("", []string{head, what + ";", rows}, " ", 2) {
		fmt.Fprintln(w, l)
	}
}

// MeshMatrix writes the matrix, rows of senders (or clients) and columns
// of receivers (or servers), then the pairs that failed or were cut
// short.
func MeshMatrix(w io.Writer, doc result.MeshDocument) {
	m := doc.Matrix
	type state struct {
		asked, failed, interrupted bool
	}
	states := map[[2]string]*state{}
	for _, p := range doc.Pairs {
		src, dst := doc.Cell(p)
		st := &state{asked: true}
		switch {
		case p.Error == result.MeshNotMeasured:
			continue
		case p.Result == nil || len(p.Result.Directions) == 0:
			st.failed = true
		case p.Result.Interrupted || p.Error != "":
			st.interrupted = true
		}
		states[[2]string{src, dst}] = st
	}
	width := 10
	for _, n := range m.Columns {
		width = max(width, len(n))
	}
	label := "from \\ to"
	lw := len(label)
	for _, n := range m.Rows {
		lw = max(lw, len(n))
	}
	fmt.Fprintf(w, "  %-*s", lw, label)
	for _, n := range m.Columns {
		fmt.Fprintf(w, "  %*s", width, n)
	}
	fmt.Fprintln(w)
	anyInterrupted := false
	for i, r := range m.Rows {
		fmt.Fprintf(w, "  %-*s", lw, r)
		for j, c := range m.Columns {
			cell := "-"
			st := states[[2]string{r, c}]
			switch {
			case i < len(m.Values) && j < len(m.Values[i]) && m.Values[i][j] != nil:
				cell = meshCell(m.Figure, *m.Values[i][j])
				if st != nil && st.interrupted {
					cell += "*"
					anyInterrupted = true
				}
			case st != nil && st.failed:
				cell = "failed"
			}
			fmt.Fprintf(w, "  %*s", width, cell)
		}
		fmt.Fprintln(w)
	}
	if anyInterrupted {
		fmt.Fprintln(w, "\n  * cut short: the figure covers what was measured")
	}
	var failed []string
	for _, p := range doc.Pairs {
		if p.Error != "" {
			failed = append(failed, fmt.Sprintf("%s -> %s: %s", p.Source, p.Destination, p.Error))
		}
	}
	if len(failed) > 0 {
		fmt.Fprintln(w)
		for _, f := range failed {
			for _, l := range wrapNote("  "+f, 4) {
				fmt.Fprintln(w, l)
			}
		}
	}
	textWarnings(w, doc.Warnings, false)
}

func meshCell(figure string, v float64) string {
	if figure == result.MeshLatencyP50 {
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v/1e6, 'f', 2, 64)
}

// MeshText writes the heading and the matrix.
func MeshText(w io.Writer, doc result.MeshDocument) {
	MeshHeading(w, doc)
	fmt.Fprintln(w)
	MeshMatrix(w, doc)
}

// MeshJSON writes the mesh document, indented, with a final newline.
func MeshJSON(w io.Writer, doc result.MeshDocument) error {
	return result.EncodeMesh(w, doc)
}

// meshCSVHeader names a mesh round's CSV columns: a figure's column is
// its name in the registry (record.Figures).
var meshCSVHeader = []string{
	"source", "destination", "via", "test", record.Throughput.Name, record.SenderThroughput.Name, record.Retransmits.Name,
	record.Transactions.Name, record.LatencyP50.Name, record.LatencyP99.Name, record.Loss.Name, "interrupted", "error",
}

// MeshCSV writes one row per pair, in the order measured; empty cells
// where a figure does not apply or the pair failed.
func MeshCSV(w io.Writer, doc result.MeshDocument) error {
	if err := result.CheckFinite(doc); err != nil {
		return fmt.Errorf("the CSV cannot be written: %w", err)
	}
	cw := csv.NewWriter(w)
	cw.Write(meshCSVHeader)
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	for _, p := range doc.Pairs {
		row := []string{p.Source, p.Destination, p.Via, string(doc.Spec.Kind), "", "", "", "", "", "", "", "", p.Error}
		if r := p.Result; r != nil && len(r.Directions) > 0 {
			s := r.Summary
			row[4], row[5], row[6] = f(s.BitsPerSecond), f(s.SenderBitsPerSecond), strconv.FormatInt(s.Retransmits, 10)
			if s.RRSummary != nil {
				row[7], row[8], row[9] = f(s.TransactionsPerSecond), f(s.Latency.P50), f(s.Latency.P99)
			}
			if s.UDPSummary != nil {
				row[10] = f(s.LossPct)
			}
			row[11] = strconv.FormatBool(r.Interrupted)
		}
		cw.Write(csvSafe(row))
	}
	cw.Flush()
	return cw.Error()
}
