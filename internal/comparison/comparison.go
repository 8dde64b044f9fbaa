// Package comparison owns comparing results documents, benchstat's way:
// it matches the points of several documents (the same test and message
// size, and for matrices the same settings), runs a two-sample test over
// each point's iterations for every figure (throughput or transaction
// rate, each side's CPU utilization, service demand and CPU split into
// user, system, irq and softirq time) with
// stats.Compare, adjusts the p-values of all those tests for one another
// (stats.Adjust), and lists what differs between the environments the
// documents were measured in. It computes; package report renders.
package comparison

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"wirespeed/internal/record"
	"wirespeed/internal/result"
	"wirespeed/internal/spec"
	"wirespeed/internal/stats"
)

// Source is one document to compare, or one row of a matrix.
type Source struct {
	// Name labels the source: a file name, or a matrix row's settings.
	Name string
	// Points are the source's measured points, by key.
	Points map[Key]result.Result
	// Order lists the keys in the source's own order.
	Order []Key
	// Title and Labels are the document's --title and --label KEY=VALUE
	// (a matrix's rows share their document's, so they never differ).
	Title  string
	Labels map[string]string
}

// Key identifies a point across documents: the matrix row's settings
// (empty outside a matrix), the test and its message sizes.
type Key struct {
	Row  string
	Test spec.Kind
	// Size is "131072" for a stream test's send size, "64,1024" for a
	// request/response test's request and response sizes.
	Size string
}

// String is how a point reads in a table: "tso=off TCP_STREAM 131072".
func (k Key) String() string {
	s := string(k.Test) + " " + k.Size
	if k.Row != "" {
		s = k.Row + " " + s
	}
	return s
}

// keyOf is the key of a point of a (possibly) matrix row.
func keyOf(row string, r result.Result) Key {
	return Key{Row: row, Test: r.Spec.Kind, Size: r.Spec.SizeLabel()}
}

// Sources turns documents into sources, one per document, each named by
// its name. A matrix's points are keyed by their row; a run of several
// (--tradeoff) gives a point per run. A single matrix document, compared
// with nothing else, gives a source per row instead (rows keyed by test
// and size only), so that its rows are compared with its first.
func Sources(names []string, docs []result.Document) ([]Source, error) {
	if len(docs) == 1 && docs[0].Matrix != nil {
		var out []Source
		for _, r := range docs[0].Matrix.Rows {
			if len(r.Points) == 0 {
				continue
			}
			s := Source{Name: r.Label, Points: map[Key]result.Result{}}
			for _, p := range r.Points {
				s.add(keyOf("", p.Result), p.Result)
			}
			out = append(out, s)
		}
		if len(out) < 2 {
			return nil, fmt.Errorf("%s: the matrix has %d measured row(s); comparing needs two", names[0], len(out))
		}
		return out, nil
	}
	if len(docs) < 2 {
		return nil, errors.New("compare needs two results documents or more (the first is the baseline), or one matrix (its first row is the baseline)")
	}
	var out []Source
	for i, d := range docs {
		s := Source{Name: names[i], Points: map[Key]result.Result{}, Title: d.Title, Labels: d.Labels}
		switch d.Kind() {
		case result.KindMatrix:
			for _, r := range d.Matrix.Rows {
				for _, p := range r.Points {
					s.add(keyOf(r.Label, p.Result), p.Result)
				}
			}
		case result.KindSweep:
			for _, p := range d.Points {
				s.add(keyOf("", p.Result), p.Result)
			}
		case result.KindTradeoff:
			for _, r := range d.Runs {
				s.add(keyOf("", r), r)
			}
		case result.KindRun:
			s.add(keyOf("", d.Result), d.Result)
		}
		if len(s.Order) == 0 {
			return nil, fmt.Errorf("%s holds no measured point", names[i])
		}
		out = append(out, s)
	}
	return out, nil
}

// SourceOf is a source of one result, named name, with its document's
// title and labels: a result the archive holds, compared with another.
func SourceOf(name string, r result.Result, title string, labels map[string]string) Source {
	s := Source{Name: name, Points: map[Key]result.Result{}, Title: title, Labels: labels}
	s.add(keyOf("", r), r)
	return s
}

func (s *Source) add(k Key, r result.Result) {
	if _, ok := s.Points[k]; !ok {
		s.Order = append(s.Order, k)
	}
	s.Points[k] = r
}

// Metric is a figure compared: the registry's figure (record) with
// the words, unit and key compare shows it by.
type Metric struct {
	Name string // the figure's words: "throughput", "local CPU util", ...
	Unit string // as shown: "10^6bits/sec", "%", "us/KB", "trans/sec"
	// Key names it in JSON: the figure's name, "throughput_bps",
	// "local_util_pct", ...
	Key string
	// Scale is what the figure's numbers are multiplied by for Unit
	// (1e-6 for bits/s shown as 10^6bits/sec).
	Scale  float64
	Figure record.Figure `json:"-"`
}

// Value is the metric's figure in v; false when v has none, and for
// the result of a stream test (record.Figure.StreamResult) in a
// request/response test's.
func (m Metric) Value(v record.View) (float64, bool) {
	if m.Figure.StreamResult && v.Summary.RRSummary != nil {
		return 0, false
	}
	return m.Figure.Read(v)
}

// metricOf is how compare shows figure f.
func metricOf(f record.Figure) Metric {
	m := Metric{Name: f.Words, Unit: f.Unit, Key: f.Name, Scale: 1, Figure: f}
	if f.Shown != "" {
		m.Unit = f.Shown
		// A Shown that only respells Unit (trans/sec, pkts/sec) has
		// no Scale: the figure is shown as it is.
		if f.Scale != 0 {
			m.Scale = f.Scale
		}
	}
	return m
}

// metrics are the figures compared (record.Compared), in the
// registry's order: throughput for stream tests, transactions per
// second for request/response tests, each side's CPU, the sender's
// device, each side's CPU split.
var metrics = func() []Metric {
	var out []Metric
	for _, f := range record.In(record.Compared) {
		out = append(out, metricOf(f))
	}
	return out
}()

// Samples returns a point's values of a metric: one per iteration that
// ran to its end (interrupted ones are not in the mean either), or the
// result's own value when it was a single run.
func Samples(r result.Result, m Metric) []float64 {
	var out []float64
	if len(r.Iterations) > 0 {
		for _, it := range r.Iterations {
			if it.Interrupted {
				continue
			}
			if v, ok := m.Value(record.OfSummary(r.Spec.Kind, it.Summary)); ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
				out = append(out, v)
			}
		}
		return out
	}
	if r.Interrupted {
		return nil
	}
	if v, ok := m.Value(record.Of(&r)); ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
		out = append(out, v)
	}
	return out
}

// Options say how to compare.
type Options struct {
	Test  stats.Test
	Alpha float64
	// Adjust is how the p-values of all the comparisons made at once are
	// adjusted (stats.Adjust); empty means Benjamini-Hochberg.
	Adjust stats.Adjustment
}

// Cell is one source's figure of one point.
type Cell struct {
	// Present is false when the source has no such point or figure.
	Present bool
	// Center is the centre of the source's values: their median for the
	// U test, their mean for Welch's t (the centre each test compares).
	Center float64
	N      int
	// Comparison is the test of this source against the baseline; nil
	// for the baseline itself and where either lacks the figure.
	Comparison *stats.Comparison
}

// Line is one point of one metric across the sources.
type Line struct {
	Key   Key
	Cells []Cell // one per source, the baseline first
}

// Table is one metric's lines.
type Table struct {
	Metric Metric
	Lines  []Line
}

// Diff is one way the environment (or the test's settings) of a source
// differs from the baseline's, with how many of the matched points show
// it.
type Diff struct {
	Source int // index of the source that differs from the baseline
	result.EnvDiff
	Points, Of int
}

// Result is a comparison of sources with the first.
type Result struct {
	Sources []string
	Options Options
	Tables  []Table
	// EnvDiffs are the ways each source's environment records differ from
	// the baseline's over the matched points; SpecDiffs the ways its
	// tests' settings differ (other than the message size), with Side
	// "spec".
	EnvDiffs  []Diff
	SpecDiffs []Diff
	// LabelDiffs are the ways its title and labels differ (Side "label",
	// Name the key, or "title"); they hold for every matched point.
	LabelDiffs []Diff
	// Unmatched lists points only some sources have, by source.
	Unmatched map[string][]Key
	// Warnings are the tests' caveats, each once, with the points it
	// applies to.
	Warnings []Warning
	// Comparisons is the size of the family the p-values are adjusted
	// over: every figure of every matched point against the baseline, for
	// every other source.
	Comparisons int
	// AcrossDirections is true when the sources measured different
	// directions of a TCP stream (TCP_STREAM against TCP_MAERTS) and their
	// points were matched by settings and message size alone; the keys
	// name the baseline's test.
	AcrossDirections bool
}

// Differences are all the ways the sources differ from the baseline:
// title and labels first (what the user said differs), then the
// environment records, then the test settings.
func (r Result) Differences() []Diff {
	out := append([]Diff(nil), r.LabelDiffs...)
	out = append(out, r.EnvDiffs...)
	return append(out, r.SpecDiffs...)
}

// Warning is a caveat of the tests and the points it applies to.
type Warning struct {
	Text   string   `json:"text"`
	Points []string `json:"points"` // "throughput of tso=off TCP_STREAM 131072", ...
}

// Compare compares every source with the first over the points they have
// in common (in the baseline's order), for every metric measured.
func Compare(sources []Source, opts Options) (Result, error) {
	opts = opts.withDefaults()
	res, fam, err := compare(sources, opts)
	if err != nil {
		return res, err
	}
	out := []Result{res}
	if err := fam.adjust(out, opts); err != nil {
		return res, err
	}
	return out[0], nil
}

// ComparePairs compares every pair of sources, each with each later one
// (a matrix's tx=off TCP_STREAM row with its tx=off TCP_MAERTS row, not
// only every row with the first), and adjusts the p-values of all the
// pairs' comparisons together: the family is every figure of every
// matched point of every pair. It returns a Result per pair, in order
// (0 with 1, 0 with 2, ..., 1 with 2, ...); each one's Comparisons is the
// whole family's size. A pair with no point in common is an error that
// names it.
func ComparePairs(sources []Source, opts Options) ([]Result, error) {
	if len(sources) < 2 {
		return nil, errors.New("compare needs two sources or more")
	}
	opts = opts.withDefaults()
	var out []Result
	var all family
	for i := range sources {
		for j := i + 1; j < len(sources); j++ {
			res, fam, err := compare([]Source{sources[i], sources[j]}, opts)
			if err != nil {
				return nil, fmt.Errorf("%s against %s: %w", sources[i].Name, sources[j].Name, err)
			}
			for range fam.comparisons {
				all.of = append(all.of, len(out))
			}
			all.comparisons = append(all.comparisons, fam.comparisons...)
			all.at = append(all.at, fam.at...)
			out = append(out, res)
		}
	}
	if err := all.adjust(out, opts); err != nil {
		return nil, err
	}
	return out, nil
}

// family is the comparisons made at once, adjusted together: each with
// where it is (for warnings) and the index of the result it belongs to.
type family struct {
	comparisons []*stats.Comparison
	at          []string
	of          []int
}

// adjust adjusts the family's p-values for one another, adds its warnings
// to the results they concern, and sets every result's Comparisons to the
// family's size.
func (f family) adjust(results []Result, opts Options) error {
	err := adjust(f.comparisons, opts, func(i int, text string) {
		k := 0
		if i < len(f.of) {
			k = f.of[i]
		}
		addWarning(&results[k], text, f.at[i])
	})
	for k := range results {
		results[k].Comparisons = len(f.comparisons)
	}
	return err
}

// addWarning adds a caveat about the point at to r, each text once with
// every point it applies to.
func addWarning(r *Result, text, at string) {
	for j := range r.Warnings {
		if r.Warnings[j].Text == text {
			r.Warnings[j].Points = append(r.Warnings[j].Points, at)
			return
		}
	}
	r.Warnings = append(r.Warnings, Warning{Text: text, Points: []string{at}})
}

func (opts Options) withDefaults() Options {
	if opts.Test == "" {
		opts.Test = stats.UTest
	}
	if opts.Alpha == 0 {
		opts.Alpha = 0.05
	}
	if opts.Adjust == "" {
		opts.Adjust = stats.BenjaminiHochberg
	}
	return opts
}

// compare is Compare without the adjustment: the result and its family.
func compare(sources []Source, opts Options) (Result, family, error) {
	var fam family
	if len(sources) < 2 {
		return Result{}, fam, errors.New("compare needs two sources or more")
	}
	res := Result{Options: opts, Unmatched: map[string][]Key{}}
	for _, s := range sources {
		res.Sources = append(res.Sources, s.Name)
	}
	common := commonKeys(sources)
	if len(common) == 0 {
		if across, ok := acrossDirections(sources); ok {
			sources, res.AcrossDirections = across, true
			common = commonKeys(sources)
		}
	}
	base := sources[0]
	for _, s := range sources {
		for _, k := range s.Order {
			if !slices.Contains(common, k) {
				res.Unmatched[s.Name] = append(res.Unmatched[s.Name], k)
			}
		}
	}
	if len(common) == 0 {
		var have []string
		for _, s := range sources {
			var ks []string
			for i, k := range s.Order {
				if i == 3 {
					ks = append(ks, fmt.Sprintf("and %d more", len(s.Order)-3))
					break
				}
				ks = append(ks, k.String())
			}
			have = append(have, fmt.Sprintf("%s has %s", s.Name, strings.Join(ks, ", ")))
		}
		return res, fam, fmt.Errorf("the documents have no point in common (the same test and message size, and for matrices the same settings): %s", strings.Join(have, "; "))
	}

	warn := func(text, at string) { addWarning(&res, text, at) }
	// The family: every comparison made, with where it is, adjusted
	// together once all are made.
	for _, m := range metrics {
		tb := Table{Metric: m}
		for _, k := range common {
			line := Line{Key: k, Cells: make([]Cell, len(sources))}
			a := Samples(base.Points[k], m)
			if len(a) == 0 || neverNonZero(a, sources[1:], k, m) {
				continue
			}
			line.Cells[0] = Cell{Present: true, N: len(a), Center: stats.Center(a, opts.Test)}
			for i, s := range sources[1:] {
				b := Samples(s.Points[k], m)
				if len(b) == 0 {
					continue
				}
				c, err := stats.Compare(a, b, opts.Test, opts.Alpha)
				if err != nil {
					return res, fam, fmt.Errorf("%s of %s: %w", m.Name, k, err)
				}
				line.Cells[i+1] = Cell{Present: true, N: len(b), Center: c.CenterB, Comparison: &c}
				at := fmt.Sprintf("%s of %s", m.Name, k)
				if len(sources) > 2 {
					at += " (" + s.Name + ")"
				}
				for _, w := range c.Warnings {
					warn(w, at)
				}
				fam.comparisons = append(fam.comparisons, line.Cells[i+1].Comparison)
				fam.at = append(fam.at, at)
			}
			tb.Lines = append(tb.Lines, line)
		}
		if len(tb.Lines) > 0 {
			res.Tables = append(res.Tables, tb)
		}
	}

	stealWarnings(&res, sources, common, opts)

	for i, s := range sources[1:] {
		res.EnvDiffs = append(res.EnvDiffs, diffs(i+1, common, func(k Key) []result.EnvDiff {
			a, b := base.Points[k], s.Points[k]
			return append(result.DiffEnv(result.Local, a.Local.Env, b.Local.Env), result.DiffEnv(result.Remote, a.Remote.Env, b.Remote.Env)...)
		})...)
		res.SpecDiffs = append(res.SpecDiffs, diffs(i+1, common, func(k Key) []result.EnvDiff {
			return specDiff(base.Points[k].Spec, s.Points[k].Spec)
		})...)
		for _, d := range labelDiff(base, s) {
			res.LabelDiffs = append(res.LabelDiffs, Diff{Source: i + 1, EnvDiff: d, Points: len(common), Of: len(common)})
		}
	}
	return res, fam, nil
}

// stealText is the caveat of a point whose hypervisor steal moved
// between the sources: CPU util (everything but idle and iowait) and
// service demand count steal as busy, so a difference
// in them there is partly other guests' work, not the setting's.
const stealText = "the hypervisor's steal (busy time in CPU util and service demand) moved between the sources: their differences there are partly other guests' work; the CPU user, system and softirq figures leave steal out"

// stealWarnings warns of every point and side whose steal (the centre of
// the iterations' steal_pct) differs from the baseline's by 2 points of
// all CPUs or more and by a tenth of the larger util or more: enough to
// move the util figure by as much as the settings commonly do.
func stealWarnings(res *Result, sources []Source, common []Key, opts Options) {
	for _, side := range []string{"local", "remote"} {
		// The iterations Samples takes, as for every figure compared.
		steal, util := metricOf(record.LocalSteal), metricOf(record.LocalUtil)
		if side == "remote" {
			steal, util = metricOf(record.RemoteSteal), metricOf(record.RemoteUtil)
		}
		for _, k := range common {
			sa, ua := Samples(sources[0].Points[k], steal), Samples(sources[0].Points[k], util)
			if len(sa) == 0 || len(ua) == 0 {
				continue
			}
			a, utilA := stats.Center(sa, opts.Test), stats.Center(ua, opts.Test)
			for _, s := range sources[1:] {
				sb, ub := Samples(s.Points[k], steal), Samples(s.Points[k], util)
				if len(sb) == 0 || len(ub) == 0 {
					continue
				}
				b, utilB := stats.Center(sb, opts.Test), stats.Center(ub, opts.Test)
				if d := math.Abs(a - b); d < 2 || d < math.Max(utilA, utilB)/10 {
					continue
				}
				at := fmt.Sprintf("%s steal %.1f%% -> %.1f%% at %s", side, a, b, k)
				if len(sources) > 2 {
					at += " in " + s.Name
				}
				addWarning(res, stealText, at)
			}
		}
	}
}

// commonKeys are the points every source has, in the baseline's order.
func commonKeys(sources []Source) []Key {
	var common []Key
	for _, k := range sources[0].Order {
		all := true
		for _, s := range sources[1:] {
			if _, ok := s.Points[k]; !ok {
				all = false
			}
		}
		if all {
			common = append(common, k)
		}
	}
	return common
}

// directional are the tests that are one direction of a TCP stream:
// TCP_STREAM (client to server) and TCP_MAERTS (server to client).
var directional = map[spec.Kind]bool{spec.TCPStream: true, spec.TCPMaerts: true}

// acrossDirections matches the points of sources that each measured one
// direction of a TCP stream, not all the same ("is A->B the same as
// B->A"): every point of every source is TCP_STREAM, or every point
// TCP_MAERTS. It returns the sources with their points keyed by the
// baseline's test, so that the same settings and message size match; the
// tests' difference is listed with the other settings' (SpecDiffs).
func acrossDirections(sources []Source) ([]Source, bool) {
	kinds := map[spec.Kind]bool{}
	one := make([]spec.Kind, len(sources))
	for i, s := range sources {
		for _, k := range s.Order {
			if !directional[k.Test] || one[i] != "" && one[i] != k.Test {
				return nil, false
			}
			one[i] = k.Test
		}
		kinds[one[i]] = true
	}
	if len(kinds) < 2 {
		return nil, false
	}
	out := make([]Source, len(sources))
	for i, s := range sources {
		out[i] = Source{Name: s.Name, Points: map[Key]result.Result{}}
		for _, k := range s.Order {
			r := s.Points[k]
			k.Test = one[0]
			out[i].add(k, r)
		}
	}
	return out, true
}

// neverNonZero reports whether a figure is 0 in every iteration of every
// source at a point: a state the CPUs never entered (hardware interrupts
// on a veth pair), which is not compared, so as not to count in the
// family of comparisons something that was never there to differ.
func neverNonZero(a []float64, others []Source, k Key, m Metric) bool {
	zero := func(vs []float64) bool {
		for _, v := range vs {
			if v != 0 {
				return false
			}
		}
		return true
	}
	if !zero(a) {
		return false
	}
	for _, s := range others {
		if !zero(Samples(s.Points[k], m)) {
			return false
		}
	}
	return true
}

// adjust adjusts the p-values of the family of comparisons for one
// another and decides each one's significance by its adjusted p. Where
// the sizes of the samples cannot give a p small enough for a difference
// at one point alone to count (alpha over the family's size: the first
// step of both procedures), it warns, with how many iterations would do.
func adjust(family []*stats.Comparison, opts Options, warn func(int, string)) error {
	ps := make([]float64, len(family))
	for i, c := range family {
		ps[i] = c.P
	}
	adj, err := stats.Adjust(ps, opts.Adjust)
	if err != nil {
		return err
	}
	m := len(family)
	for i, c := range family {
		c.Readjust(adj[i])
		if opts.Adjust == stats.NoAdjustment || m < 2 {
			continue
		}
		floor := stats.MinP(c.Test, c.NA, c.NB)
		lone := opts.Alpha / float64(m)
		if floor <= lone || floor > opts.Alpha {
			// Reachable, or the test's own warning already says that
			// not even alpha can be reached.
			continue
		}
		switch opts.Adjust {
		case stats.Holm:
			warn(i, fmt.Sprintf(
				"with %d and %d iterations the smallest possible p is %.3g, above the %.3g (alpha %g over %d comparisons) Holm's procedure needs first: no difference can be significant; %s",
				c.NA, c.NB, floor, lone, opts.Alpha, m, stats.IterationsRule(c.Test, opts.Alpha, m, opts.Adjust)))
		default:
			warn(i, fmt.Sprintf(
				"with %d and %d iterations the smallest possible p is %.3g, above the %.3g (alpha %g over %d comparisons) a difference at one point alone needs: only differences shown by many points at once can be significant; for one alone %s",
				c.NA, c.NB, floor, lone, opts.Alpha, m, stats.IterationsRule(c.Test, opts.Alpha, m, opts.Adjust)))
		}
	}
	return nil
}

// diffs gathers the differences of one source over the points, each once
// with the number of points that show it, in the order first seen.
func diffs(source int, keys []Key, of func(Key) []result.EnvDiff) []Diff {
	var out []Diff
	at := map[result.EnvDiff]int{}
	for _, k := range keys {
		for _, d := range of(k) {
			j, ok := at[d]
			if !ok {
				j = len(out)
				at[d] = j
				out = append(out, Diff{Source: source, EnvDiff: d, Of: len(keys)})
			}
			out[j].Points++
		}
	}
	return out
}

// specDiff lists the settings of the test that differ, by their JSON
// names, other than the message sizes a point is matched by.
func specDiff(a, b spec.Test) []result.EnvDiff {
	a.SendSize, a.RequestSize, a.ResponseSize = 0, 0, 0
	b.SendSize, b.RequestSize, b.ResponseSize = 0, 0, 0
	var out []result.EnvDiff
	for _, d := range spec.Diff(a, b) {
		out = append(out, result.EnvDiff{Side: "spec", Name: d.Name, A: d.A, B: d.B})
	}
	return out
}

// labelDiff lists how b's title and labels differ from a's, the title
// first, then the labels by key; a label only one of them has is "" in
// the other.
func labelDiff(a, b Source) []result.EnvDiff {
	var out []result.EnvDiff
	if a.Title != b.Title {
		out = append(out, result.EnvDiff{Side: "label", Name: "title", A: a.Title, B: b.Title})
	}
	var keys []string
	for k := range a.Labels {
		keys = append(keys, k)
	}
	for k := range b.Labels {
		if _, ok := a.Labels[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		if a.Labels[k] != b.Labels[k] {
			out = append(out, result.EnvDiff{Side: "label", Name: k, A: a.Labels[k], B: b.Labels[k]})
		}
	}
	return out
}
