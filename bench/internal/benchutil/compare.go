package benchutil

import (
	"flag"
	"fmt"
	"io"
	"math/rand"
	"sort"
	"strings"
	"time"
)

// Figures are the numbers one run of a tool gave, by metric key.
type Figures map[string]float64

// Tool is one way of measuring a row: the exact command and how to read
// its output.
type Tool struct {
	Name  string
	Argv  []string
	Parse func(out []byte) (Figures, error)
}

// Ratio is a column of per-round ratios Num/Den (tool names).
type Ratio struct{ Num, Den string }

// Row is one line of a comparison: the same test with the same settings
// for every tool.
type Row struct {
	Name   string
	Tools  []Tool
	Ratios []Ratio
}

// Metric is one figure a table shows.
type Metric struct {
	Key, Label string
	Scale      float64 // the value shown is the figure divided by Scale
	Digits     int
}

// Order decides in which order the tools run in each round.
type Order struct {
	Random bool
	rng    *rand.Rand
}

// NewOrder returns "abba" (the tools forward in odd rounds, backward in
// even ones, so that each goes first as often as last) or "random" (a new
// permutation every round, from seed).
func NewOrder(name string, seed int64) (*Order, error) {
	switch name {
	case "abba":
		return &Order{}, nil
	case "random":
		return &Order{Random: true, rng: rand.New(rand.NewSource(seed))}, nil
	}
	return nil, fmt.Errorf("order %q: want abba or random", name)
}

// Round is the order of n tools in round r (0-based): indexes into the
// tools.
func (o *Order) Round(r, n int) []int {
	if o.Random {
		return o.rng.Perm(n)
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
		if r%2 == 1 {
			idx[i] = n - 1 - i
		}
	}
	return idx
}

// Result is what every tool of a row gave, round by round.
type Result struct {
	Row  Row
	Runs map[string][]Figures // by tool name, one per round
}

// RunRow runs every tool of row once per round, for rounds rounds, in
// the order o gives, and prints a line per run with its figures and its
// exact command. A failed run stops the row.
func RunRow(w io.Writer, row Row, rounds int, o *Order) (Result, error) {
	res := Result{Row: row, Runs: map[string][]Figures{}}
	for r := 0; r < rounds; r++ {
		for _, i := range o.Round(r, len(row.Tools)) {
			t := row.Tools[i]
			out, err := Output(t.Argv)
			if err != nil {
				return res, err
			}
			f, err := t.Parse(out)
			if err != nil {
				return res, fmt.Errorf("%s: %w\n%s", Quote(t.Argv), err, out)
			}
			res.Runs[t.Name] = append(res.Runs[t.Name], f)
			fmt.Fprintf(w, "%-24s %2d  %-26s %-60s $ %s\n", row.Name, r+1, t.Name, f, Quote(t.Argv))
		}
	}
	return res, nil
}

func (f Figures) String() string {
	keys := make([]string, 0, len(f))
	for k := range f {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s=%.4g", k, f[k])
	}
	return b.String()
}

// values of metric key for tool, one per round; nil if the tool does not
// give it.
func (r Result) values(tool, key string) []float64 {
	var v []float64
	for _, f := range r.Runs[tool] {
		x, ok := f[key]
		if !ok {
			return nil
		}
		v = append(v, x)
	}
	return v
}

// ratios of metric key, round by round, Num's over Den's.
func (r Result) ratios(q Ratio, key string) []float64 {
	n, d := r.values(q.Num, key), r.values(q.Den, key)
	if n == nil || d == nil || len(n) != len(d) {
		return nil
	}
	var v []float64
	for i := range n {
		if d[i] != 0 {
			v = append(v, n[i]/d[i])
		}
	}
	return v
}

// Spread formats the median of v with its interquartile range and its
// minimum and maximum: "0.97 (IQR 0.95-0.99, 0.91-1.02)".
func Spread(v []float64) string {
	if len(v) == 0 {
		return ""
	}
	return fmt.Sprintf("%.3f (IQR %.3f-%.3f, %.3f-%.3f)",
		Median(v), Quantile(v, 0.25), Quantile(v, 0.75), Quantile(v, 0), Quantile(v, 1))
}

// Table writes results as one Markdown table: a line per row and metric,
// the median of each tool's figure, and each ratio's median with its
// spread over the rounds; then the exact command of every tool of every
// row.
func Table(w io.Writer, results []Result, metrics []Metric) {
	if len(results) == 0 {
		return
	}
	var tools []string
	var ratios []Ratio
	seenT, seenR := map[string]bool{}, map[Ratio]bool{}
	for _, r := range results {
		for _, t := range r.Row.Tools {
			if !seenT[t.Name] {
				seenT[t.Name] = true
				tools = append(tools, t.Name)
			}
		}
		for _, q := range r.Row.Ratios {
			if !seenR[q] {
				seenR[q] = true
				ratios = append(ratios, q)
			}
		}
	}
	head := []string{"row", "figure"}
	head = append(head, tools...)
	for _, q := range ratios {
		head = append(head, q.Num+" / "+q.Den+" (median, IQR, min-max)")
	}
	fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(head, " | "), strings.Repeat("---|", len(head)))
	for _, r := range results {
		for _, m := range metrics {
			cells := []string{r.Row.Name, m.Label}
			any := false
			for _, t := range tools {
				v := r.values(t, m.Key)
				if v == nil {
					cells = append(cells, "")
					continue
				}
				any = true
				cells = append(cells, fmt.Sprintf("%.*f", m.Digits, Median(v)/m.Scale))
			}
			for _, q := range ratios {
				cells = append(cells, Spread(r.ratios(q, m.Key)))
			}
			if any {
				fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
			}
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands (the same in every round):")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "```")
	for _, r := range results {
		for _, t := range r.Row.Tools {
			fmt.Fprintf(w, "%s  %s: %s\n", r.Row.Name, t.Name, Quote(t.Argv))
		}
	}
	fmt.Fprintln(w, "```")
}

// Rounds are the flags every bench takes for how its rows are run: the
// rounds per row, the order of the tools in each, and the length of a
// run. RegisterRounds adds them to fs; Check validates them after Parse.
type Rounds struct {
	Pairs  int
	Order  string
	Seed   int64
	Length time.Duration
}

// RegisterRounds adds -pairs, -order, -seed and -length (-l) to fs.
func RegisterRounds(fs *flag.FlagSet) *Rounds {
	r := &Rounds{}
	fs.IntVar(&r.Pairs, "pairs", 5, "rounds per row: every tool runs once per round")
	fs.StringVar(&r.Order, "order", "abba", "order of the tools in each round: abba (alternating) or random")
	fs.Int64Var(&r.Seed, "seed", time.Now().UnixNano(), "seed of -order random")
	fs.DurationVar(&r.Length, "length", 5*time.Second, "length of each run")
	fs.DurationVar(&r.Length, "l", 5*time.Second, "short for -length")
	return r
}

// String says how the rows are run, for a bench's header line: with the
// seed when the order is random, so that the run can be repeated.
func (r *Rounds) String() string {
	s := fmt.Sprintf("%s per run, %d rounds per row, order %s", r.Length, r.Pairs, r.Order)
	if r.Order == "random" {
		s += fmt.Sprintf(" (-seed %d)", r.Seed)
	}
	return s
}

// Check validates the flags and returns the order of the tools.
func (r *Rounds) Check() (*Order, error) {
	if r.Pairs < 1 {
		return nil, fmt.Errorf("-pairs %d: want at least 1", r.Pairs)
	}
	return NewOrder(r.Order, r.Seed)
}
