package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"wirespeed/internal/archive"
	"wirespeed/internal/history"
	"wirespeed/internal/plot"
	"wirespeed/internal/record"
	"wirespeed/internal/report"
)

type historyFlags struct {
	target    string
	since     string
	until     string
	pair      string
	test      string
	size      int
	labels    []string
	figure    string
	json      bool
	output    string
	check     bool
	tolerance string
	alpha     float64
	newest    int
	baseline  int
}

// errRegression is history --check's exit status 1.
var errRegression = errors.New("regression")

func newHistoryCmd(e *env) *cobra.Command {
	f := &historyFlags{}
	cmd := &cobra.Command{
		Use:   "history [flags]",
		Short: "Show series of archived results over time, where they changed and why",
		Long: `Show the archive's results as series over time: results of the same source,
destination, test, message size and settings. Each series is a table of
time, figure (throughput, or p50 latency for request/response tests), its
confidence interval when the point iterated, iterations and what limited it.

Change points are steps in the mean, found by Student's t at the best
split with each point's own iterations as a floor on its noise (a
permutation test of the same statistic from 20 points), at --alpha: a
series without a change shows one with probability at most --alpha. Each
says how much the series moved, how sure (p) and what changed in either
side's recorded environment between the results on either side of it:
kernel, driver, offloads, MTU, qdisc, congestion control, sysctls, the
peer's host. A series without one says how large a step it could have
shown ("8 points: a step under 35% cannot be told from noise here").

--check tests the newest point (--newest N points) of each selected series
against the last stable segment before it: the segment before the change
point it follows when that change was for the worse or is under 3 points
old, else the points of its own segment (at most --baseline). Exit status:
1 when one is a significant regression (throughput down; latency, loss,
service demand or CPU up) by at least --tolerance, 0 otherwise, so that
history --check can end a git bisect run step or a CI job; 2 when no
series has enough points to check (each one's reason on stderr) or the
archive does not exist.`,
		Example: `  wirespeed history --archive results.db --since 30d
  wirespeed history --archive results.db --pair a->b --test TCP_RR -o rr.png
  wirespeed history --archive results.db --pair a->b --check --tolerance 2%`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runHistory(cmd.Context(), e, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.target, "archive", "", "the archive `TARGET`: a SQLite FILE or a postgres:// URL (default $"+ArchiveEnv+")")
	fl.StringVar(&f.since, "since", "", "only results since `AGE` ago (30d, 12h) or a DATE (2026-12-01)")
	fl.StringVar(&f.until, "until", "", "only results before `AGE` ago or a DATE")
	fl.StringVar(&f.pair, "pair", "", "only the series from `SRC->DST` (the client's host to the server's; a mesh pair's names)")
	fl.StringVarP(&f.test, "test", "t", "", "only results of this test (TCP_STREAM, TCP_RR, ...)")
	fl.VarP(bytesValue{&f.size}, "size", "m", "only results at this message size (request size for request/response tests)")
	fl.StringArrayVar(&f.labels, "label", nil, "only results recorded with --label `KEY=VALUE` (repeat for several)")
	fl.StringVar(&f.figure, "figure", "", "figure to follow, by name or label: "+figureLabels()+" (default: p50 for request/response tests, throughput otherwise)")
	fl.BoolVar(&f.json, "json", false, `print {"series":[{"key":...,"points":[...],"changes":[...]}]}`)
	fl.StringVarP(&f.output, "output", "o", "", "also plot the series to `FILE`: .png, .svg or .pdf")
	fl.BoolVar(&f.check, "check", false, "exit 1 when the newest points of a series are a significant regression")
	fl.StringVar(&f.tolerance, "tolerance", "0%", "--check: the smallest change that counts as a regression, in percent of the baseline (2%)")
	fl.Float64Var(&f.alpha, "alpha", 0.01, "significance level of change points and of --check: the false-alarm rate of each")
	fl.IntVar(&f.newest, "newest", 1, "--check: how many of the newest points to test together")
	fl.IntVar(&f.baseline, "baseline", 30, "--check: at most this many points before them make the baseline")
	return cmd
}

func runHistory(ctx context.Context, e *env, f *historyFlags) error {
	var filter archive.Filter
	var err error
	if f.since != "" {
		if filter.Since, err = parseSince(f.since, e.now()); err != nil {
			return usagef("--since: %v", err)
		}
	}
	if f.until != "" {
		if filter.Until, err = parseSince(f.until, e.now()); err != nil {
			return usagef("--until: %v", err)
		}
	}
	if f.pair != "" {
		src, dst, ok := strings.Cut(f.pair, "->")
		if !ok || src == "" || dst == "" {
			return usagef("--pair %q: give SRC->DST, such as a->b", f.pair)
		}
		filter.Source, filter.Destination = src, dst
	}
	filter.Test = strings.ToUpper(f.test)
	if len(f.labels) > 0 {
		filter.Labels = map[string]string{}
		for _, l := range f.labels {
			k, v, ok := strings.Cut(l, "=")
			if !ok || k == "" {
				return usagef("--label %q: give KEY=VALUE", l)
			}
			filter.Labels[k] = v
		}
	}
	tol, err := parsePercent(f.tolerance)
	if err != nil {
		return usagef("--tolerance: %v", err)
	}
	if f.alpha <= 0 || f.alpha >= 1 {
		return usagef("--alpha %v: give a level between 0 and 1, such as 0.01", f.alpha)
	}
	if f.newest < 1 || f.baseline < 3 {
		return usagef("--newest must be at least 1 and --baseline at least 3")
	}
	if f.output != "" && !slices.Contains(plot.PlotFormats, strings.ToLower(filepath.Ext(f.output))) {
		return usagef("-o %q: use a .png, .svg or .pdf name", f.output)
	}
	q := history.Query{Filter: filter, Size: f.size, Options: history.Options{Alpha: f.alpha}}
	if f.figure != "" {
		x, err := history.FigureNamed(f.figure)
		if err != nil {
			return usagef("--figure: %v", err)
		}
		q.Figures = []history.Figure{x}
	}
	a, err := openArchiveToRead(ctx, e, f.target)
	if err != nil {
		return err
	}
	defer a.Close()
	series, _, envs, err := history.Load(ctx, a, q)
	if err != nil {
		return err
	}
	if f.check {
		return checkHistory(e, f, series, envs, tol)
	}
	if f.json {
		if err := report.HistoryJSON(e.stdout, series); err != nil {
			return err
		}
	} else if len(series) == 0 {
		fmt.Fprintf(e.stdout, "no results in %s match\n", a.Target())
	} else {
		report.HistoryText(e.stdout, series)
	}
	if f.output != "" {
		fg, err := plot.HistoryPlot(series)
		if err != nil {
			return fmt.Errorf("history -o %s: %w", f.output, err)
		}
		return plot.SavePlot(fg, f.output)
	}
	return nil
}

func checkHistory(e *env, f *historyFlags, series []history.Series, envs map[int64]record.Env, tol float64) error {
	checked, regressions := 0, 0
	for _, s := range series {
		v, err := history.Check(s, history.CheckOptions{Newest: f.newest, Baseline: f.baseline, Tolerance: tol, Alpha: f.alpha}, envs)
		if err != nil {
			fmt.Fprintf(e.stderr, "wirespeed: not checked: %s->%s %s %d B: %v\n", s.Key.Source, s.Key.Destination, s.Key.Test, s.Key.MsgSize, err)
			continue
		}
		checked++
		if v.Regression {
			regressions++
		}
		report.CheckText(e.stdout, v)
	}
	switch {
	case checked == 0:
		return usagef("nothing to check: no selected series has %d points before its newest %d; select one with --pair, --test, --size, --label, or archive more results", 3, f.newest)
	case regressions > 0:
		return fmt.Errorf("%w in %d of %d series checked", errRegression, regressions, checked)
	}
	return nil
}

// figureLabels lists the labels of the figures history follows, from
// the registry.
func figureLabels() string {
	var l []string
	for _, f := range history.Figures {
		l = append(l, f.Label)
	}
	return strings.Join(l, ", ")
}

// parsePercent reads "2%" or "2" as 0.02.
func parsePercent(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(s), "%"), 64)
	if err != nil || v < 0 || v >= 100 {
		return 0, fmt.Errorf("%q: give a percentage from 0 to 100, such as 2%%", s)
	}
	return v / 100, nil
}
