package report

import (
	"fmt"
	"io"

	"wirespeed/internal/comparison"
)

// verdict block: compare's answer before its detail, benchstat-minded.
// A line per comparison that changed significantly (its figure, point,
// source when there are several, baseline and new centre, change and the
// adjusted p it was decided by, named in the heading), then how many did
// not; or one line when none did.

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
				// old -> new is one cell, aligned below (arrowed).
				line = append(line, figure(l.Cells[0], tb.Metric), figure(c, tb.Metric), pct(cmp.DeltaPct), "p="+pValue(cmp.PAdjusted))
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
	columns(w, arrowed(lines, left), left)
	switch rest := made - len(lines); rest {
	case 0:
		fmt.Fprintf(w, "  (all %d comparisons made)\n", made)
	case 1:
		fmt.Fprintf(w, "  1 other comparison did not change significantly\n")
	default:
		fmt.Fprintf(w, "  %d other comparisons did not change significantly\n", rest)
	}
}

// arrowed joins each line's baseline and new value (the cells at i and
// i+1) into one cell, "9150.00 -> 9750.00", both flush right, so that
// the arrows align with one space each side.
func arrowed(lines [][]string, i int) [][]string {
	var wa, wb int
	for _, l := range lines {
		wa, wb = max(wa, len(l[i])), max(wb, len(l[i+1]))
	}
	out := make([][]string, len(lines))
	for k, l := range lines {
		out[k] = append(append(append([]string{}, l[:i]...), fmt.Sprintf("%*s -> %*s", wa, l[i], wb, l[i+1])), l[i+2:]...)
	}
	return out
}
