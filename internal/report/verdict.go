package report

import (
	"fmt"
	"io"

	"wirespeed/internal/comparison"
)

// verdict block: compare's answer before its detail, benchstat-minded.
// A line per comparison that changed significantly (its figure, point,
// source when there are several, baseline and new centre, change and the
// p it was decided by), then how many did not; or one line when none did.

// Verdict writes the comparisons of res that changed significantly, one
// a line, and how many others did not.
func Verdict(w io.Writer, res comparison.Result) {
	base := res.Sources[0]
	p := adjustedColumn(res.Options.Adjust)
	if p == "" {
		p = "p"
	}
	var lines [][]string
	made := 0
	for _, tb := range res.Tables {
		for _, l := range tb.Lines {
			for i, c := range l.Cells[1:] {
				if !c.Present || c.Comparison == nil {
					continue
				}
				made++
				cmp := c.Comparison
				if !cmp.Significant {
					continue
				}
				line := []string{tb.Metric.Name + " (" + tb.Metric.Unit + ")", l.Key.String()}
				if len(res.Sources) > 2 {
					line = append(line, res.Sources[i+1])
				}
				line = append(line, figure(l.Cells[0], tb.Metric), "->", figure(c, tb.Metric), pct(cmp.DeltaPct), p+" "+pValue(cmp.PAdjusted))
				lines = append(lines, line)
			}
		}
	}
	at := fmt.Sprintf("%s <= %g", p, res.Options.Alpha)
	if len(lines) == 0 {
		n := fmt.Sprintf("%d comparisons", made)
		if made == 1 {
			n = "its 1 comparison"
		}
		fmt.Fprintf(w, "no significant change from %s in %s (%s)\n", base, n, at)
		return
	}
	fmt.Fprintf(w, "changed significantly from %s (%s):\n", base, at)
	left := 2
	if len(res.Sources) > 2 {
		left = 3
	}
	columns(w, lines, left)
	switch rest := made - len(lines); rest {
	case 0:
		fmt.Fprintf(w, "  (all %d comparisons made)\n", made)
	case 1:
		fmt.Fprintf(w, "  1 other comparison did not change significantly\n")
	default:
		fmt.Fprintf(w, "  %d other comparisons did not change significantly\n", rest)
	}
}
