package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"wirespeed/internal/peertext"
	"wirespeed/internal/report"
	"wirespeed/internal/run"
)

func newPlotCmd(e *env) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "plot RESULT.json... -o FILE.svg|.png|.pdf|.csv",
		Short: "Plot results: throughput against message size, one line per file",
		Long: `Plot the results of sweeps (or single runs) as throughput against message
size on a logarithmic axis, with a bar for each point's confidence interval,
one line per file. Each line is labelled with what differs between the
files: test, parallel streams, congestion control, socket sizes, server...,
and either side's environment (MTU, offloads, kernel, driver, qdisc,
sysctls; "remote mtu=9000") (by file name when nothing does).

A matrix document gives a line per row, labelled with its settings.

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
	case ext != ".csv" && !slices.Contains(report.PlotFormats, ext):
		return usagef("plot output %q: use a .svg, .png, .pdf or .csv name", output)
	}
	docs := make([]run.Document, len(files))
	for i, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("plot: %w", err)
		}
		if err := json.Unmarshal(b, &docs[i]); err != nil {
			return fmt.Errorf("plot %s: not a wirespeed results document: %w", f, err)
		}
		// A results document may come from anyone: what it holds is
		// printed, so its strings are escaped like a peer's.
		peertext.Scrub(&docs[i])
		if docs[i].Schema != run.Schema {
			return fmt.Errorf("plot %s: schema %q, this wirespeed reads %q", f, docs[i].Schema, run.Schema)
		}
	}
	labels := report.Labels(files, docs)
	series := make([]report.Series, len(docs))
	for i, d := range docs {
		series[i] = report.Series{Label: labels[i], Points: report.PointsOf(d)}
		if len(series[i].Points) == 0 {
			return fmt.Errorf("plot %s: the document holds no measured point", files[i])
		}
	}
	series = expandMatrices(docs, labels, series)
	if ext == ".csv" {
		var buf bytes.Buffer
		if err := report.PointsCSV(&buf, series); err != nil {
			return err
		}
		return report.WriteAtomic(output, buf.Bytes())
	}
	p, err := report.Plot(series)
	if err != nil {
		return err
	}
	if err := report.SavePlot(p, output); err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "wrote %s: %d line%s\n", output, len(series), map[bool]string{true: "", false: "s"}[len(series) == 1])
	return nil
}

// expandMatrices replaces the series of each matrix document by one per
// measured row, labelled with the row's settings (after the file's label
// when there are several files).
func expandMatrices(docs []run.Document, labels []string, series []report.Series) []report.Series {
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
