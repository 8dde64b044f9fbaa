package report

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"

	"wirespeed/internal/comparison"
	"wirespeed/internal/stats"
)

// testName says which test a comparison ran and what its centre is.
func testName(t stats.Test) string {
	if t == stats.WelchT {
		return "Welch's t-test (centre: mean of the iterations)"
	}
	return "Mann-Whitney U test (centre: median of the iterations)"
}

// adjustment says how the p-values were adjusted for one another and
// what that controls.
func adjustment(res comparison.Result) string {
	n := res.Comparisons
	switch res.Options.Adjust {
	case stats.Holm:
		return fmt.Sprintf("p adjusted for the %d comparisons made at once by Holm-Bonferroni (the chance that any difference marked is noise is at most %g)", n, res.Options.Alpha)
	case stats.NoAdjustment:
		return fmt.Sprintf("p not adjusted for the %d comparisons made at once: about %g of those that do not differ are marked anyway", n, res.Options.Alpha)
	}
	return fmt.Sprintf("p adjusted for the %d comparisons made at once by Benjamini-Hochberg (of the differences marked, at most %g expected to be noise)", n, res.Options.Alpha)
}

// adjustedColumn heads the column of adjusted p-values, empty without
// adjustment.
func adjustedColumn(a stats.Adjustment) string {
	switch a {
	case stats.Holm:
		return "p Holm"
	case stats.NoAdjustment:
		return ""
	}
	return "p BH"
}

// Compare writes a comparison: its verdict first (Verdict: the
// comparisons that changed significantly), then what it compares and
// how, what differs between the environments, one table per figure with each point's
// values, change and verdict, the points not matched and the tests'
// caveats.
func Compare(w io.Writer, res comparison.Result) {
	base := res.Sources[0]
	// The prose wraps at Width; the tables are as wide as their cells.
	say := func(format string, a ...any) { writeWrapped(w, fmt.Sprintf(format, a...), false) }
	Verdict(w, res)
	fmt.Fprintln(w)
	say("baseline %s; compared: %s", base, strings.Join(res.Sources[1:], ", "))
	say("%s at alpha %g over each point's iterations", testName(res.Options.Test), res.Options.Alpha)
	say("%s; higher/lower: significant, ~: not significant", adjustment(res))
	if res.AcrossDirections {
		say("across directions: each point of %s is matched with the other direction's at the same settings and message size (named by the baseline's test)", base)
	}

	fmt.Fprintf(w, "\nwhat differs from %s:\n", base)
	for i, name := range res.Sources[1:] {
		var ds []comparison.Diff
		for _, d := range res.Differences() {
			if d.Source == i+1 {
				ds = append(ds, d)
			}
		}
		if len(ds) == 0 {
			fmt.Fprintf(w, "  %s: nothing in the environment records or the test settings\n", name)
			continue
		}
		fmt.Fprintf(w, "  %s:\n", name)
		var lines [][]string
		for _, d := range ds {
			where := ""
			if d.Points < d.Of {
				where = fmt.Sprintf("(in %d of %d points)", d.Points, d.Of)
			}
			lines = append(lines, []string{"    " + string(d.Side) + " " + d.Name, orNone(d.A) + " -> " + orNone(d.B), where})
		}
		columns(w, lines, 3)
	}

	for _, tb := range res.Tables {
		fmt.Fprintf(w, "\n%s (%s)\n", tb.Metric.Name, tb.Metric.Unit)
		if len(res.Sources) == 2 {
			wideTable(w, res, tb)
		} else {
			longTable(w, res, tb)
		}
	}

	if len(res.Unmatched) > 0 {
		fmt.Fprintln(w)
		for _, name := range res.Sources {
			if ks := res.Unmatched[name]; len(ks) > 0 {
				var s []string
				for _, k := range ks {
					s = append(s, k.String())
				}
				say("only in %s, not compared: %s", name, strings.Join(s, "; "))
			}
		}
	}
	if len(res.Warnings) > 0 {
		fmt.Fprintln(w)
		for _, wn := range res.Warnings {
			at := wn.Points
			more := ""
			if len(at) > 3 {
				more = fmt.Sprintf(" and %d more", len(at)-3)
				at = at[:3]
			}
			// A comparison's warning is its advice (how many
			// iterations would do): wrapped, not cut.
			say("warning: %s (%s%s)", wn.Text, strings.Join(at, "; "), more)
		}
	}
}

// wideTable is benchstat's layout for two sources: a line per point with
// both values, the change, p and the verdict.
func wideTable(w io.Writer, res comparison.Result, tb comparison.Table) {
	adj := adjustedColumn(res.Options.Adjust)
	lines := [][]string{pColumns(adj, "point", res.Sources[0], res.Sources[1], "change", "p", adj, "n", "")}
	for _, l := range tb.Lines {
		c := l.Cells[1]
		line := pColumns(adj, l.Key.String(), figure(l.Cells[0], tb.Metric), "-", "", "", "", "", "")
		if c.Present && c.Comparison != nil {
			cmp := c.Comparison
			line = pColumns(adj, l.Key.String(), figure(l.Cells[0], tb.Metric), figure(c, tb.Metric), pct(cmp.DeltaPct),
				pValue(cmp.P), pValue(cmp.PAdjusted), fmt.Sprintf("%d+%d", cmp.NA, cmp.NB), verdict(*cmp))
		}
		lines = append(lines, line)
	}
	columns(w, lines, 1)
}

// pColumns is a table line with its adjusted p cell (the sixth of eight),
// or without it when there is no adjustment (adj empty).
func pColumns(adj string, cells ...string) []string {
	if adj == "" {
		return append(cells[:5:5], cells[6:]...)
	}
	return cells
}

// longTable is the layout for three sources or more (or a matrix's rows):
// a line per point and source, the baseline's first.
func longTable(w io.Writer, res comparison.Result, tb comparison.Table) {
	adj := adjustedColumn(res.Options.Adjust)
	lines := [][]string{pColumns(adj, "point", "", "value", "change", "p", adj, "n", "")}
	for _, l := range tb.Lines {
		lines = append(lines, pColumns(adj, l.Key.String(), res.Sources[0], figure(l.Cells[0], tb.Metric), "(baseline)", "", "", "", ""))
		for i, c := range l.Cells[1:] {
			line := pColumns(adj, "", res.Sources[i+1], "-", "", "", "", "", "")
			if c.Present && c.Comparison != nil {
				cmp := c.Comparison
				line = pColumns(adj, "", res.Sources[i+1], figure(c, tb.Metric), pct(cmp.DeltaPct),
					pValue(cmp.P), pValue(cmp.PAdjusted), fmt.Sprintf("%d+%d", cmp.NA, cmp.NB), verdict(*cmp))
			}
			lines = append(lines, line)
		}
	}
	columns(w, lines, 2)
}

// columns writes lines of cells as columns two spaces apart, indented by
// two, the first left columns flush left and the others flush right,
// without trailing blanks.
func columns(w io.Writer, lines [][]string, left int) {
	var widths []int
	for _, l := range lines {
		for i, c := range l {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], len(c))
		}
	}
	for _, l := range lines {
		var b strings.Builder
		b.WriteString("  ")
		for i, c := range l {
			if i > 0 {
				b.WriteString("  ")
			}
			if i < left || i == len(l)-1 {
				fmt.Fprintf(&b, "%-*s", widths[i], c)
			} else {
				fmt.Fprintf(&b, "%*s", widths[i], c)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}

// figure is a cell's centre in the metric's unit.
func figure(c comparison.Cell, m comparison.Metric) string {
	if !c.Present {
		return "-"
	}
	v := c.Center * m.Scale
	if m.Unit == "us/KB" {
		return fmt.Sprintf("%.3f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// pValue is p to three places, "<0.001" below.
func pValue(p float64) string {
	if p < 0.0005 {
		return "<0.001"
	}
	return fmt.Sprintf("%.3f", p)
}

func pct(p float64) string {
	if math.IsNaN(p) || math.IsInf(p, 0) {
		return "-"
	}
	return fmt.Sprintf("%+.2f%%", p)
}

// verdict is "~" for a difference not distinguishable from noise, and the
// direction of one that is.
func verdict(c stats.Comparison) string {
	switch c.Verdict {
	case stats.Higher:
		return "higher"
	case stats.Lower:
		return "lower"
	}
	return "~"
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// CompareSchema names the JSON form of a comparison.
const CompareSchema = "wirespeed/compare/v1"

// compareDoc is the JSON form of a comparison. Numbers that cannot be
// computed (a change in percent of a zero baseline) are null.
type compareDoc struct {
	Schema      string           `json:"schema"`
	Baseline    string           `json:"baseline"`
	Sources     []string         `json:"sources"`
	Test        stats.Test       `json:"test"`
	Alpha       float64          `json:"alpha"`
	Adjustment  stats.Adjustment `json:"adjustment"`
	Comparisons int              `json:"comparisons"`
	// AcrossDirections: TCP_STREAM points matched with TCP_MAERTS ones.
	AcrossDirections bool                 `json:"across_directions,omitempty"`
	Differences      []compareDiff        `json:"differences"`
	Figures          []compareFigure      `json:"figures"`
	Unmatched        map[string][]string  `json:"unmatched,omitempty"`
	Warnings         []comparison.Warning `json:"warnings,omitempty"`
}

type compareDiff struct {
	Source string `json:"source"`
	Side   string `json:"side"` // local, remote, spec, or label (--title, --label)
	Name   string `json:"name"`
	A      string `json:"baseline_value"`
	B      string `json:"value"`
	Points int    `json:"points"`
	Of     int    `json:"of"`
}

type compareFigure struct {
	Figure string         `json:"figure"` // throughput_bps, local_util_pct, ...
	Points []comparePoint `json:"points"`
}

type comparePoint struct {
	Row      string           `json:"row,omitempty"`
	Test     string           `json:"test"`
	Size     string           `json:"size"`
	Baseline compareValue     `json:"baseline"`
	Others   []compareAgainst `json:"compared"`
}

type compareValue struct {
	Center *float64 `json:"center"`
	N      int      `json:"n"`
}

type compareAgainst struct {
	Source string `json:"source"`
	compareValue
	DeltaPct *float64 `json:"delta_pct"`
	// P is the test's own p; PAdjusted is P adjusted for the other
	// comparisons, which Significant is decided by.
	P           *float64 `json:"p"`
	PAdjusted   *float64 `json:"p_adjusted"`
	Significant bool     `json:"significant"`
	Verdict     string   `json:"verdict"` // "~", "+" or "-"
}

func finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// CompareJSON writes the comparison as a JSON document.
func CompareJSON(w io.Writer, res comparison.Result) error {
	doc := compareDoc{Schema: CompareSchema, Baseline: res.Sources[0], Sources: res.Sources,
		Test: res.Options.Test, Alpha: res.Options.Alpha, Adjustment: res.Options.Adjust, Comparisons: res.Comparisons, AcrossDirections: res.AcrossDirections, Differences: []compareDiff{}, Figures: []compareFigure{}, Warnings: res.Warnings}
	for _, d := range res.Differences() {
		doc.Differences = append(doc.Differences, compareDiff{Source: res.Sources[d.Source], Side: string(d.Side), Name: d.Name, A: d.A, B: d.B, Points: d.Points, Of: d.Of})
	}
	for _, tb := range res.Tables {
		f := compareFigure{Figure: tb.Metric.Key}
		for _, l := range tb.Lines {
			p := comparePoint{Row: l.Key.Row, Test: string(l.Key.Test), Size: l.Key.Size,
				Baseline: compareValue{Center: finite(l.Cells[0].Center), N: l.Cells[0].N}}
			for i, c := range l.Cells[1:] {
				if !c.Present || c.Comparison == nil {
					continue
				}
				cmp := c.Comparison
				p.Others = append(p.Others, compareAgainst{Source: res.Sources[i+1],
					compareValue: compareValue{Center: finite(c.Center), N: c.N},
					DeltaPct:     finite(cmp.DeltaPct), P: finite(cmp.P), PAdjusted: finite(cmp.PAdjusted), Significant: cmp.Significant, Verdict: string(cmp.Verdict)})
			}
			f.Points = append(f.Points, p)
		}
		doc.Figures = append(doc.Figures, f)
	}
	if len(res.Unmatched) > 0 {
		doc.Unmatched = map[string][]string{}
		for name, ks := range res.Unmatched {
			for _, k := range ks {
				doc.Unmatched[name] = append(doc.Unmatched[name], k.String())
			}
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}
