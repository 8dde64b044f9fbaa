package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"wirespeed/internal/comparison"
	"wirespeed/internal/report"
	"wirespeed/internal/result"
	"wirespeed/internal/stats"
)

type compareFlags struct {
	alpha  float64
	test   string
	adjust string
	json   bool
	pairs  bool
}

func newCompareCmd(e *env) *cobra.Command {
	f := &compareFlags{}
	cmd := &cobra.Command{
		Use:   "compare BASELINE.json OTHER.json... | compare MATRIX.json",
		Short: "Say which differences between results are real: a significance test per point and figure",
		Long: `Compare results documents (of run, sweep or matrix) with the first, the
baseline, as benchstat does: for every point they have in common (the same
test and message size, and for matrices the same settings), both values,
the change in percent, and whether the difference is significant at --alpha
over the points' iterations, for the throughput (the transaction rate of
request/response tests), each side's CPU utilization and service demand,
and each side's CPU split into user, system, irq and softirq time (a state
that is 0 throughout, never entered, is left out). "~" marks a difference
that is not distinguishable from noise. Results measured without
iterations have one value per point: no difference can be significant with
so few, and the comparison says so.

The test is the Mann-Whitney U test (benchstat's; exact for fewer than 50
iterations, compares medians) or, with --test welch, Welch's t-test
(compares means). Both are two-sided.

compare leads with its verdict, as benchstat users look for it: a line per
figure and point that changed significantly (the figure, the point, the
baseline's and the new value, the change and the adjusted p), then how many
other comparisons did not; or, when none did, "no significant change from
BASELINE in N comparisons". The detail follows, as before: the tables and
the lines above them stay where scripts and recipes read them.

Above the tables, compare lists what differs between the environments of the
baseline and each other document (MTU, offloads, kernel, driver, qdisc,
congestion control, sysctls, host) and between their test settings, so that
the reader sees what the comparison is about.

Every figure of every point is a comparison, and with many made at once
some differ at p <= alpha by chance alone (a 13-size sweep has 65 figures:
about three such). So the p-values are adjusted for one another and a
difference is significant when its adjusted p is <= alpha. By default the
adjustment is Benjamini-Hochberg (--adjust bh), which keeps the expected
share of noise among the differences marked at alpha, and when nothing
differs at all, the chance of marking anything. It is the default because
it keeps the power to see a change that shows at many points, as an offload
or an MTU usually does, where Holm-Bonferroni (--adjust holm: the chance
that any difference marked is noise at most alpha) often can see nothing:
with 4 iterations the U test's smallest p is 2/70 = 0.029, and Holm over 10
comparisons needs 0.005 first. The table shows both p-values; the JSON has
"p" and "p_adjusted".

Documents that each measured one direction of a TCP stream, TCP_STREAM in
one and TCP_MAERTS in the other, are compared direction against direction:
their points are matched by settings and message size ("is A->B the same
as B->A?").

With a single matrix document, its rows are compared with its first row.
--pairs compares every pair instead (each row or document with each later
one: a matrix's tx=off TCP_STREAM row with its tx=off TCP_MAERTS row), the
p-values adjusted over the comparisons of all the pairs together.`,
		Example: `  wirespeed compare before.json after.json
  wirespeed compare cubic.json bbr.json --test welch --alpha 0.01
  wirespeed compare matrix.json
  wirespeed compare before.json after.json --adjust holm
  wirespeed compare stream.json maerts.json
  wirespeed compare dirs.json --pairs`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("compare needs results documents: two or more, or one matrix")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCompare(e, f, args)
		},
	}
	fl := cmd.Flags()
	fl.Float64Var(&f.alpha, "alpha", 0.05, "significance level: a difference counts as real when p <= alpha")
	fl.StringVar(&f.test, "test", "u", "the two-sample test: u (Mann-Whitney U, compares medians) or welch (Welch's t, compares means)")
	fl.StringVar(&f.adjust, "adjust", "bh", "how p-values are adjusted for the many comparisons made at once: bh (Benjamini-Hochberg, false discovery rate), holm (Holm-Bonferroni, family-wise error) or none")
	fl.BoolVar(&f.json, "json", false, "print the comparison as JSON (with --pairs, an array of one per pair)")
	fl.BoolVar(&f.pairs, "pairs", false, "compare every pair of documents or matrix rows, not each with the first; p adjusted over all the pairs' comparisons")
	return cmd
}

func runCompare(e *env, f *compareFlags, files []string) error {
	opts := comparison.Options{Alpha: f.alpha}
	switch strings.ToLower(f.test) {
	case "u", "mann-whitney", "mann-whitney-u", "utest":
		opts.Test = stats.UTest
	case "welch", "t", "welch-t":
		opts.Test = stats.WelchT
	default:
		return usagef("--test %q: use u (Mann-Whitney U) or welch (Welch's t)", f.test)
	}
	switch strings.ToLower(f.adjust) {
	case "bh", "fdr", "benjamini-hochberg":
		opts.Adjust = stats.BenjaminiHochberg
	case "holm", "holm-bonferroni":
		opts.Adjust = stats.Holm
	case "none":
		opts.Adjust = stats.NoAdjustment
	default:
		return usagef("--adjust %q: use bh (Benjamini-Hochberg), holm (Holm-Bonferroni) or none", f.adjust)
	}
	if !(f.alpha > 0 && f.alpha < 1) {
		return usagef("--alpha %g: a significance level between 0 and 1, such as 0.05", f.alpha)
	}
	docs := make([]result.Document, len(files))
	names := make([]string, len(files))
	for i, p := range files {
		var err error
		if docs[i], err = result.ReadFile(p); err != nil {
			return fmt.Errorf("compare: %w", err)
		}
		names[i] = filepath.Base(p)
	}
	names = distinctNames(files, names)
	sources, err := comparison.Sources(names, docs)
	if err != nil {
		return usageError{err}
	}
	if f.pairs {
		return comparePairs(e, f, sources, opts)
	}
	res, err := comparison.Compare(sources, opts)
	if err != nil {
		return err
	}
	if f.json {
		return report.CompareJSON(e.stdout, res)
	}
	report.Compare(e.stdout, res)
	return nil
}

// comparePairs is compare --pairs: every pair, one family.
func comparePairs(e *env, f *compareFlags, sources []comparison.Source, opts comparison.Options) error {
	pairs, err := comparison.ComparePairs(sources, opts)
	if err != nil {
		return err
	}
	if f.json {
		var docs []json.RawMessage
		for _, r := range pairs {
			var b bytes.Buffer
			if err := report.CompareJSON(&b, r); err != nil {
				return err
			}
			docs = append(docs, b.Bytes())
		}
		out, err := json.MarshalIndent(docs, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(e.stdout, string(out))
		return err
	}
	for i, r := range pairs {
		if i > 0 {
			fmt.Fprintln(e.stdout)
		}
		fmt.Fprintf(e.stdout, "pair %d of %d: %s against %s\n", i+1, len(pairs), r.Sources[0], r.Sources[1])
		report.Compare(e.stdout, r)
	}
	return nil
}

// distinctNames labels files by their base names, or by their full paths
// when two base names are the same.
func distinctNames(paths, bases []string) []string {
	seen := map[string]int{}
	for _, b := range bases {
		seen[b]++
	}
	for _, n := range seen {
		if n > 1 {
			return paths
		}
	}
	return bases
}
