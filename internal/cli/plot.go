package cli

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"wirespeed/internal/plot"
	"wirespeed/internal/report"
	"wirespeed/internal/result"
)

func newPlotCmd(e *env) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "plot RESULT.json... -o FILE.svg|.png|.pdf|.csv",
		Short: "Plot results: throughput or latency, one line or bar per file",
		Long: `Plot results with the figure that suits them, one line or bar per file:

  sweeps of stream tests    throughput against message size, a marker per
                            size, whiskers at its confidence interval, service
                            demand below
  single runs, a matrix at  a bar per file, matrix row or tradeoff direction
  one size, a --tradeoff    at the median of its iterations, whiskers at their
                            range; each side's CPU utilization below, and the
                            sender's device's packets/s and bytes per packet
                            where the results have them
  request/response runs     latency at p50, p90, p99, p99.9 and max, a line
                            per file; CPU utilization below
  request/response sweeps   p50, p99 and p99.9 against request size
  an RRUL run               flent's "all" figure: throughput up and down over
                            time, the probes' round trips below, the idle
                            phase shaded; and NAME-cdf.EXT beside it, the
                            round-trip distribution idle against loaded
  several RRUL runs         their distributions, idle and loaded, together

Each panel's key says what its whiskers are and how many iterations they
are over (n), and what an arrowhead at a whisker cut at the axis means.
A value axis is logarithmic where the data spans a decade or more. Each
line is labelled with what differs between the files: test, parallel
streams, congestion control, socket sizes, server..., and either side's
environment (MTU, offloads, kernel, driver, qdisc, sysctls; "remote
mtu=9000") (by file name when nothing does). SVG and PDF embed their fonts.

-o FILE.csv writes one row per point instead, for spreadsheets.`,
		Example: `  wirespeed plot sweep.json -o sweep.svg
  wirespeed plot cubic.json bbr.json -o cc.png
  wirespeed plot cubic.json bbr.json -o cc.csv`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("plot needs at least one RESULT.json")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runPlot(e, args, output)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "FILE to write: .svg, .png or .pdf for the plot, .csv for one row per point (required)")
	return cmd
}

func runPlot(e *env, files []string, output string) error {
	ext := strings.ToLower(filepath.Ext(output))
	switch {
	case output == "":
		return usagef("plot needs -o FILE.svg, .png, .pdf or .csv")
	case ext != ".csv" && !slices.Contains(plot.PlotFormats, ext):
		return usagef("plot output %q: use a .svg, .png, .pdf or .csv name", output)
	}
	docs := make([]result.Document, len(files))
	for i, f := range files {
		var err error
		if docs[i], err = result.ReadFile(f); err != nil {
			return fmt.Errorf("plot: %w", err)
		}
	}
	labels := plot.Labels(files, docs)
	if ext != ".csv" && allRRUL(docs) {
		return plotRRUL(e, labels, docs, output)
	}
	series := make([]report.Series, len(docs))
	for i, d := range docs {
		series[i] = report.Series{Label: labels[i], Points: report.PointsOf(d)}
		if len(series[i].Points) == 0 {
			return fmt.Errorf("plot %s: the document holds no measured point", files[i])
		}
	}
	series = expandMatrices(docs, labels, series)
	series = expandRuns(docs, labels, series)
	if ext == ".csv" {
		var buf bytes.Buffer
		if err := report.PointsCSV(&buf, series); err != nil {
			return err
		}
		return report.WriteAtomic(output, buf.Bytes())
	}
	p, err := plot.Plot(series)
	if err != nil {
		return err
	}
	if err := plot.SavePlot(p, output); err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "wrote %s: %d line%s\n", output, len(series), map[bool]string{true: "", false: "s"}[len(series) == 1])
	return nil
}

// expandMatrices replaces the series of each matrix document by one per
// measured row, labelled with the row's settings (after the file's label
// when there are several files).
func expandMatrices(docs []result.Document, labels []string, series []report.Series) []report.Series {
	var out []report.Series
	for i, d := range docs {
		if d.Matrix == nil {
			out = append(out, series[i])
			continue
		}
		for _, ms := range report.MatrixSeries(d) {
			if len(docs) > 1 {
				ms.Label = labels[i] + ": " + ms.Label
			}
			out = append(out, ms)
		}
	}
	return out
}

// expandRuns replaces the series of a document with several runs (a
// --tradeoff: TCP_STREAM, then TCP_MAERTS) by one per run, labelled with
// its test (after the file's label when there are several files).
func expandRuns(docs []result.Document, labels []string, series []report.Series) []report.Series {
	var out []report.Series
	i := 0
	for di, d := range docs {
		if d.Matrix != nil {
			// expandMatrices made one series per measured row.
			n := len(report.MatrixSeries(d))
			out = append(out, series[i:i+n]...)
			i += n
			continue
		}
		if len(d.Runs) < 2 {
			out = append(out, series[i])
			i++
			continue
		}
		for _, r := range d.Runs {
			rd := d
			rd.Result, rd.Runs = r, nil
			label := string(r.Spec.Kind)
			if len(docs) > 1 {
				label = labels[di] + ": " + label
			}
			out = append(out, report.Series{Label: label, Points: report.PointsOf(rd)})
		}
		i++
	}
	return out
}

// allRRUL reports whether every document is an RRUL run's.
func allRRUL(docs []result.Document) bool {
	for _, d := range docs {
		if d.Summary.UnderLoad == nil || len(d.Runs) > 0 || d.Matrix != nil || len(d.Points) > 0 {
			return false
		}
	}
	return len(docs) > 0
}

// plotRRUL draws RRUL results: for one file, flent's "all" figure to
// output and the round-trip distribution, idle against loaded, beside it
// (NAME-cdf.EXT); for several, their distributions together to output.
func plotRRUL(e *env, labels []string, docs []result.Document, output string) error {
	cdf, err := plot.RRULCDF(labels, docs)
	if err != nil {
		return err
	}
	if len(docs) > 1 {
		if err := plot.SavePlot(cdf, output); err != nil {
			return err
		}
		fmt.Fprintf(e.stderr, "wrote %s: round-trip distributions of %d RRUL runs, idle and loaded\n", output, len(docs))
		return nil
	}
	all, err := plot.RRULAll(docs[0])
	if err != nil {
		return err
	}
	ext := filepath.Ext(output)
	cdfPath := strings.TrimSuffix(output, ext) + "-cdf" + ext
	if err := plot.SavePlot(all, output); err != nil {
		return err
	}
	if err := plot.SavePlot(cdf, cdfPath); err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "wrote %s: throughput and latency over time; %s: round-trip distribution, idle and loaded\n", output, cdfPath)
	return nil
}
