package report

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"

	"wirespeed/internal/history"
)

// historyTime is how history writes a time: UTC to the minute, as the
// points of a series are minutes to days apart.
const historyTime = "2006-01-02 15:04:05"

// figureValueRef scales a history figure for people in the unit that
// suits ref, so that a table's figures share one: throughput in Mbit/s
// (Gbit/s from 10 Gbit/s), others in their unit.
func figureValueRef(unit string, v, ref float64) (string, string) {
	switch unit {
	case "bits/s":
		scale, u := rateUnit(ref)
		return trimFloat(v / scale), u
	case "us":
		if ref >= 10000 {
			return trimFloat(v / 1000), "ms"
		}
		return trimFloat(v), "us"
	case "%":
		return trimFloat(v), "%"
	}
	return trimFloat(v), unit
}

// trimFloat writes v with three significant digits at least, no
// exponent.
func trimFloat(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	case a >= 1:
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.3g", v)
}

// seriesName is "A->B TCP_STREAM 131072 B", with the settings after it.
func seriesName(k history.Key) string {
	s := fmt.Sprintf("%s->%s %s %d B", k.Source, k.Destination, k.Test, k.MsgSize)
	if k.Settings != "" {
		s += " " + k.Settings
	}
	return s
}

// envSentence is "B: tso on -> off, mtu 1500 -> 9000; A: kernel ...",
// a qdisc's rate in Mbit/s ("qdisc tbf 200 Mbit/s -> tbf 120 Mbit/s").
func envSentence(env []history.EnvChange) string {
	var parts []string
	var host string
	var items []string
	flush := func() {
		if len(items) > 0 {
			parts = append(parts, host+": "+strings.Join(items, ", "))
		}
		items = nil
	}
	for _, e := range env {
		if e.Host != host {
			flush()
			host = e.Host
		}
		b, a := qdiscRate(e.Name, e.Before, FigureValue), qdiscRate(e.Name, e.After, FigureValue)
		if b == "" {
			b = "(none)"
		}
		if a == "" {
			a = "(none)"
		}
		items = append(items, fmt.Sprintf("%s %s -> %s", e.Name, b, a))
	}
	flush()
	return strings.Join(parts, "; ")
}

func pSentence(p float64) string {
	if p < 0.001 {
		return "p < 0.001"
	}
	return fmt.Sprintf("p = %.3f", p)
}

// ChangeSentence says what a change point is, for people: "A->B
// TCP_STREAM fell 941 -> 612 Mbit/s (-35%) at 2026-12-01 14:02,
// p = 0.005; at that time B: tso on -> off".
func ChangeSentence(s history.Series, c history.Change) string {
	verb := "rose"
	if c.After < c.Before {
		verb = "fell"
	}
	ref := max(c.Before, c.After)
	before, unit := figureValueRef(s.Unit, c.Before, ref)
	after, _ := figureValueRef(s.Unit, c.After, ref)
	name := fmt.Sprintf("%s->%s %s", s.Key.Source, s.Key.Destination, s.Key.Test)
	if s.Figure != "throughput" {
		name += " " + s.Figure
	}
	out := fmt.Sprintf("%s %s %s -> %s %s (%+.0f%%) at %s, %s", name, verb, before, after, unit, c.ChangePct,
		c.Time.UTC().Format(historyTime), pSentence(c.P))
	if c.Worse {
		out += ", worse"
	}
	if e := envSentence(c.Env); e != "" {
		out += "; at that time " + e
	} else {
		out += "; the recorded environment did not change"
	}
	return out
}

// HistoryText writes each series as a table, oldest point first: time,
// figure, the confidence interval when the point iterated, iterations,
// limit; a line before the first point after each change point says
// what changed, and with none, a line says how large a step could have
// been found (SensitivitySentence).
func HistoryText(w io.Writer, series []history.Series) {
	for i, s := range series {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s: %s, %d points, %d change points\n", seriesName(s.Key), s.Figure, len(s.Points), len(s.Changes))
		if len(s.Changes) == 0 {
			if sens := SensitivitySentence(s); sens != "" {
				fmt.Fprintf(w, "  %s\n", sens)
			}
		}
		ref := 0.0
		for _, p := range s.Points {
			ref = max(ref, p.Value)
		}
		_, unit := figureValueRef(s.Unit, ref, ref)
		rows := [][]string{{"time (UTC)", s.Figure + " " + unit, "CI", "iter", "limit"}}
		changeAt := map[int]history.Change{}
		for _, c := range s.Changes {
			changeAt[c.Index] = c
		}
		for j, p := range s.Points {
			if c, ok := changeAt[j]; ok {
				rows = append(rows, []string{"--- change: " + ChangeSentence(s, c)})
			}
			v, _ := figureValueRef(s.Unit, p.Value, ref)
			ci := ""
			if p.Lo != nil && p.Hi != nil && p.Value != 0 {
				ci = fmt.Sprintf("±%.1f%%", 50*(*p.Hi-*p.Lo)/p.Value)
			}
			rows = append(rows, []string{p.Time.UTC().Format(historyTime), v, ci, fmt.Sprint(p.Iterations), p.Limit})
		}
		historyColumns(w, rows)
	}
}

// historyColumns aligns rows of cells; a row of one cell is written as
// it is.
func historyColumns(w io.Writer, rows [][]string) {
	var width []int
	for _, r := range rows {
		if len(r) == 1 {
			continue
		}
		for i, c := range r {
			if i >= len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], len([]rune(c)))
		}
	}
	for _, r := range rows {
		if len(r) == 1 {
			fmt.Fprintf(w, "  %s\n", r[0])
			continue
		}
		var b strings.Builder
		for i, c := range r {
			if i > 0 {
				b.WriteString("  ")
			}
			pad := width[i] - len([]rune(c))
			if i == 1 || i == 3 {
				b.WriteString(strings.Repeat(" ", pad) + c)
			} else {
				b.WriteString(c + strings.Repeat(" ", pad))
			}
		}
		fmt.Fprintf(w, "  %s\n", strings.TrimRight(b.String(), " "))
	}
}

// HistoryJSON writes {"series":[...]}: each series' key, points and
// changes.
func HistoryJSON(w io.Writer, series []history.Series) error {
	if series == nil {
		series = []history.Series{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		Series []history.Series `json:"series"`
	}{series})
}

// CheckText says what history --check found, in one sentence per
// series: the regression, or how the newest point compares, and with
// what: the points before it, or those before the change point it
// follows.
func CheckText(w io.Writer, v history.Verdict) {
	ref := max(v.Shift.Baseline, v.Shift.Newest)
	base, unit := figureValueRef(v.Unit, v.Shift.Baseline, ref)
	newest, _ := figureValueRef(v.Unit, v.Shift.Newest, ref)
	name := fmt.Sprintf("%s->%s %s", v.Key.Source, v.Key.Destination, v.Key.Test)
	if v.Figure != "throughput" {
		name += " " + v.Figure
	}
	verb := "rose"
	if v.Shift.Newest < v.Shift.Baseline {
		verb = "fell"
	}
	status := "ok"
	if v.Regression {
		status = "regression"
	}
	before := "before"
	if v.Since != nil {
		before = "before the change point at " + v.Since.Time.UTC().Format(historyTime)
	}
	fmt.Fprintf(w, "%s: %s %s %s -> %s %s (%+.1f%%) at %s, %s (%s of the newest %d against %d %s)",
		status, name, verb, base, newest, unit, v.Shift.ChangePct, v.At.Time.UTC().Format(historyTime), pSentence(v.Shift.P),
		v.Shift.Test, v.Newest, v.Baseline, before)
	if v.At.Limit != "" {
		fmt.Fprintf(w, "; limited by %s", v.At.Limit)
	}
	if e := envSentence(v.Env); e != "" {
		fmt.Fprintf(w, "; at that time %s", e)
	}
	fmt.Fprintln(w)
}

// FigureShort writes a figure for a grid's cell: three significant
// digits, throughput in Gbit/s from 1 Gbit/s (so that 9675 Mbit/s and
// 10.3 Gbit/s are not neighbours: 9.68 and 10.3 Gbit/s), Mbit/s from 1
// Mbit/s, kbit/s below; a latency in ms from 10 ms; others as
// FigureValue.
func FigureShort(unit string, v float64) string {
	if unit != "bits/s" {
		return FigureValue(unit, v)
	}
	switch a := math.Abs(v); {
	case a >= 1e9:
		return trimFloat(v/1e9) + " Gbit/s"
	case a >= 1e6:
		return trimFloat(v/1e6) + " Mbit/s"
	}
	return trimFloat(v/1e3) + " kbit/s"
}

// FigureValue writes a history figure with its unit for people:
// throughput in Mbit/s or Gbit/s, others in their unit ("941 Mbit/s").
func FigureValue(unit string, v float64) string {
	s, u := figureValueRef(unit, v, v)
	return s + " " + u
}

// EnvSentence says what changed in an environment, for people: "B: tso
// on -> off; A: kernel 6.1 -> 6.12".
func EnvSentence(env []history.EnvChange) string { return envSentence(env) }
